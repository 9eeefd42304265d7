// The page copier (binary copy): files written by FileWriter, their pages
// copied into one file that the reader reads as the inputs' rows in order;
// priorities shifted, buffers padded with zeros (2.1+) or not at all (2.0),
// a 2.0 struct's row-count column merged; mismatched inputs refused.
#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <gtest/gtest.h>

#include "lance/file/container.h"
#include "lance/file/page_copy.h"
#include "lance/file_reader.h"
#include "lance/file_writer.h"
#include "lance/schema.h"

namespace lance::file {
namespace {

std::shared_ptr<arrow::Schema> ArrowSchemaOf() {
  return arrow::schema({arrow::field("id", arrow::int64()), arrow::field("s", arrow::utf8()),
                        arrow::field("st", arrow::struct_({arrow::field("x", arrow::int32())}))});
}

std::shared_ptr<arrow::RecordBatch> Rows(int64_t start, int64_t n) {
  arrow::Int64Builder id;
  arrow::StringBuilder s;
  arrow::Int32Builder x;
  for (int64_t i = start; i < start + n; ++i) {
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE(s.Append("v" + std::to_string(i)).ok());
    EXPECT_TRUE(x.Append(static_cast<int32_t>(i * 2)).ok());
  }
  auto xs = *x.Finish();
  auto st = *arrow::StructArray::Make({xs}, {arrow::field("x", arrow::int32())});
  return arrow::RecordBatch::Make(ArrowSchemaOf(), n, {*id.Finish(), *s.Finish(), st});
}

// A file of `n` rows from `start`, in memory.
std::shared_ptr<arrow::Buffer> WriteFile(const Schema& schema, const std::string& version, int64_t start, int64_t n) {
  auto sink = arrow::io::BufferOutputStream::Create().ValueOrDie();
  FileWriterOptions options;
  options.version = version;
  auto writer = FileWriter::Open(sink, "in.lance", schema, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  EXPECT_TRUE((*writer)->Write(*Rows(start, n)).ok());
  EXPECT_TRUE((*writer)->Finish().ok());
  return sink->Finish().ValueOrDie();
}

class PageCopyTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PageCopyTest, CopiesPagesInOrder) {
  const std::string version = GetParam();
  auto schema = *Schema::FromArrow(*ArrowSchemaOf());
  auto a = WriteFile(schema, version, 0, 30);
  auto b = WriteFile(schema, version, 30, 20);
  auto fa = std::make_shared<arrow::io::BufferReader>(a);
  auto fb = std::make_shared<arrow::io::BufferReader>(b);
  auto la = ReadLayout(*fa, "a.lance");
  auto lb = ReadLayout(*fb, "b.lance");
  ASSERT_TRUE(la.ok() && lb.ok()) << la.status().ToString() << lb.status().ToString();
  auto v = *FileVersionFromString(version);
  auto sink = arrow::io::BufferOutputStream::Create().ValueOrDie();
  PageCopyWriter writer(sink, "out.lance", static_cast<uint32_t>(la->columns.size()), v);
  if (v == FileVersion::kV2_0) writer.SetRowCountColumns({2});  // st's column
  ASSERT_TRUE(writer.Append(*fa, *la, "a.lance").ok());
  ASSERT_TRUE(writer.Append(*fb, *lb, "b.lance").ok());
  auto rows = writer.Finish(schema);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, 50u);
  auto out = sink->Finish().ValueOrDie();

  auto reader = FileReader::Open(std::make_shared<arrow::io::BufferReader>(out), "out.lance");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->num_rows(), 50u);
  const auto& layout = (*reader)->layout();
  for (size_t c = 0; c < layout.columns.size(); ++c) {
    const auto& pages = layout.columns[c].pages;
    if (v == FileVersion::kV2_0 && c == 2) {
      ASSERT_EQ(pages.size(), 1u);
      EXPECT_EQ(pages[0].length, 50u);
      continue;
    }
    ASSERT_EQ(pages.size(), la->columns[c].pages.size() + lb->columns[c].pages.size()) << c;
    EXPECT_EQ(pages.back().priority, 30u) << c;  // b's first row
    for (const auto& page : pages) {
      for (const auto& buffer : page.buffers) {
        if (v != FileVersion::kV2_0) EXPECT_EQ(buffer.position % 64, 0u);
        // Padding bytes, if any, are zeros.
        const uint64_t end = buffer.position + buffer.size;
        const uint64_t padded = v == FileVersion::kV2_0 ? end : (end + 63) / 64 * 64;
        for (uint64_t i = end; i < padded && i < static_cast<uint64_t>(out->size()); ++i) {
          ASSERT_EQ(out->data()[i], 0) << "column " << c << " byte " << i;
        }
      }
    }
  }
  auto table = (*reader)->ReadAll();
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  auto expected = *arrow::Table::FromRecordBatches({Rows(0, 30), Rows(30, 20)});
  EXPECT_TRUE((*table)->Equals(*expected)) << (*table)->ToString();
}

TEST_P(PageCopyTest, RefusesMismatchedInputs) {
  const std::string version = GetParam();
  auto schema = *Schema::FromArrow(*ArrowSchemaOf());
  auto a = WriteFile(schema, version, 0, 10);
  auto fa = std::make_shared<arrow::io::BufferReader>(a);
  auto la = *ReadLayout(*fa, "a.lance");
  const auto v = *FileVersionFromString(version);
  const auto other = v == FileVersion::kV2_2 ? FileVersion::kV2_1 : FileVersion::kV2_2;
  {
    PageCopyWriter writer(arrow::io::BufferOutputStream::Create().ValueOrDie(), "out.lance",
                          static_cast<uint32_t>(la.columns.size()), other);
    auto st = writer.Append(*fa, la, "a.lance");
    EXPECT_TRUE(st.IsInvalid()) << st.ToString();
    EXPECT_NE(st.message().find("a.lance"), std::string::npos);
    writer.Abort();
  }
  {
    PageCopyWriter writer(arrow::io::BufferOutputStream::Create().ValueOrDie(), "out.lance",
                          static_cast<uint32_t>(la.columns.size()) + 1, v);
    EXPECT_TRUE(writer.Append(*fa, la, "a.lance").IsInvalid());
    writer.Abort();
  }
  {
    // A second input whose column encoding differs.
    PageCopyWriter writer(arrow::io::BufferOutputStream::Create().ValueOrDie(), "out.lance",
                          static_cast<uint32_t>(la.columns.size()), v);
    ASSERT_TRUE(writer.Append(*fa, la, "a.lance").ok());
    auto changed = la;
    changed.columns[0].encoding += "x";
    auto st = writer.Append(*fa, changed, "b.lance");
    EXPECT_TRUE(st.IsInvalid()) << st.ToString();
    EXPECT_NE(st.message().find("column encoding"), std::string::npos);
    writer.Abort();
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, PageCopyTest, ::testing::Values("2.0", "2.1", "2.2"));

}  // namespace
}  // namespace lance::file
