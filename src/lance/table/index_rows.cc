#include "lance/table/index_rows.h"

#include <algorithm>
#include <string_view>

#include "lance/table/frag_reuse.h"

namespace lance::table {

IndexRows RowsOf(const IndexMetadata& index) {
  std::string_view url = index.index_details_type_url;
  const size_t slash = url.rfind('/');
  const std::string_view message = slash == std::string_view::npos ? url : url.substr(slash + 1);
  const size_t dot = message.rfind('.');
  const std::string_view name = dot == std::string_view::npos ? message : message.substr(dot + 1);
  if (name == "ZoneMapIndexDetails" || name == "BloomFilterIndexDetails") return IndexRows::kZones;
  if (name == "BTreeIndexDetails") return index.index_version.value_or(0) == 1 ? IndexRows::kAddresses : IndexRows::kRowIds;
  if (name == "BitmapIndexDetails" || name == "LabelListIndexDetails" || name == "NGramIndexDetails" ||
      name == "InvertedIndexDetails" || name == "VectorIndexDetails") {
    return IndexRows::kRowIds;
  }
  return IndexRows::kUnknown;
}

bool CoversFragment(const IndexMetadata& index, uint64_t id) {
  return !index.fragment_ids || std::find(index.fragment_ids->begin(), index.fragment_ids->end(),
                                          static_cast<uint32_t>(id)) != index.fragment_ids->end();
}

bool IsSystemIndex(const IndexMetadata& index) {
  return index.name == kFragReuseIndexName || index.name == "__lance_mem_wal";
}

}  // namespace lance::table
