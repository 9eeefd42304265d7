#include "lance/file/v2_1/repdef.h"

#include <algorithm>
#include <limits>

#include <arrow/buffer_builder.h>

#include "lance/file/v2_1/bytes.h"

namespace lance::file::v2_1 {

bool IsListLayer(Layer layer) {
  return layer == Layer::kAllValidList || layer == Layer::kNullableList || layer == Layer::kEmptyableList ||
         layer == Layer::kNullAndEmptyList;
}

uint16_t DefLevelsOf(Layer layer) {
  switch (layer) {
    case Layer::kAllValidItem:
    case Layer::kAllValidList:
      return 0;
    case Layer::kNullableItem:
    case Layer::kNullableList:
    case Layer::kEmptyableList:
      return 1;
    case Layer::kNullAndEmptyList:
      return 2;
  }
  return 0;
}

bool IsAllValidLayer(Layer layer) {
  return layer == Layer::kAllValidItem || layer == Layer::kAllValidList || layer == Layer::kEmptyableList;
}

std::string LayerName(Layer layer) {
  switch (layer) {
    case Layer::kAllValidItem: return "ALL_VALID_ITEM";
    case Layer::kAllValidList: return "ALL_VALID_LIST";
    case Layer::kNullableItem: return "NULLABLE_ITEM";
    case Layer::kNullableList: return "NULLABLE_LIST";
    case Layer::kEmptyableList: return "EMPTYABLE_LIST";
    case Layer::kNullAndEmptyList: return "NULL_AND_EMPTY_LIST";
  }
  return "?";
}

Result<std::vector<Layer>> LayersFromProto(const int* values, int count) {
  std::vector<Layer> layers;
  layers.reserve(count);
  for (int i = 0; i < count; ++i) {
    switch (values[i]) {
      case 1: layers.push_back(Layer::kAllValidItem); break;
      case 2: layers.push_back(Layer::kAllValidList); break;
      case 3: layers.push_back(Layer::kNullableItem); break;
      case 4: layers.push_back(Layer::kNullableList); break;
      case 5: layers.push_back(Layer::kEmptyableList); break;
      case 6: layers.push_back(Layer::kNullAndEmptyList); break;
      default:
        return Corrupt("unknown rep/def layer value ", values[i]);
    }
  }
  if (layers.empty()) return Corrupt("a page layout lists no rep/def layers");
  if (layers.size() > 1000) return Corrupt("a page layout lists ", layers.size(), " rep/def layers");
  return layers;
}

uint16_t MaxRep(const std::vector<Layer>& layers) {
  uint16_t n = 0;
  for (Layer l : layers) n += IsListLayer(l) ? 1 : 0;
  return n;
}

uint16_t MaxDef(const std::vector<Layer>& layers) {
  uint16_t n = 0;
  for (Layer l : layers) n += DefLevelsOf(l);
  return n;
}

uint16_t MaxVisibleDef(const std::vector<Layer>& layers) {
  uint16_t n = 0;
  for (Layer l : layers) {
    if (IsListLayer(l)) break;
    n += DefLevelsOf(l);
  }
  return n;
}

Status ValidatePageLevels(const PageLevels& levels) {
  const uint16_t max_rep = MaxRep(levels.layers);
  const uint16_t max_def = MaxDef(levels.layers);
  const uint16_t max_visible = MaxVisibleDef(levels.layers);
  if (levels.rep && levels.def && levels.rep->size() != levels.def->size()) {
    return Corrupt(levels.rep->size(), " repetition levels but ", levels.def->size(), " definition levels");
  }
  if (levels.rep) {
    if (max_rep == 0 && !levels.rep->empty()) return Corrupt("repetition levels in a page without lists");
    for (size_t i = 0; i < levels.rep->size(); ++i) {
      if ((*levels.rep)[i] > max_rep) {
        return Corrupt("repetition level ", (*levels.rep)[i], " at index ", i, " exceeds the maximum ", max_rep);
      }
    }
    if (!levels.rep->empty() && levels.rep->front() != max_rep) {
      return Corrupt("the levels of a page do not start a new row (first repetition level ", levels.rep->front(),
                     ", expected ", max_rep, ")");
    }
  } else if (max_rep > 0 && (levels.num_items > 0 || (levels.def && !levels.def->empty()))) {
    return Corrupt("a page with list layers has no repetition levels");
  }
  uint64_t visible = 0;
  if (levels.def) {
    for (size_t i = 0; i < levels.def->size(); ++i) {
      const uint16_t d = (*levels.def)[i];
      if (d > max_def) {
        return Corrupt("definition level ", d, " at index ", i, " exceeds the maximum ", max_def);
      }
      visible += d <= max_visible ? 1 : 0;
    }
  } else if (levels.rep) {
    visible = levels.rep->size();
  } else {
    visible = levels.num_items;
  }
  if (visible != levels.num_items) {
    return Corrupt("the levels describe ", visible, " values but the page has ", levels.num_items);
  }
  return Status::OK();
}

RepDefUnraveler::RepDefUnraveler(std::vector<PageLevels> pages) {
  pages_.reserve(pages.size());
  for (auto& levels : pages) {
    if (status_.ok()) status_ = ValidatePageLevels(levels);
    Page page;
    page.levels = std::move(levels);
    page.plain_length = page.levels.num_items;
    // Level 0 (valid) is visible everywhere; each further level is visible at
    // the repetition depth of the list layers below (and including) it.
    uint16_t rep_counter = 0;
    page.levels_to_rep.push_back(0);
    for (Layer layer : page.levels.layers) {
      switch (layer) {
        case Layer::kAllValidItem:
        case Layer::kAllValidList:
          if (layer == Layer::kAllValidList) ++rep_counter;
          break;
        case Layer::kNullableItem:
          page.levels_to_rep.push_back(rep_counter);
          break;
        case Layer::kNullableList:
        case Layer::kEmptyableList:
          ++rep_counter;
          page.levels_to_rep.push_back(rep_counter);
          break;
        case Layer::kNullAndEmptyList:
          ++rep_counter;
          page.levels_to_rep.push_back(rep_counter);
          page.levels_to_rep.push_back(rep_counter);
          break;
      }
    }
    pages_.push_back(std::move(page));
  }
}

uint64_t RepDefUnraveler::Page::Length() const {
  if (levels.def) {
    uint64_t n = 0;
    for (uint16_t d : *levels.def) n += levels_to_rep[d] <= rep_cmp ? 1 : 0;
    return n;
  }
  if (levels.rep) return levels.rep->size();
  return plain_length;
}

uint64_t RepDefUnraveler::CurrentLength() const {
  uint64_t n = 0;
  for (const auto& page : pages_) n += page.Length();
  return n;
}

Result<std::shared_ptr<arrow::Buffer>> RepDefUnraveler::UnravelValidity(uint64_t expected, arrow::MemoryPool* pool) {
  LANCE_RETURN_NOT_OK(status_);
  bool all_valid = true;
  for (const auto& page : pages_) {
    if (page.layer >= page.levels.layers.size()) {
      return Corrupt("the page lists ", page.levels.layers.size(), " rep/def layers but the schema needs more");
    }
    const Layer layer = page.levels.layers[page.layer];
    if (IsListLayer(layer)) {
      return Corrupt("expected a struct/item rep/def layer but the page has ", LayerName(layer));
    }
    all_valid &= layer == Layer::kAllValidItem || !page.levels.def;
  }
  uint64_t total = 0;
  if (all_valid) {
    for (auto& page : pages_) {
      total += page.Length();
      if (page.levels.layers[page.layer] == Layer::kNullableItem) ++page.def_cmp;
      ++page.layer;
    }
    if (total != expected) return Corrupt("the levels describe ", total, " entries but there are ", expected);
    return nullptr;
  }
  arrow::TypedBufferBuilder<bool> builder(pool);
  LANCE_RETURN_NOT_OK(builder.Reserve(static_cast<int64_t>(expected)));
  for (auto& page : pages_) {
    const Layer layer = page.levels.layers[page.layer];
    ++page.layer;
    if (layer == Layer::kAllValidItem || !page.levels.def) {
      const uint64_t n = page.Length();
      if (layer == Layer::kNullableItem) ++page.def_cmp;
      LANCE_RETURN_NOT_OK(builder.Append(static_cast<int64_t>(n), true));
      total += n;
      continue;
    }
    const uint16_t cmp = page.def_cmp++;
    for (uint16_t d : *page.levels.def) {
      if (page.levels_to_rep[d] <= page.rep_cmp) {
        LANCE_RETURN_NOT_OK(builder.Append(d <= cmp));
        ++total;
      }
    }
  }
  if (total != expected) return Corrupt("the levels describe ", total, " entries but there are ", expected);
  std::shared_ptr<arrow::Buffer> out;
  LANCE_RETURN_NOT_OK(builder.Finish(&out));
  return out;
}

Result<RepDefUnraveler::ListLayer> RepDefUnraveler::UnravelOffsets(arrow::MemoryPool* pool) {
  LANCE_RETURN_NOT_OK(status_);
  bool all_valid = true;
  for (const auto& page : pages_) {
    if (page.layer >= page.levels.layers.size()) {
      return Corrupt("the page lists ", page.levels.layers.size(), " rep/def layers but the schema needs more");
    }
    const Layer layer = page.levels.layers[page.layer];
    if (!IsListLayer(layer)) {
      return Corrupt("expected a list rep/def layer but the page has ", LayerName(layer));
    }
    all_valid &= IsAllValidLayer(layer);
  }
  ListLayer out;
  arrow::TypedBufferBuilder<bool> validity(pool);
  int64_t curlen = 0;
  for (auto& page : pages_) {
    const Layer layer = page.levels.layers[page.layer];
    const uint16_t valid_level = page.def_cmp;
    uint16_t null_level = 0, empty_level = 0;
    switch (layer) {
      case Layer::kNullableList: null_level = valid_level + 1; break;
      case Layer::kEmptyableList: empty_level = valid_level + 1; break;
      case Layer::kNullAndEmptyList:
        null_level = valid_level + 1;
        empty_level = valid_level + 2;
        break;
      default: break;
    }
    page.def_cmp += DefLevelsOf(layer);
    ++page.layer;
    // Levels above max_level belong to lists hidden at this depth; levels in
    // (upper_null, max_level] are null structs that hide this list.
    // Levels up to valid_level are items inside a visible list (e.g. a null
    // first item of an all-valid list), so the list's range starts there.
    uint16_t max_level = std::max({valid_level, null_level, empty_level});
    const uint16_t upper_null = max_level;
    for (size_t k = page.layer; k < page.levels.layers.size(); ++k) {
      const Layer above = page.levels.layers[k];
      if (above == Layer::kNullableItem) {
        ++max_level;
      } else if (above != Layer::kAllValidItem) {
        break;
      }
    }
    ++page.rep_cmp;
    if (!page.levels.rep) continue;  // no levels at all: the page has no lists (checked on construction)
    auto& rep = *page.levels.rep;
    size_t write = 0;
    if (page.levels.def) {
      auto& def = *page.levels.def;
      for (size_t read = 0; read < rep.size(); ++read) {
        const uint16_t r = rep[read];
        if (r == 0) {
          ++curlen;
          continue;
        }
        const uint16_t d = def[read];
        rep[write] = r - 1;
        def[write] = d;
        ++write;
        if (d == 0) {
          out.offsets.push_back(curlen++);
          if (!all_valid) LANCE_RETURN_NOT_OK(validity.Append(true));
        } else if (d > max_level) {
          // Hidden at this depth: an empty/null list further out.
        } else if (d == null_level || d > upper_null) {
          out.offsets.push_back(curlen);
          if (!all_valid) LANCE_RETURN_NOT_OK(validity.Append(false));
        } else if (d == empty_level) {
          out.offsets.push_back(curlen);
          if (!all_valid) LANCE_RETURN_NOT_OK(validity.Append(true));
        } else {
          // A valid list whose first item is null (or a null struct).
          out.offsets.push_back(curlen++);
          if (!all_valid) LANCE_RETURN_NOT_OK(validity.Append(true));
        }
      }
      def.resize(write);
    } else {
      for (size_t read = 0; read < rep.size(); ++read) {
        const uint16_t r = rep[read];
        if (r != 0) {
          out.offsets.push_back(curlen);
          rep[write++] = r - 1;
          if (!all_valid) LANCE_RETURN_NOT_OK(validity.Append(true));
        }
        ++curlen;
      }
    }
    rep.resize(write);
  }
  out.offsets.push_back(curlen);
  if (!all_valid) LANCE_RETURN_NOT_OK(validity.Finish(&out.validity));
  return out;
}

Status RepDefUnraveler::CheckExhausted() const {
  LANCE_RETURN_NOT_OK(status_);
  for (const auto& page : pages_) {
    if (page.layer != page.levels.layers.size()) {
      return Corrupt("the page lists ", page.levels.layers.size(), " rep/def layers but the schema has ", page.layer);
    }
  }
  return Status::OK();
}

Status RepDefUnraveler::Decimate(uint64_t dimension) {
  LANCE_RETURN_NOT_OK(status_);
  if (dimension == 0) return Corrupt("fixed-size list of dimension 0 in rep/def levels");
  for (auto& page : pages_) {
    if (page.levels.rep) {
      return Status::NotImplemented("fixed-size lists containing lists are not supported");
    }
    if (page.levels.def) {
      auto& def = *page.levels.def;
      if (def.size() % dimension != 0) {
        return Corrupt(def.size(), " definition levels do not split into lists of ", dimension);
      }
      size_t write = 0;
      for (size_t read = 0; read < def.size(); read += dimension) def[write++] = def[read];
      def.resize(write);
    }
    if (page.plain_length % dimension != 0) {
      return Corrupt(page.plain_length, " items do not split into lists of ", dimension);
    }
    page.plain_length /= dimension;
  }
  return Status::OK();
}

}  // namespace lance::file::v2_1
