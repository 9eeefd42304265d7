// scan::MatchingRows against the scanner's filter on the same datasets:
// fragments split into parts, deleted rows, nulls, constant filters, errors.
// And DeleteRows committing on a version another writer has moved past.
#include <gtest/gtest.h>

#include <filesystem>

#include <arrow/api.h>

#include "lance/dataset.h"
#include "lance/operations.h"
#include "lance/scan/matching_rows.h"
#include "lance/scanner.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

// ids start..start+n; "v" is id % 7, null where id % 11 == 0.
std::shared_ptr<arrow::Table> Rows(int64_t start, int64_t n) {
  arrow::Int64Builder ids;
  arrow::Int32Builder v;
  for (int64_t i = start; i < start + n; ++i) {
    EXPECT_TRUE(ids.Append(i).ok());
    EXPECT_TRUE((i % 11 == 0 ? v.AppendNull() : v.Append(static_cast<int32_t>(i % 7))).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("v", arrow::int32())});
  return arrow::Table::Make(schema, {*ids.Finish(), *v.Finish()});
}

class MatchingRowsTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lance_matching_rows_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // 600005 rows in one fragment (read in parts wherever there are two
  // cores or more), or in fragments of 300k, 300k and 5 rows.
  void Write(size_t fragments) {
    fs::remove_all(dir_);
    WriteParams params;
    params.data_storage_version = GetParam();
    if (fragments > 1) params.max_rows_per_file = 300'000;
    auto table = Rows(0, 600'005);
    auto ds = WriteDataset(std::make_shared<arrow::TableBatchReader>(*table), dir_.string(), params);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ASSERT_EQ((*ds)->manifest().fragments.size(), fragments);
  }

  // What the scanner returns for `filter`, as offsets per fragment.
  std::vector<std::vector<uint32_t>> Scanned(const std::shared_ptr<Dataset>& ds, const std::string& filter) {
    std::vector<std::vector<uint32_t>> out(ds->manifest().fragments.size());
    auto table = ScanBuilder(ds).Project({"id"}).Filter(filter).WithRowAddress().ToTable();
    EXPECT_TRUE(table.ok()) << table.status().ToString();
    if (!table.ok()) return out;
    auto combined = *(*table)->CombineChunks();
    if (combined->num_rows() == 0) return out;
    const auto& addrs = static_cast<const arrow::UInt64Array&>(*combined->GetColumnByName("_rowaddr")->chunk(0));
    for (int64_t i = 0; i < addrs.length(); ++i) {
      const uint64_t a = addrs.Value(i);
      for (size_t f = 0; f < out.size(); ++f) {
        if (ds->manifest().fragments[f].id == (a >> 32)) out[f].push_back(static_cast<uint32_t>(a));
      }
    }
    return out;
  }

  fs::path dir_;
};

TEST_P(MatchingRowsTest, AgreesWithTheScannerFilter) {
  for (size_t fragments : {1, 3}) {
  SCOPED_TRACE(fragments);
  Write(fragments);
  // Deleted rows in the first and last fragments must not match again.
  auto del = DeleteRows(dir_.string(), "id % 1000 = 3 OR id >= 600003");
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  ASSERT_EQ(del->num_deleted_rows, 602u);
  auto ds = Dataset::Open(dir_.string());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  for (const std::string filter :
       {"id % 100 = 3", "v = 2", "v IS NULL", "NOT (v = 2)", "id < 70000 OR id > 599990", "true", "false",
        "id BETWEEN 299990 AND 300010 AND v > 1", "id = -1"}) {
    SCOPED_TRACE(filter);
    auto matched = scan::MatchingRows(*ds, filter);
    ASSERT_TRUE(matched.ok()) << matched.status().ToString();
    EXPECT_EQ(*matched, Scanned(*ds, filter));
  }
  auto matched = scan::MatchingRows(*ds, "id % 1000 = 3");
  ASSERT_TRUE(matched.ok());
  for (const auto& rows : *matched) EXPECT_TRUE(rows.empty());
  }
}

// The deleted rows MatchingRows read are handed out, and a delete built on
// them extends each fragment's deletion vector, losing none of the old rows.
TEST_P(MatchingRowsTest, GivesTheDeletedRowsItReadAndDeletesExtendThem) {
  Write(3);
  auto first = DeleteRows(dir_.string(), "id % 1000 = 3 OR id >= 600003");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto ds = Dataset::Open(dir_.string());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  std::vector<std::vector<uint32_t>> deleted{{42}};  // replaced, not appended to
  auto matched = scan::MatchingRows(*ds, "id % 1000 = 4", arrow::default_memory_pool(), nullptr, &deleted);
  ASSERT_TRUE(matched.ok()) << matched.status().ToString();
  const auto& fragments = (*ds)->manifest().fragments;
  ASSERT_EQ(deleted.size(), fragments.size());
  for (size_t f = 0; f < fragments.size(); ++f) {
    auto expected = (*ds)->DeletedRows(fragments[f]);
    ASSERT_TRUE(expected.ok());
    EXPECT_EQ(deleted[f], *expected) << "fragment " << f;
  }
  auto second = DeleteRows(dir_.string(), "id % 1000 = 4");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->num_deleted_rows, 600u);
  auto after = Dataset::Open(dir_.string());
  ASSERT_TRUE(after.ok());
  auto count = ScanBuilder(*after).CountRows();
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 600'005 - 602 - 600);
  for (const std::string filter : {"id % 1000 = 3", "id % 1000 = 4", "id >= 600003"}) {
    auto left = ScanBuilder(*after).Filter(filter).CountRows();
    ASSERT_TRUE(left.ok());
    EXPECT_EQ(*left, 0) << filter;
  }
}

TEST_P(MatchingRowsTest, BadFiltersAreErrors) {
  Write(1);
  auto ds = Dataset::Open(dir_.string());
  ASSERT_TRUE(ds.ok());
  auto unknown = scan::MatchingRows(*ds, "nope = 1");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("nope"), std::string::npos) << unknown.status().ToString();
  EXPECT_FALSE(scan::MatchingRows(*ds, "id +").ok());
  EXPECT_FALSE(scan::MatchingRows(*ds, "id + 1").ok());  // not a predicate
}

INSTANTIATE_TEST_SUITE_P(FileVersions, MatchingRowsTest, ::testing::Values("2.0", "2.1", "2.2"));

}  // namespace
}  // namespace lance
