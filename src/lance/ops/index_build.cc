// Column reads and the LABEL_LIST / ZONEMAP specifics shared by
// create-index and optimize-indices (index_build_internal.h).
#include <algorithm>
#include <cstdlib>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lance/dataset_internal.h"
#include "lance/file_reader.h"
#include "lance/index/scalar_index.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/ops/index_build_internal.h"
#include "lance/scanner.h"
#include "lance/table/index_rows.h"
#include "lance/txn/commit.h"

namespace lance::ops {
namespace {

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

}  // namespace

std::array<uint8_t, 16> UuidBytes(const std::string& text) {
  std::array<uint8_t, 16> out{};
  size_t k = 0;
  auto hex = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i + 1 < text.size() && k < 16; ++i) {
    if (text[i] == '-') continue;
    out[k++] = static_cast<uint8_t>(hex(text[i]) << 4 | hex(text[i + 1]));
    ++i;
  }
  return out;
}

bool IsSystemIndex(const IndexMetadata& i) { return table::IsSystemIndex(i); }

Result<txn::CommitResult> CommitIndexTransaction(const Dataset& dataset, txn::CreateIndex op) {
  LANCE_RETURN_NOT_OK(CheckWritable(dataset));
  const txn::BaseVersion base = BaseVersionOf(dataset);
  txn::CommitOptions options;
  options.latest = &base;
  auto t = txn::Transaction::Make(dataset.version(), std::move(op));
  return CommitTransaction(*DatasetAccess::Store(dataset), std::move(t), options);
}

Result<std::shared_ptr<Dataset>> CommitIndexChange(const Dataset& dataset, txn::CreateIndex op) {
  LANCE_ASSIGN_OR_RAISE(auto result, CommitIndexTransaction(dataset, std::move(op)));
  const uint64_t version = result.version;
  return AtVersion(dataset, version, std::move(result));
}

int64_t SortRunRows() {
  if (const char* env = std::getenv("LANCE_CPP_INDEX_SORT_RUN_ROWS")) {
    const long long n = std::atoll(env);
    if (n > 0) return n;
  }
  return int64_t{1} << 22;
}

std::string ZoneMapDetails(uint64_t rows_per_zone, bool use_seeds) {
  std::string out;
  out.push_back(0x08);  // 1: rows_per_zone
  PutVarint(rows_per_zone, &out);
  out.push_back(0x10);  // 2: use_seeds
  PutVarint(use_seeds ? 1 : 0, &out);
  out.push_back(0x18);  // 3: has_null_bitmap
  PutVarint(1, &out);
  return out;
}

Status ParseZoneMapDetails(const std::string& bytes, uint64_t* rows_per_zone, bool* use_seeds) {
  *rows_per_zone = kDefaultRowsPerZone;
  *use_seeds = false;
  bool null_bitmap = false;
  size_t p = 0;
  auto varint = [&](uint64_t* v) -> bool {
    *v = 0;
    for (int shift = 0; p < bytes.size() && shift < 64; shift += 7) {
      const auto b = static_cast<uint8_t>(bytes[p++]);
      *v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  };
  while (p < bytes.size()) {
    uint64_t key = 0, value = 0;
    if (!varint(&key) || (key & 7) != 0 || !varint(&value)) {
      return Status::NotImplemented("ZoneMapIndexDetails with a field lance-cpp does not know");
    }
    switch (key >> 3) {
      case 1: *rows_per_zone = value; break;
      case 2: *use_seeds = value != 0; break;
      case 3: null_bitmap = value != 0; break;
      default: return Status::NotImplemented("ZoneMapIndexDetails field ", key >> 3, " is not known to lance-cpp");
    }
  }
  if (!null_bitmap) return Status::NotImplemented("a zone map index without a null bitmap (written before pylance 14)");
  if (*rows_per_zone == 0) return Status::Invalid("a zone map index with rows_per_zone 0");
  return Status::OK();
}

bool ZoneMapDefaultUseSeeds(const arrow::DataType& type) {
  using arrow::Type;
  switch (type.id()) {
    case Type::STRING:
    case Type::LARGE_STRING:
    case Type::STRING_VIEW:
    case Type::BINARY:
    case Type::LARGE_BINARY:
    case Type::BINARY_VIEW:
    case Type::DECIMAL128:
    case Type::DECIMAL256: return true;
    case Type::FIXED_SIZE_BINARY: return static_cast<const arrow::FixedSizeBinaryType&>(type).byte_width() > 8;
    default: return arrow::is_nested(type.id());
  }
}

ScanOptions IndexColumnScan(const std::string& column, bool addresses,
                            const std::optional<std::vector<uint64_t>>& fragments) {
  ScanOptions options;
  options.columns = {column};
  options.use_scalar_index = false;
  options.with_row_id = !addresses;
  options.with_row_address = addresses;
  options.fragment_ids = fragments;
  return options;
}

Result<std::shared_ptr<arrow::Table>> ReadColumnForIndex(const std::shared_ptr<const Dataset>& dataset,
                                                         const std::string& column, bool addresses,
                                                         const std::optional<std::vector<uint64_t>>& fragments) {
  return ScanBuilder(dataset).Options(IndexColumnScan(column, addresses, fragments)).ToTable();
}

Status FlattenLists(const arrow::ChunkedArray& lists, const arrow::ChunkedArray& ids,
                    arrow::ArrayVector* element_values, arrow::ArrayVector* element_ids,
                    std::vector<uint64_t>* list_nulls) {
  LANCE_ASSIGN_OR_RAISE(auto all_lists, arrow::Concatenate(lists.chunks()));
  LANCE_ASSIGN_OR_RAISE(auto all_ids, arrow::Concatenate(ids.chunks()));
  const auto& row_ids = static_cast<const arrow::UInt64Array&>(*all_ids);
  const bool large = all_lists->type_id() == arrow::Type::LARGE_LIST;
  auto offset = [&](int64_t i) -> int64_t {
    return large ? static_cast<const arrow::LargeListArray&>(*all_lists).value_offset(i)
                 : static_cast<const arrow::ListArray&>(*all_lists).value_offset(i);
  };
  const std::shared_ptr<arrow::Array> values = large ? static_cast<const arrow::LargeListArray&>(*all_lists).values()
                                                     : static_cast<const arrow::ListArray&>(*all_lists).values();
  arrow::Int64Builder take;
  arrow::UInt64Builder take_ids;
  for (int64_t i = 0; i < all_lists->length(); ++i) {
    if (all_lists->IsNull(i)) {
      list_nulls->push_back(row_ids.Value(i));
      continue;
    }
    for (int64_t k = offset(i); k < offset(i + 1); ++k) {
      LANCE_RETURN_NOT_OK(take.Append(k));
      LANCE_RETURN_NOT_OK(take_ids.Append(row_ids.Value(i)));
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto indices, take.Finish());
  LANCE_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(values, indices));
  element_values->push_back(taken.make_array());
  LANCE_ASSIGN_OR_RAISE(auto taken_ids, take_ids.Finish());
  element_ids->push_back(taken_ids);
  return Status::OK();
}

Status TrainZones(const std::shared_ptr<const Dataset>& dataset, const std::string& column,
                  const std::optional<std::vector<uint64_t>>& fragments, index::ZoneTrainer* trainer) {
  ScanOptions options;
  options.columns = {column};
  options.use_scalar_index = false;
  options.with_row_address = true;
  options.fragment_ids = fragments;
  LANCE_ASSIGN_OR_RAISE(auto reader, ScanBuilder(dataset).Options(options).ToReader());
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    LANCE_RETURN_NOT_OK(
        trainer->Add(batch->column(0), static_cast<const arrow::UInt64Array&>(*batch->column(1))));
  }
  return trainer->Finish();
}

Result<index::IndexInput> Concat(const arrow::ArrayVector& values, const arrow::ArrayVector& ids,
                                 const std::shared_ptr<arrow::DataType>& type) {
  index::IndexInput in;
  if (values.empty()) {
    LANCE_ASSIGN_OR_RAISE(in.values, arrow::MakeEmptyArray(type));
  } else {
    LANCE_ASSIGN_OR_RAISE(in.values, arrow::Concatenate(values));
  }
  std::shared_ptr<arrow::Array> all_ids;
  if (ids.empty()) {
    LANCE_ASSIGN_OR_RAISE(all_ids, arrow::MakeEmptyArray(arrow::uint64()));
  } else {
    LANCE_ASSIGN_OR_RAISE(all_ids, arrow::Concatenate(ids));
  }
  in.ids = std::static_pointer_cast<arrow::UInt64Array>(all_ids);
  return in;
}

Result<std::vector<IndexFile>> WriteListOrZoneIndex(const std::shared_ptr<const Dataset>& dataset,
                                                    const std::string& column, const std::string& type,
                                                    const std::shared_ptr<arrow::DataType>& value_type,
                                                    uint64_t rows_per_zone, const io::ObjectStore& store,
                                                    const std::string& dir, const std::string& file_version,
                                                    const std::optional<std::vector<uint64_t>>& fragments) {
  if (type == "ZONEMAP") {
    // Zones hold row addresses, also with stable row ids (as pylance's).
    index::ZoneMapTrainer trainer(value_type, rows_per_zone);
    LANCE_RETURN_NOT_OK(TrainZones(dataset, column, fragments, &trainer));
    return index::WriteZoneMapIndex(store, dir, value_type, trainer.zones(), trainer.null_rows(), rows_per_zone,
                                    file_version);
  }
  // LABEL_LIST: the dataset's row ids, as a bitmap index.
  LANCE_ASSIGN_OR_RAISE(auto table, ReadColumnForIndex(dataset, column, /*addresses=*/false, fragments));
  arrow::ArrayVector values, ids;
  std::vector<uint64_t> list_nulls;
  if (table->num_rows() > 0) {
    LANCE_RETURN_NOT_OK(FlattenLists(*table->column(0), *table->column(1), &values, &ids, &list_nulls));
  }
  std::sort(list_nulls.begin(), list_nulls.end());
  const auto& element = static_cast<const arrow::BaseListType&>(*value_type).value_type();
  LANCE_ASSIGN_OR_RAISE(auto elements, Concat(values, ids, element));
  return index::WriteLabelListIndex(store, dir, elements, list_nulls, file_version);
}

Result<std::shared_ptr<FileReader>> OpenFile(const Dataset& ds, const IndexMetadata& index, const std::string& name) {
  LANCE_ASSIGN_OR_RAISE(auto reader, index::OpenIndexFile(ds, index, name));
  if (reader == nullptr) {
    return Status::NotImplemented("index '", index.name, "' (", index.UuidString(), "): ", name,
                                  " is in a file format lance-cpp does not read");
  }
  return reader;
}

Result<std::vector<uint64_t>> ReadRowSet(const FileReader& reader, const std::string& key, const std::string& what) {
  LANCE_ASSIGN_OR_RAISE(auto rows, index::ReadRowIdBuffer(reader, key, what));
  if (!rows) return Status::NotImplemented(what, ": no ", key, " buffer lance-cpp can read");
  return std::move(*rows);
}

Status BitmapRows(const Dataset& ds, const IndexMetadata& index, const index::RowIdMap& map, arrow::ArrayVector* values,
                  arrow::ArrayVector* ids, std::vector<uint64_t>* list_nulls) {
  LANCE_ASSIGN_OR_RAISE(auto reader, OpenFile(ds, index, "bitmap_page_lookup.lance"));
  LANCE_ASSIGN_OR_RAISE(auto table, reader->ReadAll({"keys", "bitmaps"}));
  LANCE_ASSIGN_OR_RAISE(auto batch, table->CombineChunksToBatch());
  const auto& bitmaps = *batch->column(1);
  const std::string what = "index '" + index.name + "' (" + index.UuidString() + ")";
  arrow::Int64Builder take;
  arrow::UInt64Builder kept;
  for (int64_t k = 0; k < batch->num_rows(); ++k) {
    if (bitmaps.IsNull(k)) continue;
    std::string_view bytes = bitmaps.type_id() == arrow::Type::LARGE_BINARY
                                 ? static_cast<const arrow::LargeBinaryArray&>(bitmaps).GetView(k)
                                 : static_cast<const arrow::BinaryArray&>(bitmaps).GetView(k);
    LANCE_ASSIGN_OR_RAISE(auto rows, index::DecodeRowIdTreeMap(bytes, what));
    for (uint64_t id : rows) {
      const auto to = map(id);
      if (!to) continue;
      LANCE_RETURN_NOT_OK(take.Append(k));
      LANCE_RETURN_NOT_OK(kept.Append(*to));
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto indices, take.Finish());
  LANCE_ASSIGN_OR_RAISE(auto keys, arrow::compute::Take(batch->column(0), indices));
  values->push_back(keys.make_array());
  LANCE_ASSIGN_OR_RAISE(auto kept_ids, kept.Finish());
  ids->push_back(kept_ids);
  if (list_nulls != nullptr) {
    LANCE_ASSIGN_OR_RAISE(auto nulls, ReadRowSet(*reader, "lance:label_list_nulls", what));
    for (uint64_t id : nulls) {
      if (const auto to = map(id)) list_nulls->push_back(*to);
    }
  }
  return Status::OK();
}

}  // namespace lance::ops
