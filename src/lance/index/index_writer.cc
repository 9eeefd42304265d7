#include "lance/index/index_writer.h"

#include <algorithm>
#include <cstring>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <roaring/roaring.h>

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
  cp::SortOptions options({cp::SortKey("values"), cp::SortKey("ids")}, cp::NullPlacement::AtEnd);
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

Result<std::vector<IndexFile>> WriteBTreeIndex(const io::ObjectStore& store, const std::string& dir,
                                               const IndexInput& input, const std::string& file_version) {
  LANCE_RETURN_NOT_OK(CheckInput(input));
  LANCE_ASSIGN_OR_RAISE(auto sorted, SortInput(input));
  const auto& type = input.values->type();
  auto data_schema = arrow::schema({arrow::field("values", type), arrow::field("ids", arrow::uint64(), false)});
  const int64_t n = sorted.values->length();
  std::vector<std::shared_ptr<arrow::RecordBatch>> pages;
  arrow::ArrayVector mins, maxs;
  arrow::UInt32Builder null_counts, page_idx;
  for (int64_t start = 0, page = 0; start < n; start += kBTreePageRows, ++page) {
    const int64_t len = std::min(kBTreePageRows, n - start);
    auto values = sorted.values->Slice(start, len);
    pages.push_back(arrow::RecordBatch::Make(data_schema, len, {values, sorted.ids->Slice(start, len)}));
    // Bounds as pylance records them: the page's first and last value
    // (nulls sort first, so a page starting with nulls has a null min).
    mins.push_back(values->Slice(0, 1));
    maxs.push_back(values->Slice(len - 1, 1));
    LANCE_RETURN_NOT_OK(null_counts.Append(static_cast<uint32_t>(values->null_count())));
    LANCE_RETURN_NOT_OK(page_idx.Append(static_cast<uint32_t>(page)));
  }
  std::shared_ptr<arrow::Array> min, max;
  if (mins.empty()) {
    LANCE_ASSIGN_OR_RAISE(min, arrow::MakeEmptyArray(type));
    LANCE_ASSIGN_OR_RAISE(max, arrow::MakeEmptyArray(type));
  } else {
    LANCE_ASSIGN_OR_RAISE(min, arrow::Concatenate(mins));
    LANCE_ASSIGN_OR_RAISE(max, arrow::Concatenate(maxs));
  }
  LANCE_ASSIGN_OR_RAISE(auto nc, null_counts.Finish());
  LANCE_ASSIGN_OR_RAISE(auto pi, page_idx.Finish());
  auto lookup_schema = arrow::schema({arrow::field("min", type), arrow::field("max", type),
                                      arrow::field("null_count", arrow::uint32(), false),
                                      arrow::field("page_idx", arrow::uint32(), false)});
  auto lookup = arrow::RecordBatch::Make(lookup_schema, min->length(), {min, max, nc, pi});
  std::vector<IndexFile> files;
  LANCE_ASSIGN_OR_RAISE(auto data_file, WriteFile(store, dir, "page_data.lance", data_schema, pages, {}, file_version));
  LANCE_ASSIGN_OR_RAISE(auto lookup_file,
                        WriteFile(store, dir, "page_lookup.lance", lookup_schema, {lookup},
                                  {{"batch_size", std::to_string(kBTreePageRows)}, {"range_partitioned", "false"}},
                                  file_version));
  return std::vector<IndexFile>{data_file, lookup_file};
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
