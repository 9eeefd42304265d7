// Lance logical types <-> Arrow types, the schema tree and its field ids.
#include "lance/schema.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include "lance/file/schema_proto.h"

namespace lance {
namespace {

using arrow::field;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::shared_ptr<arrow::Field> Bf16Item() {
  auto md = arrow::key_value_metadata({"ARROW:extension:name", "ARROW:extension:metadata"},
                                      {"lance.bfloat16", ""});
  return field("item", arrow::fixed_size_binary(2), true, md);
}

struct LeafCase {
  std::shared_ptr<arrow::DataType> type;
  std::string logical;
};

std::vector<LeafCase> LeafCases() {
  return {
      {arrow::null(), "null"},
      {arrow::boolean(), "bool"},
      {arrow::int8(), "int8"},
      {arrow::uint8(), "uint8"},
      {arrow::int16(), "int16"},
      {arrow::uint16(), "uint16"},
      {arrow::int32(), "int32"},
      {arrow::uint32(), "uint32"},
      {arrow::int64(), "int64"},
      {arrow::uint64(), "uint64"},
      {arrow::float16(), "halffloat"},
      {arrow::float32(), "float"},
      {arrow::float64(), "double"},
      {arrow::utf8(), "string"},
      {arrow::binary(), "binary"},
      {arrow::large_utf8(), "large_string"},
      {arrow::large_binary(), "large_binary"},
      {arrow::date32(), "date32:day"},
      {arrow::date64(), "date64:ms"},
      {arrow::time32(arrow::TimeUnit::SECOND), "time32:s"},
      {arrow::time32(arrow::TimeUnit::MILLI), "time32:ms"},
      {arrow::time64(arrow::TimeUnit::MICRO), "time64:us"},
      {arrow::time64(arrow::TimeUnit::NANO), "time64:ns"},
      {arrow::duration(arrow::TimeUnit::SECOND), "duration:s"},
      {arrow::duration(arrow::TimeUnit::MILLI), "duration:ms"},
      {arrow::duration(arrow::TimeUnit::MICRO), "duration:us"},
      {arrow::duration(arrow::TimeUnit::NANO), "duration:ns"},
      {arrow::timestamp(arrow::TimeUnit::SECOND), "timestamp:s:-"},
      {arrow::timestamp(arrow::TimeUnit::MILLI), "timestamp:ms:-"},
      {arrow::timestamp(arrow::TimeUnit::MICRO), "timestamp:us:-"},
      {arrow::timestamp(arrow::TimeUnit::NANO), "timestamp:ns:-"},
      {arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"), "timestamp:us:UTC"},
      {arrow::timestamp(arrow::TimeUnit::NANO, "+05:30"), "timestamp:ns:+05:30"},
      {arrow::timestamp(arrow::TimeUnit::MILLI, "America/New_York"), "timestamp:ms:America/New_York"},
      {arrow::decimal128(38, 10), "decimal:128:38:10"},
      {arrow::decimal128(5, -2), "decimal:128:5:-2"},
      {arrow::decimal256(76, 20), "decimal:256:76:20"},
      {arrow::fixed_size_binary(16), "fixed_size_binary:16"},
      {arrow::fixed_size_list(arrow::float32(), 128), "fixed_size_list:float:128"},
      {arrow::fixed_size_list(arrow::uint8(), 3), "fixed_size_list:uint8:3"},
      {arrow::fixed_size_list(Bf16Item(), 8), "fixed_size_list:lance.bfloat16:8"},
      {arrow::dictionary(arrow::int8(), arrow::utf8()), "dict:string:int8:false"},
      {arrow::dictionary(arrow::uint32(), arrow::large_utf8()), "dict:large_string:uint32:false"},
  };
}

TEST(LogicalTypeTest, EveryLeafTypeBothWays) {
  for (const auto& c : LeafCases()) {
    SCOPED_TRACE(c.type->ToString() + " <-> " + c.logical);
    auto logical = LogicalTypeFromArrow(*c.type);
    ASSERT_TRUE(logical.ok()) << logical.status().ToString();
    EXPECT_EQ(*logical, c.logical);

    Field f;
    f.name = "f";
    f.logical_type = c.logical;
    auto type = ArrowTypeFromField(f);
    ASSERT_TRUE(type.ok()) << type.status().ToString();
    EXPECT_TRUE((*type)->Equals(*c.type, /*check_metadata=*/true))
        << (*type)->ToString() << " vs " << c.type->ToString();
  }
}

TEST(LogicalTypeTest, OrderedDictionaryIsWrittenAsUnordered) {
  auto logical = LogicalTypeFromArrow(*arrow::dictionary(arrow::int16(), arrow::utf8(), /*ordered=*/true));
  ASSERT_TRUE(logical.ok());
  EXPECT_EQ(*logical, "dict:string:int16:false");
}

TEST(LogicalTypeTest, BfloatExtensionKeepsItsMetadata) {
  Field f;
  f.name = "v";
  f.logical_type = "fixed_size_list:lance.bfloat16:8";
  auto type = ArrowTypeFromField(f);
  ASSERT_TRUE(type.ok()) << type.status().ToString();
  ASSERT_EQ((*type)->id(), arrow::Type::FIXED_SIZE_LIST);
  const auto& fsl = static_cast<const arrow::FixedSizeListType&>(**type);
  EXPECT_EQ(fsl.list_size(), 8);
  EXPECT_TRUE(fsl.value_type()->Equals(arrow::fixed_size_binary(2)));
  ASSERT_NE(fsl.value_field()->metadata(), nullptr);
  auto name = fsl.value_field()->metadata()->Get("ARROW:extension:name");
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "lance.bfloat16");
  // Without the metadata it is a plain fixed_size_binary list.
  auto plain = LogicalTypeFromArrow(*arrow::fixed_size_list(arrow::fixed_size_binary(2), 8));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(*plain, "fixed_size_list:fixed_size_binary:2:8");
}

TEST(LogicalTypeTest, NestedTypes) {
  struct Case {
    std::shared_ptr<arrow::DataType> type;
    std::string logical;
  };
  const std::vector<Case> cases = {
      {arrow::list(arrow::int32()), "list"},
      {arrow::list(arrow::struct_({field("a", arrow::int32())})), "list.struct"},
      {arrow::large_list(arrow::utf8()), "large_list"},
      {arrow::large_list(arrow::struct_({field("a", arrow::int32())})), "large_list.struct"},
      {arrow::struct_({field("a", arrow::int32()), field("b", arrow::utf8())}), "struct"},
      {arrow::map(arrow::utf8(), arrow::int32()), "map"},
      {arrow::list(arrow::list(arrow::int32())), "list"},
      {arrow::fixed_size_list(arrow::struct_({field("a", arrow::int32())}), 2), "fixed_size_list:struct:2"},
      {arrow::fixed_size_list(arrow::fixed_size_list(arrow::float32(), 4), 2),
       "fixed_size_list:fixed_size_list:float:4:2"},
      {arrow::struct_({}), "struct"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.type->ToString());
    auto logical = LogicalTypeFromArrow(*c.type);
    ASSERT_TRUE(logical.ok()) << logical.status().ToString();
    EXPECT_EQ(*logical, c.logical);
    // And back, through a schema (nested types need their children).
    auto schema = arrow::schema({field("n", c.type)});
    auto lance_schema = Schema::FromArrow(*schema);
    ASSERT_TRUE(lance_schema.ok()) << lance_schema.status().ToString();
    EXPECT_EQ(lance_schema->fields[0].logical_type, c.logical);
    auto type = ArrowTypeFromField(lance_schema->fields[0]);
    ASSERT_TRUE(type.ok()) << type.status().ToString();
    EXPECT_TRUE((*type)->Equals(*c.type, true)) << (*type)->ToString();
  }
}

TEST(LogicalTypeTest, UnsupportedArrowTypesAreErrors) {
  for (const auto& type : {arrow::map(arrow::utf8(), arrow::int32(), /*keys_sorted=*/true),
                           arrow::fixed_size_list(arrow::list(arrow::int32()), 2),
                           std::static_pointer_cast<arrow::DataType>(
                               arrow::dense_union({field("a", arrow::int32())})),
                           arrow::month_interval()}) {
    SCOPED_TRACE(type->ToString());
    EXPECT_FALSE(LogicalTypeFromArrow(*type).ok());
  }
}

TEST(LogicalTypeTest, BadLogicalTypesAreErrors) {
  for (const char* lt : {
           "int33", "", "INT32", "int32 ", "decimal:64:3:1", "decimal:128:x:1", "decimal:128:3",
           "decimal:128:100:1", "timestamp:xs:-", "timestamp:us", "time32:us", "time64:s", "time32:xs",
           "duration:", "duration:ms:1", "fixed_size_list:float", "fixed_size_list:float:-1",
           "fixed_size_list:float:abc", "fixed_size_list:float:", "fixed_size_list::4",
           "fixed_size_list:nope:4", "fixed_size_list:", "fixed_size_binary:-1", "fixed_size_binary:x",
           "fixed_size_binary", "dict:string:float:false", "dict:string:int8", "dict:nope:int8:false",
           "dict:::", "list", "list.struct", "large_list", "map", "date32:ms", ":", "::::",
       }) {
    SCOPED_TRACE(std::string("'") + lt + "'");
    Field f;
    f.name = "bad";
    f.logical_type = lt;
    auto type = ArrowTypeFromField(f);
    EXPECT_FALSE(type.ok()) << "accepted as " << (type.ok() ? (*type)->ToString() : "");
  }
}

TEST(LogicalTypeTest, NestedFieldsWithWrongChildrenAreErrors) {
  Field map;
  map.name = "m";
  map.logical_type = "map";
  Field entries;
  entries.name = "entries";
  entries.logical_type = "int32";  // not a struct
  map.children = {entries};
  auto type = ArrowTypeFromField(map);
  ASSERT_FALSE(type.ok());
  EXPECT_TRUE(Contains(type.status().message(), "m")) << type.status().ToString();

  entries.logical_type = "struct";
  Field key;
  key.name = "key";
  key.logical_type = "string";
  entries.children = {key};  // one child, not two
  map.children = {entries};
  EXPECT_FALSE(ArrowTypeFromField(map).ok());

  Field list;
  list.name = "l";
  list.logical_type = "list";
  Field bad_child;
  bad_child.name = "item";
  bad_child.logical_type = "int33";
  list.children = {bad_child};
  EXPECT_FALSE(ArrowTypeFromField(list).ok());
}

// ---------------------------------------------------------------------------
// The schema tree.

std::shared_ptr<arrow::Schema> NestedArrowSchema() {
  auto field_md = arrow::key_value_metadata({"description"}, {"the key"});
  auto schema_md = arrow::key_value_metadata({"owner", "purpose"}, {"tests", "ids"});
  return arrow::schema(
      {
          field("a", arrow::int32(), /*nullable=*/false, field_md),
          field("b", arrow::struct_({
                         field("c", arrow::list(arrow::struct_({
                                        field("d", arrow::int32()),
                                        field("e", arrow::utf8()),
                                    }))),
                         field("f", arrow::int64()),
                     })),
          field("g", arrow::map(arrow::utf8(), arrow::int32())),
          field("h", arrow::fixed_size_list(arrow::float32(), 4)),
          field("i", arrow::timestamp(arrow::TimeUnit::MICRO, "+05:30")),
          field("j", arrow::large_list(arrow::struct_({field("k", arrow::boolean())}))),
          field("v", arrow::fixed_size_list(Bf16Item(), 2)),
      },
      schema_md);
}

TEST(SchemaTest, FromArrowAssignsIdsInPreOrder) {
  auto schema = Schema::FromArrow(*NestedArrowSchema());
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  struct Expect {
    std::string name;
    int32_t id;
    int32_t parent;
    std::string type;
  };
  const std::vector<Expect> want = {
      {"a", 0, -1, "int32"},        {"b", 1, -1, "struct"},         {"c", 2, 1, "list.struct"},
      {"item", 3, 2, "struct"},     {"d", 4, 3, "int32"},           {"e", 5, 3, "string"},
      {"f", 6, 1, "int64"},         {"g", 7, -1, "map"},            {"entries", 8, 7, "struct"},
      {"key", 9, 8, "string"},      {"value", 10, 8, "int32"},      {"h", 11, -1, "fixed_size_list:float:4"},
      {"i", 12, -1, "timestamp:us:+05:30"},                         {"j", 13, -1, "large_list.struct"},
      {"item", 14, 13, "struct"},   {"k", 15, 14, "bool"},          {"v", 16, -1, "fixed_size_list:lance.bfloat16:2"},
  };
  const auto pre = schema->FieldsPreOrder();
  ASSERT_EQ(pre.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(pre[i].name, want[i].name);
    EXPECT_EQ(pre[i].id, want[i].id);
    EXPECT_EQ(pre[i].parent_id, want[i].parent);
    EXPECT_EQ(pre[i].logical_type, want[i].type);
    EXPECT_TRUE(pre[i].children.empty());
  }
  EXPECT_EQ(schema->MaxFieldId(), 16);
  EXPECT_FALSE(pre[0].nullable);
  EXPECT_EQ(pre[0].metadata.at("description"), "the key");
  EXPECT_FALSE(pre[9].nullable);  // map keys are non-null
  EXPECT_EQ(schema->metadata.at("owner"), "tests");
  ASSERT_NE(schema->FieldById(5), nullptr);
  EXPECT_EQ(schema->FieldById(5)->name, "e");
  EXPECT_EQ(schema->FieldById(17), nullptr);
  // The tree itself: b has two children, c one.
  ASSERT_EQ(schema->fields.size(), 7u);
  ASSERT_EQ(schema->fields[1].children.size(), 2u);
  EXPECT_EQ(schema->fields[1].children[0].children.size(), 1u);
}

TEST(SchemaTest, FromArrowStartsAtFirstId) {
  auto schema = Schema::FromArrow(*NestedArrowSchema(), 100);
  ASSERT_TRUE(schema.ok());
  const auto pre = schema->FieldsPreOrder();
  EXPECT_EQ(pre.front().id, 100);
  EXPECT_EQ(pre[2].parent_id, 101);
  EXPECT_EQ(schema->MaxFieldId(), 116);
  EXPECT_EQ(Schema{}.MaxFieldId(), -1);
}

TEST(SchemaTest, ToArrowGivesBackAnEqualSchema) {
  const auto original = NestedArrowSchema();
  auto schema = Schema::FromArrow(*original);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  auto back = schema->ToArrow();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE((*back)->Equals(*original, /*check_metadata=*/true))
      << (*back)->ToString(true) << "\nvs\n" << original->ToString(true);
}

TEST(SchemaTest, ToArrowSurvivesTheProtoRoundTrip) {
  auto schema = Schema::FromArrow(*NestedArrowSchema());
  ASSERT_TRUE(schema.ok());
  google::protobuf::RepeatedPtrField<pb::file::Field> fields;
  file::SchemaToProtoFields(*schema, &fields);
  ASSERT_EQ(fields.size(), 17);
  google::protobuf::Map<std::string, std::string> md(schema->metadata.begin(), schema->metadata.end());
  auto again = file::SchemaFromProtoFields(fields, md, "test");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  auto back = again->ToArrow();
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE((*back)->Equals(*NestedArrowSchema(), true)) << (*back)->ToString(true);
}

TEST(SchemaTest, ExtensionNameBecomesFieldMetadata) {
  Schema s;
  Field f;
  f.name = "j";
  f.id = 0;
  f.logical_type = "large_binary";
  f.extension_name = "lance.json";
  s.fields = {f};
  auto arrow_schema = s.ToArrow();
  ASSERT_TRUE(arrow_schema.ok());
  auto md = (*arrow_schema)->field(0)->metadata();
  ASSERT_NE(md, nullptr);
  auto name = md->Get("ARROW:extension:name");
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "lance.json");
}

// ---------------------------------------------------------------------------
// Schemas from manifest protobuf fields.

void AddField(google::protobuf::RepeatedPtrField<pb::file::Field>* fields, const std::string& name,
              int32_t id, int32_t parent, const std::string& type) {
  auto* f = fields->Add();
  f->set_name(name);
  f->set_id(id);
  f->set_parent_id(parent);
  f->set_logical_type(type);
  f->set_nullable(true);
}

TEST(SchemaFromProtoTest, MissingParentIsAnError) {
  google::protobuf::RepeatedPtrField<pb::file::Field> fields;
  google::protobuf::Map<std::string, std::string> md;
  AddField(&fields, "s", 0, -1, "struct");
  AddField(&fields, "orphan", 1, 7, "int32");
  auto schema = file::SchemaFromProtoFields(fields, md, "/ds/_versions/3.manifest");
  ASSERT_FALSE(schema.ok());
  const std::string msg = schema.status().message();
  EXPECT_TRUE(Contains(msg, "/ds/_versions/3.manifest")) << msg;
  EXPECT_TRUE(Contains(msg, "orphan")) << msg;
  EXPECT_TRUE(Contains(msg, "7")) << msg;
}

TEST(SchemaFromProtoTest, ParentMustComeFirst) {
  google::protobuf::RepeatedPtrField<pb::file::Field> fields;
  google::protobuf::Map<std::string, std::string> md;
  AddField(&fields, "child", 1, 0, "int32");
  AddField(&fields, "s", 0, -1, "struct");
  EXPECT_FALSE(file::SchemaFromProtoFields(fields, md, "m").ok());
}

TEST(SchemaFromProtoTest, DuplicateIdsAttachToTheFirstInPreOrder) {
  google::protobuf::RepeatedPtrField<pb::file::Field> fields;
  google::protobuf::Map<std::string, std::string> md;
  AddField(&fields, "a", 0, -1, "struct");
  AddField(&fields, "x", 5, 0, "struct");    // a.x, id 5
  AddField(&fields, "y", 5, -1, "struct");   // a second id 5, later in pre-order
  AddField(&fields, "z", 6, 5, "int32");     // goes under a.x, not y
  AddField(&fields, "b", 0, -1, "struct");   // a second id 0
  AddField(&fields, "w", 7, 0, "int32");     // goes under a, not b
  auto schema = file::SchemaFromProtoFields(fields, md, "m");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  ASSERT_EQ(schema->fields.size(), 3u);
  const Field& a = schema->fields[0];
  ASSERT_EQ(a.children.size(), 2u);
  EXPECT_EQ(a.children[0].name, "x");
  ASSERT_EQ(a.children[0].children.size(), 1u);
  EXPECT_EQ(a.children[0].children[0].name, "z");
  EXPECT_EQ(a.children[1].name, "w");
  EXPECT_EQ(schema->fields[1].name, "y");
  EXPECT_TRUE(schema->fields[1].children.empty());
  EXPECT_EQ(schema->fields[2].name, "b");
  EXPECT_TRUE(schema->fields[2].children.empty());
  EXPECT_EQ(schema->FieldById(5)->name, "x");
}

TEST(SchemaFromProtoTest, KeepsEveryFieldAttribute) {
  google::protobuf::RepeatedPtrField<pb::file::Field> fields;
  google::protobuf::Map<std::string, std::string> md;
  md["k"] = "v";
  auto* f = fields.Add();
  f->set_name("s");
  f->set_id(3);
  f->set_parent_id(-1);
  f->set_logical_type("dict:string:int32:false");
  f->set_nullable(false);
  f->set_encoding(pb::file::DICTIONARY);
  f->mutable_dictionary()->set_offset(10);
  f->mutable_dictionary()->set_length(4);
  f->set_extension_name("ext");
  (*f->mutable_metadata())["m"] = "1";
  f->set_unenforced_primary_key(true);
  auto schema = file::SchemaFromProtoFields(fields, md, "m");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  const Field& got = schema->fields.at(0);
  EXPECT_EQ(got.id, 3);
  EXPECT_FALSE(got.nullable);
  EXPECT_EQ(got.encoding, static_cast<int32_t>(pb::file::DICTIONARY));
  EXPECT_EQ(got.dictionary_offset, 10);
  EXPECT_EQ(got.dictionary_length, 4);
  EXPECT_EQ(got.extension_name, "ext");
  EXPECT_EQ(got.metadata.at("m"), "1");
  EXPECT_TRUE(got.unenforced_primary_key);
  EXPECT_EQ(schema->metadata.at("k"), "v");
}

}  // namespace
TEST(SchemaFromProtoTest, HostileNestingDepthIsAnErrorNotAStackOverflow) {
  google::protobuf::RepeatedPtrField<pb::file::Field> fields;
  google::protobuf::Map<std::string, std::string> md;
  for (int i = 0; i < 100000; ++i) AddField(&fields, "s" + std::to_string(i), i, i - 1, "struct");
  auto schema = file::SchemaFromProtoFields(fields, md, "/ds/_versions/9.manifest");
  ASSERT_FALSE(schema.ok());
  EXPECT_TRUE(Contains(schema.status().message(), "/ds/_versions/9.manifest"));
  EXPECT_TRUE(Contains(schema.status().message(), "deeper than"));
}

// ---------------------------------------------------------------------------
// Blob v2 columns: the data file's descriptor, the manifest's logical struct.

TEST(SchemaFromProtoTest, BlobV2DescriptorChildrenWithoutIdsJoinTheirStruct) {
  // pylance 14 lists a 2.2 blob column's descriptor children with id and
  // parent -1, right after the struct.
  google::protobuf::RepeatedPtrField<pb::file::Field> fields;
  google::protobuf::Map<std::string, std::string> md;
  AddField(&fields, "id", 0, -1, "int64");
  AddField(&fields, "b", 1, -1, "struct");
  (*fields.Mutable(1)->mutable_metadata())["lance-encoding:blob"] = "true";
  (*fields.Mutable(1)->mutable_metadata())["lance-encoding:packed"] = "true";
  for (const char* name : {"kind", "position", "size", "blob_id", "blob_uri"}) {
    AddField(&fields, name, -1, -1, "uint64");
  }
  AddField(&fields, "after", 2, -1, "int32");
  auto schema = file::SchemaFromProtoFields(fields, md, "f.lance");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  ASSERT_EQ(schema->fields.size(), 3u);
  ASSERT_EQ(schema->fields[1].children.size(), 5u);
  EXPECT_EQ(schema->fields[1].children[4].name, "blob_uri");
  EXPECT_EQ(schema->fields[2].name, "after");
}

TEST(SchemaFromProtoTest, FieldsWithoutIdsStayTopLevelElsewhere) {
  google::protobuf::RepeatedPtrField<pb::file::Field> fields;
  google::protobuf::Map<std::string, std::string> md;
  AddField(&fields, "s", 0, -1, "struct");
  AddField(&fields, "x", -1, -1, "int32");
  auto schema = file::SchemaFromProtoFields(fields, md, "f.lance");
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ(schema->fields.size(), 2u);
}

TEST(SchemaTest, BlobV2ColumnReadsAsDescriptors) {
  Field b;
  b.name = "b";
  b.id = 1;
  b.logical_type = "struct";
  b.metadata = {{"ARROW:extension:name", "lance.blob.v2"}};
  Field data, uri;
  data.name = "data", data.id = 2, data.parent_id = 1, data.logical_type = "large_binary";
  uri.name = "uri", uri.id = 3, uri.parent_id = 1, uri.logical_type = "string";
  b.children = {data, uri};
  Schema s;
  s.fields = {b};
  auto arrow_schema = s.ToArrow();
  ASSERT_TRUE(arrow_schema.ok()) << arrow_schema.status().ToString();
  auto want = arrow::struct_({field("kind", arrow::uint8(), false), field("position", arrow::uint64(), false),
                              field("size", arrow::uint64(), false), field("blob_id", arrow::uint32(), false),
                              field("blob_uri", arrow::utf8(), false)});
  const auto& got = (*arrow_schema)->field(0);
  EXPECT_TRUE(got->type()->Equals(*want)) << got->type()->ToString();
  ASSERT_NE(got->metadata(), nullptr);
  EXPECT_EQ(got->metadata()->Get("lance-encoding:blob").ValueOr(""), "true");
  EXPECT_EQ(got->metadata()->Get("lance-encoding:packed").ValueOr(""), "true");
  EXPECT_FALSE(got->metadata()->Contains("ARROW:extension:name"));
}

}  // namespace lance
