#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include "lance/file/dictionary_join.h"

namespace lance::file {
namespace {

std::shared_ptr<arrow::Array> Dict(const std::shared_ptr<arrow::DataType>& index_type,
                                   const std::vector<std::optional<int>>& keys,
                                   const std::vector<std::optional<std::string>>& values) {
  arrow::StringBuilder vb;
  for (const auto& v : values) EXPECT_TRUE((v ? vb.Append(*v) : vb.AppendNull()).ok());
  auto dict = vb.Finish().ValueOrDie();
  arrow::Int64Builder kb;
  for (const auto& k : keys) EXPECT_TRUE((k ? kb.Append(*k) : kb.AppendNull()).ok());
  auto wide = kb.Finish().ValueOrDie();
  auto idx = arrow::compute::Cast(wide, index_type).ValueOrDie().make_array();
  return arrow::DictionaryArray::FromArrays(arrow::dictionary(index_type, arrow::utf8()), idx, dict).ValueOrDie();
}

std::vector<std::optional<std::string>> Decoded(const arrow::Array& a) {
  auto dense = arrow::compute::Cast(a, arrow::utf8()).ValueOrDie();
  std::vector<std::optional<std::string>> out;
  const auto& s = static_cast<const arrow::StringArray&>(*dense);
  for (int64_t i = 0; i < s.length(); ++i) {
    out.push_back(s.IsNull(i) ? std::nullopt : std::optional<std::string>(s.GetString(i)));
  }
  return out;
}

TEST(DictionaryJoinTest, JoinsEqualAndDifferentDictionaries) {
  ASSERT_TRUE(arrow::compute::Initialize().ok());
  auto type = arrow::dictionary(arrow::int8(), arrow::utf8());
  auto a = Dict(arrow::int8(), {0, 1, std::nullopt}, {"x", "y"});
  auto b = Dict(arrow::int8(), {1, 0}, {"x", "y"});
  auto same = JoinDictionaryArrays({a, b}, type, arrow::default_memory_pool());
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(static_cast<const arrow::DictionaryArray&>(**same).dictionary()->length(), 2);
  using V = std::vector<std::optional<std::string>>;
  EXPECT_EQ(Decoded(**same), (V{"x", "y", std::nullopt, "y", "x"}));
  auto c = Dict(arrow::int8(), {0, 1}, {"z", std::nullopt});
  auto diff = JoinDictionaryArrays({a, c}, type, arrow::default_memory_pool());
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_EQ(Decoded(**diff), (V{"x", "y", std::nullopt, "z", std::nullopt}));
}

TEST(DictionaryJoinTest, DeduplicatesWhenTheIndexTypeWouldOverflow) {
  // 3 pages, each with the same 100 values in a different order (plus a
  // null item): 303 appended values do not fit int8, 101 distinct do.
  auto type = arrow::dictionary(arrow::int8(), arrow::utf8());
  arrow::ArrayVector pieces;
  std::vector<std::optional<std::string>> want;
  for (int p = 0; p < 3; ++p) {
    std::vector<std::optional<std::string>> values;
    for (int v = 0; v < 100; ++v) values.push_back("v" + std::to_string((v + p * 7) % 100));
    values.push_back(std::nullopt);
    std::vector<std::optional<int>> keys{0, 99, 100, p};
    for (int k : {0, 99, 100, p}) want.push_back(values[k]);
    pieces.push_back(Dict(arrow::int8(), keys, values));
  }
  auto joined = JoinDictionaryArrays(pieces, type, arrow::default_memory_pool());
  ASSERT_TRUE(joined.ok()) << joined.status().ToString();
  EXPECT_EQ(Decoded(**joined), want);
  EXPECT_LE(static_cast<const arrow::DictionaryArray&>(**joined).dictionary()->length(), 101);
  ASSERT_TRUE((*joined)->ValidateFull().ok());
}

TEST(DictionaryJoinTest, TooManyDistinctValuesAreAnError) {
  auto type = arrow::dictionary(arrow::int8(), arrow::utf8());
  arrow::ArrayVector pieces;
  for (int p = 0; p < 2; ++p) {
    std::vector<std::optional<std::string>> values;
    for (int v = 0; v < 100; ++v) values.push_back("p" + std::to_string(p) + "-" + std::to_string(v));
    pieces.push_back(Dict(arrow::int8(), {0, 99}, values));
  }
  auto joined = JoinDictionaryArrays(pieces, type, arrow::default_memory_pool());
  ASSERT_FALSE(joined.ok());
  EXPECT_NE(joined.status().message().find("distinct values"), std::string::npos) << joined.status().ToString();
}

}  // namespace
}  // namespace lance::file
