#include "lance/index/index_writer.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <roaring/roaring.h>

#include "lance/file_reader.h"
#include "lance/file_writer.h"
#include "lance/schema.h"

namespace lance::index {
namespace {

// pylance 14's DEFAULT_BTREE_BATCH_SIZE: rows per page of page_data.lance.
constexpr int64_t kBTreePageRows = 4096;

// The values in the order both index types store them: nulls first, then
// ascending, NaN last; equal values by ascending row id, as pylance sorts.
Result<IndexInput> SortInput(const IndexInput& in) {
  namespace cp = arrow::compute;
  // Arrow puts NaN just before the nulls when they go last; the nulls are
  // then moved to the front, keeping NaN last.
  auto batch = arrow::RecordBatch::Make(
      arrow::schema({arrow::field("values", in.values->type()), arrow::field("ids", arrow::uint64())}),
      in.values->length(), {in.values, in.ids});
  cp::SortOptions options({cp::SortKey("values"), cp::SortKey("ids")});  // nulls at the end
  LANCE_ASSIGN_OR_RAISE(auto sorted, cp::SortIndices(arrow::Datum(batch), options));
  auto order = std::static_pointer_cast<arrow::UInt64Array>(sorted);
  const int64_t n = order->length();
  const int64_t nulls = in.values->null_count();
  arrow::UInt64Builder b;
  LANCE_RETURN_NOT_OK(b.Reserve(n));
  for (int64_t i = n - nulls; i < n; ++i) b.UnsafeAppend(order->Value(i));
  for (int64_t i = 0; i < n - nulls; ++i) b.UnsafeAppend(order->Value(i));
  LANCE_ASSIGN_OR_RAISE(auto take, b.Finish());
  LANCE_ASSIGN_OR_RAISE(auto values, cp::Take(in.values, take));
  LANCE_ASSIGN_OR_RAISE(auto ids, cp::Take(in.ids, take));
  return IndexInput{values.make_array(), std::static_pointer_cast<arrow::UInt64Array>(ids.make_array())};
}

// Writes one Lance file of `batches` as pylance's index store does: one
// write per batch, schema metadata as given.
Result<IndexFile> WriteFile(const io::ObjectStore& store, const std::string& dir, const std::string& name,
                            const std::shared_ptr<arrow::Schema>& schema,
                            const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                            const std::vector<std::pair<std::string, std::string>>& metadata,
                            const std::string& file_version) {
  const std::string path = dir + "/" + name;
  LANCE_ASSIGN_OR_RAISE(auto lance_schema, Schema::FromArrow(*schema));
  LANCE_ASSIGN_OR_RAISE(auto out, store.OpenOutputStream(path));
  FileWriterOptions options;
  options.version = file_version;
  LANCE_ASSIGN_OR_RAISE(auto writer, FileWriter::Open(std::move(out), store.FullPath(path), lance_schema, options));
  for (const auto& [k, v] : metadata) LANCE_RETURN_NOT_OK(writer->AddSchemaMetadata(k, v));
  for (const auto& batch : batches) LANCE_RETURN_NOT_OK(writer->Write(*batch));
  LANCE_RETURN_NOT_OK(writer->Finish().status());
  LANCE_ASSIGN_OR_RAISE(int64_t size, store.Size(path));
  return IndexFile{name, static_cast<uint64_t>(size)};
}

Status CheckInput(const IndexInput& in) {
  if (!in.values || !in.ids || in.values->length() != in.ids->length()) {
    return Status::Invalid("index input: values and row ids differ in length");
  }
  return Status::OK();
}

}  // namespace

std::string EncodeRowIdTreeMap(const std::vector<uint64_t>& ids) {
  std::string out(4, '\0');
  uint32_t count = 0;
  auto put_u32 = [&](uint32_t v) {
    char b[4];
    std::memcpy(b, &v, 4);  // little-endian hosts only, as the readers
    out.append(b, 4);
  };
  size_t i = 0;
  while (i < ids.size()) {
    const uint32_t high = static_cast<uint32_t>(ids[i] >> 32);
    roaring_bitmap_t* rb = roaring_bitmap_create();
    for (; i < ids.size() && static_cast<uint32_t>(ids[i] >> 32) == high; ++i) {
      roaring_bitmap_add(rb, static_cast<uint32_t>(ids[i]));
    }
    std::string bytes(roaring_bitmap_portable_size_in_bytes(rb), '\0');
    roaring_bitmap_portable_serialize(rb, bytes.data());
    roaring_bitmap_free(rb);
    put_u32(high);
    put_u32(static_cast<uint32_t>(bytes.size()));
    out += bytes;
    ++count;
  }
  std::memcpy(out.data(), &count, 4);
  return out;
}

namespace {

// Cuts sorted rows, arriving in slices, into page_data's pages of 4096 rows
// and records each page's bounds for page_lookup.
class BTreeSink {
 public:
  static Result<std::unique_ptr<BTreeSink>> Open(const io::ObjectStore& store, const std::string& dir,
                                                 const std::shared_ptr<arrow::DataType>& type,
                                                 const std::string& file_version) {
    auto sink = std::unique_ptr<BTreeSink>(new BTreeSink(store, dir, type, file_version));
    sink->data_schema_ =
        arrow::schema({arrow::field("values", type), arrow::field("ids", arrow::uint64(), false)});
    const std::string path = dir + "/page_data.lance";
    LANCE_ASSIGN_OR_RAISE(auto lance_schema, Schema::FromArrow(*sink->data_schema_));
    LANCE_ASSIGN_OR_RAISE(auto out, store.OpenOutputStream(path));
    FileWriterOptions options;
    options.version = file_version;
    LANCE_ASSIGN_OR_RAISE(sink->data_, FileWriter::Open(std::move(out), store.FullPath(path), lance_schema, options));
    return sink;
  }

  Status Add(const std::shared_ptr<arrow::Array>& values, const std::shared_ptr<arrow::Array>& ids) {
    if (values->length() == 0) return Status::OK();
    values_.push_back(values);
    ids_.push_back(ids);
    pending_ += values->length();
    if (pending_ < kBTreePageRows) return Status::OK();
    LANCE_ASSIGN_OR_RAISE(auto v, arrow::Concatenate(values_));
    LANCE_ASSIGN_OR_RAISE(auto i, arrow::Concatenate(ids_));
    int64_t start = 0;
    for (; v->length() - start >= kBTreePageRows; start += kBTreePageRows) {
      LANCE_RETURN_NOT_OK(Page(v->Slice(start, kBTreePageRows), i->Slice(start, kBTreePageRows)));
    }
    values_.clear();
    ids_.clear();
    pending_ = v->length() - start;
    if (pending_ > 0) {
      values_.push_back(v->Slice(start));
      ids_.push_back(i->Slice(start));
    }
    return Status::OK();
  }

  Result<std::vector<IndexFile>> Finish() {
    if (pending_ > 0) {
      LANCE_ASSIGN_OR_RAISE(auto v, arrow::Concatenate(values_));
      LANCE_ASSIGN_OR_RAISE(auto i, arrow::Concatenate(ids_));
      LANCE_RETURN_NOT_OK(Page(v, i));
    }
    LANCE_RETURN_NOT_OK(data_->Finish().status());
    LANCE_ASSIGN_OR_RAISE(int64_t size, store_.Size(dir_ + "/page_data.lance"));
    std::shared_ptr<arrow::Array> min, max;
    if (mins_.empty()) {
      LANCE_ASSIGN_OR_RAISE(min, arrow::MakeEmptyArray(type_));
      LANCE_ASSIGN_OR_RAISE(max, arrow::MakeEmptyArray(type_));
    } else {
      LANCE_ASSIGN_OR_RAISE(min, arrow::Concatenate(mins_));
      LANCE_ASSIGN_OR_RAISE(max, arrow::Concatenate(maxs_));
    }
    LANCE_ASSIGN_OR_RAISE(auto nc, null_counts_.Finish());
    LANCE_ASSIGN_OR_RAISE(auto pi, page_idx_.Finish());
    auto lookup_schema = arrow::schema({arrow::field("min", type_), arrow::field("max", type_),
                                        arrow::field("null_count", arrow::uint32(), false),
                                        arrow::field("page_idx", arrow::uint32(), false)});
    auto lookup = arrow::RecordBatch::Make(lookup_schema, min->length(), {min, max, nc, pi});
    LANCE_ASSIGN_OR_RAISE(
        auto lookup_file,
        WriteFile(store_, dir_, "page_lookup.lance", lookup_schema, {lookup},
                  {{"batch_size", std::to_string(kBTreePageRows)}, {"range_partitioned", "false"}}, file_version_));
    return std::vector<IndexFile>{IndexFile{"page_data.lance", static_cast<uint64_t>(size)}, lookup_file};
  }

 private:
  BTreeSink(const io::ObjectStore& store, std::string dir, std::shared_ptr<arrow::DataType> type,
            std::string file_version)
      : store_(store), dir_(std::move(dir)), type_(std::move(type)), file_version_(std::move(file_version)) {}

  Status Page(const std::shared_ptr<arrow::Array>& values, const std::shared_ptr<arrow::Array>& ids) {
    const int64_t len = values->length();
    LANCE_RETURN_NOT_OK(data_->Write(*arrow::RecordBatch::Make(data_schema_, len, {values, ids})));
    // Bounds as pylance records them: the page's first and last value
    // (nulls sort first, so a page starting with nulls has a null min).
    mins_.push_back(values->Slice(0, 1));
    maxs_.push_back(values->Slice(len - 1, 1));
    LANCE_RETURN_NOT_OK(null_counts_.Append(static_cast<uint32_t>(values->null_count())));
    LANCE_RETURN_NOT_OK(page_idx_.Append(static_cast<uint32_t>(pages_++)));
    return Status::OK();
  }

  const io::ObjectStore& store_;
  std::string dir_;
  std::shared_ptr<arrow::DataType> type_;
  std::string file_version_;
  std::shared_ptr<arrow::Schema> data_schema_;
  std::unique_ptr<FileWriter> data_;
  arrow::ArrayVector values_, ids_;
  int64_t pending_ = 0;
  arrow::ArrayVector mins_, maxs_;
  arrow::UInt32Builder null_counts_, page_idx_;
  uint32_t pages_ = 0;
};

// One sorted run spilled to a local Lance file: its null rows first (ids
// ascending), then the rest in index order.
struct Run {
  std::shared_ptr<FileReader> reader;
  int64_t nulls = 0;
};

// Merges the sorted runs' rows in [begin(run), end(run)) into `sink`,
// `window` rows of a run in memory at a time: each round sorts what is
// buffered and emits every row up to the smallest "last row read" of the
// runs that still have unread rows (no unread row can sort before it); a
// run is read further once all its buffered rows are out.
Status MergeRuns(const std::vector<Run>& runs, bool nulls, int64_t window, BTreeSink* sink) {
  namespace cp = arrow::compute;
  const size_t k = runs.size();
  std::vector<int64_t> pos(k), end(k);
  for (size_t r = 0; r < k; ++r) {
    pos[r] = nulls ? 0 : runs[r].nulls;
    end[r] = nulls ? runs[r].nulls : static_cast<int64_t>(runs[r].reader->num_rows());
  }
  std::vector<bool> drained(k, true);  // every row read so far was emitted
  std::shared_ptr<arrow::Table> carry;
  auto src_field = arrow::field("src", arrow::int32());
  auto last_field = arrow::field("last", arrow::boolean());
  while (true) {
    std::vector<std::shared_ptr<arrow::Table>> parts;
    if (carry && carry->num_rows() > 0) parts.push_back(carry);
    for (size_t r = 0; r < k; ++r) {
      if (!drained[r] || pos[r] >= end[r]) continue;
      const int64_t n = std::min(window, end[r] - pos[r]);
      LANCE_ASSIGN_OR_RAISE(auto t, runs[r].reader->ReadRange({"values", "ids"}, pos[r], n));
      pos[r] += n;
      drained[r] = false;
      arrow::Int32Builder src;
      arrow::BooleanBuilder last;
      for (int64_t i = 0; i < n; ++i) {
        LANCE_RETURN_NOT_OK(src.Append(static_cast<int32_t>(r)));
        LANCE_RETURN_NOT_OK(last.Append(i == n - 1));
      }
      LANCE_ASSIGN_OR_RAISE(auto s, src.Finish());
      LANCE_ASSIGN_OR_RAISE(auto l, last.Finish());
      LANCE_ASSIGN_OR_RAISE(t, t->CombineChunks());
      LANCE_ASSIGN_OR_RAISE(t, t->AddColumn(2, src_field, std::make_shared<arrow::ChunkedArray>(s)));
      LANCE_ASSIGN_OR_RAISE(t, t->AddColumn(3, last_field, std::make_shared<arrow::ChunkedArray>(l)));
      parts.push_back(t);
    }
    if (parts.empty()) return Status::OK();
    LANCE_ASSIGN_OR_RAISE(auto all, arrow::ConcatenateTables(parts));
    LANCE_ASSIGN_OR_RAISE(all, all->CombineChunks());
    std::vector<cp::SortKey> keys;
    if (!nulls) keys.emplace_back("values");
    keys.emplace_back("ids");
    LANCE_ASSIGN_OR_RAISE(auto order_array, cp::SortIndices(arrow::Datum(all), cp::SortOptions(keys)));
    auto order = std::static_pointer_cast<arrow::UInt64Array>(order_array);
    const auto src = std::static_pointer_cast<arrow::Int32Array>(all->column(2)->chunk(0));
    const auto last = std::static_pointer_cast<arrow::BooleanArray>(all->column(3)->chunk(0));
    int64_t cut = order->length();  // rows [0, cut) of the order are emitted
    for (int64_t i = 0; i < order->length(); ++i) {
      const int64_t row = static_cast<int64_t>(order->Value(i));
      const int32_t r = src->Value(row);
      if (last->Value(row) && pos[r] < end[r]) {
        cut = i + 1;
        break;
      }
    }
    LANCE_ASSIGN_OR_RAISE(auto sorted, cp::Take(all, order));
    auto t = sorted.table();
    LANCE_ASSIGN_OR_RAISE(auto out, t->Slice(0, cut)->CombineChunks());
    if (cut > 0) LANCE_RETURN_NOT_OK(sink->Add(out->column(0)->chunk(0), out->column(1)->chunk(0)));
    carry = t->Slice(cut);
    // Runs whose last read row went out have nothing buffered any more.
    std::vector<bool> kept(k, false);
    if (carry->num_rows() > 0) {
      LANCE_ASSIGN_OR_RAISE(auto c, carry->CombineChunks());
      carry = c;
      const auto csrc = std::static_pointer_cast<arrow::Int32Array>(c->column(2)->chunk(0));
      for (int64_t i = 0; i < csrc->length(); ++i) kept[csrc->Value(i)] = true;
    }
    for (size_t r = 0; r < k; ++r) drained[r] = !kept[r];
  }
}

}  // namespace

Result<std::vector<IndexFile>> WriteBTreeIndex(const io::ObjectStore& store, const std::string& dir,
                                               const IndexInput& input, const std::string& file_version) {
  LANCE_RETURN_NOT_OK(CheckInput(input));
  LANCE_ASSIGN_OR_RAISE(auto sorted, SortInput(input));
  LANCE_ASSIGN_OR_RAISE(auto sink, BTreeSink::Open(store, dir, input.values->type(), file_version));
  LANCE_RETURN_NOT_OK(sink->Add(sorted.values, sorted.ids));
  return sink->Finish();
}

Result<std::vector<IndexFile>> WriteBTreeIndexSpilling(const io::ObjectStore& store, const std::string& dir,
                                                       arrow::RecordBatchReader& rows,
                                                       const std::shared_ptr<arrow::DataType>& type,
                                                       const std::string& file_version, int64_t run_rows) {
  namespace stdfs = std::filesystem;
  std::vector<std::shared_ptr<arrow::Array>> values, ids;
  int64_t buffered = 0;
  std::vector<Run> runs;
  std::error_code ec;
  const stdfs::path tmp = stdfs::temp_directory_path() / ("lance-cpp-index-sort-" + stdfs::path(dir).filename().string());
  struct Cleanup {
    stdfs::path p;
    ~Cleanup() {
      std::error_code e;
      stdfs::remove_all(p, e);
    }
  } cleanup{tmp};
  auto gather = [&]() -> Result<IndexInput> {
    IndexInput in;
    if (values.empty()) {
      LANCE_ASSIGN_OR_RAISE(in.values, arrow::MakeEmptyArray(type));
      LANCE_ASSIGN_OR_RAISE(auto e, arrow::MakeEmptyArray(arrow::uint64()));
      in.ids = std::static_pointer_cast<arrow::UInt64Array>(e);
    } else {
      LANCE_ASSIGN_OR_RAISE(in.values, arrow::Concatenate(values));
      LANCE_ASSIGN_OR_RAISE(auto i, arrow::Concatenate(ids));
      in.ids = std::static_pointer_cast<arrow::UInt64Array>(i);
    }
    values.clear();
    ids.clear();
    buffered = 0;
    return in;
  };
  auto spill = [&]() -> Status {
    LANCE_ASSIGN_OR_RAISE(auto in, gather());
    LANCE_ASSIGN_OR_RAISE(auto sorted, SortInput(in));
    if (runs.empty()) {
      stdfs::create_directories(tmp, ec);
      if (ec) return Status::IOError("cannot create ", tmp.string(), ": ", ec.message());
    }
    const std::string path = (tmp / ("run-" + std::to_string(runs.size()) + ".lance")).string();
    auto schema = arrow::schema({arrow::field("values", type), arrow::field("ids", arrow::uint64(), false)});
    FileWriterOptions options;
    options.version = "2.1";  // reads of row ranges decode only those rows
    LANCE_ASSIGN_OR_RAISE(auto writer, FileWriter::Open(path, *schema, options));
    LANCE_RETURN_NOT_OK(writer->Write(*arrow::RecordBatch::Make(schema, sorted.values->length(),
                                                                {sorted.values, sorted.ids})));
    LANCE_RETURN_NOT_OK(writer->Finish().status());
    LANCE_ASSIGN_OR_RAISE(auto reader, FileReader::Open(path));
    runs.push_back(Run{reader, sorted.values->null_count()});
    return Status::OK();
  };
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(rows.ReadNext(&batch));
    if (!batch) break;
    if (batch->num_columns() != 2 || batch->column(1)->type_id() != arrow::Type::UINT64) {
      return Status::Invalid("index input: expected (values, ids uint64) batches");
    }
    values.push_back(batch->column(0));
    ids.push_back(batch->column(1));
    buffered += batch->num_rows();
    if (buffered >= run_rows) LANCE_RETURN_NOT_OK(spill());
  }
  if (runs.empty()) {
    LANCE_ASSIGN_OR_RAISE(auto in, gather());
    return WriteBTreeIndex(store, dir, in, file_version);
  }
  if (buffered > 0) LANCE_RETURN_NOT_OK(spill());
  LANCE_ASSIGN_OR_RAISE(auto sink, BTreeSink::Open(store, dir, type, file_version));
  // Rows read from a run at a time: its share of the budget, within bounds
  // that keep each read worth its cost.
  const int64_t window = std::clamp<int64_t>(run_rows / static_cast<int64_t>(runs.size()), 4096, 65536);
  LANCE_RETURN_NOT_OK(MergeRuns(runs, /*nulls=*/true, window, sink.get()));
  LANCE_RETURN_NOT_OK(MergeRuns(runs, /*nulls=*/false, window, sink.get()));
  return sink->Finish();
}

Result<std::vector<IndexFile>> WriteBitmapIndex(const io::ObjectStore& store, const std::string& dir,
                                                const IndexInput& input, const std::string& file_version) {
  LANCE_RETURN_NOT_OK(CheckInput(input));
  LANCE_ASSIGN_OR_RAISE(auto sorted, SortInput(input));
  const auto& values = *sorted.values;
  const int64_t n = values.length();
  // One key per distinct value (null included; NaN is one key), each with
  // the ids of its rows in ascending order.
  std::vector<int64_t> key_rows;
  arrow::BinaryBuilder bitmaps;
  const auto eq = arrow::EqualOptions::Defaults().nans_equal(true);
  for (int64_t start = 0; start < n;) {
    int64_t end = start + 1;
    while (end < n && values.RangeEquals(start, start + 1, end, values, eq)) ++end;
    std::vector<uint64_t> ids(sorted.ids->raw_values() + start, sorted.ids->raw_values() + end);
    std::sort(ids.begin(), ids.end());
    LANCE_RETURN_NOT_OK(bitmaps.Append(EncodeRowIdTreeMap(ids)));
    key_rows.push_back(start);
    start = end;
  }
  arrow::Int64Builder take_builder;
  LANCE_RETURN_NOT_OK(take_builder.AppendValues(key_rows));
  LANCE_ASSIGN_OR_RAISE(auto take, take_builder.Finish());
  LANCE_ASSIGN_OR_RAISE(auto keys, arrow::compute::Take(sorted.values, take));
  LANCE_ASSIGN_OR_RAISE(auto bitmap_array, bitmaps.Finish());
  auto schema = arrow::schema({arrow::field("keys", input.values->type()), arrow::field("bitmaps", arrow::binary())});
  auto batch = arrow::RecordBatch::Make(schema, bitmap_array->length(), {keys.make_array(), bitmap_array});
  LANCE_ASSIGN_OR_RAISE(
      auto file, WriteFile(store, dir, "bitmap_page_lookup.lance", schema, {batch},
                           {{"lance:index_stats", "{\"num_bitmaps\":" + std::to_string(key_rows.size()) + "}"}},
                           file_version));
  return std::vector<IndexFile>{file};
}

}  // namespace lance::index
