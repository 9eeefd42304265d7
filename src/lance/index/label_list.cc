// LABEL_LIST indices as pylance 14 writes them (rust/lance-index/src/scalar/label_list.rs),
// index_version 1:
//   bitmap_page_lookup.lance  a bitmap index of the list's elements, unnested: keys
//                             (the element type, the null key first when some
//                             element is null), bitmaps (binary, RowIdTreeMap each:
//                             the rows with that element). Schema metadata
//                             "lance:label_list_nulls" names a global buffer holding
//                             one more RowIdTreeMap: the rows whose list is null.
// Row ids are the dataset's (stable ids when it has them), as in a bitmap index.
// A null list has no elements, so it is under no key; an empty list neither.
//
// Search answers array_has / array_has_any / array_has_all with constant needles
// and their AND/OR/NOT exactly as the scan's kernels do: each needle value is
// matched against the keys by the very kernel the scan runs (so null needles
// match null elements and floats compare in total order), and for a list that is
// not null the functions are plain true/false. A null list makes every one of
// them null, so it is excluded, negated or not. Other versions (0, before the
// list-null section) are layouts lance-cpp has not confirmed: not used.
#include <algorithm>
#include <map>
#include <string_view>

#include <arrow/api.h>
#include <arrow/compute/api.h>

#include "lance/dataset.h"
#include "lance/file_reader.h"
#include "lance/index/scalar_index.h"
#include "lance/scan/filter_functions.h"

namespace lance::index {
namespace {
namespace cp = arrow::compute;

constexpr const char* kLookupFile = "bitmap_page_lookup.lance";
constexpr const char* kListNullsKey = "lance:label_list_nulls";

RowIds Difference(const RowIds& a, const RowIds& b) {
  RowIds out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

enum class Membership { kNone, kHas, kAny, kAll };

Membership MembershipOf(const std::string& function) {
  if (function == scan::filter::kArrayHasFunction) return Membership::kHas;
  if (function == scan::filter::kArrayHasAnyFunction) return Membership::kAny;
  if (function == scan::filter::kArrayHasAllFunction) return Membership::kAll;
  return Membership::kNone;
}

class LabelListIndex : public ScalarIndex {
 public:
  LabelListIndex(const Dataset& dataset, std::vector<uint32_t> fragments, std::shared_ptr<FileReader> lookup,
                 std::shared_ptr<arrow::DataType> list_type, RowIds list_nulls, std::string name)
      : dataset_(dataset), fragments_(std::move(fragments)), lookup_(std::move(lookup)),
        list_type_(std::move(list_type)), list_nulls_(std::move(list_nulls)), name_(std::move(name)) {}

  const char* type_name() const override { return "LabelList"; }
  const std::shared_ptr<arrow::DataType>& value_type() const override { return list_type_; }
  bool stores_addresses() const override { return false; }

  bool CanSearch(const cp::Expression& predicate, const std::string& column) const override {
    return Answerable(predicate, column);
  }

  Result<RowIds> Search(const cp::Expression& predicate, const std::string& column) override {
    if (!Answerable(predicate, column)) {
      return Status::Invalid(name_, ": cannot answer ", predicate.ToString());
    }
    LANCE_RETURN_NOT_OK(Load());
    return Eval(predicate, column);
  }

 private:
  // What Search answers: the membership functions of the column itself (no cast)
  // with a non-empty needle of the element type, and AND/OR/NOT of those.
  bool Answerable(const cp::Expression& e, const std::string& column) const {
    const auto* call = e.call();
    if (call == nullptr) return false;
    const std::string& f = call->function_name;
    if (IsAnd(f) || IsOr(f)) {
      return std::all_of(call->arguments.begin(), call->arguments.end(),
                         [&](const cp::Expression& a) { return Answerable(a, column); });
    }
    if (f == "invert") {
      return call->arguments.size() == 1 && Answerable(call->arguments[0], column);
    }
    if (MembershipOf(f) == Membership::kNone || call->arguments.size() != 1 || !call->options) return false;
    const auto* ref = call->arguments[0].field_ref();
    if (ref == nullptr || !ref->IsName() || *ref->name() != column) return false;
    const auto& opts = static_cast<const cp::SetLookupOptions&>(*call->options);
    if (opts.null_matching_behavior != cp::SetLookupOptions::MATCH || !opts.value_set.is_array()) return false;
    const auto& element = static_cast<const arrow::BaseListType&>(*list_type_).value_type();
    return opts.value_set.length() > 0 && opts.value_set.type()->Equals(*element);
  }

  Result<RowIds> Eval(const cp::Expression& e, const std::string& column) {
    const auto* call = e.call();
    const std::string& f = call->function_name;
    if (IsAnd(f) || IsOr(f)) {
      return CombineAndOr(*call, [&](const cp::Expression& a) { return Eval(a, column); });
    }
    if (f == "invert") {
      // Every row of a list that is not null, less the matches.
      LANCE_ASSIGN_OR_RAISE(auto inner, Eval(call->arguments[0], column));
      LANCE_RETURN_NOT_OK(LoadUniverse());
      return Difference(Difference(universe_, list_nulls_), inner);
    }
    const auto& opts = static_cast<const cp::SetLookupOptions&>(*call->options);
    auto needle = opts.value_set.make_array();
    if (MembershipOf(f) != Membership::kAll) return RowsWithAny(call->function_name, opts);
    // array_has_all: rows holding each needle value.
    std::optional<RowIds> acc;
    for (int64_t v = 0; v < needle->length(); ++v) {
      cp::SetLookupOptions one(needle->Slice(v, 1), cp::SetLookupOptions::MATCH);
      LANCE_ASSIGN_OR_RAISE(auto rows, RowsWithAny(scan::filter::kArrayHasAnyFunction, one));
      acc = acc ? Intersect(*acc, rows) : std::move(rows);
      if (acc->empty()) break;
    }
    return std::move(*acc);
  }

  // Rows with an element the kernel `function` (array_has or array_has_any with
  // `opts`) matches: the union of the bitmaps of the keys it is true for, each
  // key asked as a one-element list.
  Result<RowIds> RowsWithAny(const std::string& function, const cp::SetLookupOptions& opts) {
    LANCE_ASSIGN_OR_RAISE(auto result, cp::CallFunction(function, {key_lists_}, &opts));
    auto mask = std::static_pointer_cast<arrow::BooleanArray>(result.make_array());
    RowIds out;
    for (int64_t k = 0; k < mask->length(); ++k) {
      if (!mask->IsValid(k) || !mask->Value(k)) continue;
      out = out.empty() ? rows_[static_cast<size_t>(k)] : Union(out, rows_[static_cast<size_t>(k)]);
    }
    return out;
  }

  Status Load() {
    if (key_lists_) return Status::OK();
    LANCE_ASSIGN_OR_RAISE(auto table, lookup_->ReadAll({"keys", "bitmaps"}));
    LANCE_ASSIGN_OR_RAISE(auto batch, table->CombineChunksToBatch());
    auto keys = batch->GetColumnByName("keys");
    auto bitmaps = batch->GetColumnByName("bitmaps");
    rows_.clear();
    for (int64_t k = 0; k < bitmaps->length(); ++k) {
      if (bitmaps->IsNull(k)) {
        rows_.emplace_back();
        continue;
      }
      std::string_view bytes = bitmaps->type_id() == arrow::Type::LARGE_BINARY
                                   ? static_cast<const arrow::LargeBinaryArray&>(*bitmaps).GetView(k)
                                   : static_cast<const arrow::BinaryArray&>(*bitmaps).GetView(k);
      LANCE_ASSIGN_OR_RAISE(auto ids, DecodeRowIdTreeMap(bytes, name_));
      rows_.push_back(std::move(ids));
    }
    // Key k as the list [key k], of the column's list type: what the kernels take.
    const int64_t n = keys->length();
    if (list_type_->id() == arrow::Type::LARGE_LIST) {
      arrow::Int64Builder offsets;
      for (int64_t i = 0; i <= n; ++i) LANCE_RETURN_NOT_OK(offsets.Append(i));
      LANCE_ASSIGN_OR_RAISE(auto off, offsets.Finish());
      LANCE_ASSIGN_OR_RAISE(key_lists_, arrow::LargeListArray::FromArrays(list_type_, *off, *keys));
    } else {
      arrow::Int32Builder offsets;
      for (int64_t i = 0; i <= n; ++i) LANCE_RETURN_NOT_OK(offsets.Append(static_cast<int32_t>(i)));
      LANCE_ASSIGN_OR_RAISE(auto off, offsets.Finish());
      LANCE_ASSIGN_OR_RAISE(key_lists_, arrow::ListArray::FromArrays(list_type_, *off, *keys));
    }
    return Status::OK();
  }

  Status LoadUniverse() {
    if (universe_loaded_) return Status::OK();
    LANCE_ASSIGN_OR_RAISE(universe_, AllRowIds(dataset_, fragments_));
    universe_loaded_ = true;
    return Status::OK();
  }

  // The dataset the index was opened on; it outlives the index (the planner
  // holds both, the dataset longer).
  const Dataset& dataset_;
  std::vector<uint32_t> fragments_;  // sorted
  std::shared_ptr<FileReader> lookup_;
  std::shared_ptr<arrow::DataType> list_type_;
  RowIds list_nulls_;  // rows whose list is null
  std::string name_;
  std::shared_ptr<arrow::Array> key_lists_;
  std::vector<RowIds> rows_;
  bool universe_loaded_ = false;
  RowIds universe_;
};

}  // namespace

Result<std::unique_ptr<ScalarIndex>> OpenLabelListIndex(const Dataset& dataset, const IndexMetadata& metadata) {
  if (metadata.index_version != 1) return std::unique_ptr<ScalarIndex>();
  if (metadata.fields.empty() || !metadata.fragment_ids) return std::unique_ptr<ScalarIndex>();
  // The column's type, from the dataset: a list of the keys' type.
  const Schema& schema = dataset.manifest().schema;
  auto field = std::find_if(schema.fields.begin(), schema.fields.end(),
                            [&](const Field& f) { return f.id == metadata.fields[0]; });
  if (field == schema.fields.end()) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto arrow_schema, dataset.ArrowSchema());
  auto column = arrow_schema->GetFieldByName(field->name);
  if (column == nullptr ||
      (column->type()->id() != arrow::Type::LIST && column->type()->id() != arrow::Type::LARGE_LIST)) {
    return std::unique_ptr<ScalarIndex>();
  }
  const auto& element = static_cast<const arrow::BaseListType&>(*column->type()).value_type();
  LANCE_ASSIGN_OR_RAISE(auto lookup, OpenIndexFile(dataset, metadata, kLookupFile));
  if (lookup == nullptr) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto lookup_schema, lookup->ArrowSchema());
  auto keys = lookup_schema->GetFieldByName("keys");
  auto bitmaps = lookup_schema->GetFieldByName("bitmaps");
  if (keys == nullptr || bitmaps == nullptr || !keys->type()->Equals(*element) ||
      (bitmaps->type()->id() != arrow::Type::BINARY && bitmaps->type()->id() != arrow::Type::LARGE_BINARY)) {
    return std::unique_ptr<ScalarIndex>();
  }
  // The global buffer of the list nulls (never 0, the schema's).
  const auto& meta = lookup->schema().metadata;
  auto it = meta.find(kListNullsKey);
  if (it == meta.end() || it->second.empty() || it->second.size() > 6) return std::unique_ptr<ScalarIndex>();
  size_t nulls_buffer = 0;
  for (char c : it->second) {
    if (c < '0' || c > '9') return std::unique_ptr<ScalarIndex>();
    nulls_buffer = nulls_buffer * 10 + static_cast<size_t>(c - '0');
  }
  if (nulls_buffer == 0 || nulls_buffer >= lookup->layout().global_buffers.size()) {
    return std::unique_ptr<ScalarIndex>();
  }
  std::string name = "label list index '" + metadata.name + "' (" + metadata.UuidString() + ")";
  LANCE_ASSIGN_OR_RAISE(auto buf, lookup->ReadGlobalBuffer(nulls_buffer));
  const std::string_view bytes(reinterpret_cast<const char*>(buf->data()), static_cast<size_t>(buf->size()));
  auto list_nulls = DecodeRowIdTreeMap(bytes, name + " list nulls");
  // A whole-fragment entry is a form this reader does not decode: not used.
  if (!list_nulls.ok() && list_nulls.status().IsNotImplemented()) return std::unique_ptr<ScalarIndex>();
  LANCE_RETURN_NOT_OK(list_nulls.status());
  std::vector<uint32_t> fragments = *metadata.fragment_ids;
  std::sort(fragments.begin(), fragments.end());
  return std::unique_ptr<ScalarIndex>(new LabelListIndex(dataset, std::move(fragments), std::move(lookup),
                                                         column->type(), std::move(*list_nulls), std::move(name)));
}

}  // namespace lance::index
