// Round trips of the 2.1/2.2 structural encoders through our decoders:
// every type the reader handles, random nulls at every level, many appends,
// page splitting by the cache (max_page_bytes does not split 2.1+ pages).
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <arrow/array.h>
#include <arrow/array/concatenate.h>
#include <arrow/array/util.h>
#include <arrow/builder.h>
#include <arrow/compute/cast.h>
#include <arrow/json/from_string.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>
#include <gtest/gtest.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/field_encoder.h"
#include "lance/file/v2_1/field_decoder.h"
#include "lance/file/v2_1/page.h"
#include "lance/schema.h"

namespace lance::file {
namespace {

using arrow::Array;
using arrow::DataType;

class RandomArrays {
 public:
  explicit RandomArrays(uint64_t seed) : rng_(seed) {}

  std::shared_ptr<arrow::Buffer> Validity(int64_t n, double null_prob, int64_t* null_count) {
    *null_count = 0;
    if (null_prob <= 0) return nullptr;
    auto buf = *arrow::AllocateBuffer(arrow::bit_util::BytesForBits(n));
    std::memset(buf->mutable_data(), 0, buf->size());
    std::bernoulli_distribution null(null_prob);
    for (int64_t i = 0; i < n; ++i) {
      if (null(rng_)) {
        ++*null_count;
      } else {
        arrow::bit_util::SetBit(buf->mutable_data(), i);
      }
    }
    return std::shared_ptr<arrow::Buffer>(std::move(buf));
  }

  std::shared_ptr<arrow::Buffer> RandomBytes(int64_t n) {
    auto buf = *arrow::AllocateBuffer(n);
    for (int64_t i = 0; i < n; ++i) buf->mutable_data()[i] = static_cast<uint8_t>(rng_());
    return std::shared_ptr<arrow::Buffer>(std::move(buf));
  }

  // Offsets of `n` lists/strings with lengths in [0, max_len].
  template <typename Offset>
  std::shared_ptr<arrow::Buffer> Offsets(int64_t n, int64_t max_len, int64_t* total) {
    auto buf = *arrow::AllocateBuffer((n + 1) * sizeof(Offset));
    auto* o = reinterpret_cast<Offset*>(buf->mutable_data());
    std::uniform_int_distribution<int64_t> len(0, max_len);
    o[0] = 0;
    for (int64_t i = 0; i < n; ++i) o[i + 1] = static_cast<Offset>(o[i] + len(rng_));
    *total = o[n];
    return std::shared_ptr<arrow::Buffer>(std::move(buf));
  }

  std::shared_ptr<Array> Make(const std::shared_ptr<DataType>& type, int64_t n, double null_prob) {
    int64_t nulls = 0;
    std::shared_ptr<arrow::Buffer> validity;
    if (type->id() != arrow::Type::NA) validity = Validity(n, null_prob, &nulls);
    std::shared_ptr<arrow::ArrayData> data;
    switch (type->id()) {
      case arrow::Type::NA:
        return *arrow::MakeArrayOfNull(type, n);
      case arrow::Type::BOOL:
        data = arrow::ArrayData::Make(type, n, {validity, RandomBytes(arrow::bit_util::BytesForBits(n))}, nulls);
        break;
      case arrow::Type::STRING:
      case arrow::Type::BINARY:
      case arrow::Type::LARGE_STRING:
      case arrow::Type::LARGE_BINARY: {
        const bool large = type->id() == arrow::Type::LARGE_STRING || type->id() == arrow::Type::LARGE_BINARY;
        int64_t total = 0;
        auto offsets = large ? Offsets<int64_t>(n, max_string_, &total) : Offsets<int32_t>(n, max_string_, &total);
        auto bytes = *arrow::AllocateBuffer(total);
        std::uniform_int_distribution<int> letter('a', 'e');  // few letters: repeats for dictionaries
        for (int64_t i = 0; i < total; ++i) bytes->mutable_data()[i] = static_cast<uint8_t>(letter(rng_));
        data = arrow::ArrayData::Make(type, n, {validity, offsets, std::shared_ptr<arrow::Buffer>(std::move(bytes))},
                                      nulls);
        break;
      }
      case arrow::Type::LIST:
      case arrow::Type::LARGE_LIST:
      case arrow::Type::MAP: {
        int64_t total = 0;
        auto offsets = type->id() == arrow::Type::LARGE_LIST ? Offsets<int64_t>(n, 4, &total)
                                                              : Offsets<int32_t>(n, 4, &total);
        auto child_type = type->field(0)->type();
        std::shared_ptr<Array> child;
        if (type->id() == arrow::Type::MAP) {
          auto keys = Make(child_type->field(0)->type(), total, 0);
          auto items = Make(child_type->field(1)->type(), total, null_prob);
          child = std::make_shared<arrow::StructArray>(child_type, total, arrow::ArrayVector{keys, items});
        } else {
          child = Make(child_type, total, null_prob);
        }
        data = arrow::ArrayData::Make(type, n, {validity, offsets}, {child->data()}, nulls);
        break;
      }
      case arrow::Type::FIXED_SIZE_LIST: {
        const auto& fsl = static_cast<const arrow::FixedSizeListType&>(*type);
        auto child = Make(fsl.value_type(), n * fsl.list_size(), null_prob / 2);
        data = arrow::ArrayData::Make(type, n, {validity}, {child->data()}, nulls);
        break;
      }
      case arrow::Type::STRUCT: {
        std::vector<std::shared_ptr<arrow::ArrayData>> children;
        for (const auto& f : type->fields()) children.push_back(Make(f->type(), n, null_prob)->data());
        data = arrow::ArrayData::Make(type, n, {validity}, children, nulls);
        break;
      }
      default: {
        const int width = type->byte_width();
        auto values = RandomBytes(n * width);
        if (type->id() == arrow::Type::DECIMAL128 || type->id() == arrow::Type::DECIMAL256) {
          // small values (within any precision >= 10), sign-extended
          std::uniform_int_distribution<int64_t> small(-999999999, 999999999);
          for (int64_t i = 0; i < n; ++i) {
            const int64_t v = small(rng_);
            uint8_t* dst = values->mutable_data() + i * width;
            std::memcpy(dst, &v, 8);
            std::memset(dst + 8, v < 0 ? 0xFF : 0, width - 8);
          }
        }
        if (type->id() == arrow::Type::TIME32) {
          auto* v = reinterpret_cast<uint32_t*>(values->mutable_data());
          for (int64_t i = 0; i < n; ++i) v[i] %= 86400000u;  // ms in a day (the test uses ms)
        }
        if (type->id() == arrow::Type::TIME64) {
          auto* v = reinterpret_cast<uint64_t*>(values->mutable_data());
          for (int64_t i = 0; i < n; ++i) v[i] %= 86400000000000ull;  // ns in a day
        }
        if (type->id() == arrow::Type::DATE64) {
          // date64 values must be whole days
          auto* v = reinterpret_cast<int64_t*>(values->mutable_data());
          for (int64_t i = 0; i < n; ++i) v[i] = (v[i] % 100000) * 86400000LL;
        }
        data = arrow::ArrayData::Make(type, n, {validity, values}, nulls);
      }
    }
    return arrow::MakeArray(data);
  }

  int64_t max_string_ = 12;

 private:
  std::mt19937_64 rng_;
};

struct RoundTrip {
  std::shared_ptr<Array> decoded;
  std::vector<ColumnData> columns;
};

Result<RoundTrip> EncodeDecode(const std::shared_ptr<Array>& array, FileVersion version, int slices,
                               EncoderOptions options = {},
                               std::map<std::string, std::string> metadata = {}) {
  auto arrow_schema = arrow::schema({arrow::field("f", array->type(), true)});
  LANCE_ASSIGN_OR_RAISE(Schema schema, Schema::FromArrow(*arrow_schema));
  Field field = schema.fields[0];
  for (const auto& [k, v] : metadata) field.metadata[k] = v;
  options.version = version;
  LANCE_ASSIGN_OR_RAISE(auto encoder, MakeFieldEncoderV2_1(field, 0, options));
  RoundTrip out;
  out.columns.resize(encoder->num_columns());
  auto take = [&](std::vector<EncodedPage> pages) -> Status {
    for (auto& p : pages) {
      if (p.column_index >= out.columns.size()) return Status::Invalid("page for column ", p.column_index);
      out.columns[p.column_index].pages.push_back(std::move(p.page));
    }
    return Status::OK();
  };
  const int64_t n = array->length();
  int64_t start = 0;
  for (int s = 0; s < slices; ++s) {
    const int64_t end = s + 1 == slices ? n : n * (s + 1) / slices;
    LANCE_ASSIGN_OR_RAISE(auto pages, encoder->Append(array->Slice(start, end - start)));
    LANCE_RETURN_NOT_OK(take(std::move(pages)));
    start = end;
  }
  LANCE_ASSIGN_OR_RAISE(auto pages, encoder->Flush());
  LANCE_RETURN_NOT_OK(take(std::move(pages)));
  LANCE_ASSIGN_OR_RAISE(auto finished, encoder->FinishColumns());
  for (size_t c = 0; c < finished.size(); ++c) {
    out.columns[c].encoding_type_url = finished[c].encoding_type_url;
    out.columns[c].encoding = finished[c].encoding;
  }
  LANCE_ASSIGN_OR_RAISE(out.decoded, v2_1::DecodeField(field, out.columns, static_cast<uint64_t>(n), version,
                                                       arrow::default_memory_pool()));
  return out;
}

void ExpectRoundTrip(const std::shared_ptr<Array>& array, FileVersion version, int slices = 3,
                     EncoderOptions options = {}, std::map<std::string, std::string> metadata = {}) {
  auto result = EncodeDecode(array, version, slices, options, metadata);
  ASSERT_TRUE(result.ok()) << array->type()->ToString() << ": " << result.status().ToString();
  auto equal = arrow::EqualOptions::Defaults().nans_equal(true);
  ASSERT_TRUE(result->decoded->Equals(*array, equal))
      << array->type()->ToString() << "\nexpected " << array->ToString().substr(0, 2000) << "\ngot "
      << result->decoded->ToString().substr(0, 2000);
}

std::string LayoutOf(const PageData& page) {
  v2_1::pb21::PageLayout layout;
  EXPECT_TRUE(layout.ParseFromString(page.encoding));
  switch (layout.layout_case()) {
    case v2_1::pb21::PageLayout::kMiniBlockLayout: return "mini_block";
    case v2_1::pb21::PageLayout::kFullZipLayout: return "full_zip";
    case v2_1::pb21::PageLayout::kConstantLayout: return "constant";
    default: return "other";
  }
}

std::vector<std::shared_ptr<DataType>> AllTypes() {
  using namespace arrow;
  auto item_struct = struct_({field("x", list(int64())), field("y", boolean())});
  return {
      int8(), int16(), int32(), int64(), uint8(), uint16(), uint32(), uint64(),
      float16(), float32(), float64(), boolean(),
      decimal128(10, 2), decimal256(40, 5), date32(), date64(),
      time32(TimeUnit::MILLI), time64(TimeUnit::NANO), timestamp(TimeUnit::MICRO),
      timestamp(TimeUnit::NANO, "UTC"), duration(TimeUnit::MILLI),
      fixed_size_binary(7), fixed_size_binary(300),
      utf8(), binary(), large_utf8(), large_binary(), null(),
      list(int32()), large_list(utf8()), list(list(int16())), list(boolean()),
      fixed_size_list(float32(), 8), fixed_size_list(float32(), 128), fixed_size_list(int8(), 3),
      fixed_size_list(fixed_size_list(int16(), 2), 3),
      struct_({field("a", int32()), field("b", utf8())}),
      struct_({field("s", struct_({field("t", int64())}))}),
      list(item_struct), map(utf8(), int32()), list(fixed_size_list(float64(), 4)),
      struct_({field("l", list(utf8())), field("f", float64())}),
  };
}

class EncoderTypes : public ::testing::TestWithParam<std::tuple<FileVersion, uint64_t>> {};

TEST_P(EncoderTypes, EveryTypeRoundTrips) {
  const auto [version, seed] = GetParam();
  for (const auto& type : AllTypes()) {
    if (version == FileVersion::kV2_1 && type->id() == arrow::Type::MAP) continue;
    for (double null_prob : {0.0, 0.1, 0.6}) {
      RandomArrays gen(seed);
      auto array = gen.Make(type, 700, null_prob);
      ExpectRoundTrip(array, version);
      if (HasFatalFailure()) return;
    }
  }
}

// As in the reference, 2.1+ pages are not cut by max_page_bytes (only the
// cache ends them): a tiny limit still gives one page per column.
TEST_P(EncoderTypes, MaxPageBytesDoesNotSplitPages) {
  const auto [version, seed] = GetParam();
  for (const auto& type : AllTypes()) {
    if (version == FileVersion::kV2_1 && type->id() == arrow::Type::MAP) continue;
    RandomArrays gen(seed);
    auto array = gen.Make(type, 500, 0.2);
    EncoderOptions options;
    options.max_page_bytes = 256;
    auto result = EncodeDecode(array, version, 4, options);
    ASSERT_TRUE(result.ok()) << type->ToString() << ": " << result.status().ToString();
    EXPECT_TRUE(result->decoded->Equals(*array, arrow::EqualOptions::Defaults().nans_equal(true)))
        << type->ToString();
    EXPECT_EQ(result->columns[0].pages.size(), 1u) << type->ToString();
  }
}

TEST_P(EncoderTypes, SmallCacheFlushesPagesWhileAppending) {
  const auto [version, seed] = GetParam();
  RandomArrays gen(seed);
  auto array = gen.Make(arrow::list(arrow::utf8()), 2000, 0.2);
  EncoderOptions options;
  options.cache_bytes_per_column = 1024;
  auto result = EncodeDecode(array, version, 20, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->decoded->Equals(*array));
  EXPECT_GE(result->columns[0].pages.size(), 10u);
  uint64_t expected_priority = 0;
  for (const auto& page : result->columns[0].pages) {
    EXPECT_EQ(page.priority, expected_priority);
    expected_priority += page.length;
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, EncoderTypes,
                         ::testing::Combine(::testing::Values(FileVersion::kV2_1, FileVersion::kV2_2),
                                            ::testing::Values(1u, 2u, 3u)));

TEST(EncoderV2_1, ZeroRowsWriteNoPages) {
  for (const auto& type : AllTypes()) {
    RandomArrays gen(7);
    auto array = gen.Make(type, 0, 0.5);
    auto result = EncodeDecode(array, FileVersion::kV2_2, 1);
    ASSERT_TRUE(result.ok()) << type->ToString() << ": " << result.status().ToString();
    EXPECT_EQ(result->decoded->length(), 0);
    for (const auto& c : result->columns) EXPECT_TRUE(c.pages.empty());
  }
}

TEST(EncoderV2_1, AllNullAndEmptyPagesUseTheConstantLayout) {
  auto nulls = *arrow::MakeArrayOfNull(arrow::int32(), 100);
  auto result = EncodeDecode(nulls, FileVersion::kV2_1, 1);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->columns[0].pages.size(), 1u);
  EXPECT_EQ(LayoutOf(result->columns[0].pages[0]), "constant");
  EXPECT_TRUE(result->columns[0].pages[0].buffers.empty());
  EXPECT_TRUE(result->decoded->Equals(*nulls));

  auto empties = *arrow::json::ArrayFromJSONString(arrow::list(arrow::int32()), "[[], null, [], [null]]");
  ExpectRoundTrip(empties, FileVersion::kV2_2, 1);
  result = EncodeDecode(empties, FileVersion::kV2_2, 1);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(LayoutOf(result->columns[0].pages[0]), "constant");
}

TEST(EncoderV2_1, LayoutFollowsValueWidthAndMetadata) {
  RandomArrays gen(3);
  auto narrow = gen.Make(arrow::utf8(), 300, 0.1);
  auto result = EncodeDecode(narrow, FileVersion::kV2_1, 1);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(LayoutOf(result->columns[0].pages[0]), "mini_block");
  result = EncodeDecode(narrow, FileVersion::kV2_1, 1, {}, {{"lance-encoding:structural-encoding", "fullzip"}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(LayoutOf(result->columns[0].pages[0]), "full_zip");
  EXPECT_TRUE(result->decoded->Equals(*narrow));

  gen.max_string_ = 600;
  auto wide = gen.Make(arrow::list(arrow::binary()), 300, 0.1);
  result = EncodeDecode(wide, FileVersion::kV2_2, 2);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(LayoutOf(result->columns[0].pages[0]), "full_zip");
  EXPECT_TRUE(result->decoded->Equals(*wide));

  auto bad = EncodeDecode(narrow, FileVersion::kV2_1, 1, {}, {{"lance-encoding:structural-encoding", "zigzag"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("zigzag"), std::string::npos);
}

// The value compression at the root of a mini-block or full-zip page.
std::string ValueCompressionOf(const PageData& page) {
  v2_1::pb21::PageLayout layout;
  EXPECT_TRUE(layout.ParseFromString(page.encoding));
  const auto& e = layout.has_mini_block_layout() ? layout.mini_block_layout().value_compression()
                                                 : layout.full_zip_layout().value_compression();
  using Case = v2_1::pb21::CompressiveEncoding::CompressionCase;
  switch (e.compression_case()) {
    case Case::kFlat: return "flat";
    case Case::kVariable: return "variable";
    case Case::kInlineBitpacking: return "inline_bitpacking";
    case Case::kRle: return "rle";
    case Case::kFsst: return "fsst";
    case Case::kFixedSizeList: return "fsl";
    default: return "other";
  }
}

TEST(EncoderV2_1, DefaultCompressionChoices) {
  for (auto version : {FileVersion::kV2_1, FileVersion::kV2_2}) {
    // Long runs: RLE, including runs longer than 255 and than a chunk.
    arrow::Int32Builder runs;
    for (int i = 0; i < 9000; ++i) ASSERT_TRUE(runs.Append(i < 5000 ? 7 : i / 300).ok());
    auto run_array = *runs.Finish();
    auto result = EncodeDecode(run_array, version, 3);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(ValueCompressionOf(result->columns[0].pages[0]), "rle");
    EXPECT_TRUE(result->decoded->Equals(*run_array));

    // Small integers: bitpacked; full-width random ones: flat.
    RandomArrays gen(9);
    auto small = *arrow::json::ArrayFromJSONString(arrow::int64(), "[1, 2, 3, 4, 5, 6, 7, 0]");
    small = *arrow::Concatenate(arrow::ArrayVector(300, small));
    result = EncodeDecode(small, version, 1);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(ValueCompressionOf(result->columns[0].pages[0]), "inline_bitpacking");
    EXPECT_TRUE(result->decoded->Equals(*small));
    auto wide = gen.Make(arrow::uint64(), 3000, 0);
    result = EncodeDecode(wide, version, 1);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(ValueCompressionOf(result->columns[0].pages[0]), "flat");
    result = EncodeDecode(small, version, 1, {}, {{"lance-encoding:compression", "none"}});
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(ValueCompressionOf(result->columns[0].pages[0]), "flat");

    // Enough string data: FSST, in mini-block and in full-zip pages; not for binary.
    gen.max_string_ = 40;
    auto strings = gen.Make(arrow::utf8(), 3000, 0.1);
    result = EncodeDecode(strings, version, 2);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(ValueCompressionOf(result->columns[0].pages[0]), "fsst");
    EXPECT_TRUE(result->decoded->Equals(*strings));
    auto binary = gen.Make(arrow::binary(), 3000, 0.1);
    result = EncodeDecode(binary, version, 2);
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(ValueCompressionOf(result->columns[0].pages[0]), "variable");
    gen.max_string_ = 900;
    auto long_strings = gen.Make(arrow::large_utf8(), 300, 0.1);
    result = EncodeDecode(long_strings, version, 2);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(LayoutOf(result->columns[0].pages[0]), "full_zip");
    EXPECT_EQ(ValueCompressionOf(result->columns[0].pages[0]), "fsst");
    EXPECT_TRUE(result->decoded->Equals(*long_strings));
  }
}

bool HasDictionary(const PageData& page) {
  v2_1::pb21::PageLayout layout;
  EXPECT_TRUE(layout.ParseFromString(page.encoding));
  return layout.has_mini_block_layout() && layout.mini_block_layout().has_dictionary();
}

TEST(EncoderV2_1, LowCardinalityValuesAreDictionaryEncoded) {
  for (auto version : {FileVersion::kV2_1, FileVersion::kV2_2}) {
    std::vector<std::string> words = {"alpha", "beta", "gamma", "delta"};
    for (auto type : {arrow::utf8(), arrow::large_utf8(), arrow::binary()}) {
      std::string json = "[";
      for (int i = 0; i < 1500; ++i) {
        json += i % 11 == 0 ? "null" : "\"" + words[(i * 7) % 4] + "\"";
        json += i + 1 < 1500 ? "," : "]";
      }
      auto array = *arrow::json::ArrayFromJSONString(type, json);
      auto result = EncodeDecode(array, version, 3);
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      EXPECT_TRUE(HasDictionary(result->columns[0].pages[0])) << type->ToString();
      EXPECT_TRUE(result->decoded->Equals(*array)) << type->ToString();
    }
    // 64-bit values: dictionary in 2.2 only; 128-bit in both.
    RandomArrays gen(5);
    arrow::Int64Builder b64;
    for (int i = 0; i < 3000; ++i) ASSERT_TRUE(i % 13 == 0 ? b64.AppendNull().ok() : b64.Append((i * 31) % 20).ok());
    auto int64s = *b64.Finish();
    auto result = EncodeDecode(int64s, version, 2);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(HasDictionary(result->columns[0].pages[0]), version == FileVersion::kV2_2);
    EXPECT_TRUE(result->decoded->Equals(*int64s));
    arrow::Int64Builder wide;  // a larger dictionary, bitpacked in 2.2
    for (int i = 0; i < 3000; ++i) ASSERT_TRUE(wide.Append((i * 7919) % 1500).ok());
    auto wide_ints = *wide.Finish();
    result = EncodeDecode(wide_ints, version, 1);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_TRUE(result->decoded->Equals(*wide_ints));
    auto decimals = *arrow::json::ArrayFromJSONString(arrow::decimal128(10, 2), R"(["1.50", "2.25", null, "1.50"])");
    decimals = *arrow::Concatenate(arrow::ArrayVector(100, decimals));
    result = EncodeDecode(decimals, version, 1);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_TRUE(HasDictionary(result->columns[0].pages[0]));
    EXPECT_TRUE(result->decoded->Equals(*decimals));
    auto nested =
        *arrow::json::ArrayFromJSONString(arrow::list(arrow::utf8()), R"([["a", "b"], null, [], ["b", null]])");
    nested = *arrow::Concatenate(arrow::ArrayVector(100, nested));
    ExpectRoundTrip(nested, version, 3);
  }
}

TEST(EncoderV2_1, RequestedCompressionsRoundTrip) {
  using Meta = std::map<std::string, std::string>;
  for (auto version : {FileVersion::kV2_1, FileVersion::kV2_2}) {
    RandomArrays gen(11);
    arrow::Int32Builder small;
    for (int i = 0; i < 5000; ++i) ASSERT_TRUE(i % 9 == 0 ? small.AppendNull().ok() : small.Append(i % 1000).ok());
    auto ints = *small.Finish();
    for (const Meta& meta : {Meta{{"lance-encoding:compression", "zstd"}},
                             Meta{{"lance-encoding:compression", "lz4"}},
                             Meta{{"lance-encoding:compression", "zstd"}, {"lance-encoding:compression-level", "7"}},
                             Meta{{"lance-encoding:compression", "zstd"}, {"lance-encoding:bss", "off"}}}) {
      auto result = EncodeDecode(ints, version, 3, {}, meta);
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      EXPECT_TRUE(result->decoded->Equals(*ints));
    }
    auto result = EncodeDecode(ints, version, 1, {}, {{"lance-encoding:compression", "zstd"}});
    ASSERT_TRUE(result.ok());
    EXPECT_EQ(ValueCompressionOf(result->columns[0].pages[0]), "other");  // general over byte-stream-split
    for (auto type : {arrow::float64(), arrow::boolean(), arrow::utf8(), arrow::large_binary(),
                      arrow::list(arrow::float32()), arrow::fixed_size_list(arrow::float32(), 4)}) {
      auto array = gen.Make(type, 4000, 0.1);
      for (const Meta& meta : {Meta{{"lance-encoding:compression", "zstd"}, {"lance-encoding:bss", "on"}},
                               Meta{{"lance-encoding:compression", "lz4"}},
                               Meta{{"lance-encoding:compression", "fsst"}}}) {
        ExpectRoundTrip(array, version, 2, {}, meta);
        if (HasFatalFailure()) return;
      }
    }
    // Wide values zstd-compressed one by one (requested, or over 32 KiB).
    gen.max_string_ = 700;
    auto wide = gen.Make(arrow::utf8(), 300, 0.1);
    result = EncodeDecode(wide, version, 2, {}, {{"lance-encoding:compression", "lz4"}});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(LayoutOf(result->columns[0].pages[0]), "full_zip");
    EXPECT_EQ(ValueCompressionOf(result->columns[0].pages[0]), "other");
    EXPECT_TRUE(result->decoded->Equals(*wide));
    gen.max_string_ = 70000;
    auto huge = gen.Make(arrow::large_utf8(), 6, 0.2);
    ExpectRoundTrip(huge, version, 2);
    auto bad = EncodeDecode(ints, version, 1, {}, {{"lance-encoding:compression", "snappy"}});
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.status().message().find("snappy"), std::string::npos);
  }
}

TEST(EncoderV2_1, ArrowDictionaryArraysKeepTheirDictionary) {
  for (auto version : {FileVersion::kV2_1, FileVersion::kV2_2}) {
    for (auto key : {arrow::int8(), arrow::int32()}) {
      auto type = arrow::dictionary(key, arrow::utf8());
      auto indices = *arrow::json::ArrayFromJSONString(key, "[0, 1, null, 2, 1, 0, 2, null]");
      auto items = *arrow::json::ArrayFromJSONString(arrow::utf8(), R"(["red", "green", "blue"])");
      auto array = *arrow::DictionaryArray::FromArrays(type, *arrow::Concatenate(arrow::ArrayVector(50, indices)),
                                                        items);
      auto result = EncodeDecode(array, version, 3);
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      EXPECT_TRUE(HasDictionary(result->columns[0].pages[0]));
      // Appends keep each slice's dictionary (as the reference does), so
      // compare the values the keys point at.
      auto decoded_values = *arrow::compute::Cast(*result->decoded, arrow::utf8());
      auto expected_values = *arrow::compute::Cast(*array, arrow::utf8());
      EXPECT_TRUE(decoded_values->Equals(*expected_values)) << result->decoded->ToString();
    }
  }
}

TEST(EncoderV2_1, PackedStructsAreOneColumnOfRows) {
  for (auto version : {FileVersion::kV2_1, FileVersion::kV2_2}) {
    auto type = arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b", arrow::float64()),
                                arrow::field("c", arrow::fixed_size_binary(3))});
    RandomArrays gen(21);
    auto array = gen.Make(type, 3000, 0.0);
    // Null structs only (the children of a packed struct keep no validity).
    int64_t null_count = 0;
    auto nulls = gen.Validity(3000, 0.2, &null_count);
    auto data = array->data()->Copy();
    for (auto& child : data->child_data) {
      child = child->Copy();
      child->buffers[0] = nullptr;
      child->null_count = 0;
    }
    data->buffers[0] = nulls;
    data->null_count = arrow::kUnknownNullCount;
    auto packed = arrow::MakeArray(data);
    auto result = EncodeDecode(packed, version, 3, {}, {{"packed", "true"}});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    ASSERT_EQ(result->columns.size(), 1u);
    EXPECT_EQ(ValueCompressionOf(result->columns[0].pages[0]), "other");
    EXPECT_TRUE(result->decoded->Equals(*packed, arrow::EqualOptions::Defaults().nans_equal(true)))
        << result->decoded->Slice(0, 3)->ToString() << packed->Slice(0, 3)->ToString();
  }
}

TEST(EncoderV2_1, ListsWithNullAndEmptyAtEveryLevel) {
  auto type = arrow::list(arrow::struct_({arrow::field("a", arrow::list(arrow::int32())),
                                          arrow::field("b", arrow::utf8())}));
  auto array = *arrow::json::ArrayFromJSONString(type, R"([
    [{"a": [1, 2], "b": "x"}, null, {"a": null, "b": null}, {"a": [], "b": "y"}],
    null, [], [null], [{"a": [null, 3], "b": ""}]
  ])");
  ExpectRoundTrip(array, FileVersion::kV2_1, 1);
  ExpectRoundTrip(array, FileVersion::kV2_2, 5);
}

TEST(EncoderV2_1, MapsNeedVersion2_2) {
  auto maps = *arrow::json::ArrayFromJSONString(arrow::map(arrow::utf8(), arrow::int32()), R"([[["a", 1]], null])");
  auto refused = EncodeDecode(maps, FileVersion::kV2_1, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("2.2"), std::string::npos);
  ExpectRoundTrip(maps, FileVersion::kV2_2, 1);
}

TEST(EncoderV2_1, RefusesWhatItCannotWrite) {
  Field field;
  field.name = "p";
  field.logical_type = "struct";
  field.metadata["packed"] = "true";
  Field child;
  child.name = "x";
  child.logical_type = "bool";  // bit-wide: not packable (string children are, in 2.2)
  field.children.push_back(child);
  EncoderOptions options;
  auto encoder = MakeFieldEncoderV2_1(field, 0, options);
  ASSERT_FALSE(encoder.ok());
  EXPECT_NE(encoder.status().message().find("'p'"), std::string::npos);
}

}  // namespace
}  // namespace lance::file

namespace lance::file {
namespace {

// Blob columns: the encoder puts values in out-of-line buffers at the
// positions a file would give them; reading them back goes through a blob
// reader over those buffers.
struct BlobRoundTrip {
  std::shared_ptr<Array> decoded;
  std::vector<ColumnData> columns;
  uint64_t out_of_line_bytes = 0;
};

Result<BlobRoundTrip> EncodeDecodeBlob(const std::shared_ptr<Array>& array, FileVersion version, int slices,
                                       EncoderOptions options = {}) {
  auto arrow_schema = arrow::schema({arrow::field("f", array->type(), true)});
  LANCE_ASSIGN_OR_RAISE(Schema schema, Schema::FromArrow(*arrow_schema));
  Field field = schema.fields[0];
  if (field.logical_type == "large_binary") {
    field.metadata["lance-encoding:blob"] = "true";
  } else {
    for (auto& c : field.children) {
      if (c.logical_type == "large_binary") c.metadata["lance-encoding:blob"] = "true";
    }
  }
  options.version = version;
  LANCE_ASSIGN_OR_RAISE(auto encoder, MakeFieldEncoderV2_1(field, 0, options));
  BlobRoundTrip out;
  out.columns.resize(encoder->num_columns());
  std::string file(128, 'P');  // something before the first value
  auto take = [&](std::vector<EncodedPage> pages, const OutOfLineBuffers& buffers) -> Status {
    for (const auto& b : buffers.buffers()) {
      file.append(reinterpret_cast<const char*>(b->data()), static_cast<size_t>(b->size()));
      file.append((64 - b->size() % 64) % 64, 'H');
    }
    for (auto& p : pages) out.columns.at(p.column_index).pages.push_back(std::move(p.page));
    return Status::OK();
  };
  const int64_t n = array->length();
  int64_t start = 0;
  for (int s = 0; s < slices; ++s) {
    const int64_t end = s + 1 == slices ? n : n * (s + 1) / slices;
    OutOfLineBuffers buffers(file.size());
    encoder->set_out_of_line_buffers(&buffers);
    LANCE_ASSIGN_OR_RAISE(auto pages, encoder->Append(array->Slice(start, end - start)));
    LANCE_RETURN_NOT_OK(take(std::move(pages), buffers));
    start = end;
  }
  OutOfLineBuffers buffers(file.size());
  encoder->set_out_of_line_buffers(&buffers);
  LANCE_ASSIGN_OR_RAISE(auto pages, encoder->Flush());
  LANCE_RETURN_NOT_OK(take(std::move(pages), buffers));
  out.out_of_line_bytes = file.size() - 128;
  v2_1::BlobReader reader = [&](uint64_t position, uint64_t size) -> Result<std::shared_ptr<arrow::Buffer>> {
    if (position + size > file.size()) return Status::Invalid("blob read past the end");
    return arrow::Buffer::FromString(file.substr(position, size));
  };
  LANCE_ASSIGN_OR_RAISE(out.decoded, v2_1::DecodeField(field, out.columns, static_cast<uint64_t>(n), version,
                                                       arrow::default_memory_pool(), reader));
  return out;
}

std::string BlobInnerLayoutOf(const PageData& page) {
  v2_1::pb21::PageLayout layout;
  EXPECT_TRUE(layout.ParseFromString(page.encoding));
  if (layout.layout_case() != v2_1::pb21::PageLayout::kBlobLayout) return "not a blob page";
  return layout.blob_layout().inner_layout().has_mini_block_layout() ? "mini_block" : "other";
}

TEST(EncoderV2_1, BlobColumnsRoundTripThroughOutOfLineBuffers) {
  for (auto version : {FileVersion::kV2_1, FileVersion::kV2_2}) {
    for (double null_prob : {0.0, 0.3}) {
      RandomArrays gen(31);
      gen.max_string_ = 200;
      auto array = gen.Make(arrow::large_binary(), 1000, null_prob);
      auto result = EncodeDecodeBlob(array, version, 4);
      ASSERT_TRUE(result.ok()) << result.status().ToString();
      EXPECT_TRUE(result->decoded->Equals(*array));
      ASSERT_EQ(result->columns.size(), 1u);
      for (const auto& page : result->columns[0].pages) EXPECT_EQ(BlobInnerLayoutOf(page), "mini_block");
      // Each non-empty value sits in its own 64-byte aligned slot.
      const auto& values = static_cast<const arrow::LargeBinaryArray&>(*array);
      uint64_t expected = 0;
      for (int64_t i = 0; i < values.length(); ++i) {
        const uint64_t size = values.IsNull(i) ? 0 : static_cast<uint64_t>(values.value_length(i));
        expected += size + (64 - size % 64) % 64;
      }
      EXPECT_EQ(result->out_of_line_bytes, expected);
    }
  }
}

TEST(EncoderV2_1, BlobPageEndsWhereTheBatchNullsChange) {
  auto array = *arrow::json::ArrayFromJSONString(arrow::large_binary(),
                                                 R"(["a", "b", "c", null, "", "d", "e", "f"])");
  // Slices of 2: [a b] [c null] ["" d] [e f]: all-valid, nullable, all-valid, all-valid.
  auto result = EncodeDecodeBlob(array, FileVersion::kV2_2, 4);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE(result->decoded->Equals(*array));
  EXPECT_EQ(result->columns[0].pages.size(), 3u);
}

TEST(EncoderV2_1, BlobsInsideStructs) {
  auto type = arrow::struct_({arrow::field("x", arrow::int32()), arrow::field("b", arrow::large_binary())});
  auto array = *arrow::json::ArrayFromJSONString(
      type, R"([{"x": 1, "b": "abc"}, {"x": 2, "b": null}, null, {"x": 4, "b": ""}, {"x": null, "b": "zz"}])");
  for (auto version : {FileVersion::kV2_1, FileVersion::kV2_2}) {
    auto result = EncodeDecodeBlob(array, version, 2);
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_TRUE(result->decoded->Equals(*array)) << result->decoded->ToString();
  }
}

TEST(EncoderV2_1, BlobFieldsMustBeLargeBinaryAndOutsideLists) {
  Field field;
  field.name = "b";
  field.logical_type = "binary";
  field.metadata["lance-encoding:blob"] = "true";
  EncoderOptions options;
  auto refused = MakeFieldEncoderV2_1(field, 0, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("large_binary"), std::string::npos);

  Field list;
  list.name = "l";
  list.logical_type = "list";
  field.logical_type = "large_binary";
  list.children.push_back(field);
  refused = MakeFieldEncoderV2_1(list, 0, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("list"), std::string::npos);
}

TEST(EncoderV2_1, FixedSizeListsOfStructsNeed2_2) {
  auto type = arrow::fixed_size_list(
      arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("s", arrow::utf8())}), 3);
  RandomArrays gen(41);
  for (double null_prob : {0.0, 0.2, 0.7}) {
    auto array = gen.Make(type, 800, null_prob);
    ExpectRoundTrip(array, FileVersion::kV2_2, 5);
    if (HasFatalFailure()) return;
  }
  auto refused = EncodeDecode(gen.Make(type, 10, 0.1), FileVersion::kV2_1, 1);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("2.2"), std::string::npos);
  // Each row is `dimension` page rows; pages still start at top-level rows.
  EncoderOptions small;
  small.cache_bytes_per_column = 512;
  auto result = EncodeDecode(gen.Make(type, 2000, 0.1), FileVersion::kV2_2, 20, small);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_GE(result->columns[0].pages.size(), 5u);
  uint64_t expected_priority = 0;
  for (const auto& page : result->columns[0].pages) {
    EXPECT_EQ(page.priority, expected_priority);
    EXPECT_EQ(page.length % 3, 0u);
    expected_priority += page.length / 3;
  }
}

TEST(EncoderV2_1, PackedStructsWithStringChildrenAreFullZipIn2_2) {
  auto type = arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("s", arrow::utf8()),
                              arrow::field("l", arrow::large_binary())});
  auto array = *arrow::json::ArrayFromJSONString(
      type, R"([{"a": 1, "s": "xy", "l": "q"}, null, {"a": 3, "s": "", "l": ""}, {"a": 4, "s": "zzz", "l": "rr"}])");
  auto result = EncodeDecode(array, FileVersion::kV2_2, 2, {}, {{"packed", "true"}});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->columns.size(), 1u);
  EXPECT_EQ(LayoutOf(result->columns[0].pages[0]), "full_zip");
  EXPECT_TRUE(result->decoded->Equals(*array)) << result->decoded->ToString();

  auto refused = EncodeDecode(array, FileVersion::kV2_1, 1, {}, {{"packed", "true"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("2.2"), std::string::npos);
  auto null_child = *arrow::json::ArrayFromJSONString(type, R"([{"a": 1, "s": null, "l": "q"}])");
  refused = EncodeDecode(null_child, FileVersion::kV2_2, 1, {}, {{"packed", "true"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'s'"), std::string::npos);
}

}  // namespace
}  // namespace lance::file
