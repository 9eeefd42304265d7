// Schema evolution (lance/dataset_ops.h NewAddColumns, NewDropColumns,
// NewAlterColumns): field-id assignment as the reference's max_field_id,
// the refusals pylance makes, and the conflict rules of Merge and Project
// against a concurrent append.
#include <gtest/gtest.h>

#include <arrow/api.h>

#include <filesystem>

#include "lance/dataset.h"
#include "lance/dataset_ops.h"
#include "lance/ops/schema_evolution_internal.h"
#include "lance/scanner.h"
#include "lance/status.h"
#include "lance/txn/conflict_resolver.h"
#include "lance/txn/transaction_builder.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

std::shared_ptr<arrow::RecordBatchReader> Rows(int64_t from, int64_t to, bool null_x = true) {
  arrow::Int64Builder id;
  arrow::DoubleBuilder x;
  for (int64_t i = from; i < to; ++i) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE((null_x && i % 4 == 0 ? x.AppendNull() : x.Append(static_cast<double>(i) / 2)).ok());
  }
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("x", arrow::float64())});
  auto batch = arrow::RecordBatch::Make(schema, to - from, {*id.Finish(), *x.Finish()});
  return *arrow::RecordBatchReader::Make({batch}, schema);
}

std::vector<std::pair<std::string, int32_t>> Ids(const Dataset& ds) {
  std::vector<std::pair<std::string, int32_t>> out;
  for (const auto& f : ds.manifest().schema.FieldsPreOrder()) out.emplace_back(f.name, f.id);
  return out;
}

class SchemaEvolutionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lance_schema_evolution_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::shared_ptr<Dataset> Create(bool null_x = true) {
    WriteParams params;
    params.max_rows_per_file = 10;
    params.data_storage_version = "2.1";
    auto ds = WriteDataset(Rows(0, 20, null_x), (dir_ / "ds").string(), params);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? *ds : nullptr;
  }

  fs::path dir_;
};

TEST(MaxFieldId, CountsIdsOfDataFilesTheSchemaNoLongerHas) {
  Manifest m;
  m.schema.fields = {Field{.name = "a", .id = 0}, Field{.name = "c", .id = 2}};
  EXPECT_EQ(ops::MaxFieldId(m), 2);
  Fragment f;
  f.files.push_back(DataFile{.fields = {0, 1, 2}});
  f.files.push_back(DataFile{.fields = {7}});  // a dropped column's file
  f.files.push_back(DataFile{.fields = {-2}});
  m.fragments.push_back(f);
  EXPECT_EQ(ops::MaxFieldId(m), 7);
  EXPECT_EQ(ops::MaxFieldId(Manifest{}), -1);
}

TEST(NewFieldsSchema, AssignsIdsInPreOrderAfterTheMax) {
  Manifest m;
  m.schema.fields = {Field{.name = "a", .id = 4}};
  auto st = arrow::struct_({arrow::field("p", arrow::int32()), arrow::field("q", arrow::utf8())});
  auto schema = ops::NewFieldsSchema(m, {arrow::field("s", st), arrow::field("t", arrow::int64())});
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  std::vector<std::pair<std::string, int32_t>> ids;
  for (const auto& f : schema->FieldsPreOrder()) ids.emplace_back(f.name, f.id);
  EXPECT_EQ(ids, (std::vector<std::pair<std::string, int32_t>>{{"s", 5}, {"p", 6}, {"q", 7}, {"t", 8}}));
}

TEST_F(SchemaEvolutionTest, AddedColumnsTakeIdsAfterEveryDataFile) {
  auto ds = Create();
  auto v2 = ds->NewAddColumns().Sql("y", "id * 2").Sql("z", "x + 1").Commit();
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(Ids(**v2), (std::vector<std::pair<std::string, int32_t>>{{"id", 0}, {"x", 1}, {"y", 2}, {"z", 3}}));
  // Each fragment got one file with only the new fields.
  for (const auto& f : (*v2)->manifest().fragments) {
    ASSERT_EQ(f.files.size(), 2u);
    EXPECT_EQ(f.files[1].fields, (std::vector<int32_t>{2, 3}));
    EXPECT_EQ(f.files[1].column_indices, (std::vector<int32_t>{0, 1}));
  }
  // Dropping x keeps its id taken (its file still holds it)...
  auto v3 = (*v2)->NewDropColumns({"x"}).Commit();
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  auto v4 = (*v3)->NewAddColumns().AllNulls(arrow::field("n", arrow::int32())).Commit();
  ASSERT_TRUE(v4.ok()) << v4.status().ToString();
  EXPECT_EQ(Ids(**v4).back(), (std::pair<std::string, int32_t>{"n", 4}));
  // ...but dropping y and z leaves their files without a live field: the
  // files go, and so do their ids (the max over schema and files is x's, 1).
  auto v5 = (*v4)->NewDropColumns({"y", "z", "n"}).Commit();
  ASSERT_TRUE(v5.ok()) << v5.status().ToString();
  for (const auto& f : (*v5)->manifest().fragments) EXPECT_EQ(f.files.size(), 1u);
  auto v6 = (*v5)->NewAddColumns().Sql("w", "id + 1").Commit();
  ASSERT_TRUE(v6.ok()) << v6.status().ToString();
  EXPECT_EQ(Ids(**v6).back(), (std::pair<std::string, int32_t>{"w", 2}));
  auto table = ScanBuilder(*v6).Project({"w"}).ToTable();
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto w = std::static_pointer_cast<arrow::Int64Array>((*(*table)->CombineChunksToBatch())->column(0));
  for (int64_t i = 0; i < w->length(); ++i) EXPECT_EQ(w->Value(i), i + 1);
}

TEST_F(SchemaEvolutionTest, AllNullColumnsChangeOnlyTheSchema) {
  auto ds = Create();
  auto v2 = ds->NewAddColumns().AllNulls(arrow::field("n", arrow::utf8())).Commit();
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ((*v2)->manifest().fragments[0].files.size(), 1u);
  auto table = ScanBuilder(*v2).Project({"n"}).ToTable();
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  EXPECT_EQ((*table)->column(0)->null_count(), 20);
}

TEST_F(SchemaEvolutionTest, RefusesWhatPylanceRefuses) {
  auto ds = Create();
  auto refused = [&](Result<std::shared_ptr<Dataset>> r, const std::string& message) {
    ASSERT_FALSE(r.ok()) << message;
    EXPECT_NE(r.status().message().find(message), std::string::npos) << r.status().ToString();
  };
  refused(ds->NewAddColumns().Sql("id", "id + 1").Commit(), "Column id already exists in the dataset");
  refused(ds->NewAddColumns().AllNulls(arrow::field("id", arrow::int32())).Commit(), "Type conflicts between id");
  refused(ds->NewAddColumns().AllNulls(arrow::field("q", arrow::int32(), false)).Commit(),
          "All-null columns must be nullable");
  refused(ds->NewAddColumns().Sql("a", "1").AllNulls(arrow::field("b", arrow::int32())).Commit(),
          "separate calls");
  refused(ds->NewAddColumns().Sql("a", "nope + 1").Commit(), "nope");
  refused(ds->NewAddColumns().Commit(), "no column to add");
  refused(ds->NewDropColumns({"nope"}).Commit(), "Column nope does not exist in the dataset");
  refused(ds->NewDropColumns({"id", "x"}).Commit(), "Cannot drop all columns from a dataset");
  refused(ds->NewAlterColumns().Alter({.path = "nope", .rename = "q"}).Commit(), "does not exist");
  refused(ds->NewAlterColumns().Alter({.path = "x", .rename = "id"}).Commit(), "Duplicate field name \"id\"");
  refused(ds->NewAlterColumns().Alter({.path = "x", .nullable = false}).Commit(),
          "Column \"x\" contains NULL values and cannot be made non-nullable");
  refused(ds->NewAlterColumns().Alter({.path = "x", .data_type = arrow::utf8()}).Commit(),
          "Cannot cast column \"x\" from double to string");
  // Nothing was committed.
  auto latest = ds->CheckoutLatest();
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ((*latest)->version(), 1u);
}

TEST_F(SchemaEvolutionTest, TighteningNullabilityIsAProjectThatConflictsWithWrites) {
  auto ds = Create(/*null_x=*/false);
  // Another writer appends after `ds` was opened.
  auto appended = ds->NewAppend().Commit(Rows(20, 25));
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  // A drop (preserves nullability) commits on top of the append...
  auto dropped = ds->NewDropColumns({"x"}).Commit();
  ASSERT_TRUE(dropped.ok()) << dropped.status().ToString();
  EXPECT_EQ((*dropped)->manifest().fragments.size(), 3u);
  // ...making x non-nullable does not (the append's rows were not checked),
  // nor does adding columns to fragments the append did not see.
  auto tightened = ds->NewAlterColumns().Alter({.path = "id", .nullable = false}).Commit();
  ASSERT_FALSE(tightened.ok());
  EXPECT_EQ(GetErrorKind(tightened.status()), ErrorKind::kRetryableCommitConflict) << tightened.status().ToString();
  auto added = ds->NewAddColumns().Sql("y", "id * 2").Commit();
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(GetErrorKind(added.status()), ErrorKind::kRetryableCommitConflict) << added.status().ToString();
  // On the latest version both work, and a renamed column keeps its id.
  auto latest = ds->CheckoutLatest();
  ASSERT_TRUE(latest.ok());
  auto v = (*latest)->NewAlterColumns().Alter({.path = "id", .rename = "key", .nullable = false}).Commit();
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)->manifest().schema.fields[0].name, "key");
  EXPECT_EQ((*v)->manifest().schema.fields[0].id, 0);
  EXPECT_FALSE((*v)->manifest().schema.fields[0].nullable);
}

// Merge and Project as another writer reads them back from the
// transaction file: the kind, the fragments, and whether the schema change
// may tighten nullability (preserves_nullability written as pylance 14).
TEST(SchemaEvolutionTransactions, MergeAndProjectRoundTripForTheConflictRules) {
  Fragment f;
  f.id = 3;
  f.physical_rows = 10;
  f.files.push_back(DataFile{.path = "a.lance", .fields = {0}, .column_indices = {0}, .file_major_version = 2,
                             .file_minor_version = 1});
  Schema schema;
  schema.fields = {Field{.name = "id", .id = 0, .logical_type = "int64"}};
  for (bool preserves : {true, false}) {
    auto merge = txn::Transaction::Make(4, txn::Merge{{f}, schema, preserves});
    auto facts = txn::ParseOperationFacts(merge.Serialize(), "merge");
    ASSERT_TRUE(facts.ok()) << facts.status().ToString();
    EXPECT_EQ(facts->kind, txn::OperationKind::kMerge);
    ASSERT_EQ(facts->updated_fragments.size(), 1u);
    EXPECT_EQ(facts->updated_fragments[0].id, 3u);
    EXPECT_EQ(facts->may_alter_nullability, !preserves);
    EXPECT_EQ(txn::FactsOf(merge.operation).may_alter_nullability, !preserves);

    auto project = txn::Transaction::Make(4, txn::Project{schema, preserves});
    facts = txn::ParseOperationFacts(project.Serialize(), "project");
    ASSERT_TRUE(facts.ok()) << facts.status().ToString();
    EXPECT_EQ(facts->kind, txn::OperationKind::kProject);
    EXPECT_EQ(facts->may_alter_nullability, !preserves);
  }
  // The matrix: a Merge against a concurrent append must be re-run; a
  // Project that keeps nullability is compatible with it, one that tightens
  // it is not.
  txn::OperationFacts append;
  append.kind = txn::OperationKind::kAppend;
  std::set<uint64_t> rebase;
  auto check = [&](const txn::Operation& op) {
    return txn::CheckConflict(txn::FactsOf(op), append, {}, false, &rebase);
  };
  EXPECT_EQ(check(txn::Merge{{f}, schema, true}), txn::Verdict::kRetryable);
  EXPECT_EQ(check(txn::Project{schema, true}), txn::Verdict::kCompatible);
  EXPECT_EQ(check(txn::Project{schema, false}), txn::Verdict::kRetryable);
}

TEST_F(SchemaEvolutionTest, DecimalCastRoundsHalfAwayFromZeroAndChecksPrecision) {
  auto type = *arrow::Decimal128Type::Make(5, 2);
  arrow::Decimal128Builder d(type);
  for (const char* v : {"0.05", "-0.05", "0.04", "-0.15", "9.95", "-9.94"}) {
    ASSERT_TRUE(d.Append(*arrow::Decimal128::FromString(v)).ok());
  }
  ASSERT_TRUE(d.AppendNull().ok());
  auto schema = arrow::schema({arrow::field("d", type)});
  auto batch = arrow::RecordBatch::Make(schema, 7, {*d.Finish()});
  WriteParams params;
  params.data_storage_version = "2.1";
  auto ds = WriteDataset(*arrow::RecordBatchReader::Make({batch}, schema), (dir_ / "dec").string(), params);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  // Precision 2 at scale 1 cannot hold 9.95 rounded: refused with arrow-rs's words.
  auto tight = (*ds)->NewAlterColumns().Alter({.path = "d", .data_type = *arrow::Decimal128Type::Make(2, 1)}).Commit();
  ASSERT_FALSE(tight.ok());
  EXPECT_NE(tight.status().message().find("10.0 is too large to store in a Decimal128 of precision 2. Max is 9.9"),
            std::string::npos)
      << tight.status().ToString();
  auto cast = (*ds)->NewAlterColumns().Alter({.path = "d", .data_type = *arrow::Decimal256Type::Make(4, 1)}).Commit();
  ASSERT_TRUE(cast.ok()) << cast.status().ToString();
  EXPECT_EQ(Ids(**cast), (std::vector<std::pair<std::string, int32_t>>{{"d", 1}}));
  auto table = ScanBuilder(*cast).ToTable();
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto out = std::static_pointer_cast<arrow::Decimal256Array>((*table)->column(0)->chunk(0));
  std::vector<std::string> got;
  for (int64_t i = 0; i < out->length(); ++i) got.push_back(out->IsNull(i) ? "null" : out->FormatValue(i));
  EXPECT_EQ(got, (std::vector<std::string>{"0.1", "-0.1", "0.0", "-0.2", "10.0", "-9.9", "null"}));
}

}  // namespace
}  // namespace lance
