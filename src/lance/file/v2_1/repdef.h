// Repetition and definition levels of 2.1+ pages and their unraveling into
// Arrow validity bitmaps and list offsets.
//
// Levels are u16. Definition level 0 means "valid at every layer"; each
// layer, listed innermost first, claims the next def levels: nullable items
// and nullable lists one (null), emptyable lists one (empty), lists that are
// both two (null = L, empty = L+1). A repetition level r > 0 starts a new list
// at list depth r counted from the innermost list (the outermost list has
// r = max_rep, i.e. starts a row). Empty and null lists, and lists hidden by a
// null parent, contribute one "invisible" level that carries no value.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <arrow/buffer.h>
#include <arrow/memory_pool.h>

#include "lance/status.h"

namespace lance::file::v2_1 {

enum class Layer : uint8_t {
  kAllValidItem,
  kAllValidList,
  kNullableItem,
  kNullableList,
  kEmptyableList,
  kNullAndEmptyList,
};

bool IsListLayer(Layer layer);
/// Def levels the layer consumes: 0, 0, 1, 1, 1, 2 in the order above.
uint16_t DefLevelsOf(Layer layer);
/// True for layers that never produce nulls (all-valid items/lists, emptyable lists).
bool IsAllValidLayer(Layer layer);
std::string LayerName(Layer layer);

/// Converts the proto's RepDefLayer values (1..6). Unknown values are errors.
Result<std::vector<Layer>> LayersFromProto(const int* values, int count);

uint16_t MaxRep(const std::vector<Layer>& layers);
uint16_t MaxDef(const std::vector<Layer>& layers);
/// The largest def level that still denotes a visible item (one with a value
/// slot): the levels of the item layers below the innermost list.
uint16_t MaxVisibleDef(const std::vector<Layer>& layers);

/// The levels of one page (or one run of concatenated chunks of a page).
struct PageLevels {
  std::vector<Layer> layers;
  std::optional<std::vector<uint16_t>> rep;
  std::optional<std::vector<uint16_t>> def;
  /// Visible items in the page: the number of decoded values.
  uint64_t num_items = 0;
};

/// Checks level values against the layers, that rep and def agree in
/// length, that a page starts a row, and that the number of visible levels
/// equals num_items.
Status ValidatePageLevels(const PageLevels& levels);

/// Unravels the levels of all pages of one leaf column, layer by layer from
/// the innermost. Parents call UnravelValidity for struct/item layers and
/// UnravelOffsets for list layers, in the order the layers are listed.
class RepDefUnraveler {
 public:
  RepDefUnraveler() = default;
  /// Checks each page with ValidatePageLevels; operations return the first
  /// problem found.
  explicit RepDefUnraveler(std::vector<PageLevels> pages);

  /// Validity of the next (item) layer: nullptr when every entry is valid.
  /// Errors if the layer is a list or the number of entries is not `expected`.
  Result<std::shared_ptr<arrow::Buffer>> UnravelValidity(uint64_t expected, arrow::MemoryPool* pool);

  struct ListLayer {
    /// One more offset than there are lists.
    std::vector<int64_t> offsets;
    /// nullptr when no list is null.
    std::shared_ptr<arrow::Buffer> validity;
  };
  /// Offsets and validity of the next (list) layer.
  Result<ListLayer> UnravelOffsets(arrow::MemoryPool* pool);

  /// Keeps every `dimension`-th level: moving from the items of a
  /// fixed-size list (whose levels repeat per item) to the lists themselves.
  Status Decimate(uint64_t dimension);

  /// The number of entries the next layer has (for callers that need a
  /// length before unraveling).
  uint64_t CurrentLength() const;

  /// Errors if a page lists layers that no parent unraveled (the page
  /// describes more nesting than the schema).
  Status CheckExhausted() const;

 private:
  struct Page {
    PageLevels levels;
    std::vector<uint16_t> levels_to_rep;
    uint16_t def_cmp = 0;
    uint16_t rep_cmp = 0;
    size_t layer = 0;
    uint64_t plain_length = 0;  // entries when there are no levels at all
    uint64_t Length() const;
  };
  std::vector<Page> pages_;
  Status status_;  // the pages' levels are checked on construction
};

}  // namespace lance::file::v2_1
