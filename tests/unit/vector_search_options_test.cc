// VectorSearch refuses the options pylance 14 refuses, with an index or
// without (checked: to_table(nearest=...) raises "Nearest-K must be > 0",
// "Nprobes must be > 0", "minimum_nprobes must be >= 1", "minimum_nprobes
// must be <= maximum_nprobes").
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <arrow/api.h>

#include "lance/dataset.h"
#include "lance/vector_search.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

class VectorSearchOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lance_vector_search_options_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    // 10 rows of 2-d vectors (i, i).
    arrow::FloatBuilder values;
    for (int i = 0; i < 10; ++i) {
      ASSERT_TRUE(values.Append(static_cast<float>(i)).ok());
      ASSERT_TRUE(values.Append(static_cast<float>(i)).ok());
    }
    auto list = arrow::FixedSizeListArray::FromArrays(*values.Finish(), 2);
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    auto table = arrow::Table::Make(arrow::schema({arrow::field("vec", (*list)->type())}), {*list});
    auto ds = WriteDataset(std::make_shared<arrow::TableBatchReader>(*table), dir_.string(), WriteParams{});
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ds_ = *ds;
  }
  void TearDown() override { fs::remove_all(dir_); }

  VectorSearchOptions Options() const {
    VectorSearchOptions o;
    o.column = "vec";
    o.query = {3.0f, 3.0f};
    o.k = 2;
    return o;
  }

  void ExpectInvalid(const VectorSearchOptions& o, const std::string& says) {
    for (bool use_index : {true, false}) {
      auto copy = o;
      copy.use_index = use_index;
      auto r = VectorSearch(ds_, copy);
      ASSERT_FALSE(r.ok());
      EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
      EXPECT_NE(r.status().message().find(says), std::string::npos) << r.status().ToString();
    }
  }

  fs::path dir_;
  std::shared_ptr<const Dataset> ds_;
};

TEST_F(VectorSearchOptionsTest, ValidQueryAnswers) {
  auto r = VectorSearch(ds_, Options());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->num_rows(), 2);
}

TEST_F(VectorSearchOptionsTest, ZeroKRefused) {
  auto o = Options();
  o.k = 0;
  ExpectInvalid(o, "k must be positive");
  o.k = -1;
  ExpectInvalid(o, "k must be positive");
}

TEST_F(VectorSearchOptionsTest, ZeroNprobesRefused) {
  auto o = Options();
  o.nprobes = 0;
  ExpectInvalid(o, "nprobes must be positive");
}

TEST_F(VectorSearchOptionsTest, ZeroMinimumNprobesRefused) {
  auto o = Options();
  o.minimum_nprobes = 0;
  ExpectInvalid(o, "minimum_nprobes must be at least 1");
  o.maximum_nprobes = 2;
  ExpectInvalid(o, "minimum_nprobes must be at least 1");
}

TEST_F(VectorSearchOptionsTest, MaximumBelowMinimumRefused) {
  auto o = Options();
  o.maximum_nprobes = 0;  // below the default minimum of 1
  ExpectInvalid(o, "below minimum_nprobes");
}

}  // namespace
}  // namespace lance
