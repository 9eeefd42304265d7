#include "lance/index/scalar_index.h"

#include <algorithm>
#include <iterator>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lance/dataset_internal.h"
#include "lance/file/legacy/legacy_reader.h"
#include "lance/file_reader.h"
#include "lance/table/file_locations.h"

namespace lance::index {

RowIds Union(const RowIds& a, const RowIds& b) {
  RowIds out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

RowIds Intersect(const RowIds& a, const RowIds& b) {
  RowIds out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

bool IsAnd(const std::string& f) { return f == "and_kleene" || f == "and"; }
bool IsOr(const std::string& f) { return f == "or_kleene" || f == "or"; }

Result<RowIds> CombineAndOr(const arrow::compute::Expression::Call& call,
                            const std::function<Result<RowIds>(const arrow::compute::Expression&)>& eval) {
  const bool conj = IsAnd(call.function_name);
  LANCE_ASSIGN_OR_RAISE(RowIds acc, eval(call.arguments[0]));
  for (size_t i = 1; i < call.arguments.size(); ++i) {
    LANCE_ASSIGN_OR_RAISE(auto next, eval(call.arguments[i]));
    acc = conj ? Intersect(acc, next) : Union(acc, next);
  }
  return acc;
}

namespace {

// Index types lance-cpp reads. INVERTED (full-text) is not one of them
// yet: its indices are not used.
const ScalarIndexType kTypes[] = {
    {"lance.table.BTreeIndexDetails", "BTree", &OpenBTreeIndex},
    // pylance 0.36 named the message in its index package; same files.
    {"lance.index.pb.BTreeIndexDetails", "BTree", &OpenBTreeIndex},
    {"lance.table.BitmapIndexDetails", "Bitmap", &OpenBitmapIndex},
    {"lance.table.LabelListIndexDetails", "LabelList", &OpenLabelListIndex},
    {"lance.table.ZoneMapIndexDetails", "ZoneMap", &OpenZoneMapIndex},
    {"lance.table.NGramIndexDetails", "NGram", &OpenNGramIndex},
    // pylance 14 names this message in its index package.
    {"lance.index.pb.BloomFilterIndexDetails", "BloomFilter", &OpenBloomFilterIndex},
};

}  // namespace

const ScalarIndexType* FindScalarIndexType(std::string_view details_type_url) {
  // pylance 14 writes "/lance.table.BTreeIndexDetails" (prost's Any); other
  // writers use the "type.googleapis.com/" prefix. The message name decides.
  const size_t slash = details_type_url.rfind('/');
  if (slash == std::string_view::npos) return nullptr;
  const std::string_view message = details_type_url.substr(slash + 1);
  for (const auto& t : kTypes) {
    if (t.message_name == message) return &t;
  }
  return nullptr;
}

Result<std::unique_ptr<ScalarIndex>> OpenScalarIndex(const Dataset& dataset, const IndexMetadata& metadata) {
  const ScalarIndexType* type = FindScalarIndexType(metadata.index_details_type_url);
  if (type == nullptr) return std::unique_ptr<ScalarIndex>();
  return type->open(dataset, metadata);
}

Result<std::shared_ptr<FileReader>> OpenIndexFile(const Dataset& dataset, const IndexMetadata& metadata,
                                                  const std::string& name) {
  table::FileLocator locator(DatasetAccess::Store(dataset), dataset.manifest());
  LANCE_ASSIGN_OR_RAISE(auto location, locator.Index(metadata, name));
  LANCE_ASSIGN_OR_RAISE(auto file, location.store->OpenInputFile(location.path));
  auto reader = FileReader::Open(std::move(file), location.FullPath());
  // A file format the reader does not implement (legacy 0.1 index files of
  // pylance before 0.21): a layout lance-cpp does not read, not an error.
  if (!reader.ok() && reader.status().IsNotImplemented()) return std::shared_ptr<FileReader>();
  return reader;
}

Result<std::shared_ptr<arrow::RecordBatch>> ReadLegacyIndexFile(const Dataset& dataset, const IndexMetadata& metadata,
                                                                const std::string& name) {
  table::FileLocator locator(DatasetAccess::Store(dataset), dataset.manifest());
  LANCE_ASSIGN_OR_RAISE(auto location, locator.Index(metadata, name));
  LANCE_ASSIGN_OR_RAISE(auto file, location.store->OpenInputFile(location.path));
  LANCE_ASSIGN_OR_RAISE(auto reader, file::legacy::LegacyFileReader::Open(std::move(file), location.FullPath(),
                                                                         arrow::default_memory_pool()));
  if (!reader->embedded_schema()) return std::shared_ptr<arrow::RecordBatch>();
  return reader->ReadAll(*reader->embedded_schema());
}

Result<std::optional<RowIds>> ReadRowIdBuffer(const FileReader& file, const std::string& key,
                                              const std::string& what) {
  const auto& meta = file.schema().metadata;
  auto it = meta.find(key);
  if (it == meta.end()) return std::optional<RowIds>();
  const std::string& value = it->second;
  if (value.empty() || value.size() > 6 || value.find_first_not_of("0123456789") != std::string::npos) {
    return Status::Invalid(what, ": ", key, " '", value, "' is not a global buffer number");
  }
  const size_t buffer = std::stoul(value);
  if (buffer == 0 || buffer >= file.layout().global_buffers.size()) {
    return Status::Invalid(what, ": ", key, " names global buffer ", buffer, ", which the file does not have");
  }
  LANCE_ASSIGN_OR_RAISE(auto bytes, file.ReadGlobalBuffer(buffer));
  LANCE_ASSIGN_OR_RAISE(auto rows, DecodeRowIdTreeMap(std::string_view(reinterpret_cast<const char*>(bytes->data()),
                                                                       static_cast<size_t>(bytes->size())),
                                                      what + " " + key));
  return std::optional<RowIds>(std::move(rows));
}

bool HasTextSearch(const arrow::compute::Expression& predicate) {
  const auto* call = predicate.call();
  if (call == nullptr) return false;
  const std::string& f = call->function_name;
  if (f == "match_substring" || f == "starts_with" || f == "match_like") return true;
  return std::any_of(call->arguments.begin(), call->arguments.end(),
                     [](const arrow::compute::Expression& a) { return HasTextSearch(a); });
}

Result<RowIds> AllRowIds(const Dataset& dataset, const std::vector<uint32_t>& fragments) {
  RowIds out;
  const bool stable = dataset.manifest().UsesStableRowIds();
  for (const Fragment& fragment : dataset.manifest().fragments) {
    if (!std::binary_search(fragments.begin(), fragments.end(), static_cast<uint32_t>(fragment.id))) continue;
    if (stable) {
      LANCE_ASSIGN_OR_RAISE(auto ids, dataset.RowIds(fragment));
      out.insert(out.end(), ids.begin(), ids.end());
    } else {
      LANCE_ASSIGN_OR_RAISE(uint64_t rows, dataset.PhysicalRows(fragment));
      for (uint64_t off = 0; off < rows; ++off) out.push_back((fragment.id << 32) | off);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::vector<bool>> EvaluateOn(const arrow::compute::Expression& predicate, const std::string& column,
                                     const std::shared_ptr<arrow::Array>& values) {
  auto schema = arrow::schema({arrow::field(column, values->type())});
  auto batch = arrow::RecordBatch::Make(schema, values->length(), {values});
  LANCE_ASSIGN_OR_RAISE(auto bound, predicate.Bind(*schema));
  LANCE_ASSIGN_OR_RAISE(auto input, arrow::compute::MakeExecBatch(*schema, batch));
  LANCE_ASSIGN_OR_RAISE(auto result, arrow::compute::ExecuteScalarExpression(bound, input));
  std::vector<bool> out(static_cast<size_t>(values->length()), false);
  if (result.is_scalar()) {
    const auto& s = static_cast<const arrow::BooleanScalar&>(*result.scalar());
    if (s.is_valid && s.value) std::fill(out.begin(), out.end(), true);
    return out;
  }
  auto mask = std::static_pointer_cast<arrow::BooleanArray>(result.make_array());
  for (int64_t i = 0; i < mask->length(); ++i) out[static_cast<size_t>(i)] = mask->IsValid(i) && mask->Value(i);
  return out;
}

}  // namespace lance::index
