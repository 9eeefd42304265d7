// Unraveling 2.1+ repetition/definition levels into validity and offsets,
// for every layer kind, nested lists and structs, fixed-size lists, several
// pages with different layers, and levels that do not fit their layers.
#include <cstring>
#include <optional>
#include <vector>

#include <arrow/buffer.h>
#include <arrow/util/bit_util.h>
#include <gtest/gtest.h>

#include "lance/file/v2_1/repdef.h"

namespace lance::file::v2_1 {
namespace {

using L = Layer;

PageLevels Levels(std::vector<Layer> layers, std::optional<std::vector<uint16_t>> rep,
                  std::optional<std::vector<uint16_t>> def, uint64_t num_items) {
  PageLevels p;
  p.layers = std::move(layers);
  p.rep = std::move(rep);
  p.def = std::move(def);
  p.num_items = num_items;
  return p;
}

std::vector<bool> Bits(const std::shared_ptr<arrow::Buffer>& buffer, size_t n) {
  std::vector<bool> out;
  for (size_t i = 0; i < n; ++i) out.push_back(arrow::bit_util::GetBit(buffer->data(), i));
  return out;
}

RepDefUnraveler Unraveler(std::vector<PageLevels> pages) {
  for (const auto& p : pages) EXPECT_TRUE(ValidatePageLevels(p).ok()) << ValidatePageLevels(p).ToString();
  return RepDefUnraveler(std::move(pages));
}

arrow::MemoryPool* Pool() { return arrow::default_memory_pool(); }

TEST(V21RepDef, NullableItems) {
  auto u = Unraveler({Levels({L::kNullableItem}, std::nullopt, std::vector<uint16_t>{0, 1, 0, 1}, 4)});
  auto validity = u.UnravelValidity(4, Pool());
  ASSERT_TRUE(validity.ok()) << validity.status().ToString();
  ASSERT_NE(*validity, nullptr);
  EXPECT_EQ(Bits(*validity, 4), (std::vector<bool>{true, false, true, false}));
  EXPECT_TRUE(u.CheckExhausted().ok());
}

TEST(V21RepDef, AllValidItemsNeedNoLevels) {
  auto u = Unraveler({Levels({L::kAllValidItem}, std::nullopt, std::nullopt, 3)});
  auto validity = u.UnravelValidity(3, Pool());
  ASSERT_TRUE(validity.ok());
  EXPECT_EQ(*validity, nullptr);
  EXPECT_FALSE(u.UnravelValidity(3, Pool()).ok()) << "no layer left";
}

TEST(V21RepDef, NullableListOfNullableItems) {
  // [[1, null], null, [3]]
  auto u = Unraveler({Levels({L::kNullableItem, L::kNullableList}, std::vector<uint16_t>{1, 0, 1, 1},
                             std::vector<uint16_t>{0, 1, 2, 0}, 3)});
  auto items = u.UnravelValidity(3, Pool());
  ASSERT_TRUE(items.ok());
  EXPECT_EQ(Bits(*items, 3), (std::vector<bool>{true, false, true}));
  auto lists = u.UnravelOffsets(Pool());
  ASSERT_TRUE(lists.ok()) << lists.status().ToString();
  EXPECT_EQ(lists->offsets, (std::vector<int64_t>{0, 2, 2, 3}));
  ASSERT_NE(lists->validity, nullptr);
  EXPECT_EQ(Bits(lists->validity, 3), (std::vector<bool>{true, false, true}));
  EXPECT_TRUE(u.CheckExhausted().ok());
}

TEST(V21RepDef, AllValidListWhoseFirstItemIsNull) {
  // [[null, 53], [null]]: a null item that starts a list of an all-valid
  // list layer is a visible item, not a hidden list (pylance writes this for
  // any list column without null or empty lists).
  auto u = Unraveler({Levels({L::kNullableItem, L::kAllValidList}, std::vector<uint16_t>{1, 0, 1},
                             std::vector<uint16_t>{1, 0, 1}, 3)});
  auto items = u.UnravelValidity(3, Pool());
  ASSERT_TRUE(items.ok()) << items.status().ToString();
  EXPECT_EQ(Bits(*items, 3), (std::vector<bool>{false, true, false}));
  auto lists = u.UnravelOffsets(Pool());
  ASSERT_TRUE(lists.ok()) << lists.status().ToString();
  EXPECT_EQ(lists->offsets, (std::vector<int64_t>{0, 2, 3}));
  EXPECT_EQ(lists->validity, nullptr);
  EXPECT_TRUE(u.CheckExhausted().ok());
}

TEST(V21RepDef, EmptyableList) {
  // [[1, 2], [], [3]]
  auto u = Unraveler({Levels({L::kAllValidItem, L::kEmptyableList}, std::vector<uint16_t>{1, 0, 1, 1},
                             std::vector<uint16_t>{0, 0, 1, 0}, 3)});
  ASSERT_EQ(*u.UnravelValidity(3, Pool()), nullptr);
  auto lists = u.UnravelOffsets(Pool());
  ASSERT_TRUE(lists.ok());
  EXPECT_EQ(lists->offsets, (std::vector<int64_t>{0, 2, 2, 3}));
  EXPECT_EQ(lists->validity, nullptr);
}

TEST(V21RepDef, NullAndEmptyList) {
  // [[1], null, [], [2, 3]]: null is level 1, empty level 2
  auto u = Unraveler({Levels({L::kAllValidItem, L::kNullAndEmptyList}, std::vector<uint16_t>{1, 1, 1, 1, 0},
                             std::vector<uint16_t>{0, 1, 2, 0, 0}, 3)});
  ASSERT_EQ(*u.UnravelValidity(3, Pool()), nullptr);
  auto lists = u.UnravelOffsets(Pool());
  ASSERT_TRUE(lists.ok());
  EXPECT_EQ(lists->offsets, (std::vector<int64_t>{0, 1, 1, 1, 3}));
  ASSERT_NE(lists->validity, nullptr);
  EXPECT_EQ(Bits(lists->validity, 4), (std::vector<bool>{true, false, true, true}));
}

TEST(V21RepDef, AllValidListHasOnlyRepetition) {
  // [[1], [2, 3]]
  auto u = Unraveler({Levels({L::kAllValidItem, L::kAllValidList}, std::vector<uint16_t>{1, 1, 0}, std::nullopt, 3)});
  ASSERT_EQ(*u.UnravelValidity(3, Pool()), nullptr);
  auto lists = u.UnravelOffsets(Pool());
  ASSERT_TRUE(lists.ok());
  EXPECT_EQ(lists->offsets, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(lists->validity, nullptr);
}

TEST(V21RepDef, ListOfStructOfList) {
  // list<struct<ys: list<int>>> with layers (innermost first) int, inner
  // nullable list (def 1), nullable struct (def 2), outer null (3) / empty (4):
  //   [{ys:[1,2]}, null, {ys:null}], null, [], [{ys:[5]}]
  auto u = Unraveler({Levels({L::kAllValidItem, L::kNullableList, L::kNullableItem, L::kNullAndEmptyList},
                             std::vector<uint16_t>{2, 0, 1, 1, 2, 2, 2}, std::vector<uint16_t>{0, 0, 2, 1, 3, 4, 0},
                             3)});
  ASSERT_EQ(*u.UnravelValidity(3, Pool()), nullptr);
  auto inner = u.UnravelOffsets(Pool());
  ASSERT_TRUE(inner.ok()) << inner.status().ToString();
  EXPECT_EQ(inner->offsets, (std::vector<int64_t>{0, 2, 2, 2, 3}));
  EXPECT_EQ(Bits(inner->validity, 4), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ(u.CurrentLength(), 4u);
  auto structs = u.UnravelValidity(4, Pool());
  ASSERT_TRUE(structs.ok()) << structs.status().ToString();
  EXPECT_EQ(Bits(*structs, 4), (std::vector<bool>{true, false, true, true}));
  auto outer = u.UnravelOffsets(Pool());
  ASSERT_TRUE(outer.ok());
  EXPECT_EQ(outer->offsets, (std::vector<int64_t>{0, 3, 3, 3, 4}));
  EXPECT_EQ(Bits(outer->validity, 4), (std::vector<bool>{true, false, true, true}));
  EXPECT_TRUE(u.CheckExhausted().ok());
}

TEST(V21RepDef, ListOfListWithEmptyInnerLists) {
  // [[[1], []], [[2, 3]], []] : inner emptyable (def 1), outer emptyable (def 2)
  auto u = Unraveler({Levels({L::kAllValidItem, L::kEmptyableList, L::kEmptyableList},
                             std::vector<uint16_t>{2, 1, 2, 0, 2}, std::vector<uint16_t>{0, 1, 0, 0, 2}, 3)});
  ASSERT_EQ(*u.UnravelValidity(3, Pool()), nullptr);
  auto inner = u.UnravelOffsets(Pool());
  ASSERT_TRUE(inner.ok());
  EXPECT_EQ(inner->offsets, (std::vector<int64_t>{0, 1, 1, 3}));
  auto outer = u.UnravelOffsets(Pool());
  ASSERT_TRUE(outer.ok());
  EXPECT_EQ(outer->offsets, (std::vector<int64_t>{0, 2, 3, 3}));
}

TEST(V21RepDef, FixedSizeListLevelsAreDecimated) {
  // fsl<int?, 2>?: [[1, null], null] -> item levels repeat per item
  auto u = Unraveler({Levels({L::kNullableItem, L::kNullableItem}, std::nullopt, std::vector<uint16_t>{0, 1, 2,
                             2}, 4)});
  auto items = u.UnravelValidity(4, Pool());
  ASSERT_TRUE(items.ok());
  EXPECT_EQ(Bits(*items, 4), (std::vector<bool>{true, false, false, false}));
  ASSERT_TRUE(u.Decimate(2).ok());
  auto lists = u.UnravelValidity(2, Pool());
  ASSERT_TRUE(lists.ok());
  EXPECT_EQ(Bits(*lists, 2), (std::vector<bool>{true, false}));
  EXPECT_FALSE(u.Decimate(0).ok());
}

TEST(V21RepDef, PagesWithDifferentLayers) {
  auto u = Unraveler({Levels({L::kNullableItem}, std::nullopt, std::vector<uint16_t>{0, 1}, 2),
                      Levels({L::kAllValidItem}, std::nullopt, std::nullopt, 3)});
  auto validity = u.UnravelValidity(5, Pool());
  ASSERT_TRUE(validity.ok());
  EXPECT_EQ(Bits(*validity, 5), (std::vector<bool>{true, false, true, true, true}));

  auto lists = Unraveler({Levels({L::kAllValidItem, L::kAllValidList}, std::vector<uint16_t>{1, 0}, std::nullopt, 2),
                          Levels({L::kAllValidItem, L::kNullableList}, std::vector<uint16_t>{1, 1},
                                 std::vector<uint16_t>{1, 0}, 1)});
  ASSERT_EQ(*lists.UnravelValidity(3, Pool()), nullptr);
  auto offsets = lists.UnravelOffsets(Pool());
  ASSERT_TRUE(offsets.ok());
  EXPECT_EQ(offsets->offsets, (std::vector<int64_t>{0, 2, 2, 3}));
  EXPECT_EQ(Bits(offsets->validity, 3), (std::vector<bool>{true, false, true}));
}

TEST(V21RepDef, LayersFromProto) {
  const int good[] = {1, 2, 3, 4, 5, 6};
  auto layers = LayersFromProto(good, 6);
  ASSERT_TRUE(layers.ok());
  EXPECT_EQ(layers->size(), 6u);
  EXPECT_EQ(MaxRep(*layers), 4);
  EXPECT_EQ(MaxDef(*layers), 5);
  EXPECT_EQ(MaxVisibleDef(*layers), 0);
  const int unknown[] = {1, 7};
  EXPECT_FALSE(LayersFromProto(unknown, 2).ok());
  const int unspecified[] = {0};
  EXPECT_FALSE(LayersFromProto(unspecified, 1).ok());
  EXPECT_FALSE(LayersFromProto(good, 0).ok()) << "no layers";
}

TEST(V21RepDef, RejectsLevelsThatDoNotFitTheLayers) {
  // Definition level beyond the layers.
  EXPECT_FALSE(ValidatePageLevels(Levels({L::kNullableItem}, std::nullopt, std::vector<uint16_t>{0, 2}, 1)).ok());
  // Repetition level beyond the layers.
  EXPECT_FALSE(
      ValidatePageLevels(Levels({L::kAllValidItem, L::kAllValidList}, std::vector<uint16_t>{1, 2}, std::nullopt, 2))
          .ok());
  // Repetition without lists.
  EXPECT_FALSE(ValidatePageLevels(Levels({L::kAllValidItem}, std::vector<uint16_t>{0}, std::nullopt, 1)).ok());
  // Rep and def of different lengths.
  EXPECT_FALSE(ValidatePageLevels(Levels({L::kNullableItem, L::kNullableList}, std::vector<uint16_t>{1, 0},
                                         std::vector<uint16_t>{0}, 1))
                   .ok());
  // A page that does not start a row.
  EXPECT_FALSE(
      ValidatePageLevels(Levels({L::kAllValidItem, L::kAllValidList}, std::vector<uint16_t>{0, 1}, std::nullopt, 2))
          .ok());
  // Visible levels that disagree with the values.
  EXPECT_FALSE(ValidatePageLevels(Levels({L::kNullableItem}, std::nullopt, std::vector<uint16_t>{0, 1}, 3)).ok());
  EXPECT_FALSE(ValidatePageLevels(Levels({L::kAllValidItem, L::kEmptyableList}, std::vector<uint16_t>{1, 1},
                                         std::vector<uint16_t>{0, 1}, 2))
                   .ok());
  // Lists without repetition levels.
  EXPECT_FALSE(ValidatePageLevels(Levels({L::kAllValidItem, L::kAllValidList}, std::nullopt, std::nullopt, 2)).ok());
}

TEST(V21RepDef, RejectsLayerMismatches) {
  auto u = Unraveler({Levels({L::kAllValidItem, L::kAllValidList}, std::vector<uint16_t>{1, 0}, std::nullopt, 2)});
  EXPECT_FALSE(u.UnravelOffsets(Pool()).ok()) << "the next layer is an item layer";
  ASSERT_TRUE(u.UnravelValidity(2, Pool()).ok());
  EXPECT_FALSE(u.UnravelValidity(1, Pool()).ok()) << "the next layer is a list";
  EXPECT_FALSE(u.CheckExhausted().ok());
  ASSERT_TRUE(u.UnravelOffsets(Pool()).ok());
  EXPECT_TRUE(u.CheckExhausted().ok());
  EXPECT_FALSE(u.UnravelOffsets(Pool()).ok()) << "no layers left";

  auto wrong_count = Unraveler({Levels({L::kNullableItem}, std::nullopt, std::vector<uint16_t>{0, 1}, 2)});
  EXPECT_FALSE(wrong_count.UnravelValidity(5, Pool()).ok());
}

}  // namespace
}  // namespace lance::file::v2_1
