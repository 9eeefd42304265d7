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

#include <arrow/api.h>

#include "lance/file_reader.h"
#include "lance/index/scalar_index.h"

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
  BTreeIndex(std::shared_ptr<FileReader> pages, std::shared_ptr<arrow::DataType> type, bool addresses)
      : pages_(std::move(pages)), type_(std::move(type)), addresses_(addresses) {}
  const char* type_name() const override { return "BTree"; }
  const std::shared_ptr<arrow::DataType>& value_type() const override { return type_; }
  bool stores_addresses() const override { return addresses_; }

  Result<RowIds> Search(const arrow::compute::Expression& predicate, const std::string& column) override {
    LANCE_RETURN_NOT_OK(Load());
    RowIds out;
    for (int c = 0; c < values_->num_chunks(); ++c) {
      auto values = values_->chunk(c);
      auto ids = std::static_pointer_cast<arrow::UInt64Array>(ids_->chunk(c));
      LANCE_ASSIGN_OR_RAISE(auto hits, EvaluateOn(predicate, column, values));
      for (size_t i = 0; i < hits.size(); ++i) {
        if (hits[i]) out.push_back(ids->Value(static_cast<int64_t>(i)));
      }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

 private:
  // The leaves are read once per opened index.
  Status Load() {
    if (values_) return Status::OK();
    LANCE_ASSIGN_OR_RAISE(auto table, pages_->ReadAll({"values", "ids"}));
    auto ids = table->GetColumnByName("ids");
    auto values = table->GetColumnByName("values");
    if (ids->null_count() > 0) return Status::Invalid("BTREE page data has null row ids");
    // Both columns chunked alike, so chunk i of each lines up.
    LANCE_ASSIGN_OR_RAISE(auto combined, table->CombineChunks());
    values_ = combined->GetColumnByName("values");
    ids_ = combined->GetColumnByName("ids");
    return Status::OK();
  }

  std::shared_ptr<FileReader> pages_;
  std::shared_ptr<arrow::DataType> type_;
  bool addresses_ = false;
  std::shared_ptr<arrow::ChunkedArray> values_, ids_;
};

}  // namespace

Result<std::unique_ptr<ScalarIndex>> OpenBTreeIndex(const Dataset& dataset, const IndexMetadata& metadata) {
  const int32_t version = metadata.index_version.value_or(0);
  const bool stable = dataset.manifest().UsesStableRowIds();
  if (version != 0 && !(version == 1 && stable)) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto lookup, OpenIndexFile(dataset, metadata, kLookupFile));
  if (lookup == nullptr) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto lookup_schema, lookup->ArrowSchema());
  // Range-partitioned trees keep one lookup per partition: another layout.
  const auto& meta = lookup->schema().metadata;
  auto part = meta.find("range_partitioned");
  if (part != meta.end() && part->second != "false") return std::unique_ptr<ScalarIndex>();
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
  return std::unique_ptr<ScalarIndex>(new BTreeIndex(std::move(pages), min->type(), /*addresses=*/!stable || version == 1));
}

}  // namespace lance::index
