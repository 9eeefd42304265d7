// SQL filter predicates -> Arrow expressions: parsing, typing (pylance's coercion
// rules), three-valued evaluation on in-memory batches, errors and robustness.
// Expected values are worked out by hand from the batch below; the pylance-derived
// table lives in filter_pylance_test.cc.
#include "lance/scan/filter_parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/compute/expression.h>

namespace lance::scan {
namespace {

namespace cp = arrow::compute;
using arrow::field;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename Builder, typename T>
std::shared_ptr<arrow::Array> Build(std::shared_ptr<arrow::DataType> type,
                                    const std::vector<std::optional<T>>& values) {
  Builder builder(type, arrow::default_memory_pool());
  for (const auto& v : values) {
    if (v) {
      EXPECT_TRUE(builder.Append(*v).ok());
    } else {
      EXPECT_TRUE(builder.AppendNull().ok());
    }
  }
  std::shared_ptr<arrow::Array> out;
  EXPECT_TRUE(builder.Finish(&out).ok());
  return out;
}

template <typename ArrowType>
std::shared_ptr<arrow::Array> Numbers(
    const std::vector<std::optional<typename ArrowType::c_type>>& values) {
  return Build<typename arrow::TypeTraits<ArrowType>::BuilderType>(
      arrow::TypeTraits<ArrowType>::type_singleton(), values);
}

std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& values,
                                      bool large = false) {
  if (large) return Build<arrow::LargeStringBuilder>(arrow::large_utf8(), values);
  return Build<arrow::StringBuilder>(arrow::utf8(), values);
}

std::shared_ptr<arrow::Array> Times(std::shared_ptr<arrow::DataType> type,
                                    const std::vector<std::optional<int64_t>>& values) {
  return Build<arrow::TimestampBuilder>(type, values);
}

constexpr int64_t kUs = 1000000;
// 2024-01-01 00:00:00 UTC in seconds.
constexpr int64_t k20240101 = 1704067200;

// Eight rows over every type the language touches.
std::shared_ptr<arrow::RecordBatch> TestBatch() {
  using std::nullopt;
  const std::vector<std::optional<int64_t>> ts_us = {
      (k20240101 + 12 * 3600) * kUs,         // 2024-01-01 12:00:00
      (k20240101 + 86400) * kUs,             // 2024-01-02 00:00:00
      nullopt,                               //
      (k20240101 - 1) * kUs,                 // 2023-12-31 23:59:59
      (k20240101 + 12 * 3600) * kUs + 1,     // 2024-01-01 12:00:00.000001
      0,                                     // 1970-01-01
      -kUs / 2,                              // 1969-12-31 23:59:59.5
      (k20240101 + 17 * 3600) * kUs,         // 2024-01-01 17:00:00
  };
  std::vector<std::optional<int64_t>> ts_ms;
  for (const auto& v : ts_us) {
    ts_ms.push_back(v ? std::optional<int64_t>((*v - ((*v % 1000) + 1000) % 1000) / 1000)
                      : nullopt);
  }
  auto inner_type = arrow::struct_({field("c", arrow::float64())});
  auto inner = std::make_shared<arrow::StructArray>(
      inner_type, 8,
      arrow::ArrayVector{Numbers<arrow::DoubleType>({0.5, nullopt, 9, 9, 1.5, 2.5, -1, 0})},
      Numbers<arrow::BooleanType>({1, 1, 1, 0, 1, 1, 1, 1})
          ->data()
          ->buffers[1],  // validity: row 3's inner struct is null
      1);
  auto st_type = arrow::struct_(
      {field("a", arrow::int32()), field("b", arrow::utf8()), field("inner", inner_type)});
  auto st_validity = Numbers<arrow::BooleanType>({1, 1, 0, 1, 1, 1, 1, 1})->data()->buffers[1];
  auto st = std::make_shared<arrow::StructArray>(
      st_type, 8,
      arrow::ArrayVector{Numbers<arrow::Int32Type>({1, 2, 3, nullopt, 5, 6, 7, 0}),
                         Strings({"p", "q", "r", "r", nullopt, "p", "q", ""}), inner},
      st_validity, 1);

  auto schema = arrow::schema({
      field("id", arrow::int64()),
      field("i8", arrow::int8()),
      field("i16", arrow::int16()),
      field("i32", arrow::int32()),
      field("i64", arrow::int64()),
      field("u8", arrow::uint8()),
      field("u16", arrow::uint16()),
      field("u32", arrow::uint32()),
      field("u64", arrow::uint64()),
      field("f32", arrow::float32()),
      field("f64", arrow::float64()),
      field("s", arrow::utf8()),
      field("ls", arrow::large_utf8()),
      field("b", arrow::boolean()),
      field("d", arrow::date32()),
      field("ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
      field("tsz", arrow::timestamp(arrow::TimeUnit::MICRO, "America/New_York")),
      field("tsms", arrow::timestamp(arrow::TimeUnit::MILLI, "UTC")),
      field("st", st_type),
      field("Name", arrow::utf8()),
      field("sp ace", arrow::int32()),
  });
  const std::vector<std::optional<std::string>> s = {"x",   "y",    nullopt, "a%b",
                                                     "a_b", "it's", "X",     "a\nb"};
  const int64_t d0 = k20240101 / 86400;
  return arrow::RecordBatch::Make(
      schema, 8,
      {
          Numbers<arrow::Int64Type>({0, 1, 2, 3, 4, 5, 6, 7}),
          Numbers<arrow::Int8Type>({0, 1, -1, 127, -128, nullopt, 5, 100}),
          Numbers<arrow::Int16Type>({0, 1, -1, 32767, -32768, nullopt, 300, 1000}),
          Numbers<arrow::Int32Type>({0, 1, -1, 2147483647, -2147483647 - 1, nullopt, 70000, 5}),
          Numbers<arrow::Int64Type>({0, 1, -1, std::numeric_limits<int64_t>::max(),
                                     std::numeric_limits<int64_t>::min(), nullopt,
                                     int64_t{1} << 40, 5}),
          Numbers<arrow::UInt8Type>({0, 1, 255, 128, 7, nullopt, 5, 100}),
          Numbers<arrow::UInt16Type>({0, 1, 65535, 300, 7, nullopt, 5, 100}),
          Numbers<arrow::UInt32Type>({0, 1, 4294967295u, 3000000000u, 7, nullopt, 5, 100}),
          Numbers<arrow::UInt64Type>({0, 1, std::numeric_limits<uint64_t>::max(),
                                      uint64_t{1} << 63, 7, nullopt, 5, 100}),
          Numbers<arrow::FloatType>({0.0f, 1.5f, -0.0f, static_cast<float>(kNaN),
                                     -static_cast<float>(kInf), nullopt, 0.1f, 1e30f}),
          Numbers<arrow::DoubleType>({0.0, 1.5, -0.0, kNaN, kInf, nullopt, 0.1, -kNaN}),
          Strings(s),
          Strings(s, /*large=*/true),
          Numbers<arrow::BooleanType>({true, false, nullopt, true, false, true, nullopt, false}),
          Numbers<arrow::Date32Type>({static_cast<int32_t>(d0), static_cast<int32_t>(d0 + 1),
                                      nullopt, static_cast<int32_t>(d0 - 1),
                                      static_cast<int32_t>(d0 + 59), 0, -1,
                                      static_cast<int32_t>(d0)}),
          Times(arrow::timestamp(arrow::TimeUnit::MICRO), ts_us),
          Times(arrow::timestamp(arrow::TimeUnit::MICRO, "America/New_York"), ts_us),
          Times(arrow::timestamp(arrow::TimeUnit::MILLI, "UTC"), ts_ms),
          st,
          Strings({"alice", "Bob", nullopt, "carol", "dave", "erin", "Frank", "grace"}),
          Numbers<arrow::Int32Type>({0, 10, 20, 30, 40, 50, 60, 70}),
      });
}

const std::shared_ptr<arrow::RecordBatch>& Batch() {
  static const auto batch = TestBatch();
  return batch;
}

// Evaluates `sql` on `batch`: one character per row, T(rue), F(alse) or N(ull).
arrow::Result<std::string> Evaluate(const std::string& sql,
                                    const std::shared_ptr<arrow::RecordBatch>& batch) {
  ARROW_ASSIGN_OR_RAISE(auto expr, ParseFilter(sql, *batch->schema()));
  ARROW_ASSIGN_OR_RAISE(auto bound, expr.Bind(*batch->schema()));
  ARROW_ASSIGN_OR_RAISE(auto input, cp::MakeExecBatch(*batch->schema(), batch));
  ARROW_ASSIGN_OR_RAISE(auto out, cp::ExecuteScalarExpression(bound, input));
  std::string rows;
  if (out.is_scalar()) {
    const auto& s = out.scalar_as<arrow::BooleanScalar>();
    return std::string(batch->num_rows(), !s.is_valid ? 'N' : s.value ? 'T' : 'F');
  }
  const std::shared_ptr<arrow::Array> result = out.make_array();
  const auto& array = static_cast<const arrow::BooleanArray&>(*result);
  for (int64_t i = 0; i < array.length(); ++i) {
    rows.push_back(array.IsNull(i) ? 'N' : array.Value(i) ? 'T' : 'F');
  }
  return rows;
}

std::string Rows(const std::string& sql) {
  auto rows = Evaluate(sql, Batch());
  if (!rows.ok()) return "error: " + rows.status().ToString();
  return *rows;
}

// The error message of a filter that must not parse.
std::string ErrorOf(const std::string& sql) {
  auto expr = ParseFilter(sql, *Batch()->schema());
  if (expr.ok()) return "no error";
  EXPECT_TRUE(expr.status().IsInvalid()) << expr.status().ToString();
  return expr.status().message();
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

#define EXPECT_ERROR(sql, fragment)                                                  \
  do {                                                                               \
    const std::string message_ = ErrorOf(sql);                                       \
    EXPECT_TRUE(Contains(message_, fragment)) << (sql) << " gave: " << message_;    \
  } while (0)

// ------------------------------------------------------------------ comparisons

TEST(FilterParser, ComparisonOperators) {
  EXPECT_EQ(Rows("id = 3"), "FFFTFFFF");
  EXPECT_EQ(Rows("id == 3"), "FFFTFFFF");
  EXPECT_EQ(Rows("id != 3"), "TTTFTTTT");
  EXPECT_EQ(Rows("id <> 3"), "TTTFTTTT");
  EXPECT_EQ(Rows("id < 3"), "TTTFFFFF");
  EXPECT_EQ(Rows("id <= 3"), "TTTTFFFF");
  EXPECT_EQ(Rows("id > 5"), "FFFFFFTT");
  EXPECT_EQ(Rows("id >= 5"), "FFFFFTTT");
  EXPECT_EQ(Rows("3 = id"), "FFFTFFFF");
  EXPECT_EQ(Rows("3 < id"), "FFFFTTTT");
  EXPECT_EQ(Rows("id = i64"), "TTFFFNFF");
}

TEST(FilterParser, EveryIntegerWidth) {
  EXPECT_EQ(Rows("i8 = 127"), "FFFTFNFF");
  EXPECT_EQ(Rows("i8 >= -128"), "TTTTTNTT");
  EXPECT_EQ(Rows("i16 = 32767"), "FFFTFNFF");
  EXPECT_EQ(Rows("i16 < -32767"), "FFFFTNFF");
  EXPECT_EQ(Rows("i32 = 2147483647"), "FFFTFNFF");
  EXPECT_EQ(Rows("i32 < -2147483647"), "FFFFTNFF");
  EXPECT_EQ(Rows("i64 = 9223372036854775807"), "FFFTFNFF");
  EXPECT_EQ(Rows("i64 < -9223372036854775807"), "FFFFTNFF");
  EXPECT_EQ(Rows("i64 = 1099511627776"), "FFFFFNTF");
  EXPECT_EQ(Rows("u8 = 255"), "FFTFFNFF");
  EXPECT_EQ(Rows("u16 > 1000"), "FFTFFNFF");
  EXPECT_EQ(Rows("u32 = 4294967295"), "FFTFFNFF");
  EXPECT_EQ(Rows("u32 > 2147483647"), "FFTTFNFF");
  EXPECT_EQ(Rows("u64 = 18446744073709551615"), "FFTFFNFF");
  EXPECT_EQ(Rows("u64 > 9223372036854775807"), "FFTTFNFF");
  // A literal that does not fit the column's type is an error, as in pylance.
  EXPECT_ERROR("i8 = 300", "cannot convert literal 300 to int8");
  EXPECT_ERROR("i16 = 40000", "to int16");
  EXPECT_ERROR("i32 = 2147483648", "to int32");
  EXPECT_ERROR("u8 = -1", "cannot convert literal -1 to uint8");
  EXPECT_ERROR("u64 = -1", "to uint64");
  EXPECT_ERROR("id = 18446744073709551615", "to int64");
  EXPECT_ERROR("i8 = 1.5", "cannot convert literal 1.5 to int8");
  EXPECT_ERROR("id = 1.0", "to int64");
  EXPECT_ERROR("id = '1'", "cannot convert literal '1' to int64");
  // -9223372036854775808 is read as a float (its digits overflow i64 first).
  EXPECT_ERROR("i64 = -9223372036854775808", "to int64");
  // Inside NOT, Lance leaves the literal alone and DataFusion widens instead.
  EXPECT_EQ(Rows("NOT (i8 = 300)"), "TTTTTNTT");
  EXPECT_EQ(Rows("NOT (u8 = -1)"), "TTTTTNTT");
  EXPECT_EQ(Rows("NOT (i8 < 1.5)"), "FFFTFNTT");
  EXPECT_EQ(Rows("NOT (id = '1')"), "TFTTTTTT");
}

TEST(FilterParser, MixedIntegerColumnsWiden) {
  EXPECT_EQ(Rows("i8 < id"), "FFTFTNTF");
  EXPECT_EQ(Rows("i8 = i16"), "TTTFFNFF");
  EXPECT_EQ(Rows("u8 > i8"), "FFTTTNFF");
  // uint64 against a signed type meets in decimal(20, 0): nothing wraps.
  EXPECT_EQ(Rows("u64 > id"), "FFTTTNFT");
  EXPECT_EQ(Rows("u64 + 1 > 0"), "TTTTTNTT");
  EXPECT_EQ(Rows("u64 * 2 > 0"), "FTTTTNTT");
}

// ------------------------------------------------------------------ arithmetic

TEST(FilterParser, Arithmetic) {
  EXPECT_EQ(Rows("id / 2 = 1"), "FFTTFFFF");  // integer division
  EXPECT_EQ(Rows("id % 3 = 1"), "FTFFTFFT");
  EXPECT_EQ(Rows("-id % 3 = -1"), "FTFFTFFT");  // the sign of the dividend
  EXPECT_EQ(Rows("id * 2 + 1 = 5"), "FFTFFFFF");
  EXPECT_EQ(Rows("1 + id * 2 = 5"), "FFTFFFFF");
  EXPECT_EQ(Rows("id + 1 * 2 = 4"), "FFTFFFFF");
  EXPECT_EQ(Rows("(id + 1) * 2 = 4"), "FTFFFFFF");
  EXPECT_EQ(Rows("id - 1 - 1 = 0"), "FFTFFFFF");
  EXPECT_EQ(Rows("id - -1 = 2"), "FTFFFFFF");
  EXPECT_EQ(Rows("- id * 2 = -4"), "FFTFFFFF");
  EXPECT_EQ(Rows("id = -(-1)"), "FTFFFFFF");
  EXPECT_EQ(Rows("id = - -1"), "FTFFFFFF");
  EXPECT_EQ(Rows("id / 2 * 2 = id"), "TFTFTFTF");
  EXPECT_EQ(Rows("id / 4.0 = 0.5"), "FFTFFFFF");
  EXPECT_EQ(Rows("2 * 3 % 4 = 2 AND id = 0"), "TFFFFFFF");
  EXPECT_EQ(Rows("f64 * 2 = 3"), "FTFFFNFF");
  EXPECT_EQ(Rows("f32 + 1 > 2"), "FTFTFNFT");
  EXPECT_EQ(Rows("st.a + 1 = 2"), "TFNNFFFF");
}

TEST(FilterParser, IntegerOverflowWraps) {
  EXPECT_EQ(Rows("i8 + i8 = -2"), "FFTTFNFF");   // int8 + int8 stays int8
  EXPECT_EQ(Rows("i8 * 2 = 254"), "FFFTFNFF");   // int8 * int64 is int64
  EXPECT_EQ(Rows("-i8 < 0"), "FTFTTNTT");        // -(-128) is -128 in int8
  EXPECT_EQ(Rows("i32 * i32 > 0"), "FTTTFNTT");
  EXPECT_EQ(Rows("u8 * u8 = 1"), "FTTFFNFF");
  EXPECT_EQ(Rows("i64 + 1 < 0"), "FFFTTNFF");
  // Literals compared with a column take its type first, then fold: 100 + 100
  // is -56 in int8, 0 - 1 is 255 in uint8.
  EXPECT_EQ(Rows("i8 < 100 + 100"), "FFFFTNFF");
  EXPECT_EQ(Rows("u8 < 0 - 1"), "TTFTTNTT");
  EXPECT_ERROR("i8 < 300 - 200", "cannot convert literal 300 to int8");
  // Not when a column is in the arithmetic, or under NOT.
  EXPECT_EQ(Rows("i8 < i8 + 1"), "TTTTTNTT");
  EXPECT_EQ(Rows("NOT (i8 < 100 + 100)"), "FFFFFNFF");
  EXPECT_EQ(Rows("u8 - 1 = -1"), "TFFFFNFF");
}

TEST(FilterParser, DivisionByZero) {
  auto rows = Evaluate("id / 0 = 1", Batch());
  ASSERT_FALSE(rows.ok());
  EXPECT_TRUE(Contains(rows.status().message(), "divide by zero")) << rows.status().ToString();
  EXPECT_FALSE(Evaluate("id % 0 = 1", Batch()).ok());
  // Folding constants reports it while parsing, at the operator.
  EXPECT_ERROR("id = 1 / 0", "at 7: divide by zero");
  // Floats give infinities and NaN instead.
  EXPECT_EQ(Rows("f64 % 0 IS NULL"), "FFFFFTFF");
  EXPECT_EQ(Rows("f64 / 0 > 1"), "FTFTTNTF");
}

// ------------------------------------------------------------------ floats

TEST(FilterParser, FloatsCompareInTotalOrder) {
  // NaN sorts above +inf and -NaN below -inf, as in arrow-rs.
  EXPECT_EQ(Rows("f64 > 1e300"), "FFFTTNFF");
  EXPECT_EQ(Rows("f64 < -1e300"), "FFFFFNFT");
  EXPECT_EQ(Rows("f64 = f64"), "TTTTTNTT");
  EXPECT_EQ(Rows("f64 <> f64"), "FFFFFNFF");
  EXPECT_EQ(Rows("f32 > 1"), "FTFTFNFT");
  EXPECT_EQ(Rows("f32 < -1e30"), "FFFFTNFF");
  EXPECT_EQ(Rows("f32 = f64"), "TTTTFNFF");
  EXPECT_EQ(Rows("f64 < 1e400"), "TTTFFNTT");  // 1e400 is +inf
  EXPECT_EQ(Rows("f64 BETWEEN 0 AND 2"), "TTTFFNTF");
}

TEST(FilterParser, SignedZeroAgainstZeroLiterals) {
  EXPECT_EQ(Rows("f64 = 0"), "TFTFFNFF");
  EXPECT_EQ(Rows("f64 = -0.0"), "TFTFFNFF");
  EXPECT_EQ(Rows("0 = f64"), "TFTFFNFF");
  EXPECT_EQ(Rows("f64 <> 0"), "FTFTTNTT");
  EXPECT_EQ(Rows("f64 >= 0"), "TTTTTNTF");
  EXPECT_EQ(Rows("f64 < 0"), "FFFFFNFT");
  EXPECT_EQ(Rows("f64 <= 0"), "TFTFFNFT");
  EXPECT_EQ(Rows("f64 > 0"), "FTFTTNTF");
  EXPECT_EQ(Rows("0 < f64"), "FTFTTNTF");
  EXPECT_EQ(Rows("f32 = 0"), "TFTFFNFF");
  EXPECT_EQ(Rows("f64 IN (0, 1.5)"), "TTTFFNFF");
  EXPECT_EQ(Rows("f64 NOT IN (0, 1.5)"), "FFFTTNTT");
  EXPECT_EQ(Rows("f64 - f64 = 0"), "TTTFFNTF");
}

TEST(FilterParser, FloatLiterals) {
  EXPECT_EQ(Rows("f32 = 0.1"), "FFFFFNTF");  // 0.1 rounds to float32 first
  EXPECT_EQ(Rows("f64 = 0.1"), "FFFFFNTF");
  EXPECT_EQ(Rows("f64 = 1.5"), "FTFFFNFF");
  EXPECT_EQ(Rows("f64 = 15e-1"), "FTFFFNFF");
  EXPECT_EQ(Rows("f64 = .15E1"), "FTFFFNFF");
  EXPECT_EQ(Rows("f64 = 1.5e+0"), "FTFFFNFF");
  EXPECT_EQ(Rows("f64 > 1."), "FTFTTNFF");
  EXPECT_EQ(Rows("f64 = 1"), "FFFFFNFF");
  EXPECT_EQ(Rows("f32 = 1e30"), "FFFFFNFT");
  EXPECT_ERROR("id = 1e0", "to int64");
}

// ------------------------------------------------------------------ strings

TEST(FilterParser, Strings) {
  EXPECT_EQ(Rows("s = 'x'"), "TFNFFFFF");
  EXPECT_EQ(Rows("s = \"x\""), "TFNFFFFF");  // "x" is a string in Lance
  EXPECT_EQ(Rows("s = 'it''s'"), "FFNFFTFF");
  EXPECT_EQ(Rows("s > 'a'"), "TTNTTTFT");     // byte order: 'X' < 'a'
  EXPECT_EQ(Rows("s >= ''"), "TTNTTTTT");
  EXPECT_EQ(Rows("s IN ('x', 'y', NULL)"), "TTNNNNNN");
  EXPECT_EQ(Rows("s NOT IN ('x', 'y')"), "FFNTTTTT");
  EXPECT_EQ(Rows("s || 'z' = 'xz'"), "TFNFFFFF");
  EXPECT_EQ(Rows("s = 'a' || '%b'"), "FFNTFFFF");
  EXPECT_EQ(Rows("ls = 'x'"), "TFNFFFFF");
  EXPECT_EQ(Rows("ls IN ('x', 'a_b')"), "TFNFTFFF");
  EXPECT_EQ(Rows("s = ls"), "TTNTTTTT");
  EXPECT_ERROR("s = 1", "cannot convert literal 1 to string");
  // Outside Lance's literal conversion a string meets a number as a number.
  auto rows = Evaluate("NOT (s = 1)", Batch());
  EXPECT_FALSE(rows.ok());
}

TEST(FilterParser, Like) {
  EXPECT_EQ(Rows("s LIKE 'a%'"), "FFNTTFFT");
  EXPECT_EQ(Rows("s LIKE 'a_b'"), "FFNTTFFT");  // _ matches a newline too
  EXPECT_EQ(Rows("s LIKE 'a\\%b'"), "FFNTFFFF");
  EXPECT_EQ(Rows("s LIKE 'a\\_b'"), "FFNFTFFF");
  // DataFusion runs LIKE with the backslash escape only.
  EXPECT_ERROR("s LIKE 'a!%b' ESCAPE '!'", "only the backslash");
  EXPECT_EQ(Rows("s LIKE 'a\\%b' ESCAPE '\\'"), "FFNTFFFF");
  EXPECT_EQ(Rows("s LIKE '_'"), "TTNFFFTF");
  EXPECT_EQ(Rows("s LIKE '%'"), "TTNTTTTT");
  EXPECT_EQ(Rows("s LIKE 'X'"), "FFNFFFTF");
  EXPECT_EQ(Rows("s NOT LIKE 'a%'"), "TTNFFTTF");
  EXPECT_EQ(Rows("s ILIKE 'X'"), "TFNFFFTF");
  EXPECT_EQ(Rows("s NOT ILIKE 'x'"), "FTNTTTFT");
  EXPECT_EQ(Rows("s LIKE NULL"), "NNNNNNNN");
  EXPECT_EQ(Rows("ls LIKE '%b'"), "FFNTTFFT");
  EXPECT_EQ(Rows("st.b LIKE 'p%'"), "TFNFNTFF");
  EXPECT_EQ(Rows("Name LIKE '%e'"), "TFNFTFFT");
  EXPECT_EQ(Rows("s LIKE 'a' || '%'"), "FFNTTFFT");  // a constant pattern is fine
  EXPECT_ERROR("id LIKE '1%'", "LIKE needs a string to match, got int64");
  EXPECT_ERROR("s LIKE s", "at 7: the LIKE pattern must be a string literal");
  EXPECT_ERROR("s LIKE 'x' ESCAPE 'ab'", "ESCAPE takes a single character");
}

// ------------------------------------------------------------------ functions

// Lists for the list functions, with null lists, null elements and empty lists.
std::shared_ptr<arrow::RecordBatch> ListBatch() {
  using std::nullopt;
  auto ints = [](const std::vector<std::optional<std::vector<std::optional<int32_t>>>>& rows) {
    arrow::ListBuilder builder(arrow::default_memory_pool(),
                               std::make_shared<arrow::Int32Builder>());
    auto& values = static_cast<arrow::Int32Builder&>(*builder.value_builder());
    for (const auto& row : rows) {
      if (!row) {
        EXPECT_TRUE(builder.AppendNull().ok());
        continue;
      }
      EXPECT_TRUE(builder.Append().ok());
      for (const auto& v : *row) {
        EXPECT_TRUE(v ? values.Append(*v).ok() : values.AppendNull().ok());
      }
    }
    std::shared_ptr<arrow::Array> out;
    EXPECT_TRUE(builder.Finish(&out).ok());
    return out;
  };
  auto doubles = [](const std::vector<std::optional<std::vector<std::optional<double>>>>& rows) {
    arrow::LargeListBuilder builder(arrow::default_memory_pool(),
                                    std::make_shared<arrow::DoubleBuilder>());
    auto& values = static_cast<arrow::DoubleBuilder&>(*builder.value_builder());
    for (const auto& row : rows) {
      if (!row) {
        EXPECT_TRUE(builder.AppendNull().ok());
        continue;
      }
      EXPECT_TRUE(builder.Append().ok());
      for (const auto& v : *row) {
        EXPECT_TRUE(v ? values.Append(*v).ok() : values.AppendNull().ok());
      }
    }
    std::shared_ptr<arrow::Array> out;
    EXPECT_TRUE(builder.Finish(&out).ok());
    return out;
  };
  using I = std::vector<std::optional<int32_t>>;
  using D = std::vector<std::optional<double>>;
  auto li = ints({I{1, 2}, I{3}, I{}, nullopt, I{nullopt, 1}, I{nullopt}, I{2, 2, 5}, I{7}});
  auto lf = doubles({D{kNaN}, D{-0.0}, D{0.0}, nullopt, D{1.5, nullopt}, D{}, D{-kNaN}, D{2.0}});
  auto schema = arrow::schema({field("li", li->type()), field("lf", lf->type()),
                               field("s", arrow::utf8()), field("Name", arrow::utf8()),
                               field("n", arrow::int32())});
  return arrow::RecordBatch::Make(
      schema, 8,
      {li, lf, Strings({"x", "y", nullopt, "a%b", "a_b", "it's", "X", "a\nb"}),
       Strings({"alice", "Bob", nullopt, "carol", "dave", "erin", "Frank", "grace"}),
       Numbers<arrow::Int32Type>({1, 3, 0, 1, nullopt, 5, 2, 8})});
}

std::string ListRows(const std::string& sql, int64_t offset = 0) {
  auto rows = Evaluate(sql, ListBatch()->Slice(offset));
  if (!rows.ok()) return "error: " + rows.status().ToString();
  return *rows;
}

TEST(FilterFunctions, ArrayHas) {
  EXPECT_EQ(ListRows("array_has(li, 1)"), "TFFNTFFF");  // null elements never match
  EXPECT_EQ(ListRows("array_contains(li, 2)"), "TFFNFFTF");
  EXPECT_EQ(ListRows("LIST_HAS(li, 7) OR list_contains(li, 3)"), "FTFNFFFT");
  EXPECT_EQ(ListRows("array_has(li, NULL)"), "NNNNNNNN");
  EXPECT_EQ(ListRows("array_has(NULL, 1)"), "NNNNNNNN");
  EXPECT_EQ(ListRows("array_has(li, 1.0)"), "TFFNTFFF");  // compared as float64
  EXPECT_EQ(ListRows("array_has(li, 1.5)"), "FFFNFFFF");
  // Floats compare in totalOrder: -0.0 is not 0.0.
  EXPECT_EQ(ListRows("array_has(lf, 0.0)"), "FFTNFFFF");
  EXPECT_EQ(ListRows("array_has(lf, -0.0)"), "FTFNFFFF");
  EXPECT_EQ(ListRows("array_has(li, 1)", 2), "FNTFFF");  // a sliced batch
  // A value per row: null when it is null.
  EXPECT_EQ(ListRows("array_has(li, n)"), "TTFNNFTF");
  EXPECT_EQ(ListRows("array_has(li, n)", 3), "NNFTF");
  EXPECT_EQ(ListRows("array_has(lf, n)"), "FFTNNFFF");  // 0 is 0.0, not -0.0
  EXPECT_EQ(ListRows("array_has(li, n + 1)"), "TFFNNFFF");
}

TEST(FilterFunctions, ArrayHasAnyAll) {
  EXPECT_EQ(ListRows("array_has_any(li, [1, 7])"), "TFFNTFFT");
  EXPECT_EQ(ListRows("array_has_any(li, [NULL])"), "FFFNTTFF");  // a null finds a null
  EXPECT_EQ(ListRows("array_has_any(li, [])"), "FFFFFFFF");      // even for a null list
  EXPECT_EQ(ListRows("array_has_all(li, [])"), "TTTTTTTT");
  EXPECT_EQ(ListRows("array_has_any(li, NULL)"), "NNNNNNNN");
  EXPECT_EQ(ListRows("array_has_all(li, [1, NULL])"), "FFFNTFFF");
  EXPECT_EQ(ListRows("array_has_all(li, [2, 5, 2])"), "FFFNFFTF");
  EXPECT_EQ(ListRows("array_has_all(li, [2, 5])", 5), "FTF");
  EXPECT_EQ(ListRows("arrays_overlap(li, ['3'])"), "FTFNFFFF");  // the string becomes an int
  EXPECT_EQ(ListRows("array_has_any(lf, [-0.0, 2])"), "FTFNFFFT");
  EXPECT_EQ(ListRows("array_has_all(lf, [1.5, NULL])"), "FFFNTFFF");
}

TEST(FilterFunctions, StringPredicates) {
  EXPECT_EQ(ListRows("contains(s, 'a')"), "FFNTTFFT");
  EXPECT_EQ(ListRows("contains(s, '')"), "TTNTTTTT");
  EXPECT_EQ(ListRows("contains(s, 'x')"), "TFNFFFFF");  // case-sensitive
  EXPECT_EQ(ListRows("contains(s, NULL)"), "NNNNNNNN");
  EXPECT_EQ(ListRows("starts_with(s, 'a')"), "FFNTTFFT");
  EXPECT_EQ(ListRows("ends_with(s, 'b')"), "FFNTTFFT");
  EXPECT_EQ(ListRows("starts_with(Name, 'a' || 'l')"), "TFNFFFFF");
  EXPECT_EQ(ListRows("contains('abc', 'b')"), "TTTTTTTT");
  // A pattern per row.
  EXPECT_EQ(ListRows("ends_with(s, s)"), "TTNTTTTT");
  EXPECT_EQ(ListRows("contains(Name, s)"), "FFNFFFFF");
  EXPECT_EQ(ListRows("starts_with('a%b%c', s)"), "FFNTFFFF");
  EXPECT_EQ(ListRows("ends_with(Name || s, s)", 1), "TNTTTTT");
  EXPECT_EQ(ListRows("contains(s, '' || Name)"), "FFNFFFFF");
}

TEST(FilterFunctions, Refusals) {
  auto error = [](const std::string& sql) {
    auto expr = ParseFilter(sql, *ListBatch()->schema());
    return expr.ok() ? std::string("no error") : expr.status().message();
  };
  auto expect = [&](const std::string& sql, const std::string& fragment) {
    const std::string message = error(sql);
    EXPECT_TRUE(Contains(message, fragment)) << sql << " gave: " << message;
  };
  expect("array_has(li)", "array_has takes 2 arguments, got 1");
  expect("array_has_any(li, [1], [2])", "array_has_any takes 2 arguments, got 3");
  expect("array_has(s, 'a')", "at 10: array_has: argument 1 must be a list, got string");
  expect("array_has(li, 'a')", "array_has: cannot look for a string in a list of int32");
  expect("array_has(li, TRUE)", "cannot look for a bool in a list of int32");
  expect("array_has(li, [1])", "at 14: array_has: argument 2 cannot be a list literal");
  expect("array_has([1], 1)", "argument 1 cannot be a list literal");
  expect("array_has_any(li, 1)", "array_has_any: argument 2 must be a list, got int64");
  expect("array_has_any(li, ['a'])", "cannot convert");
  expect("array_has_any(li, [TRUE])", "cannot compare a list of int32 with a list of bool");
  expect("array_has_any(li, [1, s])", "the items of argument 2 must be constants");
  expect("array_has_any(li, [[1]])", "a list literal [...] is only allowed");
  expect("array_has_all(li, NULL)", "array_has_all: argument 2 is NULL");
  expect("array_has_any(NULL, [1])", "array_has_any: argument 1 is NULL");
  expect("array_has_any(li, li)", "list columns are not supported there");
  expect("array_has(li, Name)", "array_has: cannot look for a string in a list of int32");
  expect("array_has(LI, 1)", "no column named 'LI'");  // exact names inside calls
  expect("contains(li, 'a')", "contains: argument 1 must be a string, got list<item: int32>");
  expect("starts_with(s, 1)", "starts_with: argument 2 must be a string, got int64");
  expect("contains(NAME, 'a')", "no column named 'NAME'");
  expect("contains(s, 'a'", "expected ',' or ')' in the argument list");
  expect("array_has_any(li, [1, 2)", "expected ',' or ']' in the list");
  expect("li = [1]", "a list literal [...] is only allowed");
  expect("upper(s) = 'X'", "function 'upper' is not supported in filters");
  EXPECT_EQ(ListRows("NAME = 'Bob'"), "FTNFFFFF");  // outside calls names ignore case
}

TEST(FilterFunctions, EditedCallsNeverCrash) {
  const std::vector<std::string> seeds = {
      "array_has_any(li, [1, NULL, '2']) AND NOT array_has(lf, n)",
      "array_has_all(lf, [1.5, -0.0]) OR contains(s, 'a%') IS NULL",
      "starts_with(Name, 'a' || 'l') AND ends_with(s, '') OR list_has(li, -1)",
  };
  std::mt19937 rng(7);
  const std::string replacements = "()[]'`\",.=-+*/NULL1";
  int parsed = 0;
  for (int round = 0; round < 5000; ++round) {
    std::string sql = seeds[rng() % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !sql.empty(); ++e) {
      const size_t at = rng() % sql.size();
      switch (rng() % 3) {
        case 0: sql.erase(at, 1 + rng() % 3); break;
        case 1: sql.insert(at, sql.substr(at, 1 + rng() % 6)); break;
        default: sql[at] = replacements[rng() % replacements.size()]; break;
      }
    }
    auto expr = ParseFilter(sql, *ListBatch()->schema());
    if (!expr.ok()) {
      EXPECT_TRUE(expr.status().IsInvalid()) << sql << ": " << expr.status().ToString();
      continue;
    }
    ++parsed;
    auto rows = Evaluate(sql, ListBatch()->Slice(round % 3));
    if (rows.ok()) {
      EXPECT_EQ(rows->size(), static_cast<size_t>(8 - round % 3)) << sql;
    }
  }
  EXPECT_GT(parsed, 100);
}

// ------------------------------------------------------------------ NULL and booleans

TEST(FilterParser, ThreeValuedLogic) {
  EXPECT_EQ(Rows("b"), "TFNTFTNF");
  EXPECT_EQ(Rows("NOT b"), "FTNFTFNT");
  EXPECT_EQ(Rows("NOT NOT b"), "TFNTFTNF");
  EXPECT_EQ(Rows("b = true"), "TFNTFTNF");
  EXPECT_EQ(Rows("b AND NULL"), "NFNNFNNF");
  EXPECT_EQ(Rows("b OR NULL"), "TNNTNTNN");
  EXPECT_EQ(Rows("b AND id > 2"), "FFFTFTNF");
  EXPECT_EQ(Rows("b OR id > 5"), "TFNTFTTT");
  EXPECT_EQ(Rows("b IS TRUE"), "TFFTFTFF");
  EXPECT_EQ(Rows("b IS NOT TRUE"), "FTTFTFTT");
  EXPECT_EQ(Rows("b IS FALSE"), "FTFFTFFT");
  EXPECT_EQ(Rows("b IS NOT FALSE"), "TFTTFTTF");
  EXPECT_EQ(Rows("b IS NULL"), "FFTFFFTF");
  EXPECT_EQ(Rows("b = (id = 1)"), "FFNFTFNT");
  EXPECT_EQ(Rows("true"), "TTTTTTTT");
  EXPECT_EQ(Rows("false OR b"), "TFNTFTNF");
  EXPECT_ERROR("b = 1", "cannot convert literal 1 to bool");
}

TEST(FilterParser, NullLiterals) {
  EXPECT_EQ(Rows("id = NULL"), "NNNNNNNN");
  EXPECT_EQ(Rows("NULL = NULL"), "NNNNNNNN");
  EXPECT_EQ(Rows("NOT NULL"), "NNNNNNNN");
  EXPECT_EQ(Rows("NULL IS NULL"), "TTTTTTTT");
  EXPECT_EQ(Rows("NULL IS NOT NULL"), "FFFFFFFF");
  EXPECT_EQ(Rows("id + NULL > 1"), "NNNNNNNN");
  EXPECT_EQ(Rows("s IS NULL"), "FFTFFFFF");
  EXPECT_EQ(Rows("s IS NOT NULL"), "TTFTTTTT");
  EXPECT_EQ(Rows("f64 IS NULL"), "FFFFFTFF");  // NaN is not NULL
  EXPECT_EQ(Rows("i8 IN (1, NULL)"), "NTNNNNNN");
  EXPECT_EQ(Rows("i8 NOT IN (1, NULL)"), "NFNNNNNN");
  EXPECT_EQ(Rows("NULL IN (1, 2)"), "NNNNNNNN");
  EXPECT_EQ(Rows("1 IN (1, NULL)"), "TTTTTTTT");
  EXPECT_EQ(Rows("id IN (NULL)"), "NNNNNNNN");
}

// ------------------------------------------------------------------ IN and BETWEEN

TEST(FilterParser, InLists) {
  EXPECT_EQ(Rows("id IN (1, 3, 5)"), "FTFTFTFF");
  EXPECT_EQ(Rows("id NOT IN (1, 3, 5)"), "TFTFTFTT");
  EXPECT_EQ(Rows("NOT id IN (1, 3, 5)"), "TFTFTFTT");
  EXPECT_EQ(Rows("id IN (1 + 1, 3)"), "FFTTFFFF");
  EXPECT_EQ(Rows("id IN (i8, 3)"), "TTFTFNFF");  // a column in the list
  EXPECT_EQ(Rows("(id + 1) IN (1, 2.0)"), "TTFFFFFF");
  EXPECT_EQ(Rows("st.a IN (1, 2)"), "TTNNFFFF");
  EXPECT_EQ(Rows("st.a IN (1, 2.5)"), "TFNNFFFF");  // nested: DataFusion widens
  EXPECT_EQ(Rows("d IN (date '2024-01-01', date '1970-01-01')"), "TFNFFTFT");
  EXPECT_EQ(Rows("tsz IN (timestamp '2024-01-01 12:00:00', timestamp '2024-01-01 07:00:00')"),
            "TFNFFFFT");
  EXPECT_ERROR("id IN (1, 2.0)", "cannot convert literal 2.0 to int64");
  EXPECT_ERROR("i8 IN (1, 300)", "at 10: cannot convert literal 300 to int8");
  EXPECT_ERROR("id IN (1, '2')", "cannot convert literal '2' to int64");
  EXPECT_ERROR("(id + 1) IN (1, 'a')", "cannot convert");
  EXPECT_ERROR("id IN ()", "expected an expression, found ')'");
}

TEST(FilterParser, Between) {
  EXPECT_EQ(Rows("id BETWEEN 1 AND 3"), "FTTTFFFF");  // inclusive
  EXPECT_EQ(Rows("id BETWEEN 3 AND 1"), "FFFFFFFF");
  EXPECT_EQ(Rows("id NOT BETWEEN 1 AND 3"), "TFFFTTTT");
  EXPECT_EQ(Rows("NOT id BETWEEN 1 AND 3"), "TFFFTTTT");
  EXPECT_EQ(Rows("id BETWEEN NULL AND 3"), "NNNNFFFF");
  EXPECT_EQ(Rows("id NOT BETWEEN NULL AND 3"), "NNNNTTTT");
  EXPECT_EQ(Rows("i8 BETWEEN -1 AND 1"), "TTTFFNFF");
  EXPECT_EQ(Rows("id BETWEEN 1 AND 2 + 1"), "FTTTFFFF");
  EXPECT_EQ(Rows("id BETWEEN 1 AND 3 AND id <> 2"), "FTFTFFFF");
  EXPECT_EQ(Rows("st.a BETWEEN 1 AND 5"), "TTNNTFFF");
  EXPECT_EQ(Rows("d BETWEEN date '2024-01-01' AND date '2024-01-02'"), "TTNFFFFT");
  EXPECT_ERROR("i8 BETWEEN 1 AND 300", "cannot convert literal 300 to int8");
  EXPECT_ERROR("st.a BETWEEN 1.5 AND 3", "cannot convert literal 1.5 to int32");
  EXPECT_ERROR("id BETWEEN 1", "expected AND in BETWEEN");
}

// ------------------------------------------------------------------ precedence

TEST(FilterParser, Precedence) {
  EXPECT_EQ(Rows("NOT id = 1 AND id < 3"), "TFTFFFFF");
  EXPECT_EQ(Rows("NOT (id = 1 OR id = 2)"), "TFFTTTTT");
  EXPECT_EQ(Rows("id = 1 OR id = 2 AND id = 3"), "FTFFFFFF");
  EXPECT_EQ(Rows("(id = 1 OR id = 2) AND id = 3"), "FFFFFFFF");
  EXPECT_EQ(Rows("id = 1 = true"), "FTFFFFFF");  // (id = 1) = true
  EXPECT_EQ(Rows("NOT b IS NULL"), "TTFTTTFT");  // NOT (b IS NULL)
  EXPECT_EQ(Rows("b IS NULL IS NULL"), "FFFFFFFF");
  EXPECT_EQ(Rows("id BETWEEN 1 AND 2 = true"), "FTTFFFFF");
  EXPECT_EQ(Rows("((((id = 1))))"), "FTFFFFFF");
  // Comparisons do not chain: (id < 2) < 3 compares a boolean with a number.
  EXPECT_ERROR("id < 2 < 3", "at 7: cannot compare bool with int64");
}

TEST(FilterParser, KeywordsAreCaseInsensitive) {
  EXPECT_EQ(Rows("id between 1 AnD 3"), "FTTTFFFF");
  EXPECT_EQ(Rows("b iS nOt NuLl"), "TTFTTTFT");
  EXPECT_EQ(Rows("s lIkE 'x' oR s iLiKe 'Y'"), "TTNFFFFF");
  EXPECT_EQ(Rows("not b"), "FTNFTFNT");
  EXPECT_EQ(Rows("id In (1)"), "FTFFFFFF");
  EXPECT_EQ(Rows("b = TRUE or b = False"), "TTNTTTNT");
  EXPECT_EQ(Rows("d = DATE '2024-01-01'"), "TFNFFFFT");
}

TEST(FilterParser, Comments) {
  EXPECT_EQ(Rows("id = 1 -- the rest is ignored"), "FTFFFFFF");
  EXPECT_EQ(Rows("id = 1 --"), "FTFFFFFF");
  EXPECT_EQ(Rows("/* a /* nested */ b */ id = 1"), "FTFFFFFF");
  EXPECT_EQ(Rows("id /* mid */ = 1"), "FTFFFFFF");
  EXPECT_EQ(Rows("id = 1 -- x\n OR id = 2"), "FTTFFFFF");
  EXPECT_ERROR("id = 1 /* open", "at 7: unterminated /* comment");
}

// ------------------------------------------------------------------ names

TEST(FilterParser, ColumnNames) {
  EXPECT_EQ(Rows("name = 'alice'"), "TFNFFFFF");  // unquoted: case-insensitive
  EXPECT_EQ(Rows("NAME = 'alice'"), "TFNFFFFF");
  EXPECT_EQ(Rows("`Name` = 'alice'"), "TFNFFFFF");
  EXPECT_EQ(Rows("ID = 1"), "FTFFFFFF");
  EXPECT_EQ(Rows("`sp ace` = 30"), "FFFTFFFF");
  // "..." is a string literal, not a name.
  EXPECT_EQ(Rows("\"Name\" = 'alice'"), "FFFFFFFF");
  EXPECT_ERROR("`name` = 'alice'", "at 0: no column named 'name'");
  EXPECT_ERROR("`a``b` = 1", "no column named 'a`b'");
  EXPECT_ERROR("sp ace = 30", "at 3: unexpected 'ace'");
  EXPECT_ERROR("no_such = 1", "at 0: no column named 'no_such'");
}

TEST(FilterParser, ExactNameWinsOverCaseInsensitive) {
  auto schema = arrow::schema({field("Name", arrow::utf8()), field("name", arrow::utf8()),
                               field("NAME2", arrow::utf8())});
  auto refers = [&](const std::string& sql) {
    auto expr = ParseFilter(sql, *schema);
    EXPECT_TRUE(expr.ok()) << expr.status().ToString();
    return expr.ok() ? FilterColumns(*expr) : std::vector<std::string>{};
  };
  EXPECT_EQ(refers("name = 'x'"), std::vector<std::string>{"name"});
  EXPECT_EQ(refers("Name = 'x'"), std::vector<std::string>{"Name"});
  EXPECT_EQ(refers("NAME = 'x'"), std::vector<std::string>{"Name"});  // first match
  EXPECT_EQ(refers("name2 = 'x'"), std::vector<std::string>{"NAME2"});
}

TEST(FilterParser, NestedFields) {
  EXPECT_EQ(Rows("st.a = 1"), "TFNNFFFF");
  EXPECT_EQ(Rows("ST.a = 1"), "TFNNFFFF");
  EXPECT_EQ(Rows("st['a'] = 1"), "TFNNFFFF");
  EXPECT_EQ(Rows("st[\"a\"] = 1"), "TFNNFFFF");
  EXPECT_EQ(Rows("`st`.`a` = 1"), "TFNNFFFF");
  EXPECT_EQ(Rows("st.b = 'q'"), "FTNFNFTF");
  EXPECT_EQ(Rows("st.a IS NULL"), "FFTTFFFF");  // a null struct has null fields
  EXPECT_EQ(Rows("st IS NULL"), "FFTFFFFF");
  EXPECT_EQ(Rows("st.inner IS NULL"), "FFTTFFFF");
  EXPECT_EQ(Rows("st.inner.c > 1"), "FNNNTTFF");
  EXPECT_EQ(Rows("st.inner['c'] = 0"), "FNNNFFFT");
  EXPECT_ERROR("st.a = 1.5", "cannot convert literal 1.5 to int32");
  EXPECT_ERROR("st.A = 1", "at 0: struct 'st' has no field 'A'");
  EXPECT_ERROR("st.inner.d = 1", "struct 'st.inner' has no field 'd'");
  EXPECT_ERROR("i8.x = 1", "'i8' is int8, not a struct");
  EXPECT_ERROR("st. = 1", "at 4: expected a field name after '.'");
  EXPECT_ERROR("st[0] = 1", "only ['field name'] subscripts are supported");
  EXPECT_ERROR("st = 1", "cannot convert literal 1 to struct");
}

// ------------------------------------------------------------------ dates, timestamps

TEST(FilterParser, Dates) {
  EXPECT_EQ(Rows("d = date '2024-01-01'"), "TFNFFFFT");
  EXPECT_EQ(Rows("d > date '2024-01-01'"), "FTNFTFFF");
  EXPECT_EQ(Rows("d = date '2024-1-1'"), "TFNFFFFT");
  EXPECT_EQ(Rows("d = date '20240101'"), "TFNFFFFT");
  EXPECT_EQ(Rows("d = date '2024-01-01 23:00:00'"), "TFNFFFFT");
  EXPECT_EQ(Rows("d = date '2024-02-29'"), "FFNFTFFF");
  EXPECT_EQ(Rows("d < date '1970-01-01'"), "FFNFFFTF");
  EXPECT_EQ(Rows("d < timestamp '2024-01-01 00:00:01'"), "TFNTFTTT");
  EXPECT_EQ(Rows("d = timestamp '2024-01-01 00:00:01'"), "FFNFFFFF");
  EXPECT_EQ(Rows("NOT (d = '2024-01-01')"), "FTNTTTTF");  // DataFusion parses it
  EXPECT_EQ(Rows("NOT (d = 19723)"), "FTNTTTTF");         // days since 1970
  EXPECT_ERROR("d = '2024-01-01'", "cannot convert literal '2024-01-01' to date32");
  EXPECT_ERROR("d = '2024-01-01'", "(write DATE '2024-01-01')");
  EXPECT_ERROR("d = date '2024-02-30'", "cannot parse date '2024-02-30'");
  EXPECT_ERROR("d = date 'x'", "at 4: cannot parse date 'x'");
  EXPECT_ERROR("d = 1", "cannot convert literal 1 to date32");
}

TEST(FilterParser, Timestamps) {
  EXPECT_EQ(Rows("ts = timestamp '2024-01-01 12:00:00'"), "TFNFFFFF");
  EXPECT_EQ(Rows("ts = TIMESTAMP '2024-01-01T12:00:00'"), "TFNFFFFF");
  EXPECT_EQ(Rows("ts > timestamp '2024-01-01 12:00:00'"), "FTNFTFFT");
  EXPECT_EQ(Rows("ts = timestamp '2024-01-01 13:00:00+01:00'"), "TFNFFFFF");
  EXPECT_EQ(Rows("ts = timestamp '2024-01-01 07:00:00-0500'"), "TFNFFFFF");
  EXPECT_EQ(Rows("ts = timestamp '2024-01-01T12:00:00Z'"), "TFNFFFFF");
  EXPECT_EQ(Rows("ts = timestamp '2024-01-01 12:00:00.000001'"), "FFNFTFFF");
  EXPECT_EQ(Rows("ts = timestamp '2024-01-01 12:00:00.000001999'"), "FFNFTFFF");
  EXPECT_EQ(Rows("ts = timestamp '2024-01-01 120000'"), "TFNFFFFF");
  EXPECT_EQ(Rows("ts = timestamp '1969-12-31 23:59:59.5'"), "FFNFFFTF");
  EXPECT_EQ(Rows("ts < timestamp '1970-01-01'"), "FFNFFFTF");
  EXPECT_EQ(Rows("ts = timestamp(0) '2024-01-01 12:00:00'"), "TFNFFFFF");
  EXPECT_EQ(Rows("ts = datetime(3) '2024-01-01 12:00:00'"), "TFNFFFFF");
  EXPECT_EQ(Rows("ts > timestamp '2024-01-01 07:00:00 America/New_York'"), "FTNFTFFT");
  EXPECT_EQ(Rows("ts > date '2024-01-01'"), "TTNFTFFT");
  EXPECT_EQ(Rows("ts > d"), "TFNTFFTT");
  EXPECT_EQ(Rows("d = ts"), "FTNFFTFF");
  EXPECT_EQ(Rows("NOT (ts = '2024-01-01 12:00:00')"), "FTNTTTTT");
  EXPECT_ERROR("ts = '2024-01-01 12:00:00'", "to timestamp[us]");
  EXPECT_ERROR("ts = '2024-01-01'", "(write TIMESTAMP '2024-01-01')");
  EXPECT_ERROR("ts = timestamp '2024-01-01 12:00'", "expected a time HH:MM:SS");
  EXPECT_ERROR("ts = timestamp 'garbage'", "at 5: cannot parse timestamp 'garbage'");
  EXPECT_ERROR("ts = timestamp '2024-01-01 12:00:00 Mars/Olympus'", "unknown time zone");
  EXPECT_ERROR("ts = timestamp(2) '2024-01-01 12:00:00'", "unsupported timestamp precision 2");
  EXPECT_ERROR("ts = timestamp with time zone '2024-01-01'", "time zones are not supported");
  EXPECT_ERROR("ts = 1", "cannot convert literal 1 to timestamp[us]");
}

TEST(FilterParser, ZonedTimestamps) {
  // A naive literal meeting a zoned column is wall-clock time in that zone.
  EXPECT_EQ(Rows("tsz = timestamp '2024-01-01 12:00:00'"), "FFNFFFFT");
  EXPECT_EQ(Rows("tsz = timestamp '2024-01-01 07:00:00'"), "TFNFFFFF");
  EXPECT_EQ(Rows("tsz IN (timestamp '2024-01-01 07:00:00')"), "TFNFFFFF");
  // A date meets it as midnight UTC.
  EXPECT_EQ(Rows("tsz >= date '2024-01-01'"), "TTNFTFFT");
  // A string with no zone parses in the column's zone; with one it is an instant.
  EXPECT_EQ(Rows("NOT (tsz = '2024-01-01 12:00:00')"), "TTNTTTTF");
  EXPECT_EQ(Rows("NOT (tsz = '2024-01-01 12:00:00Z')"), "FTNTTTTT");
  // A naive column meeting a zoned one is wall-clock time too.
  EXPECT_EQ(Rows("ts = tsz"), "FFNFFFFF");
  EXPECT_EQ(Rows("tsz < ts"), "TTNTTTTT");
  // Wall-clock times that do not exist or happen twice in the zone are errors.
  EXPECT_ERROR("tsz = timestamp '2024-03-10 02:30:00'", "at 4: Timestamp doesn't exist");
  EXPECT_ERROR("tsz = timestamp '2024-11-03 01:30:00'", "at 4: Timestamp is ambiguous");
  EXPECT_EQ(ErrorOf("tsz = timestamp '2024-03-10 02:30:00'").find('\n'), std::string::npos);
}

TEST(FilterParser, TimestampUnits) {
  // A finer literal meeting a coarser column is truncated to the column's unit.
  EXPECT_EQ(Rows("tsms = timestamp '2024-01-01 12:00:00.0005'"), "TFNFTFFF");
  EXPECT_EQ(Rows("tsms > timestamp '2024-01-01 12:00:00.0001'"), "FTNFFFFT");
  EXPECT_EQ(Rows("tsms >= timestamp '2024-01-01 12:00:00.0001'"), "TTNFTFFT");
  auto schema = arrow::schema({field("s", arrow::timestamp(arrow::TimeUnit::SECOND)),
                               field("n", arrow::timestamp(arrow::TimeUnit::NANO, "+05:00"))});
  auto batch = arrow::RecordBatch::Make(
      schema, 2,
      {Times(arrow::timestamp(arrow::TimeUnit::SECOND), {k20240101, k20240101 + 1}),
       Times(arrow::timestamp(arrow::TimeUnit::NANO, "+05:00"),
             {k20240101 * 1000000000, (k20240101 - 5 * 3600) * 1000000000 + 1})});
  EXPECT_EQ(*Evaluate("s = timestamp '2024-01-01 00:00:00.999'", batch), "TF");
  EXPECT_EQ(*Evaluate("s = timestamp '2024-01-01 00:00:01.000000001'", batch), "FT");
  EXPECT_EQ(*Evaluate("n = timestamp '2024-01-01 05:00:00'", batch), "TF");
  EXPECT_EQ(*Evaluate("n > timestamp '2024-01-01 00:00:00'", batch), "TT");
  // TIMESTAMP '...' is microseconds (like pyarrow); TIMESTAMP(9) keeps nanoseconds.
  EXPECT_EQ(*Evaluate("n = timestamp '2024-01-01 00:00:00.000000001'", batch), "FF");
  EXPECT_EQ(*Evaluate("n = timestamp(9) '2024-01-01 00:00:00.000000001'", batch), "FT");
}

// ------------------------------------------------------------------ other types

TEST(FilterParser, DictionaryHalfFloatAndDecimal) {
  auto dict_type = arrow::dictionary(arrow::int32(), arrow::utf8());
  auto dict = arrow::DictionaryArray::FromArrays(
      dict_type, Numbers<arrow::Int32Type>({0, 1, std::nullopt, 0}), Strings({"u", "v"}));
  ASSERT_TRUE(dict.ok());
  arrow::HalfFloatBuilder hb;
  ASSERT_TRUE(hb.AppendValues(std::vector<uint16_t>{0x3E00, 0x4000, 0x0000, 0x7C00}).ok());
  std::shared_ptr<arrow::Array> half;
  ASSERT_TRUE(hb.Finish(&half).ok());
  arrow::Decimal128Builder db(arrow::decimal128(10, 2));
  for (int64_t v : {100, 150, -1, 0}) ASSERT_TRUE(db.Append(arrow::Decimal128(v)).ok());
  std::shared_ptr<arrow::Array> dec;
  ASSERT_TRUE(db.Finish(&dec).ok());
  auto schema = arrow::schema(
      {field("cat", dict_type), field("h", arrow::float16()), field("dec", dec->type())});
  auto batch = arrow::RecordBatch::Make(schema, 4, {*dict, half, dec});
  EXPECT_EQ(*Evaluate("cat = 'u'", batch), "TFNT");
  EXPECT_EQ(*Evaluate("cat IN ('v')", batch), "FTNF");
  EXPECT_EQ(*Evaluate("cat LIKE 'v%'", batch), "FTNF");
  EXPECT_EQ(*Evaluate("h > 1.5", batch), "FTFT");  // 1.5, 2, 0, +inf
  EXPECT_EQ(*Evaluate("h = 1.5", batch), "TFFF");
  EXPECT_EQ(*Evaluate("dec = 1", batch), "TFFF");
  EXPECT_EQ(*Evaluate("dec > 1", batch), "FTFF");
  EXPECT_EQ(*Evaluate("dec + 1 = 2", batch), "TFFF");
  EXPECT_EQ(*Evaluate("dec * 2 = 3", batch), "FTFF");
  EXPECT_EQ(*Evaluate("-dec > 0", batch), "FFTF");
  EXPECT_FALSE(ParseFilter("dec > 1.5", *schema).ok());  // float literal vs decimal
}

// ------------------------------------------------------------------ errors

TEST(FilterParser, ErrorsSayWhatAndWhere) {
  EXPECT_EQ(ErrorOf("x >"), "filter \"x >\" at 3: expected an expression");
  EXPECT_EQ(ErrorOf(""), "filter \"\" at 0: the filter is empty");
  EXPECT_EQ(ErrorOf("  -- nothing"), "filter \"  -- nothing\" at 12: the filter is empty");
  EXPECT_EQ(ErrorOf("(id = 1"), "filter \"(id = 1\" at 7: expected ')', found end of input");
  EXPECT_EQ(ErrorOf("id = 1)"),
            "filter \"id = 1)\" at 6: unexpected ')', expected an operator or the end of "
            "the filter");
  EXPECT_ERROR("id = 1 2", "at 7: unexpected number 2");
  EXPECT_ERROR("id = 1 AND", "at 10: expected an expression");
  EXPECT_ERROR("id = 1 AND AND id = 2", "at 11: expected an expression, found AND");
  EXPECT_ERROR("'a' + 1 = 2", "at 4: cannot apply '+' to string and int64");
  EXPECT_ERROR("i8 + b > 1", "at 3: cannot apply '+' to int8 and bool");
  EXPECT_ERROR("s || 1 = 'x'", "cannot apply '||' to string and int64");
  EXPECT_ERROR("'abc", "at 0: unterminated string literal");
  EXPECT_ERROR("`abc", "at 0: unterminated quoted name");
  EXPECT_ERROR("id", "at 0: the filter must be a boolean expression, but its type is int64");
  EXPECT_ERROR("NULL", "its type is NULL");
  EXPECT_ERROR("1", "its type is int64");
  EXPECT_ERROR("id + 1", "at 3: the filter must be a boolean expression");
  EXPECT_ERROR("id = +1", "at 5: unary '+' is not supported");
  EXPECT_ERROR("lower(s) = 'x'", "at 0: function 'lower' is not supported in filters");
  EXPECT_ERROR("CAST(id AS string) = '1'", "CAST is not supported");
  EXPECT_ERROR("b IS UNKNOWN", "at 5: IS UNKNOWN is not supported");
  EXPECT_ERROR("b IS 1", "expected NULL, TRUE or FALSE after IS");
  EXPECT_ERROR("id IN 1", "at 6: expected '(' after IN");
  EXPECT_ERROR("id IN (1, 2", "expected ',' or ')' in the IN list");
  EXPECT_ERROR("id IN (SELECT 1)", "subqueries are not supported");
  EXPECT_ERROR("id NOT 1", "at 3: unexpected NOT");
  EXPECT_ERROR("s SIMILAR TO 'x'", "SIMILAR TO is not supported");
  EXPECT_ERROR("id ! 1", "at 3: unexpected character '!'");
  EXPECT_ERROR("id = 1;", "at 6: unexpected character ';'");
  EXPECT_ERROR("id = 1.5.2", "at 8: unexpected number .2");
  EXPECT_ERROR("NOT id", "at 0: NOT needs a boolean operand, got int64");
  EXPECT_ERROR("id AND b", "at 0: AND needs a boolean operand, got int64");
  EXPECT_ERROR("b OR s", "at 5: OR needs a boolean operand, got string");
  EXPECT_ERROR("-s = 'x'", "cannot negate a value of type string");
  EXPECT_ERROR("b < 'x'", "at 4: cannot convert literal 'x' to bool");
  EXPECT_ERROR("b < s", "at 2: cannot compare bool with string");
  EXPECT_ERROR("NOT (b = 'true')", "cannot compare bool with string");
  EXPECT_ERROR("id = \xff", "at 5: the filter is not valid UTF-8");
  EXPECT_ERROR(std::string("id = 1\x01"), "at 6: unexpected character byte 1");
  EXPECT_ERROR(std::string("id = 1\0", 7), "at 6: unexpected NUL character");
}

TEST(FilterParser, ErrorsStayOnOneLine) {
  const std::string message = ErrorOf("id =\n\t");
  EXPECT_EQ(message, "filter \"id =\\n\\t\" at 6: expected an expression");
  const std::string long_filter = "id = 1 AND " + std::string(500, ' ') + "x";
  EXPECT_LT(ErrorOf(long_filter).size(), 300u);
}

// ------------------------------------------------------------------ robustness

TEST(FilterParser, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = std::string(100000, '(') + "id = 1" + std::string(100000, ')');
  EXPECT_ERROR(deep, "too deeply nested");
  EXPECT_ERROR(std::string(100000, '('), "too deeply nested");
  std::string nots;
  for (int i = 0; i < 100000; ++i) nots += "NOT ";
  EXPECT_ERROR(nots + "b", "too deeply nested");
  std::string minus;
  for (int i = 0; i < 100000; ++i) minus += "- ";
  EXPECT_ERROR("id = " + minus + "1", "too deeply nested");
  std::string ins = "id";
  for (int i = 0; i < 5000; ++i) ins = "id IN (" + ins;
  EXPECT_ERROR(ins, "too deeply nested");
  // A long left-leaning chain of arithmetic is too tall as well.
  std::string sum = "id = 0";
  for (int i = 0; i < 5000; ++i) sum += " + 0";
  EXPECT_ERROR(sum, "too deeply nested");
  // Moderate nesting is fine.
  EXPECT_EQ(Rows(std::string(100, '(') + "id = 1" + std::string(100, ')')), "FTFFFFFF");
  std::string short_sum = "id = 0";
  for (int i = 0; i < 400; ++i) short_sum += " + 0";
  EXPECT_EQ(Rows(short_sum), "TFFFFFFF");
}

TEST(FilterParser, LongFlatListsAreFine) {
  std::string ors = "id = 100";
  for (int i = 0; i < 20000; ++i) ors += " OR id = " + std::to_string(i * 7 + 1000);
  ors += " OR id = 3";
  EXPECT_EQ(Rows(ors), "FFFTFFFF");
  std::string ands = "id >= 0";
  for (int i = 0; i < 20000; ++i) ands += " AND id <> 5";
  EXPECT_EQ(Rows(ands), "TTTTTFTT");
  std::string list = "id IN (100";
  for (int i = 0; i < 50000; ++i) list += ", " + std::to_string(i * 3);
  list += ")";
  EXPECT_EQ(Rows(list), "TFFTFFTF");
}

TEST(FilterParser, RandomInputNeverCrashes) {
  const std::vector<std::string> vocabulary = {
      "id", "i8", "s", "st", "b", "f64", "ts", "d", "Name", ".", "a", "inner", "(", ")", "=",
      "<", ">=", "<>", "AND", "OR", "NOT", "IN", "BETWEEN", "LIKE", "ILIKE", "ESCAPE", "IS",
      "NULL", "TRUE", "'x'", "'2024-01-01'", "1", "0", "-", "+", "*", "/", "%", "||", ",",
      "date", "timestamp", "`", "'", "\"", "[", "]", "/*", "*/", "--", "\n", "1e5", ".5",
      "300", "-1", "9223372036854775808", "'%'", "'\\'", "é", "\xff", "!"};
  const std::vector<std::string> seeds = {
      "id = 1 AND i8 IN (1, 2, NULL)", "NOT (s LIKE 'a\\%b' ESCAPE '\\') OR b IS NOT TRUE",
      "st.inner.c BETWEEN -1.5e2 AND .5 OR st['a'] <> 3",
      "ts >= timestamp '2024-01-01 12:00:00.5+01:00' AND d < date '2024-02-29'",
      "(u64 + 1) * 2 % 7 > id / 3 - -i8", "f64 = 0 OR f32 IS NULL AND Name ILIKE 'x_'",
      "`sp ace` NOT BETWEEN 1 AND 2 -- c", "/* x */ tsz IN (timestamp '2024-01-01 07:00:00')"};
  std::mt19937 rng(20240101);
  int parsed = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string sql;
    if (round % 2 == 0) {
      // Token soup, now and then a raw byte.
      const int length = 1 + static_cast<int>(rng() % 12);
      for (int i = 0; i < length; ++i) {
        if (rng() % 8 == 0) {
          sql.push_back(static_cast<char>(rng() % 256));
        } else {
          sql += vocabulary[rng() % vocabulary.size()];
        }
        if (rng() % 2) sql.push_back(' ');
      }
    } else {
      // A valid filter with a few characters deleted, duplicated or replaced.
      sql = seeds[rng() % seeds.size()];
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits && !sql.empty(); ++e) {
        const size_t at = rng() % sql.size();
        switch (rng() % 3) {
          case 0: sql.erase(at, 1 + rng() % 3); break;
          case 1: sql.insert(at, sql.substr(at, 1 + rng() % 4)); break;
          default: {
            const std::string replacements = "()'`\".,=<>-+*/%|[] \\xNOT1";
            sql[at] = replacements[rng() % replacements.size()];
            break;
          }
        }
      }
    }
    auto expr = ParseFilter(sql, *Batch()->schema());
    if (!expr.ok()) {
      EXPECT_TRUE(expr.status().IsInvalid()) << sql << ": " << expr.status().ToString();
      continue;
    }
    ++parsed;
    // Whatever parses also binds; running it may fail (e.g. division by zero).
    auto rows = Evaluate(sql, Batch());
    if (rows.ok()) {
      EXPECT_EQ(rows->size(), 8u) << sql;
    }
  }
  EXPECT_GT(parsed, 200);
}

// ------------------------------------------------------------------ the expression

TEST(FilterParser, ReturnsAnUnboundExpressionThatBindsToAProjection) {
  const std::string sql = "st.a > 1 AND (name LIKE 'd%' OR f64 > 0) AND st.b IS NOT NULL";
  auto expr = ParseFilter(sql, *Batch()->schema());
  ASSERT_TRUE(expr.ok()) << expr.status().ToString();
  EXPECT_FALSE(expr->IsBound());
  const auto columns = FilterColumns(*expr);
  EXPECT_EQ(columns, (std::vector<std::string>{"st", "Name", "f64"}));
  // Evaluate on a batch holding only those columns, in another order.
  std::vector<std::shared_ptr<arrow::Field>> fields;
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  for (auto it = columns.rbegin(); it != columns.rend(); ++it) {
    fields.push_back(Batch()->schema()->GetFieldByName(*it));
    arrays.push_back(Batch()->GetColumnByName(*it));
  }
  auto projected = arrow::RecordBatch::Make(arrow::schema(fields), 8, arrays);
  EXPECT_EQ(*Evaluate(sql, projected), *Evaluate(sql, Batch()));
  EXPECT_EQ(*Evaluate(sql, Batch()), "FTFNFNTF");
}

TEST(FilterParser, FilterColumns) {
  auto columns = [](const std::string& sql) {
    auto expr = ParseFilter(sql, *Batch()->schema());
    EXPECT_TRUE(expr.ok()) << expr.status().ToString();
    return expr.ok() ? FilterColumns(*expr) : std::vector<std::string>{};
  };
  EXPECT_EQ(columns("id = 1"), std::vector<std::string>{"id"});
  EXPECT_EQ(columns("1 = 1"), std::vector<std::string>{});
  EXPECT_EQ(columns("st.a = 1 AND id > 2 OR st.b = 'x' AND NAME = 'y'"),
            (std::vector<std::string>{"st", "id", "Name"}));
  EXPECT_EQ(columns("f64 > 0 AND s IN ('a') AND id = i8 AND `sp ace` = 1"),
            (std::vector<std::string>{"f64", "s", "id", "i8", "sp ace"}));
  EXPECT_EQ(columns("tsz = ts"), (std::vector<std::string>{"tsz", "ts"}));
}

}  // namespace
}  // namespace lance::scan
