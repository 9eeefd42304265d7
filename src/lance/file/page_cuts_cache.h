// Where the pages of an open file can be cut, found once per FileReader and
// shared by every later range, take and window of it: finding a mini-block
// page's cuts reads its chunk metadata and repetition index, which a small
// take would otherwise read again each time (pylance caches the same in its
// file-metadata cache).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "lance/file/v2_0/page_range.h"
#include "lance/file/v2_1/page_range.h"

namespace lance::file {

/// Where a page can be cut, in the terms of its file version.
struct AnyPageCuts {
  bool v20 = false;
  v2_0::PageCuts cuts20;
  v2_1::PageCuts cuts21;
  uint64_t Down(uint64_t row) const { return v20 ? cuts20.Down(row) : cuts21.Down(row); }
  uint64_t Up(uint64_t row, uint64_t length) const { return v20 ? cuts20.Up(row, length) : cuts21.Up(row, length); }
};

/// (column, page) -> its cuts. Thread-safe; entries never change once stored.
class PageCutsCache {
 public:
  std::shared_ptr<const AnyPageCuts> Find(size_t column, size_t page) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cuts_.find({column, page});
    return it == cuts_.end() ? nullptr : it->second;
  }
  /// Stores `cuts` unless another thread stored that page first; returns
  /// the stored entry.
  std::shared_ptr<const AnyPageCuts> Insert(size_t column, size_t page, std::shared_ptr<const AnyPageCuts> cuts) {
    std::lock_guard<std::mutex> lock(mutex_);
    return cuts_.emplace(std::make_pair(column, page), std::move(cuts)).first->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<size_t, size_t>, std::shared_ptr<const AnyPageCuts>> cuts_;
};

}  // namespace lance::file
