// A process-wide cache of opened indices, as pylance keeps an index cache:
// the files under an index's uuid never change, so what is read from them
// once serves every later query. Shared by the full-text (InvertedIndex)
// and vector (IvfSegment) indices.
//
// What is cached must be derived from the index files alone: anything a
// dataset version decides (the manifest entry's fragment bitmap, deletions,
// the fragment reuse map) belongs to the query, never to the cached object
// (one index uuid is listed by many versions, with different bitmaps).
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "lance/dataset.h"
#include "lance/index_metadata.h"
#include "lance/status.h"

namespace lance::index {

/// The cache key of `metadata`'s index in `dataset`: the dataset's uri, the
/// base holding the index files and the index uuid.
inline std::string OpenedIndexKey(const Dataset& dataset, const IndexMetadata& metadata) {
  return dataset.uri() + "\n" + (metadata.base_id ? std::to_string(*metadata.base_id) : "-") + "\n" +
         metadata.UuidString();
}

/// The `capacity` indices of type T used last, most recent first; the
/// least recently used is dropped past capacity (callers still holding it
/// keep it alive). Thread-safe. Opening happens outside the lock: two
/// threads missing the same key may both open it, the first inserted wins.
template <typename T>
class OpenedIndexCache {
 public:
  /// REQUIRES: capacity > 0.
  explicit OpenedIndexCache(size_t capacity) : capacity_(capacity) {}

  /// The index cached under `key`, or `open()` (a Result<shared_ptr<T>>
  /// or Result<unique_ptr<T>>) cached under it. Errors are not cached.
  template <typename OpenFn>
  Result<std::shared_ptr<const T>> GetOrOpen(const std::string& key, OpenFn&& open) {
    if (auto hit = Find(key)) return hit;
    LANCE_ASSIGN_OR_RAISE(auto opened, open());
    std::shared_ptr<const T> index = std::move(opened);
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key) {  // another thread opened it meanwhile
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().second;
      }
    }
    entries_.emplace_front(key, index);
    if (entries_.size() > capacity_) entries_.pop_back();
    return index;
  }

  /// The index cached under `key` (now the most recent), or nullptr.
  std::shared_ptr<const T> Find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front().second;
      }
    }
    return nullptr;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_.size();
  }

  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.clear();
  }

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<const T>>> entries_;  // most recent first
};

}  // namespace lance::index
