#include "lance/scan/row_selection.h"

#include <algorithm>
#include <unordered_map>

namespace lance::scan {

Result<std::vector<PhysicalRow>> RowsAtIndices(const Dataset& dataset, const std::vector<uint64_t>& indices) {
  const auto& fragments = dataset.manifest().fragments;
  // The first dataset offset of each fragment's live rows.
  std::vector<uint64_t> live_start(fragments.size() + 1, 0);
  for (size_t i = 0; i < fragments.size(); ++i) {
    LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset.PhysicalRows(fragments[i]));
    LANCE_ASSIGN_OR_RAISE(uint64_t deleted, dataset.NumDeletedRows(fragments[i]));
    live_start[i + 1] = live_start[i] + physical - std::min(physical, deleted);
  }
  std::unordered_map<size_t, std::vector<uint32_t>> deleted_of;
  std::vector<PhysicalRow> out;
  out.reserve(indices.size());
  for (uint64_t index : indices) {
    if (index >= live_start.back()) {
      return Status::IndexError("index ", index, " is out of range for dataset ", dataset.uri(), " with ",
                                live_start.back(), " rows");
    }
    const size_t f =
        static_cast<size_t>(std::upper_bound(live_start.begin(), live_start.end(), index) - live_start.begin() - 1);
    const uint64_t live_offset = index - live_start[f];
    auto it = deleted_of.find(f);
    if (it == deleted_of.end()) {
      LANCE_ASSIGN_OR_RAISE(auto del, dataset.DeletedRows(fragments[f]));
      it = deleted_of.emplace(f, std::move(del)).first;
    }
    // The smallest physical offset with live_offset live rows before it.
    const auto& del = it->second;
    uint64_t lo = live_offset, hi = live_offset + del.size();
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      const uint64_t deleted_upto = std::upper_bound(del.begin(), del.end(), mid) - del.begin();
      if (mid - deleted_upto + 1 <= live_offset) lo = mid + 1; else hi = mid;
    }
    out.push_back({f, static_cast<uint32_t>(lo)});
  }
  return out;
}

Result<std::vector<PhysicalRow>> RowsWithIds(const Dataset& dataset, const std::vector<uint64_t>& row_ids) {
  if (!dataset.manifest().UsesStableRowIds()) return RowsAtAddresses(dataset, row_ids);
  const auto& fragments = dataset.manifest().fragments;
  std::unordered_map<uint64_t, PhysicalRow> index;  // stable id -> live row
  for (size_t i = 0; i < fragments.size(); ++i) {
    LANCE_ASSIGN_OR_RAISE(auto ids, dataset.RowIds(fragments[i]));
    LANCE_ASSIGN_OR_RAISE(auto del, dataset.DeletedRows(fragments[i]));
    size_t d = 0;
    for (size_t off = 0; off < ids.size(); ++off) {
      if (d < del.size() && del[d] == off) { ++d; continue; }
      index[ids[off]] = {i, static_cast<uint32_t>(off)};
    }
  }
  std::vector<PhysicalRow> out;
  out.reserve(row_ids.size());
  for (uint64_t id : row_ids) {
    auto it = index.find(id);
    if (it == index.end()) return Status::KeyError("row id ", id, " is not in dataset ", dataset.uri());
    out.push_back(it->second);
  }
  return out;
}

Result<std::vector<PhysicalRow>> RowsAtAddresses(const Dataset& dataset, const std::vector<uint64_t>& addresses) {
  const auto& fragments = dataset.manifest().fragments;
  std::unordered_map<uint64_t, size_t> index_of_fragment;
  for (size_t i = 0; i < fragments.size(); ++i) index_of_fragment[fragments[i].id] = i;
  std::unordered_map<size_t, uint64_t> rows_of;
  std::vector<PhysicalRow> out;
  out.reserve(addresses.size());
  for (uint64_t addr : addresses) {
    auto it = index_of_fragment.find(addr >> 32);
    if (it == index_of_fragment.end()) {
      return Status::KeyError("row address ", addr, " names fragment ", addr >> 32, ", not in dataset ",
                              dataset.uri(), " version ", dataset.version());
    }
    auto rows = rows_of.find(it->second);
    if (rows == rows_of.end()) {
      LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset.PhysicalRows(fragments[it->second]));
      rows = rows_of.emplace(it->second, physical).first;
    }
    const uint32_t offset = static_cast<uint32_t>(addr & 0xFFFFFFFFu);
    if (offset >= rows->second) {
      return Status::IndexError("row address ", addr, " names row ", offset, " of fragment ", addr >> 32,
                                " of dataset ", dataset.uri(), ", which has ", rows->second, " rows");
    }
    out.push_back({it->second, offset});
  }
  return out;
}

}  // namespace lance::scan
