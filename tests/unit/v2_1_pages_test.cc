// Synthetic 2.1/2.2 pages built byte by byte in the test: mini-block chunk
// parsing (several chunks, u16 and u32 chunk sizes, levels, dictionaries,
// bitpacking, RLE, fixed-size lists, packed structs), full-zip control words
// with fixed and variable values, constant / all-null pages, blob pages, and
// corrupt inputs, all decoded through DecodeField.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <arrow/array.h>
#include <arrow/json/from_string.h>
#include <arrow/type.h>
#include <gtest/gtest.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/compression/fastlanes.h"
#include "lance/file/compression/fsst.h"
#include "lance/file/compression/general.h"
#include "lance/file/v2_1/field_decoder.h"

namespace lance::file::v2_1 {
namespace {

namespace pb21 = lance::pb::encodings21;
namespace comp = lance::file::compression;

// ------------------------------------------------------------------ bytes

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <typename T>
std::string Raw(const std::vector<T>& values) {
  std::string out;
  for (T v : values) Put(&out, v);
  return out;
}

void Pad(std::string* s, size_t align, char fill) {
  while (s->size() % align != 0) s->push_back(fill);
}

// A variable-width mini-block chunk: n+1 u32 offsets (the first is where the
// bytes start), the bytes, padding to 4.
std::string VariableChunk(const std::vector<std::string>& values) {
  std::string out;
  uint32_t pos = static_cast<uint32_t>((values.size() + 1) * 4);
  Put<uint32_t>(&out, pos);
  for (const auto& v : values) {
    pos += static_cast<uint32_t>(v.size());
    Put<uint32_t>(&out, pos);
  }
  for (const auto& v : values) out += v;
  Pad(&out, 4, 0x48);
  return out;
}

// The block form of variable-width values (dictionaries).
std::string VariableBlock(const std::vector<std::string>& values) {
  std::string out;
  Put<uint32_t>(&out, 32);
  Put<uint32_t>(&out, static_cast<uint32_t>(8 + 4 * (values.size() + 1)));
  uint32_t pos = 0;
  Put<uint32_t>(&out, 0);
  for (const auto& v : values) {
    pos += static_cast<uint32_t>(v.size());
    Put<uint32_t>(&out, pos);
  }
  for (const auto& v : values) out += v;
  return out;
}

template <typename T>
std::string Packed(const std::vector<T>& values, unsigned bit_width) {
  std::vector<T> block(1024, 0);
  std::copy(values.begin(), values.end(), block.begin());
  std::string out(comp::FastLanesPackedBytes(bit_width), '\0');
  EXPECT_TRUE(comp::FastLanesPack<T>(std::span<const T>(block), bit_width,
                                     std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), out.size()))
                  .ok());
  return out;
}

// ------------------------------------------------------------------ encodings

pb21::CompressiveEncoding Flat(uint64_t bits) {
  pb21::CompressiveEncoding e;
  e.mutable_flat()->set_bits_per_value(bits);
  return e;
}

pb21::CompressiveEncoding Variable32() {
  pb21::CompressiveEncoding e;
  *e.mutable_variable()->mutable_offsets() = Flat(32);
  return e;
}

pb21::CompressiveEncoding Inline(uint64_t bits) {
  pb21::CompressiveEncoding e;
  e.mutable_inline_bitpacking()->set_uncompressed_bits_per_value(bits);
  return e;
}

void SetLayers(google::protobuf::RepeatedField<int>* out, std::vector<pb21::RepDefLayer> layers) {
  for (auto l : layers) out->Add(l);
}

// ------------------------------------------------------------------ pages

struct Chunk {
  uint16_t num_levels = 0;
  std::optional<std::string> rep, def;
  std::vector<std::string> buffers;
  uint64_t num_values = 0;
};

std::string SerializeChunk(const Chunk& c, bool large) {
  std::string out;
  Put<uint16_t>(&out, c.num_levels);
  if (c.rep) Put<uint16_t>(&out, static_cast<uint16_t>(c.rep->size()));
  if (c.def) Put<uint16_t>(&out, static_cast<uint16_t>(c.def->size()));
  for (const auto& b : c.buffers) {
    if (large) {
      Put<uint32_t>(&out, static_cast<uint32_t>(b.size()));
    } else {
      Put<uint16_t>(&out, static_cast<uint16_t>(b.size()));
    }
  }
  Pad(&out, 8, '\xFE');
  for (const auto* part : {c.rep ? &*c.rep : nullptr, c.def ? &*c.def : nullptr}) {
    if (!part) continue;
    out += *part;
    Pad(&out, 8, '\xFE');
  }
  for (const auto& b : c.buffers) {
    out += b;
    Pad(&out, 8, '\xFE');
  }
  return out;
}

std::string PageLayoutUrl() { return "/lance.encodings21.PageLayout"; }

PageData MakePage(const pb21::PageLayout& layout, std::vector<std::string> buffers, uint64_t rows) {
  PageData page;
  page.length = rows;
  page.encoding_type_url = PageLayoutUrl();
  page.encoding = layout.SerializeAsString();
  for (auto& b : buffers) page.buffers.push_back(arrow::Buffer::FromString(std::move(b)));
  return page;
}

PageData MiniBlockPage(pb21::MiniBlockLayout layout, const std::vector<Chunk>& chunks, uint64_t rows,
                       std::vector<std::string> extra = {}) {
  const bool large = layout.has_large_chunk();
  std::string meta, data;
  uint64_t items = 0;
  for (size_t i = 0; i < chunks.size(); ++i) {
    std::string bytes = SerializeChunk(chunks[i], large);
    const uint32_t log = i + 1 == chunks.size() ? 0 : static_cast<uint32_t>(__builtin_ctzll(chunks[i].num_values));
    const uint32_t word = static_cast<uint32_t>(((bytes.size() / 8 - 1) << 4) | log);
    if (large) {
      Put<uint32_t>(&meta, word);
    } else {
      Put<uint16_t>(&meta, static_cast<uint16_t>(word));
    }
    data += bytes;
    items += chunks[i].num_values;
  }
  if (layout.num_items() == 0) layout.set_num_items(items);
  if (layout.num_buffers() == 0 && !chunks.empty()) layout.set_num_buffers(chunks[0].buffers.size());
  pb21::PageLayout page_layout;
  *page_layout.mutable_mini_block_layout() = layout;
  std::vector<std::string> buffers = {meta, data};
  for (auto& e : extra) buffers.push_back(std::move(e));
  return MakePage(page_layout, std::move(buffers), rows);
}

ColumnData Column(std::vector<PageData> pages) {
  ColumnData c;
  c.pages = std::move(pages);
  return c;
}

// ------------------------------------------------------------------ fields

Field Leaf(const std::string& name, const std::string& logical_type, bool nullable = true) {
  Field f;
  f.name = name;
  f.logical_type = logical_type;
  f.nullable = nullable;
  return f;
}

Field Nested(const std::string& name, const std::string& logical_type, std::vector<Field> children) {
  Field f = Leaf(name, logical_type);
  f.children = std::move(children);
  return f;
}

std::shared_ptr<arrow::Array> Json(const std::shared_ptr<arrow::DataType>& type, const std::string& json) {
  auto array = arrow::json::ArrayFromJSONString(type, json);
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  return *array;
}

Result<std::shared_ptr<arrow::Array>> Decode(const Field& field, std::vector<ColumnData> columns, uint64_t rows,
                                             FileVersion version = FileVersion::kV2_2,
                                             const BlobReader& blobs = BlobReader()) {
  return DecodeField(field, columns, rows, version, arrow::default_memory_pool(), blobs);
}

void ExpectDecodes(const Field& field, std::vector<ColumnData> columns, uint64_t rows, const std::string& json,
                   FileVersion version = FileVersion::kV2_2, const BlobReader& blobs = BlobReader()) {
  auto decoded = Decode(field, std::move(columns), rows, version, blobs);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  auto want = Json(ArrowTypeFromField(field).ValueOrDie(), json);
  EXPECT_TRUE((*decoded)->Equals(*want)) << "got  " << (*decoded)->ToString() << "\nwant " << want->ToString();
}

void ExpectError(const Field& field, std::vector<ColumnData> columns, uint64_t rows, const std::string& needle,
                 FileVersion version = FileVersion::kV2_2) {
  auto decoded = Decode(field, std::move(columns), rows, version);
  ASSERT_FALSE(decoded.ok()) << "decoded " << (*decoded)->ToString();
  EXPECT_NE(decoded.status().message().find(needle), std::string::npos) << decoded.status().ToString();
  EXPECT_NE(decoded.status().message().find("field '" + field.name + "'"), std::string::npos)
      << decoded.status().ToString();
}

// ---------------------------------------------------------- mini-block pages

// int32 with nulls in two chunks: [1, null, 3, 4] [5, null, 7]
PageData NullableInt32Page(bool large) {
  pb21::MiniBlockLayout layout;
  *layout.mutable_def_compression() = Flat(16);
  *layout.mutable_value_compression() = Flat(32);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM});
  layout.set_has_large_chunk(large);
  Chunk c0{4, std::nullopt, Raw<uint16_t>({0, 1, 0, 0}), {Raw<int32_t>({1, 0, 3, 4})}, 4};
  Chunk c1{3, std::nullopt, Raw<uint16_t>({0, 1, 0}), {Raw<int32_t>({5, 0, 7})}, 3};
  return MiniBlockPage(layout, {c0, c1}, 7);
}

TEST(V21MiniBlock, NullableValuesAcrossChunks) {
  for (bool large : {false, true}) {
    SCOPED_TRACE(large);
    ExpectDecodes(Leaf("x", "int32"), {Column({NullableInt32Page(large)})}, 7, "[1, null, 3, 4, 5, null, 7]");
  }
}

TEST(V21MiniBlock, SeveralPages) {
  ExpectDecodes(Leaf("x", "int32"), {Column({NullableInt32Page(false), NullableInt32Page(true)})}, 14,
                "[1, null, 3, 4, 5, null, 7, 1, null, 3, 4, 5, null, 7]");
}

TEST(V21MiniBlock, ListSpanningChunks) {
  // [[1, 2, 3], null, [], [4, null]]: the first list continues in chunk 1.
  pb21::MiniBlockLayout layout;
  *layout.mutable_rep_compression() = Flat(16);
  *layout.mutable_def_compression() = Flat(16);
  *layout.mutable_value_compression() = Flat(32);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM, pb21::REPDEF_NULL_AND_EMPTY_LIST});
  layout.set_repetition_index_depth(1);
  Chunk c0{2, Raw<uint16_t>({1, 0}), Raw<uint16_t>({0, 0}), {Raw<int32_t>({1, 2})}, 2};
  Chunk c1{5, Raw<uint16_t>({0, 1, 1, 1, 0}), Raw<uint16_t>({0, 2, 3, 0, 1}), {Raw<int32_t>({3, 4, 0})}, 3};
  // Repetition index: per chunk, rows started and leftover items.
  std::string rep_index = Raw<uint64_t>({1, 2, 3, 0});
  auto page = MiniBlockPage(layout, {c0, c1}, 4, {rep_index});
  Field list = Nested("l", "list", {Leaf("item", "int32")});
  ExpectDecodes(list, {Column({page})}, 4, "[[1, 2, 3], null, [], [4, null]]");
}

TEST(V21MiniBlock, StringsAndStructOfStrings) {
  pb21::MiniBlockLayout layout;
  *layout.mutable_def_compression() = Flat(16);
  *layout.mutable_value_compression() = Variable32();
  // struct (def 2) of nullable strings (def 1)
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM, pb21::REPDEF_NULLABLE_ITEM});
  Chunk c0{2, std::nullopt, Raw<uint16_t>({0, 1}), {VariableChunk({"hello", ""})}, 2};
  Chunk c1{3, std::nullopt, Raw<uint16_t>({2, 0, 0}), {VariableChunk({"", "", "lance"})}, 3};
  auto page = MiniBlockPage(layout, {c0, c1}, 5);
  Field s = Nested("s", "struct", {Leaf("name", "string")});
  ExpectDecodes(s, {Column({page})}, 5,
                R"([{"name": "hello"}, {"name": null}, null, {"name": ""}, {"name": "lance"}])");
}

TEST(V21MiniBlock, Dictionary) {
  pb21::MiniBlockLayout layout;
  *layout.mutable_value_compression() = Flat(8);
  *layout.mutable_dictionary() = Variable32();
  layout.set_num_dictionary_items(3);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  Chunk c0{0, std::nullopt, std::nullopt, {Raw<uint8_t>({2, 0, 1, 1, 2})}, 5};
  auto page = MiniBlockPage(layout, {c0}, 5, {VariableBlock({"red", "green", "blue"})});
  ExpectDecodes(Leaf("c", "string"), {Column({page})}, 5, R"(["blue", "red", "green", "green", "blue"])");
  // The same page read as a dictionary field keeps the dictionary.
  Field dict = Leaf("c", "dict:string:int8:false");
  auto decoded = Decode(dict, {Column({page})}, 5);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ((*decoded)->type_id(), arrow::Type::DICTIONARY);
  const auto& d = static_cast<const arrow::DictionaryArray&>(**decoded);
  EXPECT_TRUE(d.dictionary()->Equals(*Json(arrow::utf8(), R"(["red", "green", "blue"])")));
  EXPECT_TRUE(d.indices()->Equals(*Json(arrow::int8(), "[2, 0, 1, 1, 2]")));

  // An index past the dictionary is an error.
  Chunk bad{0, std::nullopt, std::nullopt, {Raw<uint8_t>({2, 3, 1, 1, 2})}, 5};
  auto bad_page = MiniBlockPage(layout, {bad}, 5, {VariableBlock({"red", "green", "blue"})});
  ExpectError(Leaf("c", "string"), {Column({bad_page})}, 5, "dictionary index 3");
}

TEST(V21MiniBlock, InlineBitpackedValuesAndLevels) {
  std::vector<uint32_t> values(1024 + 10);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<uint32_t>(i * 7 % 1000);
  pb21::MiniBlockLayout layout;
  *layout.mutable_value_compression() = Inline(32);
  *layout.mutable_def_compression() = Inline(16);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM});
  auto chunk = [&](size_t start, size_t n) {
    std::vector<uint32_t> part(values.begin() + start, values.begin() + start + n);
    std::vector<uint16_t> def(n);
    for (size_t i = 0; i < n; ++i) def[i] = (start + i) % 5 == 0 ? 1 : 0;
    std::string v, d;
    Put<uint32_t>(&v, 10);
    v += Packed<uint32_t>(part, 10);
    Put<uint16_t>(&d, 1);
    d += Packed<uint16_t>(def, 1);
    return Chunk{static_cast<uint16_t>(n), std::nullopt, d, {v}, n};
  };
  auto page = MiniBlockPage(layout, {chunk(0, 1024), chunk(1024, 10)}, values.size());
  std::string json = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    json += (i ? ", " : "") + (i % 5 == 0 ? std::string("null") : std::to_string(values[i]));
  }
  json += "]";
  ExpectDecodes(Leaf("b", "uint32"), {Column({page})}, values.size(), json);
}

TEST(V21MiniBlock, OutOfLineBitpackedLevelsWithRawTail) {
  // 1030 levels of 1 bit: one packed chunk and a raw tail of 6 u16 values.
  const size_t n = 1030;
  std::vector<uint16_t> def(n);
  std::vector<int16_t> values(n);
  for (size_t i = 0; i < n; ++i) {
    def[i] = i % 3 == 0 ? 1 : 0;
    values[i] = static_cast<int16_t>(i);
  }
  std::string levels = Packed<uint16_t>(std::vector<uint16_t>(def.begin(), def.begin() + 1024), 1);
  for (size_t i = 1024; i < n; ++i) Put<uint16_t>(&levels, def[i]);
  pb21::MiniBlockLayout layout;
  auto* ool = layout.mutable_def_compression()->mutable_out_of_line_bitpacking();
  ool->set_uncompressed_bits_per_value(16);
  *ool->mutable_values() = Flat(1);
  *layout.mutable_value_compression() = Flat(16);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM});
  layout.set_has_large_chunk(true);
  Chunk c{static_cast<uint16_t>(n), std::nullopt, levels, {Raw<int16_t>(values)}, n};
  auto page = MiniBlockPage(layout, {c}, n);
  auto decoded = Decode(Leaf("i", "int16"), {Column({page})}, n);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const auto& a = static_cast<const arrow::Int16Array&>(**decoded);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(a.IsNull(i), i % 3 == 0) << i;
    if (!a.IsNull(i)) {
      ASSERT_EQ(a.Value(i), static_cast<int16_t>(i));
    }
  }
}

TEST(V21MiniBlock, RleValues) {
  pb21::MiniBlockLayout layout;
  auto* rle = layout.mutable_value_compression()->mutable_rle();
  *rle->mutable_values() = Flat(64);
  *rle->mutable_run_lengths() = Flat(8);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  Chunk c0{0, std::nullopt, std::nullopt, {Raw<int64_t>({7, -1}), Raw<uint8_t>({3, 1})}, 4};
  Chunk c1{0, std::nullopt, std::nullopt, {Raw<int64_t>({9}), Raw<uint8_t>({2})}, 2};
  ExpectDecodes(Leaf("r", "int64"), {Column({MiniBlockPage(layout, {c0, c1}, 6)})}, 6, "[7, 7, 7, -1, 9, 9]");
  // Runs that add up to fewer values than the chunk holds are an error.
  Chunk short_runs{0, std::nullopt, std::nullopt, {Raw<int64_t>({9}), Raw<uint8_t>({1})}, 2};
  ExpectError(Leaf("r", "int64"), {Column({MiniBlockPage(layout, {short_runs}, 2)})}, 2, "RLE runs hold 1 values");
}

TEST(V21MiniBlock, FixedSizeListWithNullItems) {
  // fsl<float, 2> with item validity in its own buffer: [[1, null], [3, 4], null]
  pb21::MiniBlockLayout layout;
  auto* fsl = layout.mutable_value_compression()->mutable_fixed_size_list();
  fsl->set_items_per_value(2);
  fsl->set_has_validity(true);
  *fsl->mutable_values() = Flat(32);
  *layout.mutable_def_compression() = Flat(16);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM});
  Chunk c{3, std::nullopt, Raw<uint16_t>({0, 0, 1}), {Raw<uint8_t>({0b001101}), Raw<float>({1, 0, 3, 4, 0, 0})}, 3};
  auto page = MiniBlockPage(layout, {c}, 3);
  ExpectDecodes(Leaf("v", "fixed_size_list:float:2"), {Column({page})}, 3, "[[1, null], [3, 4], null]");
}

TEST(V21MiniBlock, PackedStruct) {
  pb21::MiniBlockLayout layout;
  auto* packed = layout.mutable_value_compression()->mutable_packed_struct();
  packed->add_bits_per_value(32);
  packed->add_bits_per_value(16);
  *packed->mutable_values() = Flat(48);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  std::string rows;
  for (int i = 0; i < 3; ++i) {
    Put<int32_t>(&rows, i * 10);
    Put<int16_t>(&rows, static_cast<int16_t>(-i));
  }
  Chunk c{0, std::nullopt, std::nullopt, {rows}, 3};
  Field s = Nested("p", "struct", {Leaf("a", "int32"), Leaf("b", "int16")});
  s.metadata["lance-encoding:packed"] = "true";
  EXPECT_EQ(NumColumns(s), 1);
  ExpectDecodes(s, {Column({MiniBlockPage(layout, {c}, 3)})}, 3,
                R"([{"a": 0, "b": 0}, {"a": 10, "b": -1}, {"a": 20, "b": -2}])");
}

TEST(V21MiniBlock, GeneralCompressedValues) {
  for (auto codec : {comp::GeneralCodec::kLz4, comp::GeneralCodec::kZstd}) {
    pb21::MiniBlockLayout layout;
    auto* general = layout.mutable_value_compression()->mutable_general();
    general->mutable_compression()->set_scheme(codec == comp::GeneralCodec::kLz4 ? pb21::COMPRESSION_ALGORITHM_LZ4
                                                                                 : pb21::COMPRESSION_ALGORITHM_ZSTD);
    *general->mutable_values() = Variable32();
    SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
    auto framed = comp::GeneralCompress(codec, VariableChunk({"aaaa", "bbbb", "aaaa"}), std::nullopt);
    ASSERT_TRUE(framed.ok()) << framed.status().ToString();
    Chunk c{0, std::nullopt, std::nullopt, {*framed}, 3};
    ExpectDecodes(Leaf("g", "string"), {Column({MiniBlockPage(layout, {c}, 3)})}, 3, R"(["aaaa", "bbbb", "aaaa"])");
  }
}

TEST(V21MiniBlock, Fsst) {
  std::vector<std::string> values = {"lance lance lance", "format format", "", "lance format"};
  std::vector<uint64_t> offsets = {0};
  std::string data;
  for (const auto& v : values) {
    data += v;
    offsets.push_back(data.size());
  }
  auto compressed = comp::FsstCompress(offsets, data);
  ASSERT_TRUE(compressed.ok()) << compressed.status().ToString();
  const auto& [table, packed] = *compressed;
  std::vector<std::string> parts;
  for (size_t i = 0; i + 1 < packed.offsets.size(); ++i) {
    parts.push_back(packed.data.substr(packed.offsets[i], packed.offsets[i + 1] - packed.offsets[i]));
  }
  pb21::MiniBlockLayout layout;
  auto* fsst = layout.mutable_value_compression()->mutable_fsst();
  fsst->set_symbol_table(table);
  *fsst->mutable_values() = Variable32();
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  Chunk c{0, std::nullopt, std::nullopt, {VariableChunk(parts)}, 4};
  ExpectDecodes(Leaf("f", "string"), {Column({MiniBlockPage(layout, {c}, 4)})}, 4,
                R"(["lance lance lance", "format format", "", "lance format"])");
}

TEST(V21MiniBlock, VariableWithSequenceOffsets) {
  // Offsets described by a range (fixed-length values): no offsets payload.
  pb21::MiniBlockLayout layout;
  auto* range = layout.mutable_value_compression()->mutable_variable()->mutable_offsets()->mutable_range();
  range->set_uncompressed_bits_per_value(32);
  range->set_start(0);
  range->set_step(3);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  Chunk c{0, std::nullopt, std::nullopt, {"abcdefghi"}, 3};
  ExpectDecodes(Leaf("s", "string"), {Column({MiniBlockPage(layout, {c}, 3)})}, 3, R"(["abc", "def", "ghi"])");
  // A range that runs past the values.
  Chunk short_values{0, std::nullopt, std::nullopt, {"abcdefgh"}, 3};
  ExpectError(Leaf("s", "string"), {Column({MiniBlockPage(layout, {short_values}, 3)})}, 3, "offsets end at 9");

  // Offsets as deltas from a base, with a payload of deltas.
  pb21::MiniBlockLayout delta_layout;
  auto* delta = delta_layout.mutable_value_compression()->mutable_variable()->mutable_offsets()->mutable_delta();
  delta->set_uncompressed_bits_per_value(32);
  delta->set_base(0);
  *delta->mutable_deltas() = Flat(32);
  SetLayers(delta_layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  Chunk d{0, std::nullopt, std::nullopt, {Raw<uint32_t>({3, 0, 2}), "abcde"}, 3};
  ExpectDecodes(Leaf("s", "string"), {Column({MiniBlockPage(delta_layout, {d}, 3)})}, 3, R"(["abc", "", "de"])");
}

TEST(V21MiniBlock, RleWithCompressedChildren) {
  // Values zstd-compressed, run lengths bitpacked out of line (raw tail).
  pb21::MiniBlockLayout layout;
  auto* rle = layout.mutable_value_compression()->mutable_rle();
  auto* general = rle->mutable_values()->mutable_general();
  general->mutable_compression()->set_scheme(pb21::COMPRESSION_ALGORITHM_ZSTD);
  *general->mutable_values() = Flat(32);
  auto* lengths = rle->mutable_run_lengths()->mutable_out_of_line_bitpacking();
  lengths->set_uncompressed_bits_per_value(8);
  *lengths->mutable_values() = Flat(3);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  auto values = comp::GeneralCompress(comp::GeneralCodec::kZstd, Raw<int32_t>({-4, 8}), std::nullopt);
  ASSERT_TRUE(values.ok());
  Chunk c{0, std::nullopt, std::nullopt, {*values, Raw<uint8_t>({2, 3})}, 5};
  ExpectDecodes(Leaf("r", "int32"), {Column({MiniBlockPage(layout, {c}, 5)})}, 5, "[-4, -4, 8, 8, 8]");
}

TEST(V21MiniBlock, MoreLevelsThanAU16Counts) {
  // One chunk of 70000 values: its header's u16 level count wraps, the RLE
  // definition levels know the real count.
  const uint64_t n = 70000;
  std::string values, value_runs, level_runs;
  for (uint64_t done = 0; done < n;) {
    const uint8_t run = static_cast<uint8_t>(std::min<uint64_t>(255, n - done));
    values.push_back(5);
    value_runs.push_back(static_cast<char>(run));
    done += run;
  }
  std::string def;
  Put<uint64_t>(&def, 2 * value_runs.size());
  for (size_t i = 0; i < value_runs.size(); ++i) Put<uint16_t>(&def, i == 0 ? 1 : 0);
  def += value_runs;
  pb21::MiniBlockLayout layout;
  auto* rle = layout.mutable_value_compression()->mutable_rle();
  *rle->mutable_values() = Flat(8);
  *rle->mutable_run_lengths() = Flat(8);
  auto* def_rle = layout.mutable_def_compression()->mutable_rle();
  *def_rle->mutable_values() = Flat(16);
  *def_rle->mutable_run_lengths() = Flat(8);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM});
  Chunk c{static_cast<uint16_t>(n & 0xFFFF), std::nullopt, def, {values, value_runs}, n};
  auto decoded = Decode(Leaf("x", "int8"), {Column({MiniBlockPage(layout, {c}, n)})}, n);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ((*decoded)->length(), static_cast<int64_t>(n));
  EXPECT_EQ((*decoded)->null_count(), 255);
  // A count that is not congruent to the header is an error.
  c.num_levels = 7;
  ExpectError(Leaf("x", "int8"), {Column({MiniBlockPage(layout, {c}, n)})}, n, "declares 7 levels");
}

// ---------------------------------------------------------- mini-block damage

TEST(V21MiniBlockCorrupt, ChunkMetadataPastTheData) {
  PageData page = NullableInt32Page(false);
  std::string meta = page.buffers[0]->ToString();
  meta[0] = static_cast<char>(0xF2);  // the first chunk claims 32 KiB (and 4 values)
  meta[1] = static_cast<char>(0x7F);
  page.buffers[0] = arrow::Buffer::FromString(meta);
  ExpectError(Leaf("x", "int32"), {Column({page})}, 7, "exceeds the");
}

TEST(V21MiniBlockCorrupt, BufferSizesThatLie) {
  PageData page = NullableInt32Page(false);
  std::string data = page.buffers[1]->ToString();
  data[4] = static_cast<char>(0xFF);  // the first chunk's value buffer size
  data[5] = static_cast<char>(0x7F);
  page.buffers[1] = arrow::Buffer::FromString(data);
  ExpectError(Leaf("x", "int32"), {Column({page})}, 7, "mini-block value buffer");
}

TEST(V21MiniBlockCorrupt, DefinitionLevelOutOfRange) {
  pb21::MiniBlockLayout layout;
  *layout.mutable_def_compression() = Flat(16);
  *layout.mutable_value_compression() = Flat(32);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM});
  Chunk c{2, std::nullopt, Raw<uint16_t>({0, 5}), {Raw<int32_t>({1, 2})}, 2};
  ExpectError(Leaf("x", "int32"), {Column({MiniBlockPage(layout, {c}, 2)})}, 2, "definition level 5");
}

TEST(V21MiniBlockCorrupt, RepetitionLevelOutOfRange) {
  pb21::MiniBlockLayout layout;
  *layout.mutable_rep_compression() = Flat(16);
  *layout.mutable_value_compression() = Flat(32);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM, pb21::REPDEF_ALL_VALID_LIST});
  Chunk c{2, Raw<uint16_t>({1, 3}), std::nullopt, {Raw<int32_t>({1, 2})}, 2};
  ExpectError(Nested("l", "list", {Leaf("item", "int32")}), {Column({MiniBlockPage(layout, {c}, 1)})}, 1,
              "repetition level 3");
}

TEST(V21MiniBlockCorrupt, CountsThatDisagree) {
  // The layout's item count disagrees with the chunks.
  pb21::MiniBlockLayout layout;
  *layout.mutable_value_compression() = Flat(32);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  layout.set_num_items(3);
  Chunk c0{0, std::nullopt, std::nullopt, {Raw<int32_t>({1, 2, 3, 4})}, 4};
  Chunk c1{0, std::nullopt, std::nullopt, {Raw<int32_t>({5})}, 1};
  ExpectError(Leaf("x", "int32"), {Column({MiniBlockPage(layout, {c0, c1}, 3)})}, 3, "more than the page's 3 items");
  // A value buffer too small for its values.
  pb21::MiniBlockLayout layout2;
  *layout2.mutable_value_compression() = Flat(32);
  SetLayers(layout2.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  Chunk small{0, std::nullopt, std::nullopt, {Raw<int32_t>({1})}, 2};
  ExpectError(Leaf("x", "int32"), {Column({MiniBlockPage(layout2, {small}, 2)})}, 2, "flat buffer of 4 bytes");
  // Page rows that disagree with the levels / the field.
  Chunk ok{0, std::nullopt, std::nullopt, {Raw<int32_t>({1, 2})}, 2};
  ExpectError(Leaf("x", "int32"), {Column({MiniBlockPage(layout2, {ok}, 3)})}, 3, "holds 2 rows but declares 3");
  ExpectError(Leaf("x", "int32"), {Column({MiniBlockPage(layout2, {ok}, 2)})}, 5, "hold 2 rows, expected 5");
  // Buffers per chunk that disagree with the value encoding.
  pb21::MiniBlockLayout layout3 = layout2;
  layout3.set_num_buffers(2);
  ExpectError(Leaf("x", "int32"), {Column({MiniBlockPage(layout3, {ok}, 2)})}, 2, "declares 2 buffers per chunk");
}

TEST(V21MiniBlockCorrupt, TruncatedChunkAndLevels) {
  PageData page = NullableInt32Page(false);
  page.buffers[1] = arrow::SliceBuffer(page.buffers[1], 0, 12);
  ExpectError(Leaf("x", "int32"), {Column({page})}, 7, "exceeds the 12-byte data buffer");
  // An inline bitpacked chunk whose header claims more bits than the body holds.
  pb21::MiniBlockLayout layout;
  *layout.mutable_value_compression() = Inline(32);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  std::string v;
  Put<uint32_t>(&v, 31);
  v += std::string(64, '\0');
  Chunk c{0, std::nullopt, std::nullopt, {v}, 3};
  ExpectError(Leaf("x", "uint32"), {Column({MiniBlockPage(layout, {c}, 3)})}, 3, "inline bitpacking chunk");
  // ... or a width beyond the values.
  std::string w;
  Put<uint32_t>(&w, 40);
  Chunk c2{0, std::nullopt, std::nullopt, {w}, 3};
  ExpectError(Leaf("x", "uint32"), {Column({MiniBlockPage(layout, {c2}, 3)})}, 3, "bit width 40");
}

// ---------------------------------------------------------- full-zip pages

PageData FullZipPage(pb21::FullZipLayout layout, std::string data, uint64_t rows,
                     std::optional<std::string> rep_index = std::nullopt) {
  pb21::PageLayout page_layout;
  *page_layout.mutable_full_zip_layout() = layout;
  std::vector<std::string> buffers = {std::move(data)};
  if (rep_index) buffers.push_back(*rep_index);
  return MakePage(page_layout, std::move(buffers), rows);
}

TEST(V21FullZip, FixedWidthWithDefinitionWords) {
  // Nullable int64: one control byte per value, then 8 bytes (nulls too).
  pb21::FullZipLayout layout;
  layout.set_bits_def(1);
  layout.set_bits_per_value(64);
  *layout.mutable_value_compression() = Flat(64);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM});
  std::string data;
  for (int64_t v : {10, 0, 30}) {
    data.push_back(v == 0 ? 1 : 0);
    Put<int64_t>(&data, v);
  }
  ExpectDecodes(Leaf("x", "int64"), {Column({FullZipPage(layout, data, 3)})}, 3, "[10, null, 30]");
  // A value cut short.
  ExpectError(Leaf("x", "int64"), {Column({FullZipPage(layout, data.substr(0, data.size() - 3), 3)})}, 3,
              "ends inside a value");
}

TEST(V21FullZip, FixedWidthWithoutControlWords) {
  pb21::FullZipLayout layout;
  layout.set_bits_per_value(64);
  *layout.mutable_value_compression() = Flat(64);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  ExpectDecodes(Leaf("x", "double"), {Column({FullZipPage(layout, Raw<double>({1.5, 2.5}), 2)})}, 2, "[1.5, 2.5]");
  ExpectError(Leaf("x", "double"), {Column({FullZipPage(layout, Raw<double>({1.5}), 2)})}, 2, "full-zip page");
}

TEST(V21FullZip, VariableListsWithRepDefWords) {
  // list<string>: [["aa", null], null, [], ["b"]] with rep (1 bit) and def (2
  // bits: item null 1, list null 2, empty 3) in one byte: (rep << 2) | def.
  pb21::FullZipLayout layout;
  layout.set_bits_rep(1);
  layout.set_bits_def(2);
  layout.set_bits_per_offset(32);
  *layout.mutable_value_compression() = Variable32();
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM, pb21::REPDEF_NULL_AND_EMPTY_LIST});
  std::string data;
  auto value = [&](uint8_t rep, uint8_t def, const char* s) {
    data.push_back(static_cast<char>((rep << 2) | def));
    if (s) {
      Put<uint32_t>(&data, static_cast<uint32_t>(std::strlen(s)));
      data += s;
    }
  };
  value(1, 0, "aa");
  value(0, 1, nullptr);
  value(1, 2, nullptr);
  value(1, 3, nullptr);
  value(1, 0, "b");
  Field list = Nested("l", "list", {Leaf("item", "string")});
  ExpectDecodes(list, {Column({FullZipPage(layout, data, 4, Raw<uint8_t>({0, 9, 10, 11, 12}))})}, 4,
                R"([["aa", null], null, [], ["b"]])");
  // A length that runs past the page.
  std::string bad = data;
  bad[1] = static_cast<char>(0x7F);
  ExpectError(list, {Column({FullZipPage(layout, bad, 4)})}, 4, "exceeds the");
}

TEST(V21FullZip, FixedSizeListWithZippedValidity) {
  // fsl<int32, 3>: each value is 1 byte of item validity then 12 bytes.
  pb21::FullZipLayout layout;
  auto* fsl = layout.mutable_value_compression()->mutable_fixed_size_list();
  fsl->set_items_per_value(3);
  fsl->set_has_validity(true);
  *fsl->mutable_values() = Flat(32);
  layout.set_bits_per_value(104);
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  std::string data;
  data.push_back(0b101);
  data += Raw<int32_t>({1, 0, 3});
  data.push_back(0b111);
  data += Raw<int32_t>({4, 5, 6});
  ExpectDecodes(Leaf("v", "fixed_size_list:int32:3"), {Column({FullZipPage(layout, data, 2)})}, 2,
                "[[1, null, 3], [4, 5, 6]]");
}

// ---------------------------------------------------------- constant pages

PageData ConstantPage(pb21::ConstantLayout layout, std::vector<std::string> buffers, uint64_t rows) {
  pb21::PageLayout page_layout;
  *page_layout.mutable_constant_layout() = layout;
  return MakePage(page_layout, std::move(buffers), rows);
}

TEST(V21Constant, InlineValue) {
  pb21::ConstantLayout layout;
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  layout.set_inline_value(Raw<int32_t>({42}));
  ExpectDecodes(Leaf("c", "int32"), {Column({ConstantPage(layout, {}, 3)})}, 3, "[42, 42, 42]");
  pb21::ConstantLayout flag;
  SetLayers(flag.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  flag.set_inline_value(std::string(1, '\x01'));
  ExpectDecodes(Leaf("b", "bool"), {Column({ConstantPage(flag, {}, 2)})}, 2, "[true, true]");
  // A scalar of the wrong width.
  layout.set_inline_value(Raw<int16_t>({42}));
  ExpectError(Leaf("c", "int32"), {Column({ConstantPage(layout, {}, 3)})}, 3, "constant scalar of 2 bytes");
}

TEST(V21Constant, ValueBufferWithLevels) {
  // list<string> where every item is "zz": [["zz", "zz"], null, [], ["zz"]]
  std::string scalar;
  Put<uint32_t>(&scalar, 2);
  Put<uint32_t>(&scalar, 8);
  Put<uint32_t>(&scalar, 2);
  Put<uint32_t>(&scalar, 0);
  Put<uint32_t>(&scalar, 2);
  scalar += "zz";
  pb21::ConstantLayout layout;
  SetLayers(layout.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM, pb21::REPDEF_NULL_AND_EMPTY_LIST});
  Field list = Nested("l", "list", {Leaf("item", "string")});
  ExpectDecodes(list,
                {Column({ConstantPage(layout, {scalar, Raw<uint16_t>({1, 0, 1, 1, 1}), Raw<uint16_t>({0, 0, 1,
                    2, 0})},
                                      4)})},
                4, R"([["zz", "zz"], null, [], ["zz"]])");
  // A scalar buffer with trailing bytes.
  ExpectError(Leaf("s", "string"), {Column({ConstantPage(layout, {scalar + "x"}, 1)})}, 1, "trailing bytes");
}

TEST(V21Constant, AllNullPages) {
  // 2.1's AllNullLayout: no buffers for one nullable layer.
  pb21::ConstantLayout simple;
  SetLayers(simple.mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM});
  ExpectDecodes(Leaf("n", "float"), {Column({ConstantPage(simple, {}, 3)})}, 3, "[null, null, null]",
                FileVersion::kV2_1);
  // With levels: list<int32?> [[null], null, []]
  pb21::ConstantLayout complex;
  SetLayers(complex.mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM, pb21::REPDEF_NULL_AND_EMPTY_LIST});
  Field list = Nested("l", "list", {Leaf("item", "int32")});
  ExpectDecodes(list, {Column({ConstantPage(complex, {Raw<uint16_t>({1, 1, 1}), Raw<uint16_t>({1, 2, 3})}, 3)})}, 3,
                "[[null], null, []]", FileVersion::kV2_1);
  // RLE-compressed levels (2.2): [[], [], []]
  pb21::ConstantLayout rle;
  SetLayers(rle.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM, pb21::REPDEF_EMPTYABLE_LIST});
  for (auto* e : {rle.mutable_rep_compression(), rle.mutable_def_compression()}) {
    *e->mutable_rle()->mutable_values() = Flat(16);
    *e->mutable_rle()->mutable_run_lengths() = Flat(8);
  }
  rle.set_num_rep_values(3);
  rle.set_num_def_values(3);
  auto frame = [](uint16_t value, uint8_t run) {
    std::string out;
    Put<uint64_t>(&out, 2);
    Put<uint16_t>(&out, value);
    Put<uint8_t>(&out, run);
    return out;
  };
  ExpectDecodes(list, {Column({ConstantPage(rle, {frame(1, 3), frame(1, 3)}, 3)})}, 3, "[[], [], []]");
  ExpectError(list, {Column({ConstantPage(rle, {frame(1, 4), frame(1, 3)}, 3)})}, 3, "more than the expected 3");
  // Without levels only a single nullable layer is allowed.
  ExpectError(list, {Column({ConstantPage(complex, {}, 3)})}, 3, "NULLABLE_ITEM");
}

// ---------------------------------------------------------- blob pages

TEST(V21Blob, ReadsValuesThroughTheReader) {
  // Descriptions {position, size}: a value, a null (def 1 << 16), an empty value.
  pb21::MiniBlockLayout inner;
  auto* packed = inner.mutable_value_compression()->mutable_packed_struct();
  packed->add_bits_per_value(64);
  packed->add_bits_per_value(64);
  *packed->mutable_values() = Flat(128);
  SetLayers(inner.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM});
  Chunk c{0, std::nullopt, std::nullopt, {Raw<uint64_t>({100, 5, 1 << 16, 0, 0, 0})}, 3};
  PageData page = MiniBlockPage(inner, {c}, 3);
  pb21::PageLayout inner_layout;
  inner_layout.ParseFromString(page.encoding);
  pb21::PageLayout blob;
  *blob.mutable_blob_layout()->mutable_inner_layout() = inner_layout;
  SetLayers(blob.mutable_blob_layout()->mutable_layers(), {pb21::REPDEF_NULLABLE_ITEM});
  page.encoding = blob.SerializeAsString();
  Field field = Leaf("b", "large_binary");
  field.metadata["lance-encoding:blob"] = "true";
  BlobReader reader = [](uint64_t position, uint64_t size) -> Result<std::shared_ptr<arrow::Buffer>> {
    if (position != 100 || size != 5) return Status::Invalid("unexpected read");
    return arrow::Buffer::FromString("hello");
  };
  ExpectDecodes(field, {Column({page})}, 3, R"(["hello", null, ""])", FileVersion::kV2_2, reader);
  ExpectError(field, {Column({page})}, 3, "needs file access");
}

// ---------------------------------------------------------- layouts

TEST(V21Pages, UnknownAndUnsupportedLayouts) {
  Field x = Leaf("x", "int32");
  PageData page = NullableInt32Page(false);
  PageData sparse = page;
  pb21::PageLayout layout;
  layout.set_sparse_layout("opaque");
  sparse.encoding = layout.SerializeAsString();
  ExpectError(x, {Column({sparse})}, 7, "sparse page layout (file version 2.3)");
  PageData empty = page;
  empty.encoding.clear();
  ExpectError(x, {Column({empty})}, 7, "unknown or empty page layout");
  PageData garbage = page;
  garbage.encoding = "\xFF\xFF\xFF";
  ExpectError(x, {Column({garbage})}, 7, "does not parse");
  PageData legacy = page;
  legacy.encoding_type_url = "/lance.encodings.ArrayEncoding";
  ExpectError(x, {Column({legacy})}, 7, "not a 2.1+ page layout");
  // An unknown compressive encoding (field number not in the proto).
  pb21::PageLayout unknown;
  unknown.ParseFromString(page.encoding);
  unknown.mutable_mini_block_layout()->mutable_value_compression()->Clear();
  PageData unset = page;
  unset.encoding = unknown.SerializeAsString();
  ExpectError(x, {Column({unset})}, 7, "unset");
  // Wrong number of columns for the field.
  ExpectError(x, {}, 7, "expected 1 columns, got 0");
  // A list layer where the schema has none.
  pb21::MiniBlockLayout lists;
  *lists.mutable_rep_compression() = Flat(16);
  *lists.mutable_value_compression() = Flat(32);
  SetLayers(lists.mutable_layers(), {pb21::REPDEF_ALL_VALID_ITEM, pb21::REPDEF_ALL_VALID_LIST});
  Chunk c{2, Raw<uint16_t>({1, 0}), std::nullopt, {Raw<int32_t>({1, 2})}, 2};
  ExpectError(x, {Column({MiniBlockPage(lists, {c}, 1)})}, 1, "rep/def layers but the schema has 1");
}

TEST(V21Pages, EmptyStructAndZeroRows) {
  Field s = Nested("s", "struct", {});
  EXPECT_EQ(NumColumns(s), 0);
  auto decoded = Decode(s, {}, 4);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ((*decoded)->length(), 4);
  ExpectDecodes(Leaf("x", "int32"), {Column({})}, 0, "[]");
  EXPECT_FALSE(Decode(Leaf("x", "int32"), {Column({})}, 0, FileVersion::kV2_0).ok());
}

}  // namespace
}  // namespace lance::file::v2_1
