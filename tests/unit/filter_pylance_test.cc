// Cross-check of SQL filters against pinned pylance: tests/fixtures/filters holds a
// table (data.arrow, as pylance reads it back from a dataset) and, for ~230 filters,
// the ids pylance's `to_table(filter=...)` returns or the fact that it refused the
// filter (expected.json, made by gen.py). Every filter must give the same ids here,
// or fail here too.
#include "lance/scan/filter_parser.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <arrow/ipc/api.h>
#include <nlohmann/json.hpp>

namespace lance::scan {
namespace {

namespace cp = arrow::compute;

std::filesystem::path FixtureDir() {
  return std::filesystem::path(LANCE_TEST_FIXTURES_DIR) / "filters";
}

std::shared_ptr<arrow::RecordBatch> LoadData() {
  auto file = arrow::io::ReadableFile::Open((FixtureDir() / "data.arrow").string());
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (!file.ok()) return nullptr;
  auto reader = arrow::ipc::RecordBatchFileReader::Open(*file);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return nullptr;
  arrow::RecordBatchVector batches;
  for (int i = 0; i < (*reader)->num_record_batches(); ++i) {
    auto batch = (*reader)->ReadRecordBatch(i);
    EXPECT_TRUE(batch.ok());
    batches.push_back(*batch);
  }
  auto table = arrow::Table::FromRecordBatches((*reader)->schema(), batches);
  EXPECT_TRUE(table.ok());
  auto combined = (*table)->CombineChunksToBatch();
  EXPECT_TRUE(combined.ok());
  return *combined;
}

nlohmann::json LoadExpected() {
  std::ifstream in(FixtureDir() / "expected.json");
  EXPECT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// The ids of the rows `sql` keeps, or an error.
arrow::Result<std::vector<int64_t>> MatchingIds(const std::string& sql,
                                                const std::shared_ptr<arrow::RecordBatch>& batch) {
  ARROW_ASSIGN_OR_RAISE(auto expr, ParseFilter(sql, *batch->schema()));
  ARROW_ASSIGN_OR_RAISE(auto bound, expr.Bind(*batch->schema()));
  ARROW_ASSIGN_OR_RAISE(auto input, cp::MakeExecBatch(*batch->schema(), batch));
  ARROW_ASSIGN_OR_RAISE(auto mask, cp::ExecuteScalarExpression(bound, input));
  const auto& ids = static_cast<const arrow::Int64Array&>(*batch->GetColumnByName("id"));
  std::vector<int64_t> out;
  const std::shared_ptr<arrow::Array> array = mask.is_scalar() ? nullptr : mask.make_array();
  for (int64_t i = 0; i < batch->num_rows(); ++i) {
    bool keep;
    if (mask.is_scalar()) {
      const auto& s = mask.scalar_as<arrow::BooleanScalar>();
      keep = s.is_valid && s.value;
    } else {
      const auto& a = static_cast<const arrow::BooleanArray&>(*array);
      keep = a.IsValid(i) && a.Value(i);
    }
    if (keep) out.push_back(ids.Value(i));
  }
  return out;
}

// Filters where lance-cpp deliberately parts from pylance: what happens here
// instead ("error", or the ids kept) and why.
struct Divergence {
  std::string outcome;
  std::string why;
};

const std::map<std::string, Divergence>& Divergences() {
  static const std::map<std::string, Divergence> divergences = {
      // Lance parses `SELECT 1 FROM t WHERE <filter>` as one statement and never
      // checks that the tokens ran out, so text after a complete filter is dropped.
      {"id = 1)", {"error", "trailing text is an error here"}},
      {"id = 1 2", {"error", "trailing text is an error here"}},
      // DataFusion features outside the contract's predicate language.
      {"ts - ts = ts - ts", {"error", "no date/time arithmetic"}},
      {"d + 1 = d", {"error", "no date/time arithmetic"}},
      {"lower(Name) = 'x'", {"error", "only the list and string predicates are functions here"}},
      {"CAST(id AS string) = '1'", {"error", "no CAST"}},
      {"Name LIKE Name", {"error", "LIKE patterns must be literals (Arrow's match_like)"}},
  };
  return divergences;
}

std::string Join(const std::vector<int64_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s + "]";
}

TEST(FilterPylance, FixtureIsPresentAndLarge) {
  auto expected = LoadExpected();
  auto batch = LoadData();
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(expected["rows"].get<int64_t>(), batch->num_rows());
  EXPECT_GE(expected["filters"].size(), 60u);
  EXPECT_EQ(expected["pylance"].get<std::string>(), "14.0.2");
}

TEST(FilterPylance, EveryFilterAgrees) {
  auto expected = LoadExpected();
  auto batch = LoadData();
  ASSERT_NE(batch, nullptr);
  int agreed = 0;
  for (const auto& entry : expected["filters"]) {
    const std::string sql = entry["filter"].get<std::string>();
    auto got = MatchingIds(sql, batch);
    if (auto it = Divergences().find(sql); it != Divergences().end()) {
      const std::string outcome = got.ok() ? Join(*got) : "error";
      EXPECT_EQ(outcome, it->second.outcome) << sql << " (" << it->second.why << ")";
      continue;
    }
    if (entry.contains("error")) {
      EXPECT_FALSE(got.ok()) << sql << ": pylance refuses it ("
                             << entry["error"].get<std::string>() << ") but here it keeps "
                             << Join(*got);
    } else {
      const auto want = entry["ids"].get<std::vector<int64_t>>();
      if (!got.ok()) {
        ADD_FAILURE() << sql << ": pylance keeps " << Join(want) << " but here: "
                      << got.status().ToString();
        continue;
      }
      EXPECT_EQ(Join(*got), Join(want)) << sql;
    }
    ++agreed;
  }
  EXPECT_GE(agreed, 60);
}

// A filter pylance refuses should fail while parsing here (not only when evaluated),
// except the few that pylance itself only notices while running.
TEST(FilterPylance, RefusedFiltersFailToParse) {
  auto expected = LoadExpected();
  auto batch = LoadData();
  ASSERT_NE(batch, nullptr);
  for (const auto& entry : expected["filters"]) {
    if (!entry.contains("error")) continue;
    const std::string sql = entry["filter"].get<std::string>();
    const std::string error = entry["error"].get<std::string>();
    // pylance's refusal of an ESCAPE other than backslash comes when it runs the filter
    // but does not depend on the data; here it comes when parsing.
    const bool at_runtime = error.find("Query Execution error") != std::string::npos &&
                            error.find("escape_char") == std::string::npos;
    auto parsed = ParseFilter(sql, *batch->schema());
    if (at_runtime) {
      EXPECT_TRUE(parsed.ok()) << sql << ": " << parsed.status().ToString();
    } else {
      EXPECT_FALSE(parsed.ok()) << sql << " parsed, but pylance says: " << error;
    }
  }
}

}  // namespace
}  // namespace lance::scan
