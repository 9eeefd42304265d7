// Scalar index create, drop and describe (lance/index_ops.h): BTREE,
// BITMAP, LABEL_LIST, ZONEMAP, NGRAM, BLOOMFILTER and INVERTED built from one scan of the column,
// committed as CreateIndex as pylance 14's create_scalar_index / drop_index
// commit them.
#include "lance/index_ops.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <arrow/api.h>

#include "lance/dataset_internal.h"
#include "lance/index/bloom_filter.h"
#include "lance/index/index_writer.h"
#include "lance/index/inverted_writer.h"
#include "lance/index/scalar_index.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/ops/index_build_internal.h"
#include "lance/ops/schema_evolution_internal.h"
#include "lance/ops/vector_index_build.h"
#include "lance/scanner.h"
#include "lance/txn/commit.h"
#include "lance/txn/transaction_builder.h"
#include "lance/util/clock.h"

namespace lance {
namespace {

std::string Upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// pylance 14's rule for BTREE and BITMAP columns (lance/dataset.py).
bool IndexableType(const arrow::DataType& t) {
  using arrow::Type;
  if (arrow::is_integer(t.id()) || arrow::is_floating(t.id()) || arrow::is_temporal(t.id()) ||
      arrow::is_decimal(t.id())) {
    return true;
  }
  switch (t.id()) {
    case Type::BOOL:
    case Type::STRING:
    case Type::LARGE_STRING:
    case Type::BINARY:
    case Type::LARGE_BINARY:
    case Type::FIXED_SIZE_BINARY: return true;
    default: return false;
  }
}

// pylance 14's rules for LABEL_LIST (lance/dataset.py) and the ZONEMAP
// value types lance-cpp builds.
Status CheckListOrZoneColumn(const std::string& type, const arrow::DataType& t) {
  if (type == "LABEL_LIST") {
    if (t.id() != arrow::Type::LIST && t.id() != arrow::Type::LARGE_LIST) {
      return Status::Invalid("LABEL_LIST index column must be a list or large list (it is ", t.ToString(), ")");
    }
    const auto& element = *static_cast<const arrow::BaseListType&>(t).value_type();
    if (!IndexableType(element)) {
      return Status::NotImplemented("LABEL_LIST index on a list of ", element.ToString(),
                                    " is not implemented in lance-cpp");
    }
    return Status::OK();
  }
  if (!index::ZoneMapValueType(t)) {
    return Status::NotImplemented("ZONEMAP index on a ", t.ToString(), " column is not implemented in lance-cpp ",
                                  "(integers, float32/64, bool, strings, binary, dates, timestamps, decimal128 are)");
  }
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<Dataset>> CreateIndexBuilder::Commit() {
  const Dataset& ds = *dataset_;
  std::string type = Upper(index_type_);
  if (type == "FTS") type = "INVERTED";  // pylance's alias
  static const std::set<std::string> kLater = {"RTREE", "MINHASHLSH", "IVF_PQ",
                                               "IVF_RQ", "IVF_HNSW_SQ", "IVF_HNSW_PQ", "IVF_HNSW_FLAT"};
  if (kLater.count(type)) {
    return Status::NotImplemented("index type ", type,
                                  " is not implemented in lance-cpp yet (BTREE, BITMAP, LABEL_LIST, ZONEMAP, NGRAM, "
                                  "BLOOMFILTER, INVERTED, IVF_FLAT and IVF_SQ are)");
  }
  const bool vector = type == "IVF_FLAT" || type == "IVF_SQ";
  if (vector_params_ && !vector) {
    return Status::Invalid("vector index parameters do not apply to a ", type, " index");
  }
  if (type != "BTREE" && type != "BITMAP" && type != "LABEL_LIST" && type != "ZONEMAP" && type != "NGRAM" &&
      type != "BLOOMFILTER" && type != "INVERTED" && !vector) {
    return Status::Invalid("unknown index type '", index_type_, "': pylance 14 supports BTREE, BITMAP, NGRAM, ZONEMAP, ",
                           "LABEL_LIST, INVERTED, BLOOMFILTER, RTREE, MINHASHLSH and the IVF_* vector types");
  }
  const Field* field = ops::FindFieldByPath(ds.manifest().schema, column_);
  if (field == nullptr) return Status::Invalid("column '", column_, "' not found in schema");
  LANCE_ASSIGN_OR_RAISE(auto arrow_type, ArrowTypeFromField(*field));
  if (rows_per_zone_ && type != "ZONEMAP") return Status::Invalid("rows_per_zone does not apply to a ", type, " index");
  if (rows_per_zone_ && *rows_per_zone_ == 0) return Status::Invalid("rows_per_zone must be greater than zero");
  if ((number_of_items_ || probability_) && type != "BLOOMFILTER") {
    return Status::Invalid(number_of_items_ ? "number_of_items" : "probability", " does not apply to a ", type, " index");
  }
  const uint64_t number_of_items = number_of_items_.value_or(index::kBloomFilterDefaultItems);
  const double probability = probability_.value_or(index::kBloomFilterDefaultProbability);
  if (inverted_params_ && type != "INVERTED") {
    return Status::Invalid("tokenizer parameters do not apply to a ", type, " index");
  }
  if (number_of_items == 0) return Status::Invalid("number_of_items must be greater than zero");
  if (!(probability >= 0.0 && probability < 1.0)) {
    return Status::Invalid("probability must be in [0, 1) (got ", probability, ")");
  }
  const InvertedIndexParams inverted = inverted_params_.value_or(InvertedIndexParams());
  if (type == "INVERTED") {
    // pylance's rule (lance/dataset.py): strings, lists of them, or json.
    if (field->logical_type == "json") {
      return Status::NotImplemented("INVERTED index on the json column ", column_,
                                    " (pylance's json document tokenizer) is not implemented in lance-cpp");
    }
    std::shared_ptr<arrow::DataType> value_type = arrow_type;
    if (value_type->id() == arrow::Type::LIST || value_type->id() == arrow::Type::LARGE_LIST) {
      value_type = static_cast<const arrow::BaseListType&>(*value_type).value_type();
    }
    if (value_type->id() != arrow::Type::STRING && value_type->id() != arrow::Type::LARGE_STRING) {
      return Status::Invalid("INVERTED index column ", column_, " must be string, large string or list of strings, ",
                             "or json, but got ", value_type->ToString());
    }
    // pylance infers the document tokenizer from the column: "text" here.
    if (inverted.lance_tokenizer != "text") {
      return Status::NotImplemented("INVERTED index with the '", inverted.lance_tokenizer,
                                    "' document tokenizer is not implemented in lance-cpp (only 'text', for strings)");
    }
    LANCE_RETURN_NOT_OK(inverted.CheckSupported("INVERTED index on " + column_));
  } else if (type == "NGRAM") {
    // pylance's rule (lance/dataset.py).
    if (arrow_type->id() != arrow::Type::STRING && arrow_type->id() != arrow::Type::LARGE_STRING) {
      return Status::Invalid("NGRAM index column ", column_, " must be a string (it is ", arrow_type->ToString(), ")");
    }
  } else if (type == "LABEL_LIST" || type == "ZONEMAP") {
    LANCE_RETURN_NOT_OK(CheckListOrZoneColumn(type, *arrow_type));
  } else if (type == "BLOOMFILTER") {
    // pylance's refusals (rust/lance-index/src/scalar/bloomfilter.rs).
    if (arrow::is_nested(arrow_type->id())) {
      return Status::Invalid("A bloom filter index can only be created on a non-nested field.");
    }
    if (!index::BloomFilterValueType(*arrow_type)) {
      return Status::Invalid("Bloom filter index does not support data type: ", arrow_type->ToString(),
                             ". Supported types: Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float32, ",
                             "Float64, Utf8, LargeUtf8, Binary, LargeBinary, Date32, Date64, Time32, Time64, Timestamp");
    }
  } else if (vector) {
    // Checked by the build (ops/vector_index_build.cc).
  } else if (!IndexableType(*arrow_type)) {
    return Status::Invalid("BTREE/BITMAP index column ", column_, " must be int, float, bool, str, large_str, binary, ",
                           "large_binary, decimal, fixed-size-binary, or temporal (it is ", arrow_type->ToString(), ")");
  }
  const std::string name = name_.value_or(column_ + "_idx");
  std::vector<IndexMetadata> removed;
  for (const auto& i : ds.indices()) {
    if (i.name == name) removed.push_back(i);
  }
  if (!removed.empty() && !replace_) {
    return Status::AlreadyExists("index name '", name, "' already exists, please specify a different name or replace it");
  }

  // pylance writes the index files in the dataset's file version.
  LANCE_ASSIGN_OR_RAISE(std::string file_version, ds.DataStorageVersion());
  if (file_version == "0.1") {
    return Status::NotImplemented("creating an index on a legacy (0.1) dataset is not implemented in lance-cpp");
  }

  // BTREE on a dataset with stable row ids stores row addresses (its
  // index_version 1, as pylance 14); otherwise the dataset's row ids
  // (BITMAP, NGRAM and INVERTED always).
  const bool stable = ds.manifest().UsesStableRowIds();
  const bool addresses = type == "BTREE" || type == "BLOOMFILTER" || !stable;
  if (vector && field->parent_id != -1) {
    return Status::NotImplemented(type, " index on the nested column ", column_, " is not implemented in lance-cpp");
  }
  ScanBuilder scan(dataset_);
  scan.Project({column_}).UseScalarIndex(false);
  if (addresses) scan.WithRowAddress(); else scan.WithRowId();
  IndexMetadata meta;
  meta.uuid = ops::UuidBytes(txn::NewUuid());
  meta.name = name;
  meta.fields = {field->id};
  meta.dataset_version = ds.version();
  std::vector<uint32_t> fragments;
  for (const auto& f : ds.manifest().fragments) fragments.push_back(static_cast<uint32_t>(f.id));
  meta.fragment_ids = fragments;
  meta.index_details_type_url = type == "BTREE"    ? "/lance.table.BTreeIndexDetails"
                                : type == "BITMAP" ? "/lance.table.BitmapIndexDetails"
                                                   : "/lance.table.NGramIndexDetails";
  meta.index_version = type == "BTREE" && stable ? 1 : 0;
  const uint64_t rows_per_zone = rows_per_zone_.value_or(ops::kDefaultRowsPerZone);
  if (type == "LABEL_LIST") {
    meta.index_details_type_url = "/lance.table.LabelListIndexDetails";
    meta.index_version = 1;
  } else if (type == "BLOOMFILTER") {
    // An empty BloomFilterIndexDetails; the parameters are in the file.
    meta.index_details_type_url = "/lance.index.pb.BloomFilterIndexDetails";
    meta.index_version = 0;
  } else if (type == "INVERTED") {
    meta.index_details_type_url = "/lance.table.InvertedIndexDetails";
    meta.index_details_value = index::InvertedIndexDetailsProto(inverted);
    meta.index_version = 2;
  } else if (type == "ZONEMAP") {
    meta.index_details_type_url = "/lance.table.ZoneMapIndexDetails";
    meta.index_details_value = ops::ZoneMapDetails(rows_per_zone, ops::ZoneMapDefaultUseSeeds(*arrow_type));
    meta.index_version = 0;
  } else if (vector) {
    meta.index_details_type_url = "/lance.index.pb.VectorIndexDetails";
    meta.index_version = 1;
  }
  const std::string dir = "_indices/" + meta.UuidString();
  const io::ObjectStore& store = *DatasetAccess::Store(ds);
  auto files = [&]() -> Result<std::vector<IndexFile>> {
    if (type == "LABEL_LIST" || type == "ZONEMAP") {
      return ops::WriteListOrZoneIndex(dataset_, column_, type, arrow_type, rows_per_zone, store, dir, file_version,
                                       std::nullopt);
    }
    if (type == "BLOOMFILTER") {
      // Zones hold row addresses, also with stable row ids (as pylance's).
      index::BloomFilterTrainer trainer(number_of_items, probability);
      LANCE_RETURN_NOT_OK(ops::TrainZones(dataset_, column_, std::nullopt, &trainer));
      return index::WriteBloomFilterIndex(store, dir, trainer.zones(), trainer.null_rows(), number_of_items,
                                          probability, file_version);
    }
    if (vector) {
      return ops::BuildIvfIndex(dataset_, type, column_, !addresses, vector_params_.value_or(VectorIndexParams()),
                                    store, dir, file_version, &meta.index_details_value);
    }
    if (type == "BTREE") {
      LANCE_ASSIGN_OR_RAISE(auto rows, scan.ToReader());
      return index::WriteBTreeIndexSpilling(store, dir, *rows, arrow_type, file_version, ops::SortRunRows());
    }
    if (type == "NGRAM") {
      LANCE_ASSIGN_OR_RAISE(auto rows, scan.ToReader());
      return index::WriteNGramIndex(store, dir, *rows, column_, file_version, ops::SortRunRows());
    }
    if (type == "INVERTED") {
      LANCE_ASSIGN_OR_RAISE(auto writer, index::InvertedIndexWriter::Make(store, dir, inverted, file_version,
                                                                          index::InvertedPartitionMemoryLimit()));
      LANCE_ASSIGN_OR_RAISE(auto rows, scan.ToReader());
      while (true) {
        std::shared_ptr<arrow::RecordBatch> batch;
        LANCE_RETURN_NOT_OK(rows->ReadNext(&batch));
        if (!batch) break;
        LANCE_RETURN_NOT_OK(writer->Add(*batch));
      }
      return writer->Finish();
    }
    // A bitmap holds every row id in memory while it is built, as pylance's.
    LANCE_ASSIGN_OR_RAISE(auto table, scan.ToTable());
    LANCE_ASSIGN_OR_RAISE(table, table->CombineChunks());
    index::IndexInput input;
    if (table->num_rows() == 0) {
      LANCE_ASSIGN_OR_RAISE(input.values, arrow::MakeEmptyArray(arrow_type));
      LANCE_ASSIGN_OR_RAISE(auto ids, arrow::MakeEmptyArray(arrow::uint64()));
      input.ids = std::static_pointer_cast<arrow::UInt64Array>(ids);
    } else {
      input.values = table->column(0)->chunk(0);
      input.ids = std::static_pointer_cast<arrow::UInt64Array>(table->column(1)->chunk(0));
    }
    return index::WriteBitmapIndex(store, dir, input, file_version);
  }();
  if (!files.ok()) {
    (void)store.DeleteDirectory(dir);
    return files.status();
  }
  meta.files = *files;
  meta.created_at_ms = static_cast<uint64_t>(util::NowNanos() / 1000000);
  auto committed = ops::CommitIndexTransaction(ds, txn::CreateIndex{{meta}, removed});
  if (!committed.ok()) {
    (void)store.DeleteDirectory(dir);
    return committed.status();
  }
  result_ = std::move(meta);
  const uint64_t version = committed->version;
  return ops::AtVersion(ds, version, std::move(*committed));
}

Result<std::shared_ptr<Dataset>> DropIndexBuilder::Commit() {
  std::vector<IndexMetadata> removed;
  for (const auto& i : dataset_->indices()) {
    if (i.name == name_) removed.push_back(i);
  }
  if (removed.empty()) return Status::KeyError("index not found: name=", name_);
  return ops::CommitIndexChange(*dataset_, txn::CreateIndex{{}, std::move(removed)});
}

Result<std::vector<IndexDescription>> DescribeIndices(const Dataset& dataset) {
  std::vector<IndexDescription> out;
  const Schema& schema = dataset.manifest().schema;
  for (const auto& i : dataset.indices()) {
    if (ops::IsSystemIndex(i)) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const IndexDescription& d) { return d.name == i.name; });
    if (it == out.end()) {
      IndexDescription d;
      d.name = i.name;
      d.type_url = i.index_details_type_url;
      const auto* t = index::FindScalarIndexType(i.index_details_type_url);
      d.type = t ? std::string(t->name) : i.index_details_type_url.substr(i.index_details_type_url.rfind('/') + 1);
      // Full-text indices are not scalar indices lance-cpp filters with;
      // named as pylance's describe_indices names them.
      if (!t && d.type.ends_with(".InvertedIndexDetails")) d.type = "Inverted";
      for (int32_t id : i.fields) d.field_names.push_back(schema.FieldPath(id));
      out.push_back(std::move(d));
      it = out.end() - 1;
    }
    it->uuids.push_back(i.UuidString());
    if (i.fragment_ids) {
      std::set<uint32_t> all(it->fragment_ids.begin(), it->fragment_ids.end());
      all.insert(i.fragment_ids->begin(), i.fragment_ids->end());
      it->fragment_ids.assign(all.begin(), all.end());
    }
  }
  for (auto& d : out) {
    for (const auto& f : dataset.manifest().fragments) {
      LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset.PhysicalRows(f));
      LANCE_ASSIGN_OR_RAISE(uint64_t deleted, dataset.NumDeletedRows(f));
      const uint64_t live = physical - deleted;
      if (std::binary_search(d.fragment_ids.begin(), d.fragment_ids.end(), static_cast<uint32_t>(f.id))) {
        d.num_indexed_rows += live;
      } else {
        d.num_unindexed_rows += live;
        ++d.num_unindexed_fragments;
      }
    }
  }
  return out;
}

}  // namespace lance
