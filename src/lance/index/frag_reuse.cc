#include "lance/index/frag_reuse.h"

#include <algorithm>
#include <limits>

#include "lance/dataset_internal.h"
#include "lance/index/scalar_index.h"

namespace lance::index {
namespace {

constexpr uint64_t kGone = std::numeric_limits<uint64_t>::max();

}  // namespace

Result<FragReuseMap> FragReuseMap::Make(const table::FragReuseDetails& details) {
  FragReuseMap m;
  for (const auto& v : details.versions) {
    auto& map = m.versions_.emplace_back();
    for (const auto& g : v.groups) {
      for (const auto& old : g.old_fragments) map[static_cast<uint32_t>(old.id)].assign(old.physical_rows, kGone);
      LANCE_ASSIGN_OR_RAISE(auto changed, DecodeRoaringTreemap(g.changed_row_addrs, "fragment reuse index group"));
      size_t target = 0;
      uint64_t offset = 0;
      for (uint64_t addr : changed) {
        while (target < g.new_fragments.size() && offset >= g.new_fragments[target].physical_rows) {
          ++target;
          offset = 0;
        }
        if (target >= g.new_fragments.size()) {
          return Status::Invalid("fragment reuse index: a group has more surviving rows than its new fragments");
        }
        auto it = map.find(static_cast<uint32_t>(addr >> 32));
        const uint64_t off = addr & 0xFFFFFFFFu;
        if (it == map.end() || off >= it->second.size()) {
          return Status::Invalid("fragment reuse index: row address ", addr, " is not of its group's old fragments");
        }
        it->second[off] = (g.new_fragments[target].id << 32) | offset++;
      }
    }
  }
  return m;
}

RowIdMap ThroughFragReuse(const FragReuseMap* reuse, RowIdMap then) {
  if (reuse == nullptr) return then;
  return [reuse, then = std::move(then)](uint64_t id) -> std::optional<uint64_t> {
    auto now = (*reuse)(id);
    if (!now) return std::nullopt;
    return then(*now);
  };
}

std::optional<uint64_t> FragReuseMap::operator()(uint64_t address) const {
  for (const auto& map : versions_) {
    auto it = map.find(static_cast<uint32_t>(address >> 32));
    if (it == map.end()) continue;
    const uint64_t off = address & 0xFFFFFFFFu;
    if (off >= it->second.size()) continue;
    if (it->second[off] == kGone) return std::nullopt;
    address = it->second[off];
  }
  return address;
}

std::vector<uint64_t> FragReuseMap::MapSorted(const std::vector<uint64_t>& addresses) const {
  if (versions_.empty()) return addresses;
  std::vector<uint64_t> out;
  out.reserve(addresses.size());
  for (uint64_t a : addresses) {
    if (auto to = (*this)(a)) out.push_back(*to);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<bool> HoldsOldRowAddresses(const Dataset& dataset, const IndexMetadata& index) {
  const auto& details = DatasetAccess::FragReuse(dataset);
  if (!details || index.name == table::kFragReuseIndexName) return false;
  for (const auto& v : details->versions) {
    if (index.dataset_version >= v.dataset_version) continue;
    if (!index.fragment_ids) return true;
    for (const auto& g : v.groups) {
      for (const auto& f : g.new_fragments) {
        if (std::binary_search(index.fragment_ids->begin(), index.fragment_ids->end(), static_cast<uint32_t>(f.id))) {
          return true;
        }
      }
    }
  }
  return false;
}

}  // namespace lance::index
