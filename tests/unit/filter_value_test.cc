// SET values (scan::ParseValue): the filter language as values, cast to the
// assigned column's type as DataFusion casts.
#include <gtest/gtest.h>

#include <arrow/api.h>
#include <arrow/compute/exec.h>
#include <arrow/compute/expression.h>

#include "lance/scan/filter_parser.h"

namespace lance::scan {
namespace {

namespace cp = arrow::compute;

std::shared_ptr<arrow::RecordBatch> Batch() {
  arrow::Int64Builder id;
  arrow::DoubleBuilder f;
  arrow::StringBuilder s;
  EXPECT_TRUE(id.AppendValues({1, 2, 3}).ok());
  EXPECT_TRUE(f.AppendValues({1.75, -2.5, 1e12}).ok());
  EXPECT_TRUE(s.AppendValues({"a", "b", "c"}).ok());
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("f", arrow::float64()),
                               arrow::field("s", arrow::utf8())});
  return arrow::RecordBatch::Make(schema, 3, {*id.Finish(), *f.Finish(), *s.Finish()});
}

// The value of `sql` cast to `target` over rows [offset, offset + length).
Result<std::shared_ptr<arrow::Array>> Evaluate(const std::string& sql,
                                               const std::shared_ptr<arrow::DataType>& target,
                                               int64_t offset = 0, int64_t length = 3) {
  auto batch = Batch()->Slice(offset, length);
  LANCE_ASSIGN_OR_RAISE(auto expr, ParseValue(sql, *batch->schema(), target));
  LANCE_ASSIGN_OR_RAISE(auto bound, expr.Bind(*batch->schema()));
  LANCE_ASSIGN_OR_RAISE(auto datum, cp::ExecuteScalarExpression(bound, cp::ExecBatch(*batch)));
  if (datum.is_scalar()) return arrow::MakeArrayFromScalar(*datum.scalar(), batch->num_rows());
  return datum.make_array();
}

std::vector<int32_t> Ints(const std::shared_ptr<arrow::Array>& a) {
  const auto& values = static_cast<const arrow::Int32Array&>(*a);
  return std::vector<int32_t>(values.raw_values(), values.raw_values() + values.length());
}

TEST(FilterValue, ArithmeticCastToTheColumnType) {
  auto v = Evaluate("id * 2 + 1", arrow::int32());
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_TRUE((*v)->type()->Equals(arrow::int32()));
  EXPECT_EQ(Ints(*v), (std::vector<int32_t>{3, 5, 7}));
}

TEST(FilterValue, FloatsIntoIntegersAreTruncatedTowardZero) {
  auto v = Evaluate("f", arrow::int32(), 0, 2);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(Ints(*v), (std::vector<int32_t>{1, -2}));
  auto overflow = Evaluate("f", arrow::int32());
  EXPECT_FALSE(overflow.ok());
}

TEST(FilterValue, StringsLiteralsAndNulls) {
  auto concat = Evaluate("'x' || s", arrow::utf8());
  ASSERT_TRUE(concat.ok()) << concat.status().ToString();
  const auto& strings = static_cast<const arrow::StringArray&>(**concat);
  EXPECT_EQ(strings.GetString(0), "xa");
  EXPECT_EQ(strings.GetString(2), "xc");
  auto null = Evaluate("NULL", arrow::int64());
  ASSERT_TRUE(null.ok()) << null.status().ToString();
  EXPECT_EQ((*null)->null_count(), 3);
  auto number = Evaluate("'12'", arrow::int32());
  ASSERT_TRUE(number.ok()) << number.status().ToString();
  EXPECT_EQ(Ints(*number), (std::vector<int32_t>{12, 12, 12}));
}

TEST(FilterValue, ErrorsSayWhereAndWhat) {
  auto syntax = ParseValue("id +", *Batch()->schema(), arrow::int64());
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.status().message().find("id +"), std::string::npos);
  auto unknown = ParseValue("nope + 1", *Batch()->schema(), arrow::int64());
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("nope"), std::string::npos);
}

}  // namespace
}  // namespace lance::scan
