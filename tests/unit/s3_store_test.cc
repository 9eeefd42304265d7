// ObjectStore on a live S3 endpoint: the conditional PUT of manifests. Runs
// only when tests/interop/test_s3.py points it at its moto server
// (LANCE_TEST_S3_URI = s3://bucket/prefix, AWS_* variables set); skipped
// in a plain ctest run.
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "lance/io/object_store.h"

namespace lance::io {
namespace {

std::shared_ptr<ObjectStore> OpenTestStore() {
  const char* uri = std::getenv("LANCE_TEST_S3_URI");
  if (uri == nullptr) return nullptr;
  auto store = ObjectStore::Open(uri);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? *store : nullptr;
}

TEST(S3StoreTest, ConditionalPutNeverOverwrites) {
  auto store = OpenTestStore();
  if (!store) GTEST_SKIP() << "LANCE_TEST_S3_URI not set (tests/interop/test_s3.py sets it)";
  ASSERT_TRUE(store->IsObjectStore());
  ASSERT_TRUE(store->PutIfNotExists("_versions/once.manifest", "first").ok());
  Status again = store->PutIfNotExists("_versions/once.manifest", "second");
  EXPECT_TRUE(again.IsAlreadyExists()) << again.ToString();
  EXPECT_NE(again.message().find("_versions/once.manifest"), std::string::npos) << again.message();
  auto bytes = store->ReadAll("_versions/once.manifest");
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, "first");
}

TEST(S3StoreTest, RacingPutsExactlyOneWins) {
  auto store = OpenTestStore();
  if (!store) GTEST_SKIP() << "LANCE_TEST_S3_URI not set (tests/interop/test_s3.py sets it)";
  constexpr int kWriters = 8;
  std::vector<Status> results(kWriters);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      results[i] = store->PutIfNotExists("_versions/race.manifest", "writer " + std::to_string(i));
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  int won = -1, lost = 0;
  for (int i = 0; i < kWriters; ++i) {
    if (results[i].ok()) {
      EXPECT_EQ(won, -1) << "two writers both created the object";
      won = i;
    } else {
      EXPECT_TRUE(results[i].IsAlreadyExists()) << results[i].ToString();
      ++lost;
    }
  }
  ASSERT_NE(won, -1);
  EXPECT_EQ(lost, kWriters - 1);
  auto bytes = store->ReadAll("_versions/race.manifest");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, "writer " + std::to_string(won));
}

}  // namespace
}  // namespace lance::io
