// Writing legacy (0.1) data files: the bytes of a file pylance 14.0.2's legacy
// writer made (tests/interop/test_legacy_write.py compares many more against
// pylance), row groups, sliced input, a round trip through the legacy reader,
// and the types lance-cpp does not write refused by name.
#include "lance/file/legacy/legacy_writer.h"

#include <gtest/gtest.h>

#include <string>

#include <arrow/api.h>
#include <arrow/io/memory.h>

#include "lance/file/legacy/legacy_reader.h"
#include "lance/file/legacy_metadata.h"

namespace lance::file::legacy {
namespace {

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

// lance.write_dataset(pa.table({"a": pa.array([1, 2, None, 4], pa.int32()),
//                               "s": ["x", "yy", None, ""]}), uri,
//                     data_storage_version="legacy") with pylance 14.0.2.
const std::string kPylanceFile = Unhex(
    "010000000200000000000000040000007879791000000000000000110000000000000013000000000000001300000000"
    "000000130000000000000000000000000000000400000000000000130000000000000004000000000000000100000000"
    "000000010000000400000001000000000000007300000000000000730000000000000079798300000000000000850000"
    "0000000000000000000000000000000000000000005b0000000000000001000000000000006300000000000000010000"
    "000000000067000000000000000100000000000000000000000000000000000000000000006b00000000000000010000"
    "000000000073000000000000000100000000000000850000000000000001000000000000005a0000000a1912016120ff"
    "ffffffffffffffff012a05696e743332300138010a1c120173180120ffffffffffffffffff012a06737472696e673001"
    "380218016a0f0a056c616e6365120631342e302e327a0c0a056c616e63651203302e31ed00000008950212020004183b"
    "2ae1010a1612013020ffffffffffffffffff012a067374727563740a17120a6e756c6c5f636f756e7418012a05696e74"
    "363438010a1812096d696e5f76616c756518022a05696e743332300138010a1812096d61785f76616c756518032a0569"
    "6e743332300138010a18120131180420ffffffffffffffffff012a067374727563740a19120a6e756c6c5f636f756e74"
    "180520042a05696e74363438010a1b12096d696e5f76616c7565180620042a06737472696e67300138020a1b12096d61"
    "785f76616c7565180720042a06737472696e673001380212080001020304050607189501730100000000000000000200"
    "4c414e43");

Result<std::string> WriteFile(const Schema& schema, const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                              uint64_t group) {
  LANCE_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
  LANCE_ASSIGN_OR_RAISE(auto writer, LegacyFileWriter::Open(sink, "test.lance", schema, group));
  for (const auto& b : batches) LANCE_RETURN_NOT_OK(writer->Write(b));
  LANCE_ASSIGN_OR_RAISE(uint64_t rows, writer->Finish());
  (void)rows;
  LANCE_ASSIGN_OR_RAISE(auto buffer, sink->Finish());
  return buffer->ToString();
}

std::shared_ptr<arrow::Array> Ints(const std::vector<std::optional<int32_t>>& v) {
  arrow::Int32Builder b;
  for (const auto& x : v) x ? (void)b.Append(*x) : (void)b.AppendNull();
  return b.Finish().ValueOrDie();
}

std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& v) {
  arrow::StringBuilder b;
  for (const auto& x : v) x ? (void)b.Append(*x) : (void)b.AppendNull();
  return b.Finish().ValueOrDie();
}

TEST(LegacyWriterTest, BytesEqualPylances) {
  auto arrow_schema = arrow::schema({arrow::field("a", arrow::int32()), arrow::field("s", arrow::utf8())});
  auto schema = Schema::FromArrow(*arrow_schema).ValueOrDie();
  auto batch = arrow::RecordBatch::Make(arrow_schema, 4, {Ints({1, 2, std::nullopt, 4}),
                                                          Strings({"x", "yy", std::nullopt, ""})});
  auto bytes = WriteFile(schema, {batch}, 1024);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, kPylanceFile);
  // The same rows in pieces: one row group all the same.
  auto pieces = WriteFile(schema, {batch->Slice(0, 1), batch->Slice(1, 2), batch->Slice(3)}, 1024);
  ASSERT_TRUE(pieces.ok()) << pieces.status().ToString();
  EXPECT_EQ(*pieces, kPylanceFile);
}

TEST(LegacyWriterTest, RowGroupsAndSlicedInputRoundTrip) {
  auto point = arrow::struct_({arrow::field("x", arrow::int32()), arrow::field("tag", arrow::utf8())});
  auto arrow_schema = arrow::schema({arrow::field("flag", arrow::boolean()),
                                     arrow::field("l", arrow::list(arrow::int32())),
                                     arrow::field("v", arrow::fixed_size_list(arrow::float32(), 2)),
                                     arrow::field("pt", point)});
  auto schema = Schema::FromArrow(*arrow_schema).ValueOrDie();
  const int n = 23;
  arrow::BooleanBuilder flags;
  arrow::ListBuilder lists(arrow::default_memory_pool(), std::make_shared<arrow::Int32Builder>());
  arrow::FixedSizeListBuilder vectors(arrow::default_memory_pool(), std::make_shared<arrow::FloatBuilder>(), 2);
  arrow::Int32Builder xs;
  arrow::StringBuilder tags;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(flags.Append(i % 3 == 0).ok());
    ASSERT_TRUE(lists.Append().ok());
    for (int k = 0; k < i % 4; ++k) {
      ASSERT_TRUE(static_cast<arrow::Int32Builder*>(lists.value_builder())->Append(i * 10 + k).ok());
    }
    ASSERT_TRUE(vectors.Append().ok());
    for (int k = 0; k < 2; ++k) {
      ASSERT_TRUE(static_cast<arrow::FloatBuilder*>(vectors.value_builder())->Append(i + k * 0.5f).ok());
    }
    ASSERT_TRUE(xs.Append(-i).ok());
    ASSERT_TRUE(tags.Append(std::string(static_cast<size_t>(i % 5 + 1), 'a' + i % 26)).ok());
  }
  auto st = arrow::StructArray::Make({xs.Finish().ValueOrDie(), tags.Finish().ValueOrDie()},
                                     point->fields()).ValueOrDie();
  auto whole = arrow::RecordBatch::Make(
      arrow_schema, n,
      {flags.Finish().ValueOrDie(), lists.Finish().ValueOrDie(), vectors.Finish().ValueOrDie(), st});
  // Offsets that are not byte-aligned for the booleans; groups of 5 rows.
  // (No empty strings: the legacy reader reads them as null, as pylance.)
  auto input = whole->Slice(3, 17);
  auto bytes = WriteFile(schema, {input->Slice(0, 7), input->Slice(7)}, 5);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto reader = LegacyFileReader::Open(std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(*bytes)),
                                       "test.lance", arrow::default_memory_pool());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->num_batches(), 4);  // 5, 5, 5, 2
  EXPECT_EQ((*reader)->batch_rows(3), 2u);
  EXPECT_EQ((*reader)->major_version(), 0);
  EXPECT_EQ((*reader)->minor_version(), 2);
  auto read = (*reader)->ReadAll(schema);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ((*read)->num_columns(), input->num_columns());
  for (int c = 0; c < input->num_columns(); ++c) {
    EXPECT_TRUE((*read)->column(c)->Equals(*input->column(c)))
        << input->schema()->field(c)->name() << ": " << (*read)->column(c)->ToString() << "\nvs\n"
        << input->column(c)->ToString();
  }
}

// lance.write_dataset(pa.table({"d": pa.array(["a", "bb", "a"]).dictionary_encode()}),
//                     uri, data_storage_version="legacy") with pylance 14.0.2: the keys,
// a page table, no statistics, the values ("abb" and their positions), and
// the field's dictionary (offset 0x1f, length 2) in the embedded schema.
const std::string kPylanceDictionaryFile = Unhex(
    "000000000100000000000000000000000000000003000000000000006162621c000000000000001d000000000000001f"
    "00000000000000540000000a3112016420ffffffffffffffffff012a17646963743a737472696e673a696e7433323a66"
    "616c7365300138034204081f100218016a0f0a056c616e6365120631342e302e327a0c0a056c616e63651203302e3108"
    "000000083712020003180c8f00000000000000000002004c414e43");

TEST(LegacyWriterTest, DictionaryBytesEqualPylances) {
  auto type = arrow::dictionary(arrow::int32(), arrow::utf8());
  auto arrow_schema = arrow::schema({arrow::field("d", type)});
  auto schema = Schema::FromArrow(*arrow_schema).ValueOrDie();
  auto dict = arrow::DictionaryArray::FromArrays(type, Ints({0, 1, 0}), Strings({"a", "bb"})).ValueOrDie();
  auto batch = arrow::RecordBatch::Make(arrow_schema, 3, {dict});
  auto bytes = WriteFile(schema, {batch->Slice(0, 2), batch->Slice(2)}, 1024);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(*bytes, kPylanceDictionaryFile);
  auto reader = LegacyFileReader::Open(std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(*bytes)),
                                       "test.lance", arrow::default_memory_pool());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto read = (*reader)->ReadAll(schema);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_TRUE((*read)->column(0)->Equals(*dict)) << (*read)->column(0)->ToString();
  // Another dictionary in the same file is refused by column name.
  auto other = arrow::DictionaryArray::FromArrays(type, Ints({0}), Strings({"zz"})).ValueOrDie();
  auto two = WriteFile(schema, {batch, arrow::RecordBatch::Make(arrow_schema, 1, {other})}, 2);
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("'d'"), std::string::npos) << two.status().ToString();
}

TEST(LegacyWriterTest, UnwrittenTypesAreRefusedByName) {
  auto arrow_schema = arrow::schema({arrow::field("id", arrow::int64()),
                                     arrow::field("st", arrow::struct_({arrow::field(
                                         "d", arrow::dictionary(arrow::int32(), arrow::utf8()))}))});
  auto schema = Schema::FromArrow(*arrow_schema).ValueOrDie();
  Status st = CheckLegacyWritable(schema);
  EXPECT_TRUE(st.IsNotImplemented()) << st.ToString();
  EXPECT_NE(st.message().find("'st.d'"), std::string::npos) << st.ToString();
  auto sink = arrow::io::BufferOutputStream::Create().ValueOrDie();
  EXPECT_FALSE(LegacyFileWriter::Open(sink, "x.lance", schema, 1024).ok());
}

}  // namespace
}  // namespace lance::file::legacy
