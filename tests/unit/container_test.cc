// The v2 container reader against a real 2.0 file from the fixtures, and
// against every kind of damage to its footer and metadata.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <arrow/buffer.h>
#include <arrow/io/memory.h>
#include <gtest/gtest.h>

#include "lance/file/container.h"
#include "shared_fixtures.h"

namespace lance::file {
namespace {

namespace fs = std::filesystem;

std::string ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The first data file of a fixture dataset written as file version 2.0.
std::string FixtureFile() {
  fs::path dir = fs::path(LANCE_FIXTURES_DIR) / "v0.27.1" / "pq_in_schema" / "data";
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".lance") return ReadBytes(e.path());
  }
  return {};
}

Result<FileLayout> Parse(const std::string& bytes) {
  auto file = std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(bytes));
  return ReadLayout(*file, "test.lance");
}

template <typename T>
void Store(std::string* s, size_t pos, T v) {
  std::memcpy(s->data() + pos, &v, sizeof v);
}

template <typename T>
T LoadAt(const std::string& s, size_t pos) {
  T v;
  std::memcpy(&v, s.data() + pos, sizeof v);
  return v;
}

void ExpectError(const Result<FileLayout>& r, const std::string& needle) {
  ASSERT_FALSE(r.ok()) << "expected an error containing '" << needle << "'";
  EXPECT_NE(r.status().message().find("test.lance"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().message();
}

TEST(ContainerTest, ReadsAFixtureFile) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  std::string bytes = FixtureFile();
  ASSERT_FALSE(bytes.empty());
  auto layout = Parse(bytes);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->version, "2.0");
  EXPECT_EQ(layout->major_version, 0);
  EXPECT_EQ(layout->minor_version, 3);
  EXPECT_EQ(layout->num_rows, 512u);
  ASSERT_EQ(layout->schema.fields.size(), 2u);
  EXPECT_EQ(layout->schema.fields[0].name, "id");
  EXPECT_EQ(layout->schema.fields[1].logical_type, "fixed_size_list:float:32");
  ASSERT_EQ(layout->columns.size(), 2u);
  for (const auto& c : layout->columns) {
    ASSERT_FALSE(c.pages.empty());
    EXPECT_EQ(c.pages[0].encoding_type_url, "/lance.encodings.ArrayEncoding");
    for (const auto& p : c.pages) {
      for (const auto& b : p.buffers) EXPECT_LE(b.position + b.size, bytes.size());
    }
  }
  // Page data sits before the metadata, 64-byte aligned as the writer pads it.
  EXPECT_EQ(layout->columns[0].pages[0].buffers[0].position % 64, 0u);
}

TEST(ContainerTest, LoadColumnReadsEveryBuffer) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  std::string bytes = FixtureFile();
  auto file = std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(bytes));
  auto layout = ReadLayout(*file, "test.lance");
  ASSERT_TRUE(layout.ok());
  auto col = LoadColumn(*file, layout->columns[1], layout->file_size, "test.lance");
  ASSERT_TRUE(col.ok()) << col.status().ToString();
  ASSERT_EQ(col->pages.size(), layout->columns[1].pages.size());
  EXPECT_EQ(col->pages[0].buffers[0]->size(), static_cast<int64_t>(layout->columns[1].pages[0].buffers[0].size));
  // A buffer range past the end of the file is refused, not read.
  ColumnInfo bad = layout->columns[1];
  bad.pages[0].buffers[0].position = bytes.size() - 4;
  auto r = LoadColumn(*file, bad, layout->file_size, "test.lance");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("outside the file"), std::string::npos);
}

TEST(ContainerTest, TooShort) {
  ExpectError(Parse(""), "too short");
  ExpectError(Parse(std::string(39, 'x')), "too short");
}

TEST(ContainerTest, BadMagic) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  std::string bytes = FixtureFile();
  bytes[bytes.size() - 1] = 'X';
  ExpectError(Parse(bytes), "magic");
}

TEST(ContainerTest, UnknownVersionAsksForAnUpgrade) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  std::string bytes = FixtureFile();
  const size_t f = bytes.size() - kFooterSize;
  Store<uint16_t>(&bytes, f + 32, 3);
  Store<uint16_t>(&bytes, f + 34, 0);
  auto r = Parse(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("upgrade"), std::string::npos) << r.status().message();
}

TEST(ContainerTest, LegacyFooterIsNotAV2File) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  std::string bytes = FixtureFile();
  const size_t f = bytes.size() - kFooterSize;
  Store<uint16_t>(&bytes, f + 32, 0);
  Store<uint16_t>(&bytes, f + 34, 2);
  ExpectError(Parse(bytes), "legacy");
}

TEST(ContainerTest, TablesOutsideTheFile) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  const std::string good = FixtureFile();
  const size_t f = good.size() - kFooterSize;
  {
    std::string bytes = good;
    Store<uint64_t>(&bytes, f + 8, good.size());  // CMO table past the end
    ExpectError(Parse(bytes), "column offset table");
  }
  {
    std::string bytes = good;
    Store<uint64_t>(&bytes, f + 16, ~uint64_t{0} - 3);  // GBO table position overflows
    ExpectError(Parse(bytes), "global buffer table");
  }
  {
    std::string bytes = good;
    Store<uint32_t>(&bytes, f + 24, 0);  // no global buffers: no schema
    ExpectError(Parse(bytes), "global buffer table");
  }
  {
    std::string bytes = good;
    Store<uint32_t>(&bytes, f + 28, 0x7fffffff);  // absurd column count
    ExpectError(Parse(bytes), "column offset table");
  }
}

TEST(ContainerTest, OffsetTableEntriesThatLie) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  const std::string good = FixtureFile();
  const size_t f = good.size() - kFooterSize;
  const uint64_t cmo = LoadAt<uint64_t>(good, f + 8);
  const uint64_t gbo = LoadAt<uint64_t>(good, f + 16);
  {
    std::string bytes = good;
    Store<uint64_t>(&bytes, cmo + 8, good.size());  // column 0 metadata longer than the file
    ExpectError(Parse(bytes), "column 0");
  }
  {
    std::string bytes = good;
    Store<uint64_t>(&bytes, gbo + 8, good.size() * 2);  // schema buffer longer than the file
    ExpectError(Parse(bytes), "global buffer 0");
  }
}

TEST(ContainerTest, GarbageMetadata) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  const std::string good = FixtureFile();
  const size_t f = good.size() - kFooterSize;
  const uint64_t cmo = LoadAt<uint64_t>(good, f + 8);
  const uint64_t gbo = LoadAt<uint64_t>(good, f + 16);
  {
    std::string bytes = good;
    const uint64_t pos = LoadAt<uint64_t>(good, cmo), len = LoadAt<uint64_t>(good, cmo + 8);
    for (uint64_t i = 0; i < len; ++i) bytes[pos + i] = '\xff';
    ExpectError(Parse(bytes), "column 0");
  }
  {
    std::string bytes = good;
    const uint64_t pos = LoadAt<uint64_t>(good, gbo), len = LoadAt<uint64_t>(good, gbo + 8);
    for (uint64_t i = 0; i < len; ++i) bytes[pos + i] = '\xff';
    ExpectError(Parse(bytes), "schema");
  }
}

TEST(ContainerTest, EveryTruncationIsAnErrorNotACrash) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  const std::string good = FixtureFile();
  for (size_t len = 0; len < good.size(); len += (len < 256 ? 1 : 97)) {
    auto r = Parse(good.substr(0, len));
    EXPECT_FALSE(r.ok()) << "truncated to " << len << " bytes parsed";
  }
}

TEST(ContainerTest, EveryMetadataByteFlipIsHandled) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  // Flipping any byte of the metadata region must give an error or a layout
  // whose ranges are still inside the file, never a crash.
  const std::string good = FixtureFile();
  const size_t f = good.size() - kFooterSize;
  const uint64_t start = LoadAt<uint64_t>(good, f);
  for (size_t i = start; i < good.size(); ++i) {
    std::string bytes = good;
    bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);
    auto r = Parse(bytes);
    if (!r.ok()) continue;
    for (const auto& c : r->columns)
      for (const auto& p : c.pages)
        for (const auto& b : p.buffers) EXPECT_LE(b.position + b.size, bytes.size()) << "flip at " << i;
  }
}

}  // namespace
}  // namespace lance::file
