// OpenedIndexCache: a hit returns the object first opened, the least
// recently used is evicted past capacity, errors are not cached, and the
// key tells datasets, bases and uuids apart.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "lance/index/index_cache.h"

namespace lance::index {
namespace {

#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                 \
  auto lhs##_result = (rexpr);                          \
  ASSERT_TRUE(lhs##_result.ok()) << lhs##_result.status().ToString(); \
  auto lhs = *std::move(lhs##_result)

struct Opened {
  int value;
};

TEST(IndexCache, HitReturnsSameObject) {
  OpenedIndexCache<Opened> cache(2);
  int opens = 0;
  auto open = [&](int v) {
    return [&opens, v]() -> Result<std::unique_ptr<Opened>> {
      ++opens;
      return std::make_unique<Opened>(Opened{v});
    };
  };
  ASSERT_OK_AND_ASSIGN(a, cache.GetOrOpen("a", open(1)));
  ASSERT_OK_AND_ASSIGN(again, cache.GetOrOpen("a", open(99)));
  EXPECT_EQ(a.get(), again.get());
  EXPECT_EQ(again->value, 1);
  EXPECT_EQ(opens, 1);
}

TEST(IndexCache, EvictsLeastRecentlyUsed) {
  OpenedIndexCache<Opened> cache(2);
  auto open = [](int v) { return [v]() -> Result<std::shared_ptr<Opened>> { return std::make_shared<Opened>(Opened{v}); }; };
  ASSERT_OK_AND_ASSIGN(a, cache.GetOrOpen("a", open(1)));
  ASSERT_OK_AND_ASSIGN(b, cache.GetOrOpen("b", open(2)));
  EXPECT_EQ(cache.Find("a").get(), a.get());  // a is now the most recent
  ASSERT_OK_AND_ASSIGN(c, cache.GetOrOpen("c", open(3)));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Find("b"), nullptr);  // b was the least recent
  EXPECT_EQ(cache.Find("a").get(), a.get());
  EXPECT_EQ(cache.Find("c").get(), c.get());
  // An evicted index stays alive for whoever holds it, and reopens anew.
  EXPECT_EQ(b->value, 2);
  ASSERT_OK_AND_ASSIGN(b2, cache.GetOrOpen("b", open(4)));
  EXPECT_NE(b2.get(), b.get());
  EXPECT_EQ(b2->value, 4);
  EXPECT_EQ(cache.Find("a"), nullptr);  // a was the least recent now
}

TEST(IndexCache, ErrorsAreNotCached) {
  OpenedIndexCache<Opened> cache(2);
  auto fail = []() -> Result<std::shared_ptr<Opened>> { return Status::IOError("unreadable"); };
  EXPECT_FALSE(cache.GetOrOpen("a", fail).ok());
  EXPECT_EQ(cache.size(), 0u);
  auto ok = []() -> Result<std::shared_ptr<Opened>> { return std::make_shared<Opened>(Opened{1}); };
  ASSERT_OK_AND_ASSIGN(a, cache.GetOrOpen("a", ok));
  EXPECT_EQ(a->value, 1);
}

TEST(IndexCache, ConcurrentUsersShareOneObject) {
  OpenedIndexCache<Opened> cache(4);
  std::atomic<int> opens{0};
  std::vector<const Opened*> seen(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) {
    threads.emplace_back([&, t] {
      auto r = cache.GetOrOpen("k", [&]() -> Result<std::shared_ptr<Opened>> {
        ++opens;
        return std::make_shared<Opened>(Opened{7});
      });
      seen[t] = r.ok() ? r->get() : nullptr;
    });
  }
  for (auto& th : threads) th.join();
  // Several may open at once, but one is cached, and a caller gets either
  // the cached one or (losing the race to insert) the first inserted.
  const Opened* cached = cache.Find("k").get();
  ASSERT_NE(cached, nullptr);
  EXPECT_GE(opens.load(), 1);
  EXPECT_EQ(cache.size(), 1u);
  for (const Opened* s : seen) EXPECT_EQ(s, cached);
}

}  // namespace
}  // namespace lance::index
