#include "lance/file/validate_array.h"

#include <gtest/gtest.h>

#include <arrow/api.h>
#include <arrow/json/from_string.h>

#include <string>
#include <vector>

namespace lance::file {
namespace {

// A string array over raw bytes and offsets, with optional validity.
std::shared_ptr<arrow::Array> Strings(const std::string& bytes, const std::vector<int32_t>& offsets,
                                      std::shared_ptr<arrow::Buffer> validity = nullptr, int64_t null_count = 0) {
  auto off = arrow::Buffer::FromString(
      std::string(reinterpret_cast<const char*>(offsets.data()), offsets.size() * sizeof(int32_t)));
  return arrow::MakeArray(arrow::ArrayData::Make(arrow::utf8(), static_cast<int64_t>(offsets.size() - 1),
                                                 {std::move(validity), off, arrow::Buffer::FromString(bytes)},
                                                 null_count));
}

// Same answer as ValidateFull, always.
void ExpectSameAsArrow(const arrow::Array& array) {
  const auto ours = ValidateDecodedArray(array);
  const auto theirs = array.ValidateFull();
  EXPECT_EQ(ours.ok(), theirs.ok()) << "ours: " << ours.ToString() << " arrow: " << theirs.ToString();
}

TEST(ValidateDecodedArray, ValidStrings) {
  auto a = Strings("h\xC3\xA9llo" "abc" "\xE2\x82\xAC", {0, 6, 9, 12});
  EXPECT_TRUE(ValidateDecodedArray(*a).ok());
  ExpectSameAsArrow(*a);
}

TEST(ValidateDecodedArray, InvalidBytesRejected) {
  auto a = Strings("ab\xFF" "cd", {0, 3, 5});
  EXPECT_FALSE(ValidateDecodedArray(*a).ok());
  ExpectSameAsArrow(*a);
}

// "é" split across two values: the bytes are valid as a whole, each value is not.
TEST(ValidateDecodedArray, CharacterSplitAcrossValuesRejected) {
  auto a = Strings("x\xC3\xA9y", {0, 2, 4});
  EXPECT_FALSE(ValidateDecodedArray(*a).ok());
  ExpectSameAsArrow(*a);
}

// A null slot may hold any bytes, as in Arrow.
TEST(ValidateDecodedArray, GarbageUnderNullAccepted) {
  auto validity = arrow::Buffer::FromString(std::string(1, '\x01'));  // value 0 valid, value 1 null
  auto a = Strings("ok\xFF", {0, 2, 3}, validity, 1);
  EXPECT_TRUE(ValidateDecodedArray(*a).ok());
  ExpectSameAsArrow(*a);
}

TEST(ValidateDecodedArray, SlicedAndNested) {
  auto strings = Strings("ab\xFF" "cd" "ef", {0, 2, 3, 5, 7});
  ExpectSameAsArrow(*strings->Slice(2, 2));
  EXPECT_TRUE(ValidateDecodedArray(*strings->Slice(2, 2)).ok());
  auto good = Strings("abcdef", {0, 2, 4, 6});
  auto bad = Strings("ab\xFF" "def", {0, 2, 4, 6});
  auto ints = *arrow::json::ArrayFromJSONString(arrow::int32(), "[1, 2, 3]");
  for (const auto& child : {good, bad}) {
    auto s = arrow::StructArray::Make({ints, child}, std::vector<std::string>{"i", "s"}).ValueOrDie();
    ExpectSameAsArrow(*s);
    auto offsets = *arrow::json::ArrayFromJSONString(arrow::int32(), "[0, 1, 3]");
    auto l = arrow::ListArray::FromArrays(*offsets, *child).ValueOrDie();
    ExpectSameAsArrow(*l);
    auto fsl = arrow::FixedSizeListArray::FromArrays(child, 1).ValueOrDie();
    ExpectSameAsArrow(*fsl);
  }
  EXPECT_TRUE(ValidateDecodedArray(*arrow::StructArray::Make({ints, good}, std::vector<std::string>{"i", "s"})
                                        .ValueOrDie()).ok());
  EXPECT_FALSE(ValidateDecodedArray(*arrow::StructArray::Make({ints, bad}, std::vector<std::string>{"i", "s"})
                                         .ValueOrDie()).ok());
}

// Structure is still checked: an offset past the data.
TEST(ValidateDecodedArray, BadOffsetsRejected) {
  auto a = Strings("abc", {0, 2, 9});
  EXPECT_FALSE(ValidateDecodedArray(*a).ok());
  ExpectSameAsArrow(*a);
}

}  // namespace
}  // namespace lance::file
