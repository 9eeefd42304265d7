// FileReader's row ranges, takes and read windows against whole-file reads,
// on every fixture file pylance wrote (2.0, 2.1, 2.2).
#include <filesystem>
#include <random>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include "lance/file_reader.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> FixtureFiles() {
  std::vector<fs::path> out;
  const fs::path root = fs::path(LANCE_TEST_FIXTURES_DIR);
  for (const char* dir : {"v2_0", "v2_1"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      if (e.path().extension() == ".lance") out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void ExpectSameRows(const arrow::Table& got, const arrow::Table& want, const std::string& what) {
  ASSERT_EQ(got.num_rows(), want.num_rows()) << what;
  ASSERT_EQ(got.num_columns(), want.num_columns()) << what;
  for (int c = 0; c < want.num_columns(); ++c) {
    auto a = got.column(c)->chunks().empty() ? nullptr : arrow::Concatenate(got.column(c)->chunks()).ValueOrDie();
    auto b = want.column(c)->chunks().empty() ? nullptr : arrow::Concatenate(want.column(c)->chunks()).ValueOrDie();
    if (!a || !b) continue;
    if (a->type_id() == arrow::Type::DICTIONARY) {
      // Which dictionary holds the values is not part of the data.
      auto da = arrow::compute::Cast(a, std::static_pointer_cast<arrow::DictionaryType>(a->type())->value_type());
      auto db = arrow::compute::Cast(b, std::static_pointer_cast<arrow::DictionaryType>(b->type())->value_type());
      ASSERT_TRUE(da.ok() && db.ok());
      a = da->make_array();
      b = db->make_array();
    }
    EXPECT_TRUE(a->Equals(*b)) << what << ": column " << want.schema()->field(c)->name();
  }
}

TEST(FileReaderTest, RangesTakesAndWindowsAgreeWithWholeReads) {
  ASSERT_TRUE(arrow::compute::Initialize().ok());
  auto files = FixtureFiles();
  ASSERT_GT(files.size(), 20u);
  std::mt19937_64 rng(7);
  size_t selective = 0;
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    auto reader = FileReader::Open(path.string());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto all = (*reader)->ReadAll();
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    const uint64_t n = (*reader)->num_rows();
    selective += (*reader)->ReadsPagesSelectively();

    // Windows cover [0, n) in ascending order.
    auto windows = (*reader)->ReadWindows({}, 1 + n / 5);
    ASSERT_TRUE(windows.ok()) << windows.status().ToString();
    ASSERT_EQ(windows->front(), 0u);
    ASSERT_EQ(windows->back(), n);
    for (size_t w = 1; w < windows->size(); ++w) {
      ASSERT_LT((*windows)[w - 1], (*windows)[w]);
      auto part = (*reader)->ReadRange({}, (*windows)[w - 1], (*windows)[w] - (*windows)[w - 1]);
      ASSERT_TRUE(part.ok()) << part.status().ToString();
      ExpectSameRows(**part, *(*all)->Slice((*windows)[w - 1], (*windows)[w] - (*windows)[w - 1]), "window");
    }
    if (n == 0) continue;
    for (int k = 0; k < 6; ++k) {
      uint64_t offset = rng() % n, count = rng() % (n - offset + 1);
      auto part = (*reader)->ReadRange({}, offset, count);
      ASSERT_TRUE(part.ok()) << part.status().ToString();
      ExpectSameRows(**part, *(*all)->Slice(offset, count), "range");
    }
    // A field's own decodable run contains the asked rows and agrees with
    // the whole read.
    for (const auto& field : (*reader)->schema().fields) {
      uint64_t offset = rng() % n, count = 1 + rng() % (n - offset);
      auto window = (*reader)->ReadFieldWindow(field.name, offset, count);
      ASSERT_TRUE(window.ok()) << window.status().ToString();
      const auto& [start, array] = *window;
      ASSERT_LE(start, offset);
      ASSERT_GE(start + static_cast<uint64_t>(array->length()), offset + count);
      auto whole = (*all)->GetColumnByName(field.name);
      auto want = arrow::Concatenate(whole->Slice(start, array->length())->chunks()).ValueOrDie();
      auto got_table = arrow::Table::Make(arrow::schema({arrow::field(field.name, array->type())}), {array});
      auto want_table = arrow::Table::Make(arrow::schema({arrow::field(field.name, want->type())}), {want});
      ExpectSameRows(*got_table, *want_table, "field window " + field.name);
    }
    std::vector<uint64_t> rows;
    for (int k = 0; k < 40; ++k) rows.push_back(rng() % n);
    rows.push_back(n - 1);
    rows.push_back(rows.front());  // a repeat
    std::sort(rows.begin(), rows.end());
    auto taken = (*reader)->Take({}, rows);
    ASSERT_TRUE(taken.ok()) << taken.status().ToString();
    arrow::UInt64Builder b;
    ASSERT_TRUE(b.AppendValues(rows).ok());
    auto indices = b.Finish().ValueOrDie();
    auto expected = arrow::compute::Take(*all, indices);
    ASSERT_TRUE(expected.ok());
    ExpectSameRows(**taken, *expected->table(), "take");
  }
  EXPECT_GT(selective, 10u) << "the 2.1/2.2 fixtures should read pages selectively";
}

TEST(FileReaderTest, OutOfRangeRowsAreErrors) {
  auto files = FixtureFiles();
  auto reader = FileReader::Open(files.back().string());
  ASSERT_TRUE(reader.ok());
  const uint64_t n = (*reader)->num_rows();
  EXPECT_FALSE((*reader)->ReadRange({}, n, 1).ok());
  EXPECT_FALSE((*reader)->ReadRange({}, ~uint64_t{0}, 2).ok());
  EXPECT_FALSE((*reader)->Take({}, {n}).ok());
  EXPECT_FALSE((*reader)->Take({}, {1, 0}).ok()) << "offsets must ascend";
}

}  // namespace
}  // namespace lance
