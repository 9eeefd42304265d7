// Encoding one page of a 2.1+ leaf column: the structural layout (all-null,
// mini-block or full-zip) around the page's values and levels. The inverse
// of DecodePage.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <arrow/array.h>

#include "lance/file/column_data.h"
#include "lance/file/v2_1/encode_levels.h"
#include "lance/file/version.h"
#include "lance/status.h"

namespace lance::file::v2_1 {

struct LeafPageInput {
  /// Widest-layering levels (see encode_levels.h); rep empty without lists.
  std::vector<uint16_t> rep;
  std::vector<uint16_t> def;
  /// The visible values, one per level whose def <= path.max_visible_def.
  std::shared_ptr<arrow::Array> values;
  uint64_t num_rows = 0;
  uint64_t first_row = 0;
  /// Steps whose layer is nullable even if no level uses it (see
  /// ShreddedLeaf::step_has_nulls); empty for none.
  std::vector<bool> nullable_steps;
  /// A packed struct leaf: each child field's metadata (it steers the
  /// compression of string/binary children in 2.2).
  std::vector<std::map<std::string, std::string>> packed_child_metadata;
};

/// Encodes one page. `metadata` is the leaf field's metadata
/// (lance-encoding:structural-encoding picks the layout).
Result<PageData> EncodeLeafPage(const LeafPath& path, LeafPageInput input,
                                const std::map<std::string, std::string>& metadata, FileVersion version);

}  // namespace lance::file::v2_1
