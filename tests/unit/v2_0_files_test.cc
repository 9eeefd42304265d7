// 2.0 files written by the reference (pinned pylance, and the shared
// fixtures written by older releases): every column of every file is decoded
// and compared with what pylance's LanceFileReader reads (Arrow IPC files
// written by tests/fixtures/v2_0/gen.py).
//
// The files are opened by a minimal loader local to this test (footer, offset
// tables, column metadata, schema), independent of the project's container
// reader.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <arrow/array.h>
#include <arrow/array/util.h>
#include <arrow/buffer.h>
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>
#include <arrow/scalar.h>
#include <arrow/table.h>
#include <google/protobuf/any.pb.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include "lance/file/schema_proto.h"
#include "lance/file/v2_0/field_decoder.h"
#include "lance/file2.pb.h"
#include "shared_fixtures.h"

namespace lance::file::v2_0 {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(LANCE_TEST_FIXTURES_DIR) / "v2_0";

// ------------------------------------------------------------ test loader

struct LoadedFile {
  uint16_t major = 0;
  uint16_t minor = 0;
  uint64_t num_rows = 0;
  Schema schema;
  std::vector<ColumnData> columns;
  std::shared_ptr<arrow::Buffer> bytes;
};

uint64_t U64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

Result<std::shared_ptr<arrow::Buffer>> Range(const std::shared_ptr<arrow::Buffer>& bytes, uint64_t pos,
                                             uint64_t size) {
  if (pos > static_cast<uint64_t>(bytes->size()) || size > static_cast<uint64_t>(bytes->size()) - pos) {
    return Status::Invalid("range ", pos, "+", size, " is outside the file");
  }
  return arrow::SliceBuffer(bytes, static_cast<int64_t>(pos), static_cast<int64_t>(size));
}

Status SetEncoding(const pb::file2::Encoding& encoding, std::string* url, std::string* value) {
  if (!encoding.has_direct()) return Status::Invalid("only direct encodings are supported");
  google::protobuf::Any any;
  if (!any.ParseFromString(encoding.direct().encoding())) return Status::Invalid("bad Any");
  *url = any.type_url();
  *value = any.value();
  return Status::OK();
}

Result<LoadedFile> LoadFile(const std::string& path) {
  LoadedFile out;
  LANCE_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(path));
  LANCE_ASSIGN_OR_RAISE(int64_t size, file->GetSize());
  LANCE_ASSIGN_OR_RAISE(out.bytes, file->ReadAt(0, size));
  if (size < 40) return Status::Invalid(path, " is too small");
  const uint8_t* footer = out.bytes->data() + size - 40;
  if (std::memcmp(footer + 36, "LANC", 4) != 0) return Status::Invalid(path, " has no LANC magic");
  const uint64_t cmo_pos = U64(footer + 8);
  const uint64_t gbo_pos = U64(footer + 16);
  uint32_t num_global, num_columns;
  std::memcpy(&num_global, footer + 24, 4);
  std::memcpy(&num_columns, footer + 28, 4);
  std::memcpy(&out.major, footer + 32, 2);
  std::memcpy(&out.minor, footer + 34, 2);
  LANCE_ASSIGN_OR_RAISE(auto gbo, Range(out.bytes, gbo_pos, uint64_t{num_global} * 16));
  if (num_global < 1) return Status::Invalid(path, " has no schema buffer");
  LANCE_ASSIGN_OR_RAISE(auto schema_bytes, Range(out.bytes, U64(gbo->data()), U64(gbo->data() + 8)));
  pb::file::FileDescriptor descriptor;
  if (!descriptor.ParseFromArray(schema_bytes->data(), static_cast<int>(schema_bytes->size()))) {
    return Status::Invalid(path, ": bad FileDescriptor");
  }
  out.num_rows = descriptor.length();
  LANCE_ASSIGN_OR_RAISE(out.schema, SchemaFromProtoFields(descriptor.schema().fields(),
                                                          descriptor.schema().metadata(), path));
  LANCE_ASSIGN_OR_RAISE(auto cmo, Range(out.bytes, cmo_pos, uint64_t{num_columns} * 16));
  for (uint32_t c = 0; c < num_columns; ++c) {
    LANCE_ASSIGN_OR_RAISE(auto meta_bytes, Range(out.bytes, U64(cmo->data() + c * 16), U64(cmo->data() + c * 16 + 8)));
    pb::file2::ColumnMetadata meta;
    if (!meta.ParseFromArray(meta_bytes->data(), static_cast<int>(meta_bytes->size()))) {
      return Status::Invalid(path, ": bad ColumnMetadata ", c);
    }
    ColumnData column;
    if (meta.has_encoding()) {
      LANCE_RETURN_NOT_OK(SetEncoding(meta.encoding(), &column.encoding_type_url, &column.encoding));
    }
    for (int b = 0; b < meta.buffer_offsets_size(); ++b) {
      LANCE_ASSIGN_OR_RAISE(auto buffer, Range(out.bytes, meta.buffer_offsets(b), meta.buffer_sizes(b)));
      column.buffers.push_back(buffer);
    }
    for (const auto& page_meta : meta.pages()) {
      PageData page;
      page.length = page_meta.length();
      page.priority = page_meta.priority();
      LANCE_RETURN_NOT_OK(SetEncoding(page_meta.encoding(), &page.encoding_type_url, &page.encoding));
      for (int b = 0; b < page_meta.buffer_offsets_size(); ++b) {
        LANCE_ASSIGN_OR_RAISE(auto buffer,
                              Range(out.bytes, page_meta.buffer_offsets(b), page_meta.buffer_sizes(b)));
        page.buffers.push_back(buffer);
      }
      column.pages.push_back(std::move(page));
    }
    out.columns.push_back(std::move(column));
  }
  return out;
}

Result<std::shared_ptr<arrow::Table>> ReadExpected(const fs::path& path) {
  LANCE_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(path.string()));
  LANCE_ASSIGN_OR_RAISE(auto reader, arrow::ipc::RecordBatchFileReader::Open(file));
  LANCE_ASSIGN_OR_RAISE(auto table, reader->ToTable());
  return table->CombineChunks();
}

// ------------------------------------------------------------ comparison

// Compares value by value (dictionary values through their dictionary).
void ExpectSameValues(const arrow::Array& actual, const arrow::Array& expected, const std::string& what) {
  ASSERT_EQ(actual.length(), expected.length()) << what;
  for (int64_t i = 0; i < actual.length(); ++i) {
    auto a = actual.GetScalar(i).ValueOrDie();
    auto e = expected.GetScalar(i).ValueOrDie();
    if (a->type->id() == arrow::Type::DICTIONARY) {
      const auto& d = static_cast<const arrow::DictionaryScalar&>(*a);
      if (d.is_valid) {
        a = d.GetEncodedValue().ValueOrDie();
      } else {
        a = arrow::MakeNullScalar(static_cast<const arrow::DictionaryType&>(*a->type).value_type());
      }
    }
    ASSERT_TRUE(a->Equals(*e)) << what << " row " << i << ": " << a->ToString() << " vs " << e->ToString();
  }
}

// Decodes every top-level field of `file` and compares it with `expected`.
void CheckFile(const fs::path& lance_path, const fs::path& arrow_path, int* fields_checked = nullptr) {
  auto loaded = LoadFile(lance_path.string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->major, 0);
  ASSERT_EQ(loaded->minor, 3) << lance_path;
  auto expected = ReadExpected(arrow_path);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  ASSERT_EQ((*expected)->num_rows(), static_cast<int64_t>(loaded->num_rows));
  ASSERT_EQ((*expected)->num_columns(), static_cast<int>(loaded->schema.fields.size()));
  auto bytes = loaded->bytes;
  FileRangeReader reader = [bytes](uint64_t position, uint64_t size) { return Range(bytes, position, size); };
  size_t next = 0;
  for (size_t i = 0; i < loaded->schema.fields.size(); ++i) {
    const Field& field = loaded->schema.fields[i];
    ASSERT_LE(next, loaded->columns.size()) << field.name;
    const std::span<const ColumnData> rest(loaded->columns.data() + next, loaded->columns.size() - next);
    const size_t n = static_cast<size_t>(NumColumns(field, rest));
    ASSERT_LE(next + n, loaded->columns.size()) << field.name;
    std::span<const ColumnData> columns(loaded->columns.data() + next, n);
    next += n;
    auto decoded = DecodeField(field, columns, loaded->num_rows, arrow::default_memory_pool(), reader);
    ASSERT_TRUE(decoded.ok()) << lance_path.filename() << ": " << decoded.status().ToString();
    const auto& array = *decoded;
    ASSERT_TRUE(array->ValidateFull().ok()) << field.name << ": " << array->ValidateFull().ToString();
    const auto& chunks = (*expected)->column(static_cast<int>(i));
    std::shared_ptr<arrow::Array> want =
        chunks->num_chunks() > 0 ? chunks->chunk(0) : arrow::MakeEmptyArray(chunks->type()).ValueOrDie();
    const std::string what = lance_path.filename().string() + " field " + field.name;
    if (array->type()->Equals(*want->type()) && array->type_id() != arrow::Type::DICTIONARY) {
      EXPECT_TRUE(array->Equals(*want)) << what << "\nactual:   " << array->ToString().substr(0, 2000)
                                        << "\nexpected: " << want->ToString().substr(0, 2000);
    } else {
      // Dictionary columns of several pages are stored decoded by gen.py;
      // which dictionary holds the values is not part of the data.
      ASSERT_EQ(array->type_id(), arrow::Type::DICTIONARY) << what << ": " << array->type()->ToString()
                                                           << " vs " << want->type()->ToString();
      if (want->type_id() == arrow::Type::DICTIONARY) {
        const auto& values = static_cast<const arrow::DictionaryType&>(*want->type()).value_type();
        auto a = arrow::compute::Cast(*array, values).ValueOrDie();
        auto e = arrow::compute::Cast(*want, values).ValueOrDie();
        EXPECT_TRUE(a->Equals(*e)) << what << "\nactual:   " << a->ToString().substr(0, 2000)
                                   << "\nexpected: " << e->ToString().substr(0, 2000);
      } else {
        ExpectSameValues(*array, *want, what);
      }
    }
    if (fields_checked) ++*fields_checked;
  }
  EXPECT_EQ(next, loaded->columns.size()) << "columns left over in " << lance_path;
}

class V20Files : public ::testing::TestWithParam<std::string> {};

TEST_P(V20Files, DecodesLikePylance) {
  int checked = 0;
  CheckFile(kFixtures / (GetParam() + ".lance"), kFixtures / (GetParam() + ".arrow"), &checked);
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, V20Files,
                         ::testing::Values("primitives", "strings", "nested", "multipage", "multipage_split",
                                           "empty", "blob", "legacy_list_string"));

// The fixtures really exercise several pages per column (and list pages not
// aligned with their item pages).
TEST(V20Files, MultipageFixtureHasManyPages) {
  auto loaded = LoadFile((kFixtures / "multipage.lance").string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  size_t multi = 0;
  for (const auto& column : loaded->columns) multi += column.pages.size() > 1;
  EXPECT_GE(multi, 10u);
}

TEST(V20Files, BlobDescriptions) {
  auto loaded = LoadFile((kFixtures / "blob.lance").string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Field& field = loaded->schema.fields[0];
  auto descriptions = DecodeBlobDescriptions(field, loaded->columns[0], loaded->num_rows, arrow::default_memory_pool());
  ASSERT_TRUE(descriptions.ok()) << descriptions.status().ToString();
  const auto& s = static_cast<const arrow::StructArray&>(**descriptions);
  const auto& positions = static_cast<const arrow::UInt64Array&>(*s.field(0));
  const auto& sizes = static_cast<const arrow::UInt64Array&>(*s.field(1));
  // gen.py: row i is null when i % 5 == 1, empty when i % 7 == 3.
  for (int64_t i = 0; i < s.length(); ++i) {
    if (i % 5 == 1) {
      EXPECT_EQ(positions.Value(i), 1u) << i;
      EXPECT_EQ(sizes.Value(i), 0u) << i;
    } else if (i % 7 == 3) {
      EXPECT_EQ(positions.Value(i), 0u) << i;
      EXPECT_EQ(sizes.Value(i), 0u) << i;
    } else {
      EXPECT_GT(sizes.Value(i), 0u) << i;
      EXPECT_LE(positions.Value(i) + sizes.Value(i), static_cast<uint64_t>(loaded->bytes->size())) << i;
    }
  }
  auto without_reader = DecodeField(field, std::span<const ColumnData>(loaded->columns.data(), 1),
                                    loaded->num_rows, arrow::default_memory_pool());
  EXPECT_TRUE(without_reader.status().IsNotImplemented()) << without_reader.status().ToString();
}

// Corrupted copies of real columns (bytes flipped in encodings and buffers,
// buffers truncated or dropped, page lengths changed) must decode to an error
// or to structurally valid data: never crash or read out of bounds (this test
// is meant to run under the sanitizers too).
TEST(V20Files, MutatedColumnsNeverCrash) {
  std::mt19937_64 rng(2024);
  int decoded = 0;
  int failed = 0;
  for (const char* name : {"primitives", "strings", "nested", "multipage", "blob"}) {
    auto loaded = LoadFile((kFixtures / (std::string(name) + ".lance")).string());
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    auto bytes = loaded->bytes;
    FileRangeReader reader = [bytes](uint64_t position, uint64_t size) { return Range(bytes, position, size); };
    size_t next = 0;
    for (const Field& field : loaded->schema.fields) {
      const size_t n = static_cast<size_t>(NumColumns(field));
      for (int round = 0; round < 100; ++round) {
        std::vector<ColumnData> columns(loaded->columns.begin() + next, loaded->columns.begin() + next + n);
        const int mutations = 1 + static_cast<int>(rng() % 3);
        for (int m = 0; m < mutations; ++m) {
          ColumnData& column = columns[rng() % n];
          if (column.pages.empty()) continue;
          PageData& page = column.pages[rng() % column.pages.size()];
          auto flip = [&](std::string* s) {
            if (!s->empty()) (*s)[rng() % s->size()] ^= static_cast<char>(1 + rng() % 255);
          };
          switch (rng() % 6) {
            case 0:
              flip(&page.encoding);
              break;
            case 1:
              if (!page.buffers.empty()) {
                auto& b = page.buffers[rng() % page.buffers.size()];
                if (b->size() > 0) b = arrow::SliceBuffer(b, 0, static_cast<int64_t>(rng() % b->size()));
              }
              break;
            case 2:
              if (!page.buffers.empty()) {
                auto& b = page.buffers[rng() % page.buffers.size()];
                std::string copy = b->ToString();
                flip(&copy);
                b = arrow::Buffer::FromString(std::move(copy));
              }
              break;
            case 3: {
              const uint64_t choices[] = {page.length + 1, page.length - 1, page.length * 2, uint64_t{1} << 35};
              page.length = choices[rng() % 4];
              break;
            }
            case 4:
              if (!page.buffers.empty()) page.buffers.pop_back();
              break;
            default:
              flip(&column.encoding);
              break;
          }
        }
        auto result = DecodeField(field, columns, loaded->num_rows, arrow::default_memory_pool(), reader);
        if (!result.ok()) {
          ++failed;
          EXPECT_NE(result.status().message().find("'" + field.name), std::string::npos)
              << result.status().ToString();
          continue;
        }
        ++decoded;
        auto st = (*result)->ValidateFull();
        // Flipped bytes may leave values Arrow finds out of their domain
        // (invalid UTF-8, decimals past their precision, times past a day),
        // which the format does not check; the structure must be sound.
        bool content_only = false;
        for (const char* what : {"UTF8", "does not fit in precision", "not within the acceptable range",
                                 "does not represent a whole number of days"}) {
          content_only = content_only || st.message().find(what) != std::string::npos;
        }
        EXPECT_TRUE(st.ok() || content_only) << name << " " << field.name << ": " << st.ToString();
      }
      next += n;
    }
  }
  EXPECT_GT(failed, 100);
  EXPECT_GT(decoded, 100);
}

// Every (0,3) file of the shared reference fixtures.
TEST(V20Files, SharedReferenceFixtures) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  const fs::path root = LANCE_FIXTURES_DIR;
  if (!fs::is_directory(root)) GTEST_SKIP() << "no shared fixtures at " << root;
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".lance") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    in.seekg(-8, std::ios::end);
    char tail[8];
    in.read(tail, 8);
    if (std::string(tail, 8) != std::string("\0\0\3\0LANC", 8)) continue;
    std::string rel = fs::relative(entry.path(), root).generic_string();
    std::string name;
    for (char c : rel) name += c == '/' ? std::string("__") : std::string(1, c);
    const fs::path expected = kFixtures / "reference" / (name + ".arrow");
    SCOPED_TRACE(rel);
    ASSERT_TRUE(fs::exists(expected)) << "no expectation " << expected << " (rerun gen.py)";
    CheckFile(entry.path(), expected);
    ++files;
  }
  EXPECT_GE(files, 15);
}

}  // namespace
}  // namespace lance::file::v2_0
