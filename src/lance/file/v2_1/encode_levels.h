// Shredding a field's Arrow values into leaf columns for 2.1+ pages: the
// visible values of each leaf and their repetition/definition levels.
//
// Levels are first computed against the widest layers a leaf can have
// (every struct/leaf layer nullable, every list both nullable and
// emptyable). When a page is encoded, CompactLevels narrows each layer to
// what the page's levels actually use, as the reference writes them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/array.h>

#include "lance/file/v2_1/repdef.h"
#include "lance/file/version.h"
#include "lance/schema.h"
#include "lance/status.h"

namespace lance::file::v2_1 {

/// One step from a top-level field down to a leaf.
struct LeafStep {
  /// kFixedList: a fixed-size list of structs; each of its rows is
  /// `dimension` items below it (an item layer, no repetition).
  enum class Kind { kStruct, kList, kFixedList, kLeaf };
  Kind kind = Kind::kLeaf;
  /// kStruct: which child the path descends into.
  int child_index = 0;
  /// kFixedList: items per row.
  int64_t dimension = 0;
  /// kLeaf: a blob column (lance-encoding:blob on large_binary).
  bool blob = false;
};

/// The path from a top-level field to one leaf column and the widest
/// layering of its levels.
struct LeafPath {
  std::string name;  // dotted, for error messages
  std::vector<LeafStep> steps;  // top first, the leaf last
  /// Per step: the def level meaning "null here" (and, for lists, +1 =
  /// "empty here") in the widest layering.
  std::vector<uint16_t> null_def;
  /// Per step: rep level of the second and later items of a list step.
  std::vector<uint16_t> inner_rep;
  /// Per step: true if no list lies below it (a null here still has a slot).
  std::vector<bool> visible_below;
  uint16_t max_rep = 0;
  /// Largest widest-layering def level that denotes a visible value.
  uint16_t max_visible_def = 0;
  uint16_t max_def = 0;
  /// Levels per top-level row without repetition: the product of the
  /// dimensions of the fixed-size lists on the path (pages count these).
  uint64_t items_per_row = 1;
  /// A blob leaf (lance-encoding:blob on a large_binary field).
  bool blob = false;
};

/// The leaf columns of `field` in pre-order (structs and lists contribute
/// no column of their own). Errors for field types the writer cannot shred
/// in `version`.
Result<std::vector<LeafPath>> LeafPathsOf(const Field& field, FileVersion version);

/// The shredded values of some rows for one leaf.
struct ShreddedLeaf {
  std::vector<uint16_t> rep;  // empty if the path has no list
  std::vector<uint16_t> def;  // widest layering, one per level
  /// The visible values (their validity is in `def`).
  std::shared_ptr<arrow::Array> values;
  uint64_t num_rows = 0;
  /// Paths without lists: per step, whether its array has nulls in these
  /// rows, a struct's pushed down into its children as the reference does.
  /// Such a layer is nullable even when every null of it lies under a null
  /// parent (so its def level goes unused).
  std::vector<bool> step_has_nulls;
};

/// Shreds `array` (the rows of the top-level field) for one leaf.
Result<ShreddedLeaf> ShredLeaf(const LeafPath& path, const std::shared_ptr<arrow::Array>& array);

/// The levels of a page in the layering the page actually needs.
struct CompactLevels {
  std::vector<Layer> layers;  // innermost first
  std::vector<uint16_t> rep;  // empty if none
  std::vector<uint16_t> def;  // empty if every level is 0
};

/// Narrows widest-layering levels to the layers they use (and the steps
/// `nullable_steps` marks, if given).
CompactLevels CompactPageLevels(const LeafPath& path, std::vector<uint16_t> rep, const std::vector<uint16_t>& def,
                                const std::vector<bool>& nullable_steps = {});

/// The pb RepDefLayer value of a layer.
int LayerToProto(Layer layer);

}  // namespace lance::file::v2_1
