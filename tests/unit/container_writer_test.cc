// The v2 container writer: buffer placement and padding, column metadata,
// schema, offset tables and footer, read back with the reader's parser.
#include <arrow/buffer.h>
#include <arrow/io/memory.h>
#include <gtest/gtest.h>

#include "lance/file/container.h"
#include "lance/file/container_writer.h"
#include "lance/file/schema_proto.h"

namespace lance::file {
namespace {


std::shared_ptr<arrow::Buffer> Owned(std::string s) {
  return arrow::Buffer::FromString(std::move(s));
}

TEST(ContainerWriterTest, PadsBuffersAndWritesEverythingTheReaderParses) {
  auto sink = arrow::io::BufferOutputStream::Create().ValueOrDie();
  ContainerWriter writer(sink, "mem.lance", 2, FileVersion::kV2_0);

  EncodedPage p0;
  p0.column_index = 1;
  p0.page.length = 7;
  p0.page.priority = 3;
  p0.page.encoding_type_url = "/lance.encodings.ArrayEncoding";
  p0.page.encoding = "xyz";
  p0.page.buffers = {Owned("abc"), Owned(std::string(64, 'q')), Owned("")};
  ASSERT_TRUE(writer.WritePage(p0).ok());
  EncodedPage p1 = p0;
  p1.column_index = 0;
  p1.page.buffers = {Owned(std::string(65, 'r'))};
  ASSERT_TRUE(writer.WritePage(p1).ok());
  EncodedPage bad = p0;
  bad.column_index = 2;
  EXPECT_FALSE(writer.WritePage(bad).ok());

  ASSERT_TRUE(writer.FinishColumn(0, EncodedColumn{}).ok());
  EncodedColumn with_buffer;
  with_buffer.encoding_type_url = "/lance.encodings.ColumnEncoding";
  with_buffer.buffers = {Owned("col")};
  ASSERT_TRUE(writer.FinishColumn(1, with_buffer).ok());

  Schema schema;
  Field f;
  f.name = "x";
  f.id = 0;
  f.logical_type = "int32";
  schema.fields = {f};
  schema.metadata["k"] = "v";
  pb::file::FileDescriptor descriptor;
  SchemaToProtoFields(schema, descriptor.mutable_schema()->mutable_fields());
  (*descriptor.mutable_schema()->mutable_metadata())["k"] = "v";
  descriptor.set_length(7);
  ASSERT_TRUE(writer.Finish(descriptor).ok());

  auto bytes = sink->Finish().ValueOrDie();
  const std::string data = bytes->ToString();
  EXPECT_EQ(writer.position(), data.size());
  arrow::io::BufferReader in(bytes);
  auto layout = ReadLayout(in, "mem.lance");
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->major_version, 0);
  EXPECT_EQ(layout->minor_version, 3);
  EXPECT_EQ(layout->num_rows, 7u);
  ASSERT_EQ(layout->schema.fields.size(), 1u);
  EXPECT_EQ(layout->schema.fields[0].name, "x");
  EXPECT_EQ(layout->schema.metadata.at("k"), "v");
  ASSERT_EQ(layout->columns.size(), 2u);

  // Column 1's page: buffers at 0, 64 (after 3 bytes + 61 pad), 128; the empty one takes no space.
  const auto& page = layout->columns[1].pages.at(0);
  ASSERT_EQ(page.buffers.size(), 3u);
  EXPECT_EQ(page.buffers[0].position, 0u);
  EXPECT_EQ(page.buffers[0].size, 3u);
  EXPECT_EQ(page.buffers[1].position, 64u);
  EXPECT_EQ(page.buffers[2].position, 128u);
  EXPECT_EQ(page.buffers[2].size, 0u);
  EXPECT_EQ(page.length, 7u);
  EXPECT_EQ(page.priority, 3u);
  EXPECT_EQ(page.encoding_type_url, "/lance.encodings.ArrayEncoding");
  EXPECT_EQ(page.encoding, "xyz");
  for (size_t i = 3; i < 64; ++i) ASSERT_EQ(static_cast<uint8_t>(data[i]), kPadByte);
  // Column 0's page comes next, 65 bytes padded to 128.
  EXPECT_EQ(layout->columns[0].pages.at(0).buffers.at(0).position, 128u);
  ASSERT_EQ(layout->columns[1].buffers.size(), 1u);
  EXPECT_EQ(layout->columns[1].buffers[0].position, 256u);
  EXPECT_EQ(data.substr(256, 3), "col");
  // The default column encoding is a ColumnEncoding too, and the schema
  // follows the last padded buffer directly.
  EXPECT_EQ(layout->columns[0].encoding_type_url, "/lance.encodings.ColumnEncoding");
  EXPECT_EQ(layout->global_buffers.at(0).position, 320u);
}

TEST(ContainerWriterTest, FooterPairs) {
  EXPECT_EQ(FooterVersionPair(FileVersion::kV2_0), (std::pair<uint16_t, uint16_t>{0, 3}));
  EXPECT_EQ(FooterVersionPair(FileVersion::kV2_1), (std::pair<uint16_t, uint16_t>{2, 1}));
  EXPECT_EQ(FooterVersionPair(FileVersion::kV2_2), (std::pair<uint16_t, uint16_t>{2, 2}));
}

}  // namespace
}  // namespace lance::file
