#include "lance/file/v2_1/encode_levels.h"

#include <arrow/array/concatenate.h>
#include <arrow/array/util.h>
#include <cctype>

#include <arrow/type.h>
#include <arrow/util/checked_cast.h>

namespace lance::file::v2_1 {

namespace {

bool IsListType(const std::string& lt) {
  return lt == "list" || lt == "list.struct" || lt == "large_list" || lt == "large_list.struct" || lt == "map";
}

bool MetadataSays(const Field& field, const char* key) {
  auto it = field.metadata.find(key);
  return it != field.metadata.end();
}

// As the reader decides it: "packed" or "lance-encoding:packed" set to true.
bool IsPacked(const Field& field) {
  for (const char* key : {"packed", "lance-encoding:packed"}) {
    auto it = field.metadata.find(key);
    if (it == field.metadata.end()) continue;
    std::string v = it->second;
    for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (v == "true") return true;
  }
  return false;
}

// The dimension of a "fixed_size_list:struct:N" field.
Result<int64_t> FixedListDimension(const Field& field, const std::string& name) {
  const auto& lt = field.logical_type;
  const auto colon = lt.rfind(':');
  int64_t dim = 0;
  for (size_t i = colon + 1; i < lt.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(lt[i])) || dim > (int64_t{1} << 31)) { dim = 0; break; }
    dim = dim * 10 + (lt[i] - '0');
  }
  if (dim <= 0 || field.children.size() != 1) {
    return Status::Invalid("fixed-size list field '", name, "' has logical type '", lt, "' and ",
                           field.children.size(), " children");
  }
  return dim;
}

Status CollectLeaves(const Field& field, std::vector<LeafStep> prefix, const std::string& prefix_name,
                     FileVersion version, std::vector<std::vector<LeafStep>>* out, std::vector<std::string>* names) {
  const std::string name = prefix_name.empty() ? field.name : prefix_name + "." + field.name;
  const auto& lt = field.logical_type;
  if (lt == "struct") {
    if (IsPacked(field)) {
      // One column of rows packed from fixed-width children (and, in 2.2,
      // string/binary ones: checked when a page is encoded, as the reference).
      for (const auto& child : field.children) {
        const auto& t = child.logical_type;
        if (!child.children.empty() || t == "bool" || t == "json" || t == "struct" || t.starts_with("dict:") ||
            MetadataSays(child, "lance-encoding:blob")) {
          return Status::NotImplemented("writing packed struct field '", name, "' with child '", child.name,
                                        "' of type ", child.logical_type, " (only byte-wide fixed-width and "
                                        "string/binary children are supported)");
        }
      }
      prefix.push_back({LeafStep::Kind::kLeaf, 0});
      out->push_back(std::move(prefix));
      names->push_back(name);
      return Status::OK();
    }
    if (field.children.empty()) {
      return Status::NotImplemented("writing struct field '", name, "' without children in file version 2.1+");
    }
    for (size_t i = 0; i < field.children.size(); ++i) {
      auto steps = prefix;
      steps.push_back({LeafStep::Kind::kStruct, static_cast<int>(i)});
      LANCE_RETURN_NOT_OK(CollectLeaves(field.children[i], std::move(steps), name, version, out, names));
    }
    return Status::OK();
  }
  if (IsListType(lt)) {
    if (field.children.size() != 1) {
      return Status::Invalid("list field '", name, "' has ", field.children.size(), " children, expected 1");
    }
    prefix.push_back({LeafStep::Kind::kList, 0});
    return CollectLeaves(field.children[0], std::move(prefix), name, version, out, names);
  }
  if (lt.starts_with("fixed_size_list:struct") && !field.children.empty()) {
    // As the reference: fixed-size lists of structs arrived with 2.2.
    if (version < FileVersion::kV2_2) {
      return Status::NotImplemented("fixed-size list of structs '", name, "' needs file version 2.2 or later");
    }
    LANCE_ASSIGN_OR_RAISE(const int64_t dim, FixedListDimension(field, name));
    LeafStep step{LeafStep::Kind::kFixedList, 0};
    step.dimension = dim;
    prefix.push_back(step);
    return CollectLeaves(field.children[0], std::move(prefix), name, version, out, names);
  }
  if (MetadataSays(field, "lance-encoding:blob")) {
    // As the reference: blob values must be large_binary.
    if (lt != "large_binary" && lt != "blob") {
      return Status::Invalid("blob field '", name, "' must be large_binary, not ", lt, " (lance-encoding:blob)");
    }
    for (const auto& step : prefix) {
      if (step.kind == LeafStep::Kind::kList || step.kind == LeafStep::Kind::kFixedList) {
        return Status::NotImplemented("writing blob field '", name, "' inside a list (blob values in lists "
                                      "cannot be read back)");
      }
    }
    LeafStep leaf{LeafStep::Kind::kLeaf, 0};
    leaf.blob = true;
    prefix.push_back(leaf);
  } else {
    prefix.push_back({LeafStep::Kind::kLeaf, 0});
  }
  out->push_back(std::move(prefix));
  names->push_back(name);
  return Status::OK();
}

uint16_t WidthOf(LeafStep::Kind kind) { return kind == LeafStep::Kind::kList ? 2 : 1; }

}  // namespace

Result<std::vector<LeafPath>> LeafPathsOf(const Field& field, FileVersion version) {
  std::vector<std::vector<LeafStep>> all_steps;
  std::vector<std::string> names;
  LANCE_RETURN_NOT_OK(CollectLeaves(field, {}, "", version, &all_steps, &names));
  std::vector<LeafPath> paths;
  for (size_t p = 0; p < all_steps.size(); ++p) {
    LeafPath path;
    path.name = names[p];
    path.steps = std::move(all_steps[p]);
    const size_t n = path.steps.size();
    path.null_def.resize(n);
    path.inner_rep.resize(n, 0);
    path.visible_below.resize(n);
    uint16_t def = 1;
    uint16_t lists_below = 0;  // lists at this step or deeper
    bool list_seen = false;
    path.max_visible_def = 0;
    for (size_t j = n; j-- > 0;) {
      const auto kind = path.steps[j].kind;
      path.visible_below[j] = !list_seen;
      path.null_def[j] = def;
      if (kind == LeafStep::Kind::kList) {
        if (!list_seen) path.max_visible_def = def - 1;
        list_seen = true;
        ++lists_below;
        path.inner_rep[j] = lists_below - 1;
      }
      def = static_cast<uint16_t>(def + WidthOf(kind));
    }
    path.blob = path.steps.back().blob;
    path.max_def = def - 1;
    if (!list_seen) path.max_visible_def = path.max_def;
    path.max_rep = lists_below;
    bool fixed_list = false;
    for (const auto& step : path.steps) {
      if (step.kind != LeafStep::Kind::kFixedList) continue;
      fixed_list = true;
      path.items_per_row *= static_cast<uint64_t>(step.dimension);
    }
    if (fixed_list && lists_below > 0) {
      // Our reader cannot read fixed-size lists mixed with lists back yet.
      return Status::NotImplemented("writing fixed-size lists of structs together with lists (leaf '", path.name,
                                    "')");
    }
    paths.push_back(std::move(path));
  }
  return paths;
}

namespace {

class Shredder {
 public:
  Shredder(const LeafPath& path, std::vector<std::shared_ptr<arrow::Array>> arrays, ShreddedLeaf* out)
      : path_(path), arrays_(std::move(arrays)), out_(out) {}

  void Row(int64_t i) { Visit(0, i, path_.max_rep); }

  std::vector<int64_t> indices;

 private:
  void Emit(uint16_t rep, uint16_t def) {
    if (path_.max_rep > 0) out_->rep.push_back(rep);
    out_->def.push_back(def);
  }

  void Visit(size_t j, int64_t i, uint16_t rep) {
    const arrow::Array& array = *arrays_[j];
    const LeafStep& step = path_.steps[j];
    if (array.IsNull(i)) {
      // Only structs and fixed-size lists lie between a visible null and
      // the leaf: each of its slots below keeps a level and a value.
      if (step.kind == LeafStep::Kind::kList || !path_.visible_below[j]) {
        Emit(rep, path_.null_def[j]);
        return;
      }
      EmitNullSlots(j, i, rep, path_.null_def[j]);
      return;
    }
    switch (step.kind) {
      case LeafStep::Kind::kLeaf:
        Emit(rep, 0);
        indices.push_back(i);
        return;
      case LeafStep::Kind::kStruct:
        Visit(j + 1, i, rep);
        return;
      case LeafStep::Kind::kFixedList: {
        const auto& fsl = static_cast<const arrow::FixedSizeListArray&>(array);
        const int64_t start = fsl.value_offset(i);
        for (int64_t t = start; t < start + step.dimension; ++t) Visit(j + 1, t, rep);
        return;
      }
      case LeafStep::Kind::kList: {
        int64_t start, end;
        if (array.type_id() == arrow::Type::LARGE_LIST) {
          const auto& list = static_cast<const arrow::LargeListArray&>(array);
          start = list.value_offset(i);
          end = list.value_offset(i + 1);
        } else {
          const auto& list = static_cast<const arrow::ListArray&>(array);  // also maps
          start = list.value_offset(i);
          end = list.value_offset(i + 1);
        }
        if (start == end) {
          Emit(rep, static_cast<uint16_t>(path_.null_def[j] + 1));
          return;
        }
        for (int64_t t = start; t < end; ++t) Visit(j + 1, t, t == start ? rep : path_.inner_rep[j]);
        return;
      }
    }
  }

  // A null at step j (no list below): one level of `def` and one value
  // slot for each leaf slot under it (struct children are aligned with
  // their parent, fixed-size lists multiply the slots; paths with both a
  // fixed-size list and a list are refused, so `rep` is 0 when there are
  // several slots).
  void EmitNullSlots(size_t j, int64_t i, uint16_t rep, uint16_t def) {
    if (j + 1 == path_.steps.size()) {
      Emit(rep, def);
      indices.push_back(i);
      return;
    }
    const LeafStep& step = path_.steps[j];
    if (step.kind == LeafStep::Kind::kFixedList) {
      const int64_t start = static_cast<const arrow::FixedSizeListArray&>(*arrays_[j]).value_offset(i);
      for (int64_t t = start; t < start + step.dimension; ++t) EmitNullSlots(j + 1, t, rep, def);
      return;
    }
    EmitNullSlots(j + 1, i, rep, def);
  }

  const LeafPath& path_;
  std::vector<std::shared_ptr<arrow::Array>> arrays_;
  ShreddedLeaf* out_;
};

// The array at each step of the path (list values unsliced, struct
// children aligned with their parent).
Result<std::vector<std::shared_ptr<arrow::Array>>> ArraysAlong(const LeafPath& path,
                                                               const std::shared_ptr<arrow::Array>& top) {
  std::vector<std::shared_ptr<arrow::Array>> arrays{top};
  for (size_t j = 0; j + 1 < path.steps.size(); ++j) {
    const auto& cur = arrays.back();
    const auto& step = path.steps[j];
    if (step.kind == LeafStep::Kind::kStruct) {
      if (cur->type_id() != arrow::Type::STRUCT) {
        return Status::Invalid("leaf '", path.name, "': expected a struct array, got ", cur->type()->ToString());
      }
      const auto& s = static_cast<const arrow::StructArray&>(*cur);
      if (step.child_index >= s.num_fields()) return Status::Invalid("leaf '", path.name, "': missing struct child");
      arrays.push_back(s.field(step.child_index));
    } else if (step.kind == LeafStep::Kind::kFixedList) {
      if (cur->type_id() != arrow::Type::FIXED_SIZE_LIST) {
        return Status::Invalid("leaf '", path.name, "': expected a fixed-size list array, got ",
                               cur->type()->ToString());
      }
      const auto& fsl = static_cast<const arrow::FixedSizeListArray&>(*cur);
      if (fsl.value_length() != step.dimension) {
        return Status::Invalid("leaf '", path.name, "': fixed-size lists of ", fsl.value_length(),
                               " items, the schema says ", step.dimension);
      }
      arrays.push_back(fsl.values());
    } else {
      switch (cur->type_id()) {
        case arrow::Type::LIST:
        case arrow::Type::MAP:
          arrays.push_back(static_cast<const arrow::ListArray&>(*cur).values());
          break;
        case arrow::Type::LARGE_LIST:
          arrays.push_back(static_cast<const arrow::LargeListArray&>(*cur).values());
          break;
        default:
          return Status::Invalid("leaf '", path.name, "': expected a list array, got ", cur->type()->ToString());
      }
    }
  }
  return arrays;
}

}  // namespace

Result<ShreddedLeaf> ShredLeaf(const LeafPath& path, const std::shared_ptr<arrow::Array>& array) {
  ShreddedLeaf out;
  out.num_rows = static_cast<uint64_t>(array->length()) * path.items_per_row;
  LANCE_ASSIGN_OR_RAISE(auto arrays, ArraysAlong(path, array));
  const auto& leaf = arrays.back();
  const bool simple = path.steps.size() == 1;
  if (simple) {
    // A top-level leaf: one level per row, every value visible.
    out.values = leaf;
    if (leaf->null_count() > 0) {
      out.def.resize(static_cast<size_t>(leaf->length()));
      for (int64_t i = 0; i < leaf->length(); ++i) out.def[i] = leaf->IsNull(i) ? 1 : 0;
    } else {
      out.def.assign(static_cast<size_t>(leaf->length()), 0);
    }
    return out;
  }
  if (path.max_rep == 0) {
    int64_t start = 0, length = array->length();
    for (size_t j = 0; j < path.steps.size(); ++j) {
      out.step_has_nulls.push_back(arrays[j]->Slice(start, length)->null_count() > 0);
      if (path.steps[j].kind == LeafStep::Kind::kFixedList) {
        start = static_cast<const arrow::FixedSizeListArray&>(*arrays[j]).value_offset(start);
        length *= path.steps[j].dimension;
      }
      // The reference pushes a struct's nulls down into its children.
      if (j > 0 && path.steps[j - 1].kind == LeafStep::Kind::kStruct && out.step_has_nulls[j - 1]) {
        out.step_has_nulls[j] = true;
      }
    }
  }
  Shredder shredder(path, arrays, &out);
  for (int64_t i = 0; i < array->length(); ++i) shredder.Row(i);
  const auto& idx = shredder.indices;
  bool contiguous = true;
  for (size_t k = 1; k < idx.size() && contiguous; ++k) contiguous = idx[k] == idx[k - 1] + 1;
  if (idx.empty()) {
    LANCE_ASSIGN_OR_RAISE(out.values, arrow::MakeEmptyArray(leaf->type()));
  } else if (contiguous) {
    out.values = leaf->Slice(idx.front(), static_cast<int64_t>(idx.size()));
  } else {
    // Gather runs of consecutive slots by slicing: unlike Take, this keeps
    // the bytes under null slots, which the reference writes as they are.
    arrow::ArrayVector runs;
    size_t start = 0;
    for (size_t k = 1; k <= idx.size(); ++k) {
      if (k == idx.size() || idx[k] != idx[k - 1] + 1) {
        runs.push_back(leaf->Slice(idx[start], static_cast<int64_t>(k - start)));
        start = k;
      }
    }
    LANCE_ASSIGN_OR_RAISE(out.values, arrow::Concatenate(runs));
  }
  return out;
}

int LayerToProto(Layer layer) {
  switch (layer) {
    case Layer::kAllValidItem: return 1;
    case Layer::kAllValidList: return 2;
    case Layer::kNullableItem: return 3;
    case Layer::kNullableList: return 4;
    case Layer::kEmptyableList: return 5;
    case Layer::kNullAndEmptyList: return 6;
  }
  return 0;
}

CompactLevels CompactPageLevels(const LeafPath& path, std::vector<uint16_t> rep, const std::vector<uint16_t>& def,
                                const std::vector<bool>& nullable_steps) {
  std::vector<bool> used(static_cast<size_t>(path.max_def) + 2, false);
  for (uint16_t d : def) used[d] = true;
  std::vector<uint16_t> map(static_cast<size_t>(path.max_def) + 2, 0);
  CompactLevels out;
  uint16_t next = 1;
  for (size_t j = path.steps.size(); j-- > 0;) {
    const uint16_t base = path.null_def[j];
    if (path.steps[j].kind == LeafStep::Kind::kList) {
      const bool nulls = used[base], empties = used[base + 1];
      if (nulls) map[base] = next++;
      if (empties) map[base + 1] = next++;
      out.layers.push_back(nulls && empties ? Layer::kNullAndEmptyList
                           : nulls          ? Layer::kNullableList
                           : empties        ? Layer::kEmptyableList
                                            : Layer::kAllValidList);
    } else {
      const bool nulls = used[base] || (j < nullable_steps.size() && nullable_steps[j]);
      if (nulls) map[base] = next++;
      out.layers.push_back(nulls ? Layer::kNullableItem : Layer::kAllValidItem);
    }
  }
  if (next > 1) {
    out.def.resize(def.size());
    for (size_t i = 0; i < def.size(); ++i) out.def[i] = map[def[i]];
  }
  out.rep = std::move(rep);
  return out;
}

}  // namespace lance::file::v2_1
