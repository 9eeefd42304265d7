#include "lance/index/index_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/util/bit_util.h>
#include <roaring/roaring.h>

#include "lance/file_reader.h"
#include "lance/file_writer.h"
#include "lance/index/bloom_filter.h"
#include "lance/index/ngram.h"
#include "lance/index/scalar_index.h"
#include "lance/schema.h"

namespace lance::index {
namespace {

// pylance 14's DEFAULT_BTREE_BATCH_SIZE: rows per page of page_data.lance.
constexpr int64_t kBTreePageRows = 4096;

// Integer `values` of type T with their `ids`, sorted by value, ties (and
// nulls, which go first) in input order: a stable LSD radix sort of
// order-preserving unsigned keys, a byte at a time, skipping the bytes all
// keys share, writing the sorted columns directly (no order array, no
// takes). P holds positions: 32 bits when they fit, to halve the traffic.
template <typename T, typename P>
Result<IndexInput> RadixSorted(const arrow::Array& values, const arrow::UInt64Array& ids) {
  using U = std::make_unsigned_t<T>;
  constexpr U kFlip = std::is_signed_v<T> ? U{1} << (sizeof(U) * 8 - 1) : U{0};
  const T* raw = values.data()->GetValues<T>(1);
  const uint64_t* raw_ids = ids.raw_values();
  const int64_t n = values.length();
  const int64_t nulls = values.null_count();
  const auto m = static_cast<size_t>(n - nulls);
  struct Item {
    U key;
    P pos;
  };
  // Not value-initialized: every slot is written before it is read.
  auto items = std::make_unique_for_overwrite<Item[]>(m);
  auto scratch = std::make_unique_for_overwrite<Item[]>(m);
  LANCE_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out_values, arrow::AllocateBuffer(n * int64_t{sizeof(T)}));
  LANCE_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> out_ids, arrow::AllocateBuffer(n * int64_t{sizeof(uint64_t)}));
  T* v = reinterpret_cast<T*>(out_values->mutable_data());
  uint64_t* d = reinterpret_cast<uint64_t*>(out_ids->mutable_data());
  size_t k = 0;
  int64_t null_at = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (nulls > 0 && values.IsNull(i)) {
      v[null_at] = T{};
      d[null_at++] = raw_ids[i];
      continue;
    }
    items[k++] = {static_cast<U>(static_cast<U>(raw[i]) ^ kFlip), static_cast<P>(i)};
  }
  Item* from = items.get();
  Item* to = scratch.get();
  for (size_t shift = 0; shift < sizeof(U) * 8; shift += 8) {
    size_t count[257] = {0};
    for (size_t i = 0; i < m; ++i) ++count[((from[i].key >> shift) & 0xFF) + 1];
    if (std::any_of(count + 1, count + 257, [&](size_t c) { return c == m; })) continue;
    for (int b = 0; b < 256; ++b) count[b + 1] += count[b];
    for (size_t i = 0; i < m; ++i) to[count[(from[i].key >> shift) & 0xFF]++] = from[i];
    std::swap(from, to);
  }
  for (size_t i = 0; i < m; ++i) {
    v[nulls + static_cast<int64_t>(i)] = static_cast<T>(from[i].key ^ kFlip);
    d[nulls + static_cast<int64_t>(i)] = raw_ids[from[i].pos];
  }
  std::shared_ptr<arrow::Buffer> validity;
  if (nulls > 0) {
    LANCE_ASSIGN_OR_RAISE(validity, arrow::AllocateBitmap(n));
    arrow::bit_util::SetBitsTo(validity->mutable_data(), 0, nulls, false);
    arrow::bit_util::SetBitsTo(validity->mutable_data(), nulls, n - nulls, true);
  }
  auto sorted_values = arrow::MakeArray(arrow::ArrayData::Make(values.type(), n, {validity, out_values}, nulls));
  auto sorted_ids = std::make_shared<arrow::UInt64Array>(n, out_ids);
  return IndexInput{sorted_values, sorted_ids};
}

template <typename T>
Result<IndexInput> RadixSorted(const arrow::Array& values, const arrow::UInt64Array& ids) {
  if (values.length() <= std::numeric_limits<uint32_t>::max()) return RadixSorted<T, uint32_t>(values, ids);
  return RadixSorted<T, uint64_t>(values, ids);
}

// RadixSorted for the integer-backed types whose order is their integer's;
// nullopt for the others.
Result<std::optional<IndexInput>> IntegerSorted(const arrow::Array& values, const arrow::UInt64Array& ids) {
  using arrow::Type;
  switch (values.type_id()) {
    case Type::INT8: return RadixSorted<int8_t>(values, ids);
    case Type::INT16: return RadixSorted<int16_t>(values, ids);
    case Type::INT32:
    case Type::DATE32:
    case Type::TIME32: return RadixSorted<int32_t>(values, ids);
    case Type::INT64:
    case Type::DATE64:
    case Type::TIME64:
    case Type::TIMESTAMP:
    case Type::DURATION: return RadixSorted<int64_t>(values, ids);
    case Type::UINT8: return RadixSorted<uint8_t>(values, ids);
    case Type::UINT16: return RadixSorted<uint16_t>(values, ids);
    case Type::UINT32: return RadixSorted<uint32_t>(values, ids);
    case Type::UINT64: return RadixSorted<uint64_t>(values, ids);
    default: return std::optional<IndexInput>();
  }
}

Result<IndexInput> SortInput(const IndexInput& in) {
  namespace cp = arrow::compute;
  // With ids ascending (a scan's order) a stable sort of the values alone
  // is the sort by (values, ids); for integers a radix sort does it.
  const bool ids_ascending = std::is_sorted(in.ids->raw_values(), in.ids->raw_values() + in.ids->length());
  if (ids_ascending && in.ids->null_count() == 0) {
    LANCE_ASSIGN_OR_RAISE(auto sorted, IntegerSorted(*in.values, *in.ids));
    if (sorted) return std::move(*sorted);
  }
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

}  // namespace

Result<IndexFile> WriteIndexFile(const io::ObjectStore& store, const std::string& dir, const std::string& name,
                                 const std::shared_ptr<arrow::Schema>& schema,
                                 const std::function<Status(FileWriter&)>& write_rows,
                                 const std::vector<std::pair<std::string, std::string>>& metadata,
                                 const std::string& file_version,
                                 const std::vector<std::pair<std::string, std::string>>& global_buffers) {
  const std::string path = dir + "/" + name;
  LANCE_ASSIGN_OR_RAISE(auto lance_schema, Schema::FromArrow(*schema));
  LANCE_ASSIGN_OR_RAISE(auto out, store.OpenOutputStream(path));
  FileWriterOptions options;
  options.version = file_version;
  LANCE_ASSIGN_OR_RAISE(auto writer, FileWriter::Open(std::move(out), store.FullPath(path), lance_schema, options));
  for (const auto& [k, v] : metadata) LANCE_RETURN_NOT_OK(writer->AddSchemaMetadata(k, v));
  LANCE_RETURN_NOT_OK(write_rows(*writer));
  // Each extra buffer after the rows, its index under its metadata key
  // (none for an empty key: a buffer the file names otherwise).
  for (const auto& [key, bytes] : global_buffers) {
    LANCE_ASSIGN_OR_RAISE(uint32_t index, writer->AddGlobalBuffer(bytes));
    if (!key.empty()) LANCE_RETURN_NOT_OK(writer->AddSchemaMetadata(key, std::to_string(index)));
  }
  LANCE_RETURN_NOT_OK(writer->Finish().status());
  LANCE_ASSIGN_OR_RAISE(int64_t size, store.Size(path));
  return IndexFile{name, static_cast<uint64_t>(size)};
}

namespace {

// One Lance file of `batches` as pylance's index store writes it: one write
// per batch.
Result<IndexFile> WriteFile(const io::ObjectStore& store, const std::string& dir, const std::string& name,
                            const std::shared_ptr<arrow::Schema>& schema,
                            const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                            const std::vector<std::pair<std::string, std::string>>& metadata,
                            const std::string& file_version,
                            const std::vector<std::pair<std::string, std::string>>& global_buffers = {}) {
  return WriteIndexFile(
      store, dir, name, schema,
      [&](FileWriter& writer) {
        for (const auto& batch : batches) LANCE_RETURN_NOT_OK(writer.Write(*batch));
        return Status::OK();
      },
      metadata, file_version, global_buffers);
}

// A local temporary directory for the runs an index build spills, made on
// first use and removed with its files when the build ends.
class SpillDir {
 public:
  explicit SpillDir(std::string name) : name_(std::move(name)) {}
  SpillDir(const SpillDir&) = delete;
  SpillDir& operator=(const SpillDir&) = delete;
  ~SpillDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  // The path of `file` in it.
  Result<std::string> File(const std::string& file) {
    if (path_.empty()) {
      std::error_code ec;
      const auto base = std::filesystem::temp_directory_path(ec);
      if (ec) return Status::IOError("no temporary directory for the index build's spill files: ", ec.message());
      const auto dir = base / name_;
      std::filesystem::create_directories(dir, ec);
      if (ec) return Status::IOError("cannot create ", dir.string(), ": ", ec.message());
      path_ = dir;
    }
    return (path_ / file).string();
  }

 private:
  std::string name_;
  std::filesystem::path path_;
};

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
    // One slice (a whole sorted input) needs no copy.
    std::shared_ptr<arrow::Array> v = values_.front(), i = ids_.front();
    if (values_.size() > 1) {
      LANCE_ASSIGN_OR_RAISE(v, arrow::Concatenate(values_));
      LANCE_ASSIGN_OR_RAISE(i, arrow::Concatenate(ids_));
    }
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
  std::vector<std::shared_ptr<arrow::Array>> values, ids;
  int64_t buffered = 0;
  std::vector<Run> runs;
  SpillDir tmp("lance-cpp-index-sort-" + std::filesystem::path(dir).filename().string());
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
    LANCE_ASSIGN_OR_RAISE(const std::string path, tmp.File("run-" + std::to_string(runs.size()) + ".lance"));
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

namespace {

// BitmapLookup for values that hash as they compare (not floats, whose
// zeros and NaNs Arrow's hashing tells apart) with ids ascending (a scan's
// order): the distinct values by hashing, only those sorted, each value's
// ids bucketed in input order. The same keys and bitmaps as sorting every
// row; nullopt when it does not apply.
Result<std::optional<std::shared_ptr<arrow::RecordBatch>>> HashedBitmapLookup(const IndexInput& input) {
  namespace cp = arrow::compute;
  using Lookup = std::optional<std::shared_ptr<arrow::RecordBatch>>;
  const auto& type = *input.values->type();
  if (arrow::is_floating(type.id()) || type.id() == arrow::Type::DICTIONARY || input.ids->null_count() > 0 ||
      !std::is_sorted(input.ids->raw_values(), input.ids->raw_values() + input.ids->length())) {
    return Lookup();
  }
  auto encoded = cp::DictionaryEncode(input.values);
  if (!encoded.ok()) return Lookup();  // a type Arrow does not hash
  const std::shared_ptr<arrow::Array> encoded_array = encoded->make_array();
  const auto& dict = static_cast<const arrow::DictionaryArray&>(*encoded_array);
  if (dict.indices()->type_id() != arrow::Type::INT32) return Lookup();
  const auto& indices = static_cast<const arrow::Int32Array&>(*dict.indices());
  LANCE_ASSIGN_OR_RAISE(auto order_array, cp::SortIndices(*dict.dictionary()));
  const auto& order = static_cast<const arrow::UInt64Array&>(*order_array);
  const int64_t distinct = dict.dictionary()->length();
  std::vector<int64_t> rank(static_cast<size_t>(distinct));
  for (int64_t r = 0; r < distinct; ++r) rank[static_cast<size_t>(order.Value(r))] = r;
  // Bucket offsets in sorted-key order, then the ids (ascending in each).
  std::vector<int64_t> start(static_cast<size_t>(distinct) + 1, 0);
  std::vector<uint64_t> nulls;
  const uint64_t* ids = input.ids->raw_values();
  for (int64_t i = 0; i < indices.length(); ++i) {
    if (indices.IsNull(i)) continue;
    ++start[static_cast<size_t>(rank[static_cast<size_t>(indices.Value(i))]) + 1];
  }
  for (int64_t r = 0; r < distinct; ++r) start[r + 1] += start[r];
  std::vector<uint64_t> bucketed(static_cast<size_t>(start.back()));
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t i = 0; i < indices.length(); ++i) {
    if (indices.IsNull(i)) {
      nulls.push_back(ids[i]);
      continue;
    }
    bucketed[static_cast<size_t>(fill[static_cast<size_t>(rank[static_cast<size_t>(indices.Value(i))])]++)] = ids[i];
  }
  arrow::BinaryBuilder bitmaps;
  if (!nulls.empty()) LANCE_RETURN_NOT_OK(bitmaps.Append(EncodeRowIdTreeMap(nulls)));
  for (int64_t r = 0; r < distinct; ++r) {
    std::vector<uint64_t> bucket(bucketed.begin() + start[r], bucketed.begin() + start[r + 1]);
    LANCE_RETURN_NOT_OK(bitmaps.Append(EncodeRowIdTreeMap(bucket)));
  }
  LANCE_ASSIGN_OR_RAISE(auto sorted_keys, cp::Take(*dict.dictionary(), order));
  std::shared_ptr<arrow::Array> keys = sorted_keys;
  if (!nulls.empty()) {
    LANCE_ASSIGN_OR_RAISE(auto null_key, arrow::MakeArrayOfNull(input.values->type(), 1));
    LANCE_ASSIGN_OR_RAISE(keys, arrow::Concatenate({null_key, sorted_keys}));
  }
  LANCE_ASSIGN_OR_RAISE(auto bitmap_array, bitmaps.Finish());
  auto schema = arrow::schema({arrow::field("keys", input.values->type()), arrow::field("bitmaps", arrow::binary())});
  return Lookup(arrow::RecordBatch::Make(schema, bitmap_array->length(), {keys, bitmap_array}));
}

// The bitmap_page_lookup batch of a bitmap index of `input`: one key per
// distinct value (null included; NaN is one key), each with the ids of its
// rows in ascending order.
Result<std::shared_ptr<arrow::RecordBatch>> BitmapLookup(const IndexInput& input) {
  LANCE_RETURN_NOT_OK(CheckInput(input));
  LANCE_ASSIGN_OR_RAISE(auto hashed, HashedBitmapLookup(input));
  if (hashed) return *hashed;
  LANCE_ASSIGN_OR_RAISE(auto sorted, SortInput(input));
  const auto& values = *sorted.values;
  const int64_t n = values.length();
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
  return arrow::RecordBatch::Make(schema, bitmap_array->length(), {keys.make_array(), bitmap_array});
}

std::string IndexStats(const arrow::RecordBatch& lookup) {
  return "{\"num_bitmaps\":" + std::to_string(lookup.num_rows()) + "}";
}

}  // namespace

Result<std::vector<IndexFile>> WriteBitmapIndex(const io::ObjectStore& store, const std::string& dir,
                                                const IndexInput& input, const std::string& file_version) {
  LANCE_ASSIGN_OR_RAISE(auto batch, BitmapLookup(input));
  LANCE_ASSIGN_OR_RAISE(auto file, WriteFile(store, dir, "bitmap_page_lookup.lance", batch->schema(), {batch},
                                             {{"lance:index_stats", IndexStats(*batch)}}, file_version));
  return std::vector<IndexFile>{file};
}

Result<std::vector<IndexFile>> WriteLabelListIndex(const io::ObjectStore& store, const std::string& dir,
                                                   const IndexInput& elements, const std::vector<uint64_t>& list_nulls,
                                                   const std::string& file_version) {
  LANCE_ASSIGN_OR_RAISE(auto batch, BitmapLookup(elements));
  LANCE_ASSIGN_OR_RAISE(auto file,
                        WriteFile(store, dir, "bitmap_page_lookup.lance", batch->schema(), {batch},
                                  {{"lance:index_stats", IndexStats(*batch)}}, file_version,
                                  {{"lance:label_list_nulls", EncodeRowIdTreeMap(list_nulls)}}));
  return std::vector<IndexFile>{file};
}

void ZoneMapZones::Append(const ZoneMapZones& o) {
  mins.insert(mins.end(), o.mins.begin(), o.mins.end());
  maxs.insert(maxs.end(), o.maxs.begin(), o.maxs.end());
  null_counts.insert(null_counts.end(), o.null_counts.begin(), o.null_counts.end());
  nan_counts.insert(nan_counts.end(), o.nan_counts.begin(), o.nan_counts.end());
  fragment_ids.insert(fragment_ids.end(), o.fragment_ids.begin(), o.fragment_ids.end());
  starts.insert(starts.end(), o.starts.begin(), o.starts.end());
  lengths.insert(lengths.end(), o.lengths.begin(), o.lengths.end());
}

bool ZoneMapValueType(const arrow::DataType& t) {
  using arrow::Type;
  if (arrow::is_integer(t.id())) return true;
  switch (t.id()) {
    case Type::FLOAT:
    case Type::DOUBLE:
    case Type::BOOL:
    case Type::STRING:
    case Type::LARGE_STRING:
    case Type::BINARY:
    case Type::LARGE_BINARY:
    case Type::DATE32:
    case Type::DATE64:
    case Type::TIMESTAMP:
    case Type::DECIMAL128: return true;
    default: return false;
  }
}

Status ZoneTrainer::Add(const std::shared_ptr<arrow::Array>& values, const arrow::UInt64Array& addresses) {
  const int64_t n = values->length();
  for (int64_t i = 0; i < n;) {
    const uint64_t fragment = addresses.Value(i) >> 32;
    if (rows_ > 0 && fragment != fragment_) LANCE_RETURN_NOT_OK(Flush());
    // The rows of this fragment that still fit in the zone.
    int64_t end = i;
    while (end < n && (addresses.Value(end) >> 32) == fragment &&
           rows_ + static_cast<uint64_t>(end - i) < rows_per_zone_) {
      ++end;
    }
    if (rows_ == 0) {
      fragment_ = fragment;
      first_ = addresses.Value(i) & 0xFFFFFFFFu;
    }
    last_ = addresses.Value(end - 1) & 0xFFFFFFFFu;
    for (int64_t k = i; k < end; ++k) {
      if (values->IsNull(k)) null_rows_.push_back(addresses.Value(k));
    }
    chunk_.push_back(values->Slice(i, end - i));
    rows_ += static_cast<uint64_t>(end - i);
    i = end;
    if (rows_ == rows_per_zone_) LANCE_RETURN_NOT_OK(Flush());
  }
  return Status::OK();
}

Status ZoneTrainer::Finish() { return rows_ > 0 ? Flush() : Status::OK(); }

Status ZoneTrainer::Flush() {
  arrow::ArrayVector values;
  values.swap(chunk_);
  rows_ = 0;
  return AddZone(values, fragment_, first_, last_ - first_ + 1);
}

// One zone's statistics as pylance 14 records them: nulls counted and left
// out of the bounds; for floats NaN is counted, left out of the min and made
// the max (a zone of NaN alone has a null min).
Status ZoneMapTrainer::AddZone(const arrow::ArrayVector& chunk, uint64_t fragment, uint64_t start, uint64_t length) {
  namespace cp = arrow::compute;
  // is_nan and min_max live in Arrow's registered compute kernels.
  static const Status compute_ready = cp::Initialize();
  LANCE_RETURN_NOT_OK(compute_ready);
  std::shared_ptr<arrow::Array> values;
  if (chunk.size() == 1) {
    values = chunk[0];
  } else {
    LANCE_ASSIGN_OR_RAISE(values, arrow::Concatenate(chunk));
  }
  const auto nulls = static_cast<uint32_t>(values->null_count());
  uint32_t nans = 0;
  if (arrow::is_floating(type_->id())) {
    LANCE_ASSIGN_OR_RAISE(auto is_nan, cp::CallFunction("is_nan", {values}));
    // Sum over booleans is a UInt64Scalar; count the trues directly rather than cast it.
    nans = static_cast<uint32_t>(
        std::static_pointer_cast<arrow::BooleanArray>(is_nan.make_array())->true_count());
    if (nans > 0) {
      LANCE_ASSIGN_OR_RAISE(auto keep, cp::CallFunction("invert", {is_nan}));
      LANCE_ASSIGN_OR_RAISE(auto kept, cp::Filter(values, keep));
      values = kept.make_array();
    }
  }
  std::shared_ptr<arrow::Scalar> min, max;
  if (values->length() - values->null_count() > 0) {
    LANCE_ASSIGN_OR_RAISE(auto mm, cp::MinMax(values, cp::ScalarAggregateOptions(/*skip_nulls=*/true, 0)));
    const auto& pair = mm.scalar_as<arrow::StructScalar>();
    min = pair.value[0];
    max = pair.value[1];
  } else {
    min = arrow::MakeNullScalar(type_);
    max = arrow::MakeNullScalar(type_);
  }
  if (nans > 0) {
    max = type_->id() == arrow::Type::FLOAT
              ? std::static_pointer_cast<arrow::Scalar>(std::make_shared<arrow::FloatScalar>(std::nanf("")))
              : std::static_pointer_cast<arrow::Scalar>(std::make_shared<arrow::DoubleScalar>(std::nan("")));
  }
  LANCE_ASSIGN_OR_RAISE(auto min_array, arrow::MakeArrayFromScalar(*min, 1));
  LANCE_ASSIGN_OR_RAISE(auto max_array, arrow::MakeArrayFromScalar(*max, 1));
  zones_.mins.push_back(min_array);
  zones_.maxs.push_back(max_array);
  zones_.null_counts.push_back(nulls);
  zones_.nan_counts.push_back(nans);
  zones_.fragment_ids.push_back(fragment);
  zones_.starts.push_back(start);
  zones_.lengths.push_back(length);
  return Status::OK();
}

Result<std::vector<IndexFile>> WriteZoneMapIndex(const io::ObjectStore& store, const std::string& dir,
                                                 const std::shared_ptr<arrow::DataType>& type,
                                                 const ZoneMapZones& zones, const std::vector<uint64_t>& null_rows,
                                                 uint64_t rows_per_zone, const std::string& file_version) {
  std::shared_ptr<arrow::Array> min, max;
  if (zones.size() == 0) {
    LANCE_ASSIGN_OR_RAISE(min, arrow::MakeEmptyArray(type));
    LANCE_ASSIGN_OR_RAISE(max, arrow::MakeEmptyArray(type));
  } else {
    LANCE_ASSIGN_OR_RAISE(min, arrow::Concatenate(zones.mins));
    LANCE_ASSIGN_OR_RAISE(max, arrow::Concatenate(zones.maxs));
  }
  arrow::UInt32Builder nulls, nans;
  arrow::UInt64Builder fragments, starts, lengths;
  LANCE_RETURN_NOT_OK(nulls.AppendValues(zones.null_counts));
  LANCE_RETURN_NOT_OK(nans.AppendValues(zones.nan_counts));
  LANCE_RETURN_NOT_OK(fragments.AppendValues(zones.fragment_ids));
  LANCE_RETURN_NOT_OK(starts.AppendValues(zones.starts));
  LANCE_RETURN_NOT_OK(lengths.AppendValues(zones.lengths));
  LANCE_ASSIGN_OR_RAISE(auto nc, nulls.Finish());
  LANCE_ASSIGN_OR_RAISE(auto nn, nans.Finish());
  LANCE_ASSIGN_OR_RAISE(auto fi, fragments.Finish());
  LANCE_ASSIGN_OR_RAISE(auto zs, starts.Finish());
  LANCE_ASSIGN_OR_RAISE(auto zl, lengths.Finish());
  auto schema = arrow::schema({arrow::field("min", type), arrow::field("max", type),
                               arrow::field("null_count", arrow::uint32(), false),
                               arrow::field("nan_count", arrow::uint32(), false),
                               arrow::field("fragment_id", arrow::uint64(), false),
                               arrow::field("zone_start", arrow::uint64(), false),
                               arrow::field("zone_length", arrow::uint64(), false)});
  auto batch = arrow::RecordBatch::Make(schema, static_cast<int64_t>(zones.size()), {min, max, nc, nn, fi, zs, zl});
  LANCE_ASSIGN_OR_RAISE(auto file, WriteFile(store, dir, "zonemap.lance", schema, {batch},
                                             {{"rows_per_zone", std::to_string(rows_per_zone)}}, file_version,
                                             {{"null_bitmap", EncodeRowIdTreeMap(null_rows)}}));
  return std::vector<IndexFile>{file};
}

void BloomFilterZones::Append(const BloomFilterZones& o) {
  fragment_ids.insert(fragment_ids.end(), o.fragment_ids.begin(), o.fragment_ids.end());
  starts.insert(starts.end(), o.starts.begin(), o.starts.end());
  lengths.insert(lengths.end(), o.lengths.begin(), o.lengths.end());
  has_nulls.insert(has_nulls.end(), o.has_nulls.begin(), o.has_nulls.end());
  filters.insert(filters.end(), o.filters.begin(), o.filters.end());
}

Status BloomFilterTrainer::AddZone(const arrow::ArrayVector& chunk, uint64_t fragment, uint64_t start,
                                   uint64_t length) {
  LANCE_ASSIGN_OR_RAISE(auto filter, SplitBlockBloomFilter::ForItems(number_of_items_, probability_));
  bool has_null = false;
  for (const auto& values : chunk) {
    for (int64_t i = 0; i < values->length(); ++i) {
      if (auto hash = BloomHash(*values, i)) {
        filter.InsertHash(*hash);
      } else {
        has_null = true;
      }
    }
  }
  zones_.fragment_ids.push_back(fragment);
  zones_.starts.push_back(start);
  zones_.lengths.push_back(length);
  zones_.has_nulls.push_back(has_null);
  zones_.filters.push_back(filter.ToBytes());
  return Status::OK();
}

std::string RustFloatText(double v) {
  char buf[400];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed);
  return std::string(buf, r.ptr);
}

Result<std::vector<IndexFile>> WriteBloomFilterIndex(const io::ObjectStore& store, const std::string& dir,
                                                     const BloomFilterZones& zones,
                                                     const std::optional<std::vector<uint64_t>>& null_rows,
                                                     uint64_t number_of_items,
                                                     double probability, const std::string& file_version) {
  arrow::UInt64Builder fragments, starts, lengths;
  arrow::BooleanBuilder has_nulls;
  arrow::BinaryBuilder filters;
  LANCE_RETURN_NOT_OK(fragments.AppendValues(zones.fragment_ids));
  LANCE_RETURN_NOT_OK(starts.AppendValues(zones.starts));
  LANCE_RETURN_NOT_OK(lengths.AppendValues(zones.lengths));
  LANCE_RETURN_NOT_OK(has_nulls.AppendValues(zones.has_nulls));
  for (const auto& f : zones.filters) LANCE_RETURN_NOT_OK(filters.Append(f));
  LANCE_ASSIGN_OR_RAISE(auto fi, fragments.Finish());
  LANCE_ASSIGN_OR_RAISE(auto zs, starts.Finish());
  LANCE_ASSIGN_OR_RAISE(auto zl, lengths.Finish());
  LANCE_ASSIGN_OR_RAISE(auto hn, has_nulls.Finish());
  LANCE_ASSIGN_OR_RAISE(auto bf, filters.Finish());
  auto schema = arrow::schema({arrow::field("fragment_id", arrow::uint64(), false),
                               arrow::field("zone_start", arrow::uint64(), false),
                               arrow::field("zone_length", arrow::uint64(), false),
                               arrow::field("has_null", arrow::boolean(), false),
                               arrow::field("bloom_filter_data", arrow::binary(), false)});
  auto batch = arrow::RecordBatch::Make(schema, static_cast<int64_t>(zones.size()), {fi, zs, zl, hn, bf});
  LANCE_ASSIGN_OR_RAISE(auto file, WriteFile(store, dir, "bloomfilter.lance", schema, {batch},
                                             {{"bloomfilter_item", std::to_string(number_of_items)},
                                              {"bloomfilter_probability", RustFloatText(probability)}},
                                             file_version,
                                             null_rows ? std::vector<std::pair<std::string, std::string>>{
                                                             {"null_bitmap", EncodeRowIdTreeMap(*null_rows)}}
                                                       : std::vector<std::pair<std::string, std::string>>{}));
  return std::vector<IndexFile>{file};
}

namespace {

// One token's rows while an NGRAM index is built: a 32-bit bitmap per high
// part of the row ids, serialized as a RoaringTreemap (ngram.cc).
class Posting {
 public:
  Posting() = default;
  Posting(const Posting&) = delete;
  Posting& operator=(const Posting&) = delete;
  ~Posting() {
    for (auto& [high, rb] : parts_) roaring_bitmap_free(rb);
  }
  void Add(uint64_t id) {
    const auto high = static_cast<uint32_t>(id >> 32);
    auto it = parts_.find(high);
    if (it == parts_.end()) it = parts_.emplace(high, roaring_bitmap_create()).first;
    roaring_bitmap_add(it->second, static_cast<uint32_t>(id));
  }
  std::string Serialize() const { return SerializeRoaringTreemap(parts_); }

 private:
  std::map<uint32_t, roaring_bitmap_t*> parts_;
};

// pylance's bound on the posting bytes of one batch (an i32-offset binary
// array), with its headroom.
constexpr int64_t kMaxPostingBatchBytes = int64_t{0x7FFFFFFF} - (int64_t{1} << 20);

// Posting lists in ascending token order, cut into batches of the index
// file as pylance cuts them.
class PostingBatches {
 public:
  PostingBatches(std::string column) : column_(std::move(column)) {}
  static std::shared_ptr<arrow::Schema> Schema() {
    return arrow::schema({arrow::field("tokens", arrow::uint32()),
                          arrow::field("posting_list", arrow::binary(), false,
                                       arrow::key_value_metadata({"lance-encoding:compression"}, {"none"}))});
  }
  Status Add(uint32_t token, std::string_view list) {
    if (static_cast<int64_t>(list.size()) > kMaxPostingBatchBytes) {
      return Status::Invalid("NGRAM index on column ", column_, ": the posting list of '", ngram::TokenText(token),
                             "' is over 2 GiB");
    }
    if (bytes_ + static_cast<int64_t>(list.size()) > kMaxPostingBatchBytes) LANCE_RETURN_NOT_OK(Cut());
    LANCE_RETURN_NOT_OK(tokens_.Append(token));
    LANCE_RETURN_NOT_OK(lists_.Append(list));
    bytes_ += static_cast<int64_t>(list.size());
    return Status::OK();
  }
  // The batches; none for an index of no rows, as pylance's.
  Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Finish() {
    if (tokens_.length() > 0) LANCE_RETURN_NOT_OK(Cut());
    return std::move(batches_);
  }

 private:
  Status Cut() {
    LANCE_ASSIGN_OR_RAISE(auto t, tokens_.Finish());
    LANCE_ASSIGN_OR_RAISE(auto l, lists_.Finish());
    batches_.push_back(arrow::RecordBatch::Make(Schema(), t->length(), {t, l}));
    bytes_ = 0;
    return Status::OK();
  }
  std::string column_;
  arrow::UInt32Builder tokens_;
  arrow::BinaryBuilder lists_;
  int64_t bytes_ = 0;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
};

// A spilled run of posting lists being merged: a window of its rows.
struct SpillCursor {
  std::shared_ptr<FileReader> reader;
  uint64_t next = 0;  // first row not yet in the window
  std::shared_ptr<arrow::UInt32Array> tokens;
  std::shared_ptr<arrow::BinaryArray> lists;
  int64_t at = 0;
  bool done() const { return !tokens || at >= tokens->length(); }
  Status Fill() {
    if (!done() || next >= reader->num_rows()) return Status::OK();
    const uint64_t n = std::min<uint64_t>(256, reader->num_rows() - next);
    LANCE_ASSIGN_OR_RAISE(auto t, reader->ReadRange({"tokens", "posting_list"}, next, n));
    LANCE_ASSIGN_OR_RAISE(auto b, t->CombineChunksToBatch());
    tokens = std::static_pointer_cast<arrow::UInt32Array>(b->column(0));
    lists = std::static_pointer_cast<arrow::BinaryArray>(b->column(1));
    at = 0;
    next += n;
    return Status::OK();
  }
};

}  // namespace

Result<std::vector<IndexFile>> WriteNGramIndex(const io::ObjectStore& store, const std::string& dir,
                                               arrow::RecordBatchReader& rows, const std::string& column,
                                               const std::string& file_version, int64_t run_rows,
                                               const std::vector<NGramPostings>& old) {
  std::map<uint32_t, std::unique_ptr<Posting>> postings;  // by token, ascending as the file
  auto posting = [&](uint32_t token) -> Posting& {
    auto& p = postings[token];
    if (!p) p = std::make_unique<Posting>();
    return *p;
  };
  for (const auto& segment : old) {
    constexpr uint64_t kRows = 1024;
    const FileReader& file = *segment.file;
    for (uint64_t at = 0; at < file.num_rows(); at += kRows) {
      LANCE_ASSIGN_OR_RAISE(auto t,
                            file.ReadRange({"tokens", "posting_list"}, at, std::min(kRows, file.num_rows() - at)));
      LANCE_ASSIGN_OR_RAISE(auto b, t->CombineChunksToBatch());
      const auto& tokens = static_cast<const arrow::UInt32Array&>(*b->column(0));
      const auto& lists = static_cast<const arrow::BinaryArray&>(*b->column(1));
      for (int64_t i = 0; i < b->num_rows(); ++i) {
        if (tokens.IsNull(i) || lists.IsNull(i)) return Status::Invalid("ngram index ", dir, ": a null token or list");
        LANCE_ASSIGN_OR_RAISE(auto ids, DecodeRoaringTreemap(lists.GetView(i), "ngram index posting list"));
        Posting& p = posting(tokens.Value(i));
        for (uint64_t id : ids) {
          if (auto to = segment.map(id)) p.Add(*to);
        }
      }
    }
  }
  SpillDir tmp("lance-cpp-index-ngram-" + std::filesystem::path(dir).filename().string());
  std::vector<std::shared_ptr<FileReader>> spills;
  // The postings of the rows read so far to a local Lance file, and cleared.
  auto spill = [&]() -> Status {
    PostingBatches out(column);
    for (auto it = postings.begin(); it != postings.end(); it = postings.erase(it)) {
      LANCE_RETURN_NOT_OK(out.Add(it->first, it->second->Serialize()));
    }
    LANCE_ASSIGN_OR_RAISE(auto batches, out.Finish());
    LANCE_ASSIGN_OR_RAISE(const std::string path, tmp.File("spill-" + std::to_string(spills.size()) + ".lance"));
    FileWriterOptions options;
    options.version = "2.1";  // reads of row ranges decode only those rows
    LANCE_ASSIGN_OR_RAISE(auto writer, FileWriter::Open(path, *PostingBatches::Schema(), options));
    for (const auto& b : batches) LANCE_RETURN_NOT_OK(writer->Write(*b));
    LANCE_RETURN_NOT_OK(writer->Finish().status());
    LANCE_ASSIGN_OR_RAISE(auto reader, FileReader::Open(path));
    spills.push_back(std::move(reader));
    return Status::OK();
  };
  std::vector<uint32_t> tokens;
  int64_t buffered = 0;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(rows.ReadNext(&batch));
    if (!batch) break;
    if (batch->num_columns() != 2 || batch->column(1)->type_id() != arrow::Type::UINT64) {
      return Status::Invalid("ngram index input: expected strings and uint64 row ids");
    }
    const auto& values = *batch->column(0);
    const auto& ids = static_cast<const arrow::UInt64Array&>(*batch->column(1));
    const bool large = values.type_id() == arrow::Type::LARGE_STRING;
    if (!large && values.type_id() != arrow::Type::STRING) {
      return Status::Invalid("ngram index input: expected strings, got ", values.type()->ToString());
    }
    for (int64_t i = 0; i < batch->num_rows(); ++i) {
      if (values.IsNull(i)) {
        posting(ngram::kNullToken).Add(ids.Value(i));
        continue;
      }
      const std::string_view text = large ? static_cast<const arrow::LargeStringArray&>(values).GetView(i)
                                          : static_cast<const arrow::StringArray&>(values).GetView(i);
      tokens.clear();
      bool unknown = false;
      ngram::Tokenize(text, &tokens, &unknown);
      if (unknown) {
        return Status::NotImplemented("NGRAM index on column ", column, ": row id ", ids.Value(i),
                                      " holds a character past U+017F, which pylance lowercases and ",
                                      "ASCII-folds by a table lance-cpp does not carry; build this index with pylance");
      }
      for (uint32_t t : tokens) posting(t).Add(ids.Value(i));
    }
    buffered += batch->num_rows();
    if (buffered >= run_rows) {
      LANCE_RETURN_NOT_OK(spill());
      buffered = 0;
    }
  }
  PostingBatches out(column);
  if (spills.empty()) {
    for (auto it = postings.begin(); it != postings.end(); it = postings.erase(it)) {
      LANCE_RETURN_NOT_OK(out.Add(it->first, it->second->Serialize()));
    }
  } else {
    if (!postings.empty()) LANCE_RETURN_NOT_OK(spill());
    // Merge the runs by token: a token in several runs gets the union of
    // their rows, serialized as one posting list.
    std::vector<SpillCursor> cursors;
    for (auto& r : spills) {
      cursors.emplace_back();
      cursors.back().reader = r;
    }
    while (true) {
      std::optional<uint32_t> low;
      for (auto& c : cursors) {
        LANCE_RETURN_NOT_OK(c.Fill());
        if (!c.done() && (!low || c.tokens->Value(c.at) < *low)) low = c.tokens->Value(c.at);
      }
      if (!low) break;
      std::vector<SpillCursor*> with;
      for (auto& c : cursors) {
        if (!c.done() && c.tokens->Value(c.at) == *low) with.push_back(&c);
      }
      if (with.size() == 1) {
        LANCE_RETURN_NOT_OK(out.Add(*low, with[0]->lists->GetView(with[0]->at)));
      } else {
        Posting merged;
        for (SpillCursor* c : with) {
          LANCE_ASSIGN_OR_RAISE(auto ids, DecodeRoaringTreemap(c->lists->GetView(c->at), "ngram spill"));
          for (uint64_t id : ids) merged.Add(id);
        }
        LANCE_RETURN_NOT_OK(out.Add(*low, merged.Serialize()));
      }
      for (SpillCursor* c : with) ++c->at;
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto batches, out.Finish());
  LANCE_ASSIGN_OR_RAISE(auto file, WriteFile(store, dir, "ngram_postings.lance", PostingBatches::Schema(), batches,
                                             {}, file_version));
  return std::vector<IndexFile>{file};
}

Result<std::vector<IndexFile>> RemapNGramIndex(const io::ObjectStore& store, const std::string& dir,
                                               const std::shared_ptr<FileReader>& old,
                                               const RowIdMap& map,
                                               const std::string& file_version) {
  // The old postings merged with no new rows.
  auto schema = arrow::schema({arrow::field("values", arrow::utf8()), arrow::field("ids", arrow::uint64())});
  LANCE_ASSIGN_OR_RAISE(auto no_rows, arrow::RecordBatchReader::Make({}, schema));
  return WriteNGramIndex(store, dir, *no_rows, "(remapped)", file_version, std::numeric_limits<int64_t>::max(),
                         {NGramPostings{old, map}});
}

}  // namespace lance::index
