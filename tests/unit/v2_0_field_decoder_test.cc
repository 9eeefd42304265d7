// 2.0 page and field decoding over synthetic pages built here: every
// encoding, nulls, empty pages, and corrupt inputs (which must give errors
// naming the field and the problem, never crash or read out of bounds).
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <arrow/array.h>
#include <arrow/buffer.h>
#include <arrow/json/from_string.h>
#include <arrow/type.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <google/protobuf/unknown_field_set.h>

#include "lance/encodings_v2_0.pb.h"
#include "lance/file/compression/fastlanes.h"
#include "lance/file/compression/fsst.h"
#include "lance/file/compression/general.h"
#include "lance/file/v2_0/array_decoder.h"
#include "lance/file/v2_0/field_decoder.h"

namespace lance::file::v2_0 {
namespace {

using ::testing::HasSubstr;
namespace pbe = ::lance::pb::encodings20;

constexpr char kArrayUrl[] = "/lance.encodings.ArrayEncoding";
constexpr char kColumnUrl[] = "/lance.encodings.ColumnEncoding";

// ---------------------------------------------------------------- builders

std::shared_ptr<arrow::Buffer> Buf(const std::string& bytes) { return arrow::Buffer::FromString(bytes); }

template <typename T>
std::shared_ptr<arrow::Buffer> Values(const std::vector<T>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return Buf(bytes);
}

// An LSB-first bitmap of the given bits.
std::shared_ptr<arrow::Buffer> Bits(const std::vector<bool>& bits) {
  std::string bytes((bits.size() + 7) / 8, '\0');
  for (size_t i = 0; i < bits.size(); ++i) {
    if (bits[i]) bytes[i / 8] = static_cast<char>(bytes[i / 8] | (1 << (i % 8)));
  }
  return Buf(bytes);
}

pbe::ArrayEncoding Flat(uint64_t bits, uint32_t index,
                        pbe::Buffer::BufferType type = pbe::Buffer::page) {
  pbe::ArrayEncoding e;
  e.mutable_flat()->set_bits_per_value(bits);
  e.mutable_flat()->mutable_buffer()->set_buffer_index(index);
  e.mutable_flat()->mutable_buffer()->set_buffer_type(type);
  return e;
}

pbe::ArrayEncoding Compressed(uint64_t bits, uint32_t index, const std::string& scheme) {
  pbe::ArrayEncoding e = Flat(bits, index);
  e.mutable_flat()->mutable_compression()->set_scheme(scheme);
  return e;
}

pbe::ArrayEncoding NoNull(const pbe::ArrayEncoding& values) {
  pbe::ArrayEncoding e;
  *e.mutable_nullable()->mutable_no_nulls()->mutable_values() = values;
  return e;
}

pbe::ArrayEncoding SomeNull(const pbe::ArrayEncoding& validity, const pbe::ArrayEncoding& values) {
  pbe::ArrayEncoding e;
  *e.mutable_nullable()->mutable_some_nulls()->mutable_validity() = validity;
  *e.mutable_nullable()->mutable_some_nulls()->mutable_values() = values;
  return e;
}

pbe::ArrayEncoding AllNull() {
  pbe::ArrayEncoding e;
  e.mutable_nullable()->mutable_all_nulls();
  return e;
}

pbe::ArrayEncoding BinaryEnc(const pbe::ArrayEncoding& indices, const pbe::ArrayEncoding& bytes,
                             uint64_t null_adjustment) {
  pbe::ArrayEncoding e;
  *e.mutable_binary()->mutable_indices() = indices;
  *e.mutable_binary()->mutable_bytes() = bytes;
  e.mutable_binary()->set_null_adjustment(null_adjustment);
  return e;
}

// Binary{indices: NoNull(Flat 64, buf i), bytes: Flat(8, buf i+1)} as the writer emits it.
pbe::ArrayEncoding StdBinary(uint32_t first_buffer, uint64_t null_adjustment) {
  return BinaryEnc(NoNull(Flat(64, first_buffer)), Flat(8, first_buffer + 1), null_adjustment);
}

pbe::ArrayEncoding ListEnc(const pbe::ArrayEncoding& offsets, uint64_t null_adjustment, uint64_t num_items) {
  pbe::ArrayEncoding e;
  *e.mutable_list()->mutable_offsets() = offsets;
  e.mutable_list()->set_null_offset_adjustment(null_adjustment);
  e.mutable_list()->set_num_items(num_items);
  return e;
}

pbe::ArrayEncoding StructHeader() {
  pbe::ArrayEncoding e;
  e.mutable_struct_();
  return e;
}

PageData Page(uint64_t length, const pbe::ArrayEncoding& encoding,
              std::vector<std::shared_ptr<arrow::Buffer>> buffers) {
  PageData page;
  page.length = length;
  page.encoding_type_url = kArrayUrl;
  page.encoding = encoding.SerializeAsString();
  page.buffers = std::move(buffers);
  return page;
}

ColumnData Column(std::vector<PageData> pages) {
  ColumnData column;
  pbe::ColumnEncoding values;
  values.mutable_values();
  column.encoding_type_url = kColumnUrl;
  column.encoding = values.SerializeAsString();
  column.pages = std::move(pages);
  return column;
}

Field Leaf(const std::string& name, const std::string& logical_type, int32_t id = 0) {
  Field f;
  f.name = name;
  f.id = id;
  f.logical_type = logical_type;
  return f;
}

Field Parent(const std::string& name, const std::string& logical_type, std::vector<Field> children,
             int32_t id = 0) {
  Field f = Leaf(name, logical_type, id);
  f.children = std::move(children);
  return f;
}

std::shared_ptr<arrow::Array> Json(const std::shared_ptr<arrow::DataType>& type, const std::string& json) {
  auto result = arrow::json::ArrayFromJSONString(type, json);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ValueOrDie();
}

Result<std::shared_ptr<arrow::Array>> Decode(const Field& field, const std::vector<ColumnData>& columns,
                                             uint64_t rows) {
  return DecodeField(field, columns, rows, arrow::default_memory_pool());
}

Result<std::shared_ptr<arrow::Array>> DecodeOne(const Field& field, const ColumnData& column, uint64_t rows) {
  return DecodeField(field, std::vector<ColumnData>{column}, rows, arrow::default_memory_pool());
}

#define EXPECT_DECODES(field, columns, rows, expected)                                       \
  do {                                                                                       \
    auto _r = Decode((field), (columns), (rows));                                            \
    ASSERT_TRUE(_r.ok()) << _r.status().ToString();                                          \
    ASSERT_OK_ARRAY_EQ(*_r, (expected));                                                     \
  } while (0)

#define ASSERT_OK_ARRAY_EQ(actual, expected)                                                 \
  do {                                                                                       \
    ASSERT_TRUE((actual)->ValidateFull().ok()) << (actual)->ValidateFull().ToString();      \
    EXPECT_TRUE((actual)->Equals(*(expected)))                                               \
        << "actual:   " << (actual)->ToString() << "\nexpected: " << (expected)->ToString(); \
  } while (0)

// The error of decoding, which must mention the field and `problem`.
void ExpectError(const Result<std::shared_ptr<arrow::Array>>& result, const std::string& problem,
                 const std::string& field_name = "f") {
  ASSERT_FALSE(result.ok()) << "decoded: " << (*result)->ToString();
  EXPECT_THAT(result.status().message(), HasSubstr("'" + field_name + "'")) << result.status().ToString();
  EXPECT_THAT(result.status().message(), HasSubstr(problem)) << result.status().ToString();
}

// ------------------------------------------------------------ fixed width

TEST(V20FieldDecoder, FlatInt32NoNulls) {
  auto col = Column({Page(4, NoNull(Flat(32, 0)), {Values<int32_t>({1, -2, 3, 2147483647})})});
  EXPECT_DECODES(Leaf("f", "int32"), std::vector<ColumnData>{col}, 4,
                 Json(arrow::int32(), "[1, -2, 3, 2147483647]"));
}

TEST(V20FieldDecoder, FlatSomeNullsKeepsBitmap) {
  auto col = Column({Page(5, SomeNull(Flat(1, 0), Flat(64, 1)),
                          {Bits({true, false, true, true, false}), Values<int64_t>({10, 99, 30, 40, 98})})});
  EXPECT_DECODES(Leaf("f", "int64"), std::vector<ColumnData>{col}, 5,
                 Json(arrow::int64(), "[10, null, 30, 40, null]"));
}

TEST(V20FieldDecoder, AllNullsHasNoBuffers) {
  auto col = Column({Page(3, AllNull(), {})});
  EXPECT_DECODES(Leaf("f", "double"), std::vector<ColumnData>{col}, 3,
                 Json(arrow::float64(), "[null, null, null]"));
  auto null_col = Column({Page(2, AllNull(), {})});
  EXPECT_DECODES(Leaf("f", "null"), std::vector<ColumnData>{null_col}, 2, Json(arrow::null(), "[null, null]"));
}

TEST(V20FieldDecoder, BoolIsAnLsbBitmap) {
  auto col = Column({Page(10, SomeNull(Flat(1, 0), Flat(1, 1)),
                          {Bits({1, 1, 1, 0, 1, 1, 1, 1, 1, 1}), Bits({1, 0, 0, 1, 1, 0, 1, 0, 0, 1})})});
  EXPECT_DECODES(Leaf("f", "bool"), std::vector<ColumnData>{col}, 10,
                 Json(arrow::boolean(), "[true, false, false, null, true, false, true, false, false, true]"));
}

TEST(V20FieldDecoder, EveryFixedWidthType) {
  struct Case {
    std::string logical_type;
    uint64_t bits;
    std::shared_ptr<arrow::DataType> type;
    std::string json;
  };
  const std::vector<Case> cases = {
      {"int8", 8, arrow::int8(), "[-128, 0, 127]"},
      {"uint8", 8, arrow::uint8(), "[0, 200, 255]"},
      {"int16", 16, arrow::int16(), "[-32768, 1, 32767]"},
      {"uint16", 16, arrow::uint16(), "[0, 1, 65535]"},
      {"uint32", 32, arrow::uint32(), "[0, 1, 4294967295]"},
      {"uint64", 64, arrow::uint64(), "[0, 1, 18446744073709551615]"},
      {"halffloat", 16, arrow::float16(), "[1.5, -2.0, 0.25]"},
      {"float", 32, arrow::float32(), "[1.5, -2.0, 3.25]"},
      {"decimal:128:10:2", 128, arrow::decimal128(10, 2), R"(["1.23", "-4.56", "99999999.99"])"},
      {"decimal:256:40:5", 256, arrow::decimal256(40, 5), R"(["1.23000", "-4.56000", "12345678901234567890.12345"])"},
      {"date32:day", 32, arrow::date32(), "[0, -1, 19000]"},
      {"date64:ms", 64, arrow::date64(), "[0, 86400000, -86400000]"},
      {"time32:s", 32, arrow::time32(arrow::TimeUnit::SECOND), "[0, 1, 86399]"},
      {"time32:ms", 32, arrow::time32(arrow::TimeUnit::MILLI), "[0, 1, 86399999]"},
      {"time64:us", 64, arrow::time64(arrow::TimeUnit::MICRO), "[0, 1, 86399999999]"},
      {"time64:ns", 64, arrow::time64(arrow::TimeUnit::NANO), "[0, 1, 86399999999999]"},
      {"timestamp:ms:UTC", 64, arrow::timestamp(arrow::TimeUnit::MILLI, "UTC"), "[0, 1, -1]"},
      {"timestamp:ns:-", 64, arrow::timestamp(arrow::TimeUnit::NANO), "[5, 6, 7]"},
      {"duration:us", 64, arrow::duration(arrow::TimeUnit::MICRO), "[5, -6, 7]"},
      {"fixed_size_binary:3", 24, arrow::fixed_size_binary(3), R"(["abc", "def", "\u0000\u0001\u0002"])"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.logical_type);
    auto expected = Json(c.type, c.json);
    // The values buffer of the expected array is exactly what Flat stores.
    const auto& data = *expected->data();
    auto values = arrow::SliceBuffer(data.buffers[1], 0, static_cast<int64_t>(3 * c.bits / 8));
    auto col = Column({Page(3, NoNull(Flat(c.bits, 0)), {values})});
    EXPECT_DECODES(Leaf("f", c.logical_type), std::vector<ColumnData>{col}, 3, expected);
  }
}

TEST(V20FieldDecoder, CompressedFlat) {
  std::vector<int64_t> values;
  for (int i = 0; i < 500; ++i) values.push_back(i % 7);
  const auto raw = Values(values)->ToString();
  for (auto [codec, scheme] : {std::pair{compression::GeneralCodec::kZstd, "zstd"},
                               std::pair{compression::GeneralCodec::kLz4, "lz4"}}) {
    SCOPED_TRACE(scheme);
    auto framed = compression::GeneralCompress(codec, raw, std::nullopt);
    ASSERT_TRUE(framed.ok()) << framed.status().ToString();
    auto col = Column({Page(500, NoNull(Compressed(64, 0, scheme)), {Buf(*framed)})});
    auto result = DecodeOne(Leaf("f", "int64"), col, 500);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    auto expected = std::make_shared<arrow::Int64Array>(500, Values(values));
    ASSERT_OK_ARRAY_EQ(*result, expected);
  }
  // "none" is a Compression submessage that changes nothing.
  auto col = Column({Page(2, NoNull(Compressed(32, 0, "none")), {Values<int32_t>({4, 5})})});
  EXPECT_DECODES(Leaf("f", "int32"), std::vector<ColumnData>{col}, 2, Json(arrow::int32(), "[4, 5]"));
}

TEST(V20FieldDecoder, ColumnBuffersAreReachable) {
  pbe::ArrayEncoding e = NoNull(Flat(16, 1, pbe::Buffer::column));
  auto col = Column({Page(2, e, {})});
  col.buffers = {Values<int16_t>({0}), Values<int16_t>({7, 8})};
  EXPECT_DECODES(Leaf("f", "int16"), std::vector<ColumnData>{col}, 2, Json(arrow::int16(), "[7, 8]"));
}

TEST(V20FieldDecoder, Constant) {
  pbe::ArrayEncoding e;
  int32_t v = -5;
  e.mutable_constant()->set_value(std::string(reinterpret_cast<const char*>(&v), 4));
  auto col = Column({Page(3, e, {})});
  EXPECT_DECODES(Leaf("f", "int32"), std::vector<ColumnData>{col}, 3, Json(arrow::int32(), "[-5, -5, -5]"));
  pbe::ArrayEncoding b;
  b.mutable_constant()->set_value(std::string(1, '\1'));
  auto bcol = Column({Page(9, b, {})});
  EXPECT_DECODES(Leaf("f", "bool"), std::vector<ColumnData>{bcol}, 9,
                 Json(arrow::boolean(), "[true, true, true, true, true, true, true, true, true]"));
}

TEST(V20FieldDecoder, LegacyBitpackedSignedAndUnsigned) {
  // 5 values of 3 bits, LSB first: 1, 7, 0, 5, 2 -> bits 1 0 0|1 1 1|0 0 0|1 0 1|0 1 0
  auto pack = [](const std::vector<uint64_t>& values, unsigned bits) {
    std::string out((values.size() * bits + 7) / 8, '\0');
    for (size_t i = 0; i < values.size(); ++i) {
      for (unsigned b = 0; b < bits; ++b) {
        if ((values[i] >> b) & 1) {
          const size_t bit = i * bits + b;
          out[bit / 8] = static_cast<char>(out[bit / 8] | (1 << (bit % 8)));
        }
      }
    }
    return out;
  };
  pbe::ArrayEncoding e;
  auto* bp = e.mutable_bitpacked();
  bp->set_compressed_bits_per_value(3);
  bp->set_uncompressed_bits_per_value(16);
  bp->mutable_buffer()->set_buffer_index(0);
  auto col = Column({Page(5, NoNull(e), {Buf(pack({1, 7, 0, 5, 2}, 3))})});
  EXPECT_DECODES(Leaf("f", "uint16"), std::vector<ColumnData>{col}, 5, Json(arrow::uint16(), "[1, 7, 0, 5, 2]"));
  bp->set_signed_(true);
  bp->set_uncompressed_bits_per_value(32);
  auto scol = Column({Page(5, NoNull(e), {Buf(pack({1, 7, 0, 5, 2}, 3))})});
  EXPECT_DECODES(Leaf("f", "int32"), std::vector<ColumnData>{scol}, 5, Json(arrow::int32(), "[1, -1, 0, -3, 2]"));
  // 64-bit values at an odd width cross byte boundaries.
  bp->set_signed_(false);
  bp->set_compressed_bits_per_value(61);
  bp->set_uncompressed_bits_per_value(64);
  std::vector<uint64_t> wide = {(uint64_t{1} << 60) + 12345, 1, (uint64_t{1} << 61) - 1};
  auto wcol = Column({Page(3, e, {Buf(pack(wide, 61))})});
  auto r = DecodeOne(Leaf("f", "uint64"), wcol, 3);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto expected = std::make_shared<arrow::UInt64Array>(3, Values(wide));
  ASSERT_OK_ARRAY_EQ(*r, expected);
}

TEST(V20FieldDecoder, BitpackedForNonNegFastLanes) {
  std::vector<uint32_t> values;
  for (uint32_t i = 0; i < 1500; ++i) values.push_back((i * 37) % 1000);
  std::vector<uint32_t> padded = values;
  padded.resize(2048, 0);
  const unsigned bits = 10;
  std::string packed(2 * compression::FastLanesPackedBytes(bits), '\0');
  for (int block = 0; block < 2; ++block) {
    auto st = compression::FastLanesPack<uint32_t>(
        std::span<const uint32_t>(padded.data() + block * 1024, 1024), bits,
        std::span<uint8_t>(reinterpret_cast<uint8_t*>(packed.data()) + block * compression::FastLanesPackedBytes(bits),
                           compression::FastLanesPackedBytes(bits)));
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  pbe::ArrayEncoding e;
  auto* bp = e.mutable_bitpacked_for_non_neg();
  bp->set_compressed_bits_per_value(bits);
  bp->set_uncompressed_bits_per_value(32);
  bp->mutable_buffer()->set_buffer_index(1);
  auto col = Column({Page(1500, SomeNull(Flat(1, 0), e), {Bits(std::vector<bool>(1500, true)), Buf(packed)})});
  auto r = DecodeOne(Leaf("f", "int32"), col, 1500);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto expected = std::make_shared<arrow::Int32Array>(1500, Values(values));
  ASSERT_OK_ARRAY_EQ(*r, expected);
}

// ------------------------------------------------------------ strings

TEST(V20FieldDecoder, BinaryNullAdjustment) {
  // The reference's own example: [null, "foo", "foo", null, null, null].
  auto col = Column({Page(6, StdBinary(0, 7), {Values<uint64_t>({7, 3, 6, 13, 13, 13}), Buf("foofoo")})});
  EXPECT_DECODES(Leaf("f", "string"), std::vector<ColumnData>{col}, 6,
                 Json(arrow::utf8(), R"([null, "foo", "foo", null, null, null])"));
  EXPECT_DECODES(Leaf("f", "large_binary"), std::vector<ColumnData>{col}, 6,
                 Json(arrow::large_binary(), R"([null, "foo", "foo", null, null, null])"));
}

TEST(V20FieldDecoder, BinaryEmptyStringsAndNoNulls) {
  auto col = Column({Page(4, StdBinary(0, 6), {Values<uint64_t>({0, 2, 2, 5}), Buf("abcde")})});
  EXPECT_DECODES(Leaf("f", "large_string"), std::vector<ColumnData>{col}, 4,
                 Json(arrow::large_utf8(), R"(["", "ab", "", "cde"])"));
  // All empty and null: no bytes are read at all (the bytes buffer may be empty).
  auto empty = Column({Page(3, StdBinary(0, 1), {Values<uint64_t>({0, 1, 0}), Buf("")})});
  EXPECT_DECODES(Leaf("f", "binary"), std::vector<ColumnData>{empty}, 3, Json(arrow::binary(), R"(["", null, ""])"));
}

TEST(V20FieldDecoder, BinaryCompressedBytes) {
  auto framed = compression::GeneralCompress(compression::GeneralCodec::kZstd, "hello world", 3);
  ASSERT_TRUE(framed.ok());
  auto e = BinaryEnc(NoNull(Flat(64, 0)), Compressed(8, 1, "zstd"), 12);
  auto col = Column({Page(3, e, {Values<uint64_t>({5, 6, 11}), Buf(*framed)})});
  EXPECT_DECODES(Leaf("f", "string"), std::vector<ColumnData>{col}, 3, Json(arrow::utf8(), R"(["hello", " ", "world"])"));
}

TEST(V20FieldDecoder, FixedSizeBinaryEncodingOfStrings) {
  pbe::ArrayEncoding e;
  *e.mutable_fixed_size_binary()->mutable_bytes() = NoNull(Flat(24, 1));
  e.mutable_fixed_size_binary()->set_byte_width(3);
  auto col = Column({Page(3, SomeNull(Flat(1, 0), e), {Bits({1, 0, 1}), Buf("abcxxxdef")})});
  EXPECT_DECODES(Leaf("f", "string"), std::vector<ColumnData>{col}, 3, Json(arrow::utf8(), R"(["abc", null, "def"])"));
}

TEST(V20FieldDecoder, AutoDictionaryIndexZeroIsNull) {
  pbe::ArrayEncoding e;
  auto* d = e.mutable_dictionary();
  *d->mutable_indices() = NoNull(Flat(8, 0));
  *d->mutable_items() = StdBinary(1, 6);
  d->set_num_dictionary_items(2);
  auto col = Column({Page(5, e, {Values<uint8_t>({1, 0, 2, 2, 1}), Values<uint64_t>({3, 5}), Buf("redok")})});
  EXPECT_DECODES(Leaf("f", "string"), std::vector<ColumnData>{col}, 5,
                 Json(arrow::utf8(), R"(["red", null, "ok", "ok", "red"])"));
  // Indices with validity of their own: a null index is a null value.
  *d->mutable_indices() = SomeNull(Flat(1, 3), Flat(8, 0));
  auto nulls = Column({Page(5, e, {Values<uint8_t>({1, 0, 2, 2, 1}), Values<uint64_t>({3, 5}), Buf("redok"),
                                   Bits({1, 1, 0, 1, 1})})});
  EXPECT_DECODES(Leaf("f", "large_string"), std::vector<ColumnData>{nulls}, 5,
                 Json(arrow::large_utf8(), R"(["red", null, null, "ok", "red"])"));
}

TEST(V20FieldDecoder, FsstWrapsBinary) {
  std::vector<std::string> strings = {"hello world", "hello there", "", "world hello world"};
  std::vector<uint64_t> offsets = {0};
  std::string data;
  for (const auto& s : strings) {
    data += s;
    offsets.push_back(data.size());
  }
  auto compressed = compression::FsstCompress(offsets, data);
  ASSERT_TRUE(compressed.ok()) << compressed.status().ToString();
  const auto& [table, values] = *compressed;
  std::vector<uint64_t> ends(values.offsets.begin() + 1, values.offsets.end());
  pbe::ArrayEncoding e;
  *e.mutable_fsst()->mutable_binary() = StdBinary(0, ends.back() + 1);
  e.mutable_fsst()->set_symbol_table(table);
  auto col = Column({Page(4, e, {Values(ends), Buf(values.data)})});
  EXPECT_DECODES(Leaf("f", "string"), std::vector<ColumnData>{col}, 4,
                 Json(arrow::utf8(), R"(["hello world", "hello there", "", "world hello world"])"));
}

TEST(V20FieldDecoder, ArrowDictionaryNullsLiveInItems) {
  // dict<int8, string>: items ["a", null, "b"], keys [2, 1, 0, 2].
  pbe::ArrayEncoding e;
  auto* d = e.mutable_dictionary();
  *d->mutable_indices() = NoNull(Flat(8, 0));
  *d->mutable_items() = StdBinary(1, 3);
  d->set_num_dictionary_items(3);
  auto col = Column({Page(4, e, {Values<int8_t>({2, 1, 0, 2}), Values<uint64_t>({1, 1 + 3, 2}), Buf("ab")})});
  auto r = DecodeOne(Leaf("f", "dict:string:int8:false"), col, 4);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE((*r)->ValidateFull().ok());
  const auto& dict = static_cast<const arrow::DictionaryArray&>(**r);
  EXPECT_TRUE(dict.indices()->Equals(*Json(arrow::int8(), "[2, null, 0, 2]"))) << dict.indices()->ToString();
  EXPECT_TRUE(dict.dictionary()->Equals(*Json(arrow::utf8(), R"(["a", null, "b"])")));

  // Two pages with their own dictionaries become one dictionary.
  pbe::ArrayEncoding e2 = e;
  e2.mutable_dictionary()->mutable_items()->mutable_binary()->set_null_adjustment(4);
  auto col2 = Column({Page(4, e, {Values<int8_t>({2, 1, 0, 2}), Values<uint64_t>({1, 1 + 3, 2}), Buf("ab")}),
                      Page(0, AllNull(), {}),  // empty pages are skipped
                      Page(2, e2, {Values<int8_t>({0, 2}), Values<uint64_t>({1, 2, 3}), Buf("xyz")})});
  auto r2 = DecodeOne(Leaf("f", "dict:string:int8:false"), col2, 6);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  ASSERT_TRUE((*r2)->ValidateFull().ok());
  const auto& dict2 = static_cast<const arrow::DictionaryArray&>(**r2);
  EXPECT_TRUE(dict2.indices()->Equals(*Json(arrow::int8(), "[2, null, 0, 2, 3, 5]"))) << dict2.indices()->ToString();
  EXPECT_TRUE(dict2.dictionary()->Equals(*Json(arrow::utf8(), R"(["a", null, "b", "x", "y", "z"])")));
}

// ------------------------------------------------------------ nested

TEST(V20FieldDecoder, FixedSizeListWithNullListsAndItems) {
  pbe::ArrayEncoding fsl;
  fsl.mutable_fixed_size_list()->set_dimension(2);
  *fsl.mutable_fixed_size_list()->mutable_items() = SomeNull(Flat(1, 1), Flat(32, 2));
  auto col = Column({Page(3, SomeNull(Flat(1, 0), fsl),
                          {Bits({1, 0, 1}), Bits({1, 0, 1, 1, 1, 1}), Values<float>({1, 0, 3, 4, 5, 6})})});
  auto type = arrow::fixed_size_list(arrow::field("item", arrow::float32()), 2);
  EXPECT_DECODES(Leaf("f", "fixed_size_list:float:2"), std::vector<ColumnData>{col}, 3,
                 Json(type, "[[1, null], null, [5, 6]]"));
}

TEST(V20FieldDecoder, PackedStruct) {
  Field f = Parent("f", "struct", {Leaf("u", "uint32", 1), Leaf("v", "double", 2),
                                   Leaf("w", "fixed_size_list:int8:2", 3)});
  f.metadata["packed"] = "true";
  EXPECT_EQ(NumColumns(f), 1);
  std::string rows;
  auto add = [&](uint32_t u, double v, int8_t w0, int8_t w1) {
    rows.append(reinterpret_cast<const char*>(&u), 4);
    rows.append(reinterpret_cast<const char*>(&v), 8);
    rows.push_back(static_cast<char>(w0));
    rows.push_back(static_cast<char>(w1));
  };
  add(1, 0.5, -1, 2);
  add(4000000000u, -2.25, 7, 8);
  pbe::ArrayEncoding e;
  e.mutable_packed_struct()->mutable_buffer()->set_buffer_index(0);
  *e.mutable_packed_struct()->add_inner() = NoNull(Flat(32, 0));
  auto col = Column({Page(2, e, {Buf(rows)})});
  auto type = ArrowTypeFromField(f).ValueOrDie();
  EXPECT_DECODES(f, std::vector<ColumnData>{col}, 2,
                 Json(type, R"([{"u": 1, "v": 0.5, "w": [-1, 2]}, {"u": 4000000000, "v": -2.25, "w": [7, 8]}])"));
}

TEST(V20FieldDecoder, StructHeaderAndChildren) {
  Field f = Parent("f", "struct", {Leaf("a", "int32", 1), Leaf("b", "string", 2)});
  EXPECT_EQ(NumColumns(f), 3);
  std::vector<ColumnData> cols = {
      Column({Page(3, StructHeader(), {})}),
      Column({Page(2, NoNull(Flat(32, 0)), {Values<int32_t>({1, 2})}), Page(1, AllNull(), {})}),
      Column({Page(3, StdBinary(0, 3), {Values<uint64_t>({1, 2, 2 + 3}), Buf("xy")})}),
  };
  auto type = ArrowTypeFromField(f).ValueOrDie();
  auto expected = Json(type, R"([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": null, "b": null}])");
  EXPECT_DECODES(f, cols, 3, expected);
  // 0.16 wrote a header page per flush, each counting every row seen so far.
  cols[0] = Column({Page(2, StructHeader(), {}), Page(3, StructHeader(), {})});
  EXPECT_DECODES(f, cols, 3, expected);
}

// list<int32> in two offsets pages whose items lie in three item pages with
// other boundaries: page 0 lists [1,2], null, [], [3]; page 1 lists [4,5,6], null.
TEST(V20FieldDecoder, ListPagesDoNotAlignWithItemPages) {
  Field f = Parent("f", "list", {Leaf("item", "int32", 1)});
  EXPECT_EQ(NumColumns(f), 2);
  // Page 0: ends 2, 2(null), 2, 3; 3 items, adjustment 4.
  // Page 1: ends 3, 3(null); 3 items, adjustment 4.
  std::vector<ColumnData> cols = {
      Column({Page(4, ListEnc(NoNull(Flat(64, 0)), 4, 3), {Values<uint64_t>({2, 6, 2, 3})}),
              Page(2, ListEnc(NoNull(Flat(64, 0)), 4, 3), {Values<uint64_t>({3, 7})})}),
      Column({Page(2, NoNull(Flat(32, 0)), {Values<int32_t>({1, 2})}),
              Page(3, NoNull(Flat(32, 0)), {Values<int32_t>({3, 4, 5})}),
              Page(1, NoNull(Flat(32, 0)), {Values<int32_t>({6})})}),
  };
  auto type = ArrowTypeFromField(f).ValueOrDie();
  EXPECT_DECODES(f, cols, 6, Json(type, "[[1, 2], null, [], [3], [4, 5, 6], null]"));
  // The same as a large_list.
  Field lf = Parent("f", "large_list", {Leaf("item", "int32", 1)});
  EXPECT_DECODES(lf, cols, 6, Json(ArrowTypeFromField(lf).ValueOrDie(), "[[1, 2], null, [], [3], [4, 5, 6], null]"));
}

TEST(V20FieldDecoder, NullListWithItemsKeepsThem) {
  // Arrow allows a null list over items; the writer keeps their span.
  Field f = Parent("f", "list", {Leaf("item", "int8", 1)});
  std::vector<ColumnData> cols = {
      Column({Page(2, ListEnc(NoNull(Flat(64, 0)), 4, 3), {Values<uint64_t>({2 + 4, 3})})}),
      Column({Page(3, NoNull(Flat(8, 0)), {Values<int8_t>({1, 2, 3})})}),
  };
  auto r = Decode(f, cols, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& list = static_cast<const arrow::ListArray&>(**r);
  EXPECT_TRUE(list.IsNull(0));
  EXPECT_EQ(list.value_offset(1), 2);
  EXPECT_TRUE(list.value_slice(1)->Equals(*Json(arrow::int8(), "[3]")));
}

TEST(V20FieldDecoder, ListOfStructOfList) {
  Field f = Parent("f", "list.struct",
                   {Parent("item", "struct", {Leaf("a", "int32", 2), Parent("b", "list", {Leaf("item", "string", 4)}, 3)},
                           1)});
  EXPECT_EQ(NumColumns(f), 5);
  // [[{a:1, b:["x"]}, {a:2, b:null}], [], [{a:3, b:["y","z"]}]]
  std::vector<ColumnData> cols = {
      Column({Page(3, ListEnc(NoNull(Flat(64, 0)), 4, 3), {Values<uint64_t>({2, 2, 3})})}),
      Column({Page(3, StructHeader(), {})}),
      Column({Page(3, NoNull(Flat(32, 0)), {Values<int32_t>({1, 2, 3})})}),
      Column({Page(2, ListEnc(NoNull(Flat(64, 0)), 4, 1), {Values<uint64_t>({1, 1 + 4})}),
              Page(1, ListEnc(NoNull(Flat(64, 0)), 3, 2), {Values<uint64_t>({2})})}),
      Column({Page(3, StdBinary(0, 4), {Values<uint64_t>({1, 2, 3}), Buf("xyz")})}),
  };
  auto type = ArrowTypeFromField(f).ValueOrDie();
  EXPECT_DECODES(f, cols, 3,
                 Json(type, R"([[{"a": 1, "b": ["x"]}, {"a": 2, "b": null}], [], [{"a": 3, "b": ["y", "z"]}]])"));
}

TEST(V20FieldDecoder, ZeroRowsAndEmptyPages) {
  // Pages of 0 values are skipped without being parsed.
  PageData junk;
  junk.length = 0;
  junk.encoding_type_url = "nonsense";
  junk.encoding = "\xff\xff";
  EXPECT_DECODES(Leaf("f", "int32"), std::vector<ColumnData>{Column({junk})}, 0, Json(arrow::int32(), "[]"));
  EXPECT_DECODES(Leaf("f", "string"), std::vector<ColumnData>{Column({})}, 0, Json(arrow::utf8(), "[]"));
  Field s = Parent("f", "struct", {Leaf("a", "float", 1)});
  std::vector<ColumnData> scols = {Column({Page(0, StructHeader(), {})}), Column({})};
  EXPECT_DECODES(s, scols, 0, Json(ArrowTypeFromField(s).ValueOrDie(), "[]"));
  Field l = Parent("f", "list", {Leaf("item", "int64", 1)});
  std::vector<ColumnData> lcols = {Column({}), Column({})};
  EXPECT_DECODES(l, lcols, 0, Json(ArrowTypeFromField(l).ValueOrDie(), "[]"));
  EXPECT_DECODES(Leaf("f", "dict:string:int32:false"), std::vector<ColumnData>{Column({})}, 0,
                 Json(arrow::dictionary(arrow::int32(), arrow::utf8()), "[]"));
}

// Before pylance 0.16 strings were list<uint8>: an offsets column and a uint8
// items column. Only the columns tell; NumColumns(field, columns) sees it.
TEST(V20FieldDecoder, LegacyListOfBytesStrings) {
  Field f = Leaf("f", "string");
  std::vector<ColumnData> cols = {
      Column({Page(3, ListEnc(NoNull(Flat(64, 0)), 6, 5), {Values<uint64_t>({2, 2 + 6, 5})})}),
      Column({Page(5, NoNull(Flat(8, 0)), {Buf("abxyz")})}),
      Column({Page(3, NoNull(Flat(32, 0)), {Values<int32_t>({1, 2, 3})})}),  // the next field
  };
  EXPECT_EQ(NumColumns(f), 1);
  EXPECT_EQ(NumColumns(f, cols), 2);
  EXPECT_EQ(NumColumns(f, std::span<const ColumnData>(cols).subspan(2)), 1);
  Field s = Parent("s", "struct", {f, Leaf("n", "int32", 1)});
  std::vector<ColumnData> scols = {Column({Page(3, StructHeader(), {})}), cols[0], cols[1], cols[2]};
  EXPECT_EQ(NumColumns(s, scols), 4);
  cols.pop_back();
  EXPECT_DECODES(f, cols, 3, Json(arrow::utf8(), R"(["ab", null, "xyz"])"));
  EXPECT_DECODES(Leaf("f", "large_binary"), cols, 3, Json(arrow::large_binary(), R"(["ab", null, "xyz"])"));
  EXPECT_DECODES(s, scols, 3, Json(ArrowTypeFromField(s).ValueOrDie(),
                                   R"([{"f": "ab", "n": 1}, {"f": null, "n": 2}, {"f": "xyz", "n": 3}])"));
}

// ------------------------------------------------------------------ blobs

TEST(V20FieldDecoder, BlobColumn) {
  Field f = Leaf("f", "large_binary");
  f.metadata["lance-encoding:blob"] = "true";
  std::string rows;
  auto add = [&](uint64_t position, uint64_t size) {
    rows.append(reinterpret_cast<const char*>(&position), 8);
    rows.append(reinterpret_cast<const char*>(&size), 8);
  };
  add(10, 3);  // "abc"
  add(1, 0);   // null
  add(0, 0);   // empty
  add(20, 2);  // "xy"
  pbe::ArrayEncoding e;
  e.mutable_packed_struct()->mutable_buffer()->set_buffer_index(0);
  ColumnData col = Column({Page(4, e, {Buf(rows)})});
  pbe::ColumnEncoding blob;
  blob.mutable_blob()->mutable_inner()->mutable_values();
  col.encoding = blob.SerializeAsString();
  std::string file(32, '.');
  file.replace(10, 3, "abc");
  file.replace(20, 2, "xy");
  FileRangeReader reader = [&](uint64_t position, uint64_t size) -> Result<std::shared_ptr<arrow::Buffer>> {
    if (position + size > file.size()) return Status::IOError("out of file");
    return Buf(file.substr(position, size));
  };
  auto r = DecodeField(f, std::vector<ColumnData>{col}, 4, arrow::default_memory_pool(), reader);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_OK_ARRAY_EQ(*r, Json(arrow::large_binary(), R"(["abc", null, "", "xy"])"));

  auto descriptions = DecodeBlobDescriptions(f, col, 4, arrow::default_memory_pool());
  ASSERT_TRUE(descriptions.ok()) << descriptions.status().ToString();
  auto desc_type = arrow::struct_({arrow::field("position", arrow::uint64()), arrow::field("size", arrow::uint64())});
  ASSERT_OK_ARRAY_EQ(*descriptions, Json(desc_type, R"([{"position": 10, "size": 3}, {"position": 1, "size": 0},
                                                       {"position": 0, "size": 0}, {"position": 20, "size": 2}])"));

  auto no_reader = Decode(f, {col}, 4);
  ExpectError(no_reader, "FileRangeReader");
  EXPECT_TRUE(no_reader.status().IsNotImplemented());
  FileRangeReader short_reader = [&](uint64_t, uint64_t) -> Result<std::shared_ptr<arrow::Buffer>> {
    return Buf("a");
  };
  ExpectError(DecodeField(f, std::vector<ColumnData>{col}, 4, arrow::default_memory_pool(), short_reader),
              "should have 3 bytes");
}

// ------------------------------------------------------------ corruption

TEST(V20FieldDecoderCorrupt, BufferTooShort) {
  auto col = Column({Page(4, NoNull(Flat(32, 0)), {Values<int32_t>({1, 2, 3})})});
  ExpectError(DecodeOne(Leaf("f", "int32"), col, 4), "Flat buffer has 12 bytes, 16 needed");
  auto validity = Column({Page(20, SomeNull(Flat(1, 0), Flat(8, 1)), {Buf("\xff"), Buf(std::string(20, 'a'))})});
  ExpectError(DecodeOne(Leaf("f", "uint8"), validity, 20), "Flat buffer has 1 bytes, 3 needed");
  pbe::ArrayEncoding ps;
  ps.mutable_packed_struct()->mutable_buffer()->set_buffer_index(0);
  Field f = Parent("f", "struct", {Leaf("a", "int64", 1)});
  f.metadata["lance-encoding:packed"] = "true";
  ExpectError(DecodeOne(f, Column({Page(2, ps, {Buf("12345678")})}), 2), "PackedStruct buffer has 8 bytes, 16 needed");
}

TEST(V20FieldDecoderCorrupt, MissingBuffers) {
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, NoNull(Flat(32, 2)), {Values<int32_t>({1})})}), 1),
              "page buffer 2 does not exist (the page has 1 buffers)");
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, Flat(32, 0, pbe::Buffer::column), {})}), 1),
              "column buffer 0 does not exist");
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, Flat(32, 0, pbe::Buffer::file), {})}), 1),
              "file-level buffers");
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, NoNull(Flat(32, 0)), {nullptr})}), 1),
              "was not loaded");
  pbe::ArrayEncoding no_buffer;
  no_buffer.mutable_flat()->set_bits_per_value(32);
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, no_buffer, {Values<int32_t>({1})})}), 1),
              "Flat has no buffer");
}

TEST(V20FieldDecoderCorrupt, BadBitsPerValue) {
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, NoNull(Flat(0, 0)), {Values<int32_t>({1})})}), 1),
              "Flat has 0 bits per value where 32 are expected");
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, NoNull(Flat(4096, 0)), {Buf(std::string(512, 'x'))})}), 1),
              "Flat has 4096 bits per value where 32 are expected");
  pbe::ArrayEncoding bp;
  bp.mutable_bitpacked()->set_compressed_bits_per_value(40);
  bp.mutable_bitpacked()->set_uncompressed_bits_per_value(32);
  bp.mutable_bitpacked()->mutable_buffer();
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, bp, {Buf(std::string(8, 'x'))})}), 1),
              "bit-packed width 40 is outside 1..32");
  bp.mutable_bitpacked()->set_compressed_bits_per_value(0);
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, bp, {Buf(std::string(8, 'x'))})}), 1),
              "bit-packed width 0");
  pbe::ArrayEncoding fl;
  fl.mutable_bitpacked_for_non_neg()->set_compressed_bits_per_value(5);
  fl.mutable_bitpacked_for_non_neg()->set_uncompressed_bits_per_value(16);
  fl.mutable_bitpacked_for_non_neg()->mutable_buffer();
  ExpectError(DecodeOne(Leaf("f", "uint16"), Column({Page(3, fl, {Buf(std::string(100, 'x'))})}), 3),
              "FastLanes buffer has 100 bytes, 640 needed");
  pbe::ArrayEncoding c;
  c.mutable_constant()->set_value("abc");
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(2, c, {})}), 2), "Constant value has 3 bytes where 4");
}

TEST(V20FieldDecoderCorrupt, BinaryOffsets) {
  auto decreasing = Column({Page(3, StdBinary(0, 10), {Values<uint64_t>({3, 2, 5}), Buf("abcde")})});
  ExpectError(DecodeOne(Leaf("f", "string"), decreasing, 3), "Binary offsets decrease at value 1 (3 then 2)");
  auto past_data = Column({Page(2, StdBinary(0, 100), {Values<uint64_t>({3, 50}), Buf("abcde")})});
  ExpectError(DecodeOne(Leaf("f", "string"), past_data, 2), "Flat buffer has 5 bytes, 50 needed");
  auto past_adjustment = Column({Page(1, StdBinary(0, 4), {Values<uint64_t>({9}), Buf("abcdefghi")})});
  ExpectError(DecodeOne(Leaf("f", "string"), past_adjustment, 1), "past twice the null adjustment");
  auto too_big = Column({Page(1, StdBinary(0, uint64_t{1} << 62), {Values<uint64_t>({uint64_t{1} << 41}), Buf("")})});
  ExpectError(DecodeOne(Leaf("f", "string"), too_big, 1), "absurd value count");
}

TEST(V20FieldDecoderCorrupt, DictionaryIndexOutOfRange) {
  pbe::ArrayEncoding e;
  auto* d = e.mutable_dictionary();
  *d->mutable_indices() = NoNull(Flat(8, 0));
  *d->mutable_items() = StdBinary(1, 3);
  d->set_num_dictionary_items(2);
  auto col = Column({Page(2, e, {Values<uint8_t>({1, 3}), Values<uint64_t>({1, 2}), Buf("ab")})});
  ExpectError(DecodeOne(Leaf("f", "string"), col, 2), "dictionary index 3 of value 1 is out of range (2 items");
  auto arrow_col = Column({Page(2, e, {Values<int8_t>({1, 2}), Values<uint64_t>({1, 2}), Buf("ab")})});
  ExpectError(DecodeOne(Leaf("f", "dict:string:int8:false"), arrow_col, 2),
              "dictionary key 2 of value 1 is out of range (2 items)");
  auto negative = Column({Page(2, e, {Values<int8_t>({1, -1}), Values<uint64_t>({1, 2}), Buf("ab")})});
  ExpectError(DecodeOne(Leaf("f", "dict:string:int8:false"), negative, 2), "dictionary key -1 of value 1 is negative");
}

TEST(V20FieldDecoderCorrupt, ListOffsets) {
  Field f = Parent("f", "list", {Leaf("item", "int32", 1)});
  auto items = Column({Page(3, NoNull(Flat(32, 0)), {Values<int32_t>({1, 2, 3})})});
  auto run = [&](const pbe::ArrayEncoding& e, std::vector<uint64_t> offsets) {
    std::vector<ColumnData> cols = {Column({Page(offsets.size(), e, {Values(offsets)})}), items};
    return Decode(f, cols, offsets.size());
  };
  ExpectError(run(ListEnc(NoNull(Flat(64, 0)), 4, 3), {2, 1}), "list offsets decrease at list 1 (2 then 1)");
  ExpectError(run(ListEnc(NoNull(Flat(64, 0)), 4, 3), {2, 9}), "past twice the null offset adjustment");
  ExpectError(run(ListEnc(NoNull(Flat(64, 0)), 0, 3), {2, 3}), "null_offset_adjustment is 0");
  ExpectError(run(ListEnc(NoNull(Flat(64, 0)), 10, 3), {2, 5}), "list offset 5 of list 1 is past the page's 3 items");
  ExpectError(run(ListEnc(NoNull(Flat(64, 0)), 10, 5), {2, 5}), "pages hold 3 values but 5 are expected", "f.item");
  std::vector<ColumnData> not_list = {Column({Page(1, NoNull(Flat(64, 0)), {Values<uint64_t>({3})})}), items};
  ExpectError(Decode(f, not_list, 1), "expected a list offsets page, found a nullable encoding");
}

TEST(V20FieldDecoderCorrupt, UnknownOrBrokenEncodings) {
  // A oneof case from the future (field 99) parses as "not set".
  pbe::ArrayEncoding unknown;
  unknown.GetReflection()->MutableUnknownFields(&unknown)->AddVarint(99, 1);
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, unknown, {})}), 1), "empty or of an unknown kind");
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, NoNull(unknown), {})}), 1), "empty or of an unknown kind");
  pbe::ArrayEncoding empty_nullable;
  empty_nullable.mutable_nullable();
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, empty_nullable, {})}), 1), "no nullability case");
  PageData garbage = Page(1, NoNull(Flat(32, 0)), {Values<int32_t>({1})});
  garbage.encoding = "\x0a\xff\xff\xff";
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({garbage}), 1), "not a valid ArrayEncoding");
  PageData wrong_url = Page(1, NoNull(Flat(32, 0)), {Values<int32_t>({1})});
  wrong_url.encoding_type_url = "/lance.encodings21.PageLayout";
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({wrong_url}), 1), "expected '/lance.encodings.ArrayEncoding'");
  pbe::ArrayEncoding rle;
  rle.mutable_rle()->set_bits_per_value(32);
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, rle, {})}), 1), "rle is not a 2.0 page encoding");
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, StdBinary(0, 1), {Values<uint64_t>({0}), Buf("")})}), 1),
              "Binary encoding in a column of type int32");
  ExpectError(DecodeOne(Leaf("f", "string"), Column({Page(1, NoNull(Flat(8, 0)), {Buf("a")})}), 1),
              "flat encoding in a column of type string");
  auto zstd_junk = Column({Page(2, NoNull(Compressed(32, 0, "zstd")), {Buf(std::string(12, '\x07'))})});
  ExpectError(DecodeOne(Leaf("f", "int32"), zstd_junk, 2), "zstd");
  auto brotli = Column({Page(2, NoNull(Compressed(32, 0, "brotli")), {Buf(std::string(8, '\0'))})});
  ExpectError(DecodeOne(Leaf("f", "int32"), brotli, 2), "unknown compression scheme 'brotli'");
  pbe::ArrayEncoding fsl;
  fsl.mutable_fixed_size_list()->set_dimension(3);
  *fsl.mutable_fixed_size_list()->mutable_items() = Flat(32, 0);
  ExpectError(DecodeOne(Leaf("f", "fixed_size_list:float:2"), Column({Page(1, fsl, {Values<float>({1, 2, 3})})}), 1),
              "FixedSizeList dimension 3 but the type has 2");
  // An absurdly deep encoding is refused, not recursed into.
  pbe::ArrayEncoding deep = Flat(32, 0);
  for (int i = 0; i < 30; ++i) deep = NoNull(deep);
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, deep, {Values<int32_t>({1})})}), 1), "nested deeper");
  // Deeper still, protobuf's own recursion limit refuses the message.
  for (int i = 0; i < 20; ++i) deep = NoNull(deep);
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(1, deep, {Values<int32_t>({1})})}), 1),
              "not a valid ArrayEncoding");
  // Sizes whose products overflow 64 bits.
  pbe::ArrayEncoding wide;
  wide.mutable_fixed_size_list()->set_dimension(2147483647);
  *wide.mutable_fixed_size_list()->mutable_items() = Flat(8, 0);
  ExpectError(DecodeOne(Leaf("f", "fixed_size_list:int8:2147483647"), Column({Page(uint64_t{1} << 34, wide, {Buf("x")})}),
                        uint64_t{1} << 34),
              "is absurd");
  // A page claiming an absurd length.
  ExpectError(DecodeOne(Leaf("f", "int32"), Column({Page(uint64_t{1} << 50, AllNull(), {})}), uint64_t{1} << 50),
              "absurd");
}

TEST(V20FieldDecoderCorrupt, ColumnShapes) {
  auto col = Column({Page(2, NoNull(Flat(32, 0)), {Values<int32_t>({1, 2})})});
  ExpectError(DecodeOne(Leaf("f", "int32"), col, 3), "the column's pages hold 2 values but 3 are expected");
  ExpectError(Decode(Leaf("f", "int32"), {col, col}, 2), "needs 1 columns, got 2");
  Field s = Parent("f", "struct", {Leaf("a", "int32", 1)});
  ExpectError(Decode(s, {Column({Page(2, NoNull(Flat(32, 0)), {Values<int32_t>({1, 2})})}), col}, 2),
              "expected a struct header page, found a nullable encoding");
  pbe::ArrayEncoding ps;
  ps.mutable_packed_struct()->mutable_buffer();
  ExpectError(Decode(s, {Column({Page(2, ps, {Buf(std::string(8, 'x'))})}), col}, 2),
              "packed struct but the field's metadata does not mark it packed");
  ExpectError(Decode(s, {Column({Page(1, StructHeader(), {})}), col}, 2), "struct header holds 1 rows but 2");
  // A nested failure names the innermost field by its path.
  ExpectError(Decode(s, {Column({Page(2, StructHeader(), {})}), Column({Page(2, NoNull(Flat(32, 0)), {Buf("")})})}, 2),
              "Flat buffer has 0 bytes", "f.a");
  ColumnData zone = col;
  pbe::ColumnEncoding zone_encoding;
  zone_encoding.mutable_zone_index();
  zone.encoding = zone_encoding.SerializeAsString();
  ExpectError(DecodeOne(Leaf("f", "int32"), zone, 2), "zone-indexed");
  ColumnData bad_column = col;
  bad_column.encoding = "\xff";
  ExpectError(DecodeOne(Leaf("f", "int32"), bad_column, 2), "not a valid ColumnEncoding");
}

}  // namespace
}  // namespace lance::file::v2_0
