// Local files read through the object store: small reads (from the map) and
// large ones (pread) give the file's bytes, reads at the end are short, and
// a file removed while open still reads (as data files cleaned up under a
// reader).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <arrow/buffer.h>
#include <arrow/io/interfaces.h>

#include "lance/io/object_store.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

class ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lance_object_store_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    store_ = *io::ObjectStore::Open(dir_.string());
    std::mt19937 rng(7);
    bytes_.resize(3 * 1024 * 1024 + 123);
    for (auto& c : bytes_) c = static_cast<char>(rng());
    std::ofstream(dir_ / "f.bin", std::ios::binary).write(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
  }
  void TearDown() override { fs::remove_all(dir_); }

  void ExpectRead(arrow::io::RandomAccessFile& file, int64_t offset, int64_t n) {
    auto buffer = file.ReadAt(offset, n);
    ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
    const int64_t want = std::max<int64_t>(0, std::min<int64_t>(n, static_cast<int64_t>(bytes_.size()) - offset));
    ASSERT_EQ((*buffer)->size(), want) << offset << " +" << n;
    EXPECT_EQ(std::string_view(reinterpret_cast<const char*>((*buffer)->data()), want),
              std::string_view(bytes_.data() + offset, want))
        << offset << " +" << n;
  }

  fs::path dir_;
  std::shared_ptr<io::ObjectStore> store_;
  std::string bytes_;
};

TEST_F(ObjectStoreTest, SmallAndLargeReadsGiveTheFilesBytes) {
  auto file = store_->OpenInputFile("f.bin");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  for (int64_t offset : {0L, 1L, 4095L, 4096L, 100000L, 2999999L}) {
    for (int64_t n : {0L, 1L, 17L, 4096L, 65536L, 256L * 1024, 256L * 1024 + 1, 1L << 20}) {
      ExpectRead(**file, offset, n);
    }
  }
  // At the end: short reads, as a plain file's.
  const auto size = static_cast<int64_t>(bytes_.size());
  ExpectRead(**file, size - 10, 100);
  ExpectRead(**file, size - 10, 1 << 20);
  ExpectRead(**file, size, 10);
  auto whole = store_->ReadAll("f.bin");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(*whole, bytes_);
}

TEST_F(ObjectStoreTest, AFileRemovedWhileOpenStillReads) {
  auto file = store_->OpenInputFile("f.bin");
  ASSERT_TRUE(file.ok());
  ExpectRead(**file, 10, 100);  // the map is made
  fs::remove(dir_ / "f.bin");
  ExpectRead(**file, 5000, 4096);
  ExpectRead(**file, 1000, 1 << 20);
  EXPECT_FALSE(store_->OpenInputFile("f.bin").ok());
}

}  // namespace
}  // namespace lance
