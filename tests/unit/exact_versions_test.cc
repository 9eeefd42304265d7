// Byte-identical writing: for every stable file version our FileWriter, fed
// the batches and settings tests/fixtures/exact_versions/datagen.py gave the
// pinned pylance, must emit exactly the fixture's bytes. Also: the fixtures
// read back equal to their batch, footer pairs, and the version codecs.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/reader.h>
#include <gtest/gtest.h>

#include "lance/file/container_writer.h"
#include "lance/file/version.h"
#include "lance/file_reader.h"
#include "lance/file_writer.h"

namespace lance {
namespace {

namespace fs = std::filesystem;
using file::FileVersion;

const fs::path kFixtures = fs::path(LANCE_TEST_FIXTURES_DIR) / "exact_versions";

// The settings every fixture was written with (datagen.py).
constexpr uint64_t kDataCacheBytes = 1;
constexpr uint64_t kMaxPageBytes = 1024;
constexpr int64_t kCompatRows = 4097;
constexpr int64_t kCompatSliceRows = 1024;

const std::vector<std::string> kStableVersions = {"2.0", "2.1", "2.2"};

std::string Tag(const std::string& version) {
  std::string tag = "v" + version;
  for (char& c : tag) c = c == '.' ? '_' : c;
  return tag;
}

std::string ReadFileBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::shared_ptr<arrow::KeyValueMetadata> OneKey(const std::string& key, const std::string& value) {
  return arrow::key_value_metadata({key}, {value});
}

// The compatibility batch of datagen.py's compat_table(), value for value.
std::shared_ptr<arrow::RecordBatch> CompatBatch() {
  const int64_t n = kCompatRows;
  arrow::Int32Builder id;
  arrow::StringBuilder name;
  arrow::ListBuilder items(arrow::default_memory_pool(), std::make_shared<arrow::Int32Builder>());
  auto* item_values = static_cast<arrow::Int32Builder*>(items.value_builder());
  arrow::Int8Builder keys;
  arrow::LargeBinaryBuilder blob;
  char text[64];
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_TRUE(id.Append(static_cast<int32_t>(i)).ok());
    std::snprintf(text, sizeof(text), "value-%04lld-deterministic-fixture", static_cast<long long>(i));
    EXPECT_TRUE((i % 7 == 0 ? name.AppendNull() : name.Append(text)).ok());
    if (i % 11 == 0) {
      EXPECT_TRUE(items.AppendNull().ok());
    } else {
      EXPECT_TRUE(items.Append().ok());
      EXPECT_TRUE(item_values->Append(static_cast<int32_t>(i)).ok());
      EXPECT_TRUE((i % 5 == 0 ? item_values->AppendNull() : item_values->Append(static_cast<int32_t>(i * 2))).ok());
      EXPECT_TRUE(item_values->Append(static_cast<int32_t>(i * 3)).ok());
    }
    EXPECT_TRUE((i % 13 == 0 ? keys.AppendNull() : keys.Append(static_cast<int8_t>(i % 3))).ok());
    std::snprintf(text, sizeof(text), "blob-%04lld-deterministic-payload", static_cast<long long>(i));
    EXPECT_TRUE(blob.Append(std::string_view(text)).ok());
  }
  arrow::StringBuilder colors;
  EXPECT_TRUE(colors.AppendValues({"red", "green", "blue"}).ok());
  const auto dict_type = arrow::dictionary(arrow::int8(), arrow::utf8());
  auto category = *arrow::DictionaryArray::FromArrays(dict_type, *keys.Finish(), *colors.Finish());
  auto schema = arrow::schema({
      arrow::field("id", arrow::int32(), /*nullable=*/false),
      arrow::field("name", arrow::utf8(), true, OneKey("lance-encoding:compression", "none")),
      arrow::field("items", arrow::list(arrow::int32())),
      arrow::field("category", dict_type, true, OneKey("lance-encoding:dict-values-compression", "none")),
      arrow::field("blob", arrow::large_binary(), true, OneKey("lance-encoding:blob", "true")),
  });
  return arrow::RecordBatch::Make(schema, n, {*id.Finish(), *name.Finish(), *items.Finish(), category, *blob.Finish()});
}

std::shared_ptr<arrow::Table> ReadIpc(const fs::path& path) {
  auto file = arrow::io::ReadableFile::Open(path.string());
  EXPECT_TRUE(file.ok()) << path << ": " << file.status().ToString();
  auto reader = *arrow::ipc::RecordBatchFileReader::Open(*file);
  return *reader->ToTable();
}

// Writes `batch` as LanceFileWriter.write_batch(batch.slice(off, slice_rows))
// calls with the fixtures' settings and returns the file's bytes.
Result<std::string> WriteLance(const arrow::RecordBatch& batch, const std::string& version, int64_t slice_rows) {
  LANCE_ASSIGN_OR_RAISE(auto schema, Schema::FromArrow(*batch.schema(), 0));
  LANCE_ASSIGN_OR_RAISE(auto out, arrow::io::BufferOutputStream::Create());
  FileWriterOptions options;
  options.version = version;
  options.data_cache_bytes = kDataCacheBytes;
  options.max_page_bytes = kMaxPageBytes;
  LANCE_ASSIGN_OR_RAISE(auto writer, FileWriter::Open(out, "memory.lance", schema, options));
  for (int64_t off = 0; off < batch.num_rows(); off += slice_rows) {
    LANCE_RETURN_NOT_OK(writer->Write(*batch.Slice(off, slice_rows)));
  }
  LANCE_RETURN_NOT_OK(writer->Finish().status());
  LANCE_ASSIGN_OR_RAISE(auto buffer, out->Finish());
  return buffer->ToString();
}

Result<std::shared_ptr<FileReader>> OpenBytes(const std::string& bytes, const std::string& name) {
  auto buffer = std::make_shared<arrow::Buffer>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return FileReader::Open(std::make_shared<arrow::io::BufferReader>(buffer), name);
}

std::string Slice(const std::string& bytes, const BufferRange& r) {
  return r.position + r.size <= bytes.size() ? bytes.substr(r.position, r.size) : "<out of range>";
}

// Where two files first differ in structure: column, page, encoding or
// buffer (positions aside). Empty when only positions differ.
std::string FirstPageDifference(const std::string& ours, const std::string& fixture) {
  auto a = OpenBytes(ours, "ours");
  auto b = OpenBytes(fixture, "fixture");
  if (!a.ok() || !b.ok()) return "cannot open: " + (a.ok() ? b.status() : a.status()).ToString();
  const auto& x = (*a)->layout();
  const auto& y = (*b)->layout();
  std::ostringstream why;
  if (x.columns.size() != y.columns.size()) {
    why << "columns: " << x.columns.size() << " vs " << y.columns.size();
    return why.str();
  }
  for (size_t c = 0; c < x.columns.size(); ++c) {
    const auto& cx = x.columns[c];
    const auto& cy = y.columns[c];
    if (cx.encoding != cy.encoding) why << "column " << c << ": column encodings differ; ";
    if (cx.pages.size() != cy.pages.size()) {
      why << "column " << c << ": " << cx.pages.size() << " pages vs " << cy.pages.size();
      return why.str();
    }
    for (size_t p = 0; p < cx.pages.size(); ++p) {
      const auto& px = cx.pages[p];
      const auto& py = cy.pages[p];
      const std::string where = "column " + std::to_string(c) + " page " + std::to_string(p) + ": ";
      if (px.length != py.length || px.priority != py.priority) {
        why << where << "length/priority " << px.length << "/" << px.priority << " vs " << py.length << "/"
            << py.priority;
        return why.str();
      }
      if (px.encoding != py.encoding) return where + "encodings differ";
      if (px.buffers.size() != py.buffers.size()) return where + "buffer counts differ";
      for (size_t k = 0; k < px.buffers.size(); ++k) {
        if (Slice(ours, px.buffers[k]) != Slice(fixture, py.buffers[k])) {
          why << where << "buffer " << k << " differs (" << px.buffers[k].size << " vs " << py.buffers[k].size
              << " bytes)";
          return why.str();
        }
      }
    }
  }
  return why.str();
}

// Equal bytes, or the first differing offset, both lengths and where the
// structures first differ. With LANCE_EXACT_DUMP_DIR set, our bytes of a
// differing file are written there as `name` (to compare page by page).
::testing::AssertionResult SameBytes(const std::string& ours, const std::string& fixture,
                                     const std::string& name = "") {
  if (ours == fixture) return ::testing::AssertionSuccess();
  if (const char* dir = std::getenv("LANCE_EXACT_DUMP_DIR"); dir != nullptr && !name.empty()) {
    std::ofstream(fs::path(dir) / name, std::ios::binary) << ours;
  }
  size_t i = 0;
  while (i < ours.size() && i < fixture.size() && ours[i] == fixture[i]) ++i;
  return ::testing::AssertionFailure() << "first difference at byte offset " << i << "; ours is " << ours.size()
                                       << " bytes, the fixture " << fixture.size() << " bytes; "
                                       << FirstPageDifference(ours, fixture);
}

// A column as values: dictionaries decoded (the reader may return either).
std::shared_ptr<arrow::ChunkedArray> Decoded(const std::shared_ptr<arrow::ChunkedArray>& column) {
  if (column->type()->id() != arrow::Type::DICTIONARY) return column;
  const auto& type = static_cast<const arrow::DictionaryType&>(*column->type());
  return (*arrow::compute::Cast(column, type.value_type())).chunked_array();
}

void ExpectReadsBack(const std::string& bytes, const std::string& name, const arrow::Table& want) {
  auto reader = OpenBytes(bytes, name);
  ASSERT_TRUE(reader.ok()) << name << ": " << reader.status().ToString();
  auto got = (*reader)->ReadAll();
  ASSERT_TRUE(got.ok()) << name << ": " << got.status().ToString();
  ASSERT_EQ((*got)->num_rows(), want.num_rows()) << name;
  ASSERT_EQ((*got)->num_columns(), want.num_columns()) << name;
  for (int c = 0; c < want.num_columns(); ++c) {
    auto g = Decoded((*got)->column(c));
    auto w = Decoded(want.column(c));
    EXPECT_TRUE(g->type()->Equals(*w->type()))
        << name << " column " << want.field(c)->name() << ": " << g->type()->ToString() << " vs "
        << w->type()->ToString();
    EXPECT_TRUE(g->Equals(*w)) << name << " column " << want.field(c)->name() << " differs";
  }
}

class CompatBatchTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string FixtureName() const { return Tag(GetParam()) + ".lance"; }
  std::string Fixture() const { return ReadFileBytes(kFixtures / FixtureName()); }
};

TEST_P(CompatBatchTest, WriterEmitsTheFixtureBytes) {
  const std::string fixture = Fixture();
  ASSERT_FALSE(fixture.empty()) << kFixtures / FixtureName();
  auto ours = WriteLance(*CompatBatch(), GetParam(), kCompatSliceRows);
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  EXPECT_TRUE(SameBytes(*ours, fixture, FixtureName())) << FixtureName();
}

TEST_P(CompatBatchTest, EveryColumnSpansSeveralPages) {
  auto reader = OpenBytes(Fixture(), FixtureName());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const auto& columns = (*reader)->layout().columns;
  ASSERT_GE(columns.size(), 5u);
  for (size_t c = 0; c < columns.size(); ++c) EXPECT_GE(columns[c].pages.size(), 2u) << "column " << c;
}

TEST_P(CompatBatchTest, FooterRecordsTheStandardPair) {
  auto reader = OpenBytes(Fixture(), FixtureName());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const auto& layout = (*reader)->layout();
  const std::pair<int, int> want = GetParam() == "2.0" ? std::pair{0, 3} : std::pair{2, GetParam()[2] - '0'};
  EXPECT_EQ((std::pair<int, int>(layout.major_version, layout.minor_version)), want);
  EXPECT_EQ(layout.version, GetParam());
  // The last 4 bytes are the magic, the 4 before them the pair (u16 each).
  const std::string bytes = Fixture();
  ASSERT_GE(bytes.size(), 8u);
  EXPECT_EQ(bytes.substr(bytes.size() - 4), "LANC");
  uint16_t major, minor;
  std::memcpy(&major, bytes.data() + bytes.size() - 8, 2);
  std::memcpy(&minor, bytes.data() + bytes.size() - 6, 2);
  EXPECT_EQ((std::pair<int, int>(major, minor)), want);
}

TEST_P(CompatBatchTest, FixtureReadsBackEqualToTheBatch) {
  auto table = *arrow::Table::FromRecordBatches({CompatBatch()});
  ExpectReadsBack(Fixture(), FixtureName(), *table);
}

INSTANTIATE_TEST_SUITE_P(StableVersions, CompatBatchTest, ::testing::ValuesIn(kStableVersions),
                         [](const auto& info) { return Tag(info.param); });

// The wide batch (every primitive type, nested struct and list, fixed-size
// lists, nulls at every level) in three slice sizes.
struct WideCase {
  std::string version;
  int64_t slice_rows;
};

class WideBatchTest : public ::testing::TestWithParam<WideCase> {
 protected:
  std::string FixtureName() const {
    return "wide_" + Tag(GetParam().version) + "_s" + std::to_string(GetParam().slice_rows) + ".lance";
  }
  std::shared_ptr<arrow::RecordBatch> Batch() const {
    auto table = ReadIpc(kFixtures / (GetParam().version == "2.0" ? "wide_v2_0.arrow" : "wide.arrow"));
    return *table->CombineChunksToBatch();
  }
};

TEST_P(WideBatchTest, WriterEmitsTheFixtureBytes) {
  const std::string fixture = ReadFileBytes(kFixtures / FixtureName());
  ASSERT_FALSE(fixture.empty()) << kFixtures / FixtureName();
  auto ours = WriteLance(*Batch(), GetParam().version, GetParam().slice_rows);
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  EXPECT_TRUE(SameBytes(*ours, fixture, FixtureName())) << FixtureName();
}

TEST_P(WideBatchTest, FixtureReadsBackEqualToTheBatch) {
  auto table = *arrow::Table::FromRecordBatches({Batch()});
  ExpectReadsBack(ReadFileBytes(kFixtures / FixtureName()), FixtureName(), *table);
}

std::vector<WideCase> WideCases() {
  std::vector<WideCase> out;
  for (const auto& v : kStableVersions) {
    for (int64_t rows : {250, 700, 1500}) out.push_back({v, rows});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(StableVersions, WideBatchTest, ::testing::ValuesIn(WideCases()), [](const auto& info) {
  return Tag(info.param.version) + "_s" + std::to_string(info.param.slice_rows);
});

// Version numbers both ways. Footers: 2.0 files say (0,3), older readers'
// (2,0) is accepted too. Data files in a manifest record (2,0) for 2.0.
TEST(VersionCodecs, FooterPairs) {
  EXPECT_EQ(*file::FileVersionFromPair(0, 3), FileVersion::kV2_0);
  EXPECT_EQ(*file::FileVersionFromPair(2, 0), FileVersion::kV2_0);
  for (uint32_t minor : {0u, 1u, 2u}) EXPECT_EQ(*file::FileVersionFromPair(0, minor), FileVersion::kLegacy);
  EXPECT_EQ(*file::FileVersionFromPair(2, 1), FileVersion::kV2_1);
  EXPECT_EQ(*file::FileVersionFromPair(2, 2), FileVersion::kV2_2);
  EXPECT_FALSE(file::FileVersionFromPair(2, 9).ok());
  EXPECT_FALSE(file::FileVersionFromPair(3, 0).ok());
  EXPECT_EQ(file::FooterVersionPair(FileVersion::kV2_0), (std::pair<uint16_t, uint16_t>{0, 3}));
  EXPECT_EQ(file::FooterVersionPair(FileVersion::kV2_1), (std::pair<uint16_t, uint16_t>{2, 1}));
  EXPECT_EQ(file::FooterVersionPair(FileVersion::kV2_2), (std::pair<uint16_t, uint16_t>{2, 2}));
  for (auto v : {FileVersion::kV2_0, FileVersion::kV2_1, FileVersion::kV2_2}) {
    auto [major, minor] = file::FooterVersionPair(v);
    EXPECT_EQ(*file::FileVersionFromPair(major, minor), v);
  }
}

TEST(VersionCodecs, DataFilePairs) {
  EXPECT_EQ(file::FileVersionToPair(FileVersion::kLegacy), (std::pair<uint32_t, uint32_t>{0, 2}));
  EXPECT_EQ(file::FileVersionToPair(FileVersion::kV2_0), (std::pair<uint32_t, uint32_t>{2, 0}));
  EXPECT_EQ(file::FileVersionToPair(FileVersion::kV2_1), (std::pair<uint32_t, uint32_t>{2, 1}));
  EXPECT_EQ(file::FileVersionToPair(FileVersion::kV2_2), (std::pair<uint32_t, uint32_t>{2, 2}));
  for (auto v : {FileVersion::kLegacy, FileVersion::kV2_0, FileVersion::kV2_1, FileVersion::kV2_2}) {
    auto [major, minor] = file::FileVersionToPair(v);
    EXPECT_EQ(*file::FileVersionFromPair(major, minor), v);
    EXPECT_EQ(*file::FileVersionFromString(file::FileVersionToString(v)), v);
  }
  EXPECT_EQ(*file::FileVersionFromString("stable"), FileVersion::kV2_2);
  EXPECT_EQ(*file::FileVersionFromString("legacy"), FileVersion::kLegacy);
  EXPECT_FALSE(file::FileVersionFromString("3.0").ok());
}

// Written twice in one build, every stable version gives the same bytes
// (the writer has no hidden randomness). The unstable "next" (2.3) is not
// written by lance-cpp: Open refuses it, and this test says so when that
// changes.
TEST(Determinism, TwoWritesGiveIdenticalBytes) {
  for (const auto& v : kStableVersions) {
    auto batch = *ReadIpc(kFixtures / (v == "2.0" ? "wide_v2_0.arrow" : "wide.arrow"))->CombineChunksToBatch();
    auto a = WriteLance(*batch, v, 250);
    auto b = WriteLance(*batch, v, 250);
    ASSERT_TRUE(a.ok() && b.ok()) << v << ": " << (a.ok() ? b.status() : a.status()).ToString();
    EXPECT_TRUE(SameBytes(*a, *b)) << v;
  }
  FileWriterOptions next;
  next.version = "next";
  auto schema = *Schema::FromArrow(*CompatBatch()->schema(), 0);
  auto out = *arrow::io::BufferOutputStream::Create();
  EXPECT_FALSE(FileWriter::Open(out, "memory.lance", schema, next).ok()) << "supported now: test next's bytes";
}

}  // namespace
}  // namespace lance
