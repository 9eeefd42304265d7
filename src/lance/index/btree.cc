// BTREE indices as pylance 14 writes them (rust/lance-index/src/scalar/btree.rs):
//   page_lookup.lance  min, max (value type), null_count u32, page_idx u32;
//                      schema metadata batch_size, range_partitioned
//   page_data.lance    values (sorted, nulls first), ids u64 (row ids)
// index_version 0 stores the dataset's row ids (stable ids when it has
// them). pylance 14.0.2 writes index_version 1 on datasets with stable row
// ids, and its ids are then row addresses (observed: fragment 1's rows are
// listed as 1 << 32 | offset, not as their stable ids); lance-cpp reads
// version 1 only there. Searches evaluate the predicate on page_data's values, so they answer it
// exactly as a scan of the column would.
#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lance/file_reader.h"
#include "lance/index/bounds_pruner.h"
#include "lance/index/scalar_index.h"
#include "lance/warnings.h"

namespace lance::index {
namespace {

constexpr const char* kLookupFile = "page_lookup.lance";
constexpr const char* kPagesFile = "page_data.lance";

bool HasField(const arrow::Schema& schema, const char* name, const std::shared_ptr<arrow::DataType>& type) {
  auto f = schema.GetFieldByName(name);
  return f != nullptr && (type == nullptr || f->type()->Equals(*type));
}


class BTreeIndex : public ScalarIndex {
 public:
  /// Pages read from `pages` as needed, or held in `legacy_pages` (a
  /// legacy file's page_data, read whole).
  BTreeIndex(std::shared_ptr<FileReader> pages, std::shared_ptr<arrow::RecordBatch> legacy_pages,
             std::shared_ptr<arrow::DataType> type, bool addresses, BoundsPruner pruner,
             std::vector<uint32_t> page_idx, uint64_t batch_size)
      : pages_(std::move(pages)), legacy_pages_(std::move(legacy_pages)), type_(std::move(type)),
        addresses_(addresses), pruner_(std::move(pruner)), page_idx_(std::move(page_idx)), batch_size_(batch_size) {}
  const char* type_name() const override { return "BTree"; }
  const std::shared_ptr<arrow::DataType>& value_type() const override { return type_; }
  bool stores_addresses() const override { return addresses_; }

  Result<RowIds> Search(const arrow::compute::Expression& predicate, const std::string& column) override {
    LANCE_ASSIGN_OR_RAISE(auto keep, pruner_.Pages(predicate));
    // Page k of the lookup is rows [page_idx * batch_size, +batch_size) of
    // page_data; read runs of consecutive pages at once.
    std::vector<uint32_t> wanted;
    for (size_t k = 0; k < page_idx_.size(); ++k) {
      if (!keep || (*keep)[k]) wanted.push_back(page_idx_[k]);
    }
    std::sort(wanted.begin(), wanted.end());
    RowIds out;
    const uint64_t rows = pages_ ? pages_->num_rows() : static_cast<uint64_t>(legacy_pages_->num_rows());
    for (size_t i = 0; i < wanted.size();) {
      size_t j = i + 1;
      while (j < wanted.size() && wanted[j] == wanted[j - 1] + 1) ++j;
      const uint64_t begin = uint64_t{wanted[i]} * batch_size_;
      const uint64_t end = std::min(rows, uint64_t{wanted[j - 1] + 1} * batch_size_);
      i = j;
      if (begin >= end) continue;
      std::shared_ptr<arrow::RecordBatch> combined;
      if (pages_) {
        LANCE_ASSIGN_OR_RAISE(auto table, pages_->ReadRange({"values", "ids"}, begin, end - begin));
        LANCE_ASSIGN_OR_RAISE(combined, table->CombineChunksToBatch());
      } else {
        combined = legacy_pages_->Slice(static_cast<int64_t>(begin), static_cast<int64_t>(end - begin));
      }
      auto ids = std::static_pointer_cast<arrow::UInt64Array>(combined->GetColumnByName("ids"));
      if (ids->null_count() > 0) return Status::Invalid("BTREE page data has null row ids");
      LANCE_ASSIGN_OR_RAISE(auto hits, EvaluateOn(predicate, column, combined->GetColumnByName("values")));
      for (size_t r = 0; r < hits.size(); ++r) {
        if (hits[r]) out.push_back(ids->Value(static_cast<int64_t>(r)));
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

 private:
  std::shared_ptr<FileReader> pages_;
  std::shared_ptr<arrow::RecordBatch> legacy_pages_;
  std::shared_ptr<arrow::DataType> type_;
  bool addresses_ = false;
  BoundsPruner pruner_;
  std::vector<uint32_t> page_idx_;
  uint64_t batch_size_ = 4096;
};

// A BTREE of pylance before 0.21 (fixture v0.20.0): the same two files in
// the legacy (0.1) format, read whole (such indices are small), batch size
// 4096, no index_version, the dataset's row ids (page_data's second column
// is named row_ids). Legacy files keep no
// validity, so null values would read as zeros: an index with nulls is not
// used, as it cannot be read right.
Result<std::unique_ptr<ScalarIndex>> OpenLegacyBTreeIndex(const Dataset& dataset, const IndexMetadata& metadata) {
  if (metadata.index_version.has_value() || dataset.manifest().UsesStableRowIds()) {
    return std::unique_ptr<ScalarIndex>();
  }
  auto lookup = ReadLegacyIndexFile(dataset, metadata, kLookupFile);
  if (!lookup.ok() || *lookup == nullptr) return std::unique_ptr<ScalarIndex>();
  const auto& lookup_schema = *(*lookup)->schema();
  auto min = lookup_schema.GetFieldByName("min");
  if (min == nullptr || !HasField(lookup_schema, "max", min->type()) ||
      !HasField(lookup_schema, "null_count", arrow::uint32()) || !HasField(lookup_schema, "page_idx", arrow::uint32())) {
    return std::unique_ptr<ScalarIndex>();
  }
  auto nulls = std::static_pointer_cast<arrow::UInt32Array>((*lookup)->GetColumnByName("null_count"));
  for (int64_t k = 0; k < nulls->length(); ++k) {
    if (nulls->Value(k) != 0) return std::unique_ptr<ScalarIndex>();
  }
  auto pages = ReadLegacyIndexFile(dataset, metadata, kPagesFile);
  if (!pages.ok() || *pages == nullptr) return std::unique_ptr<ScalarIndex>();
  // pylance 0.20 named the ids column row_ids.
  const auto& page_schema = *(*pages)->schema();
  if (!HasField(page_schema, "values", min->type()) || !HasField(page_schema, "row_ids", arrow::uint64()) ||
      page_schema.num_fields() != 2) {
    return std::unique_ptr<ScalarIndex>();
  }
  auto renamed = arrow::RecordBatch::Make(
      arrow::schema({page_schema.field(page_schema.GetFieldIndex("values")), arrow::field("ids", arrow::uint64())}),
      (*pages)->num_rows(), {(*pages)->GetColumnByName("values"), (*pages)->GetColumnByName("row_ids")});
  constexpr uint64_t kBatchSize = 4096;
  auto page_idx_array = std::static_pointer_cast<arrow::UInt32Array>((*lookup)->GetColumnByName("page_idx"));
  std::vector<uint32_t> page_idx;
  for (int64_t k = 0; k < page_idx_array->length(); ++k) page_idx.push_back(page_idx_array->Value(k));
  std::vector<uint32_t> sorted = page_idx;
  std::sort(sorted.begin(), sorted.end());
  const uint64_t rows = static_cast<uint64_t>(renamed->num_rows());
  for (size_t k = 0; k < sorted.size(); ++k) {
    if (sorted[k] != k) return std::unique_ptr<ScalarIndex>();
  }
  if (sorted.size() != (rows + kBatchSize - 1) / kBatchSize) return std::unique_ptr<ScalarIndex>();
  BoundsPruner pruner((*lookup)->GetColumnByName("min"), (*lookup)->GetColumnByName("max"), nulls);
  return std::unique_ptr<ScalarIndex>(new BTreeIndex(nullptr, renamed, min->type(), /*addresses=*/true,
                                                     std::move(pruner), std::move(page_idx), kBatchSize));
}

}  // namespace

Result<std::unique_ptr<ScalarIndex>> OpenBTreeIndex(const Dataset& dataset, const IndexMetadata& metadata) {
  const int32_t version = metadata.index_version.value_or(0);
  const bool stable = dataset.manifest().UsesStableRowIds();
  if (version != 0 && !(version == 1 && stable)) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto lookup, OpenIndexFile(dataset, metadata, kLookupFile));
  if (lookup == nullptr) return OpenLegacyBTreeIndex(dataset, metadata);
  LANCE_ASSIGN_OR_RAISE(auto lookup_schema, lookup->ArrowSchema());
  // The range-partitioned layout (pages in part_{id}_page_data.lance, the
  // lookup's page_idx counted per range) is not read: such an index is not
  // used, and the filter scans (the same rows), with a warning saying why.
  // pylance 14 reads it but no longer writes it (it ignores BTREE's range_id).
  const auto& meta = lookup->schema().metadata;
  auto part = meta.find("range_partitioned");
  if (part != meta.end() && part->second != "false") {
    Warn("BTREE index '" + metadata.name + "' of " + dataset.uri() + " has the range-partitioned layout " +
         "(range_partitioned=" + part->second + " in page_lookup.lance), which lance-cpp does not read: " +
         "filters on its column scan instead");
    return std::unique_ptr<ScalarIndex>();
  }
  auto min = lookup_schema->GetFieldByName("min");
  if (min == nullptr || !HasField(*lookup_schema, "max", min->type()) ||
      !HasField(*lookup_schema, "null_count", arrow::uint32()) ||
      !HasField(*lookup_schema, "page_idx", arrow::uint32())) {
    return std::unique_ptr<ScalarIndex>();
  }
  LANCE_ASSIGN_OR_RAISE(auto pages, OpenIndexFile(dataset, metadata, kPagesFile));
  if (pages == nullptr) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto pages_schema, pages->ArrowSchema());
  if (!HasField(*pages_schema, "values", min->type()) || !HasField(*pages_schema, "ids", arrow::uint64())) {
    return std::unique_ptr<ScalarIndex>();
  }
  // The lookup: one row per page, each page a whole batch_size run of
  // page_data but the last. Anything else is a layout this reader does not know.
  uint64_t batch_size = 4096;
  auto bs = meta.find("batch_size");
  if (bs != meta.end()) {
    auto [ptr, ec] = std::from_chars(bs->second.data(), bs->second.data() + bs->second.size(), batch_size);
    if (ec != std::errc() || ptr != bs->second.data() + bs->second.size() || batch_size == 0) {
      return std::unique_ptr<ScalarIndex>();
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto lookup_table, lookup->ReadAll({"min", "max", "null_count", "page_idx"}));
  LANCE_ASSIGN_OR_RAISE(auto bounds, lookup_table->CombineChunksToBatch());
  auto page_idx_array = std::static_pointer_cast<arrow::UInt32Array>(bounds->GetColumnByName("page_idx"));
  std::vector<uint32_t> page_idx;
  for (int64_t k = 0; k < page_idx_array->length(); ++k) page_idx.push_back(page_idx_array->Value(k));
  std::vector<uint32_t> sorted = page_idx;
  std::sort(sorted.begin(), sorted.end());
  const uint64_t pages_needed = (pages->num_rows() + batch_size - 1) / batch_size;
  for (size_t k = 0; k < sorted.size(); ++k) {
    if (sorted[k] != k) return std::unique_ptr<ScalarIndex>();
  }
  if (sorted.size() != pages_needed) return std::unique_ptr<ScalarIndex>();
  BoundsPruner pruner(bounds->GetColumnByName("min"), bounds->GetColumnByName("max"),
                    std::static_pointer_cast<arrow::UInt32Array>(bounds->GetColumnByName("null_count")));
  return std::unique_ptr<ScalarIndex>(new BTreeIndex(std::move(pages), nullptr, min->type(),
                                                     /*addresses=*/!stable || version == 1, std::move(pruner),
                                                     std::move(page_idx), batch_size));
}

}  // namespace lance::index
