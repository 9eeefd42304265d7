// 2.1 and 2.2 files written by the pinned pylance (tests/fixtures/v2_1/gen.py):
// every field of every file is decoded and compared with what pylance's
// LanceFileReader reads back (the .arrow files next to them).
//
// The files are opened by a small loader local to this test (footer, offset
// tables, column metadata, schema), independent of the container reader.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <arrow/array.h>
#include <arrow/array/util.h>
#include <arrow/buffer.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>
#include <arrow/table.h>
#include <google/protobuf/any.pb.h>
#include <gtest/gtest.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file.pb.h"
#include "lance/file/schema_proto.h"
#include "lance/file/v2_1/field_decoder.h"
#include "lance/file2.pb.h"

namespace lance::file::v2_1 {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(LANCE_TEST_FIXTURES_DIR) / "v2_1";

// ------------------------------------------------------------------ loader

struct TestFile {
  uint16_t major = 0, minor = 0;
  uint64_t num_rows = 0;
  Schema schema;
  std::vector<ColumnData> columns;
  std::shared_ptr<arrow::Buffer> bytes;
};

Result<std::shared_ptr<arrow::Buffer>> Bytes(const std::shared_ptr<arrow::Buffer>& file, uint64_t pos, uint64_t len) {
  const uint64_t size = static_cast<uint64_t>(file->size());
  if (pos > size || len > size - pos) return Status::Invalid("range ", pos, "+", len, " is outside the file");
  return arrow::SliceBuffer(file, static_cast<int64_t>(pos), static_cast<int64_t>(len));
}

uint64_t LoadU64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

Status UnpackAny(const pb::file2::Encoding& encoding, std::string* url, std::string* value) {
  if (!encoding.has_direct()) return Status::Invalid("not a direct encoding");
  google::protobuf::Any any;
  if (!any.ParseFromString(encoding.direct().encoding())) return Status::Invalid("encoding is not an Any");
  *url = any.type_url();
  *value = any.value();
  return Status::OK();
}

Result<TestFile> Load(const fs::path& path) {
  TestFile out;
  LANCE_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(path.string()));
  LANCE_ASSIGN_OR_RAISE(int64_t size, file->GetSize());
  LANCE_ASSIGN_OR_RAISE(out.bytes, file->ReadAt(0, size));
  if (size < 40) return Status::Invalid("file too small");
  const uint8_t* footer = out.bytes->data() + size - 40;
  if (std::memcmp(footer + 36, "LANC", 4) != 0) return Status::Invalid("no magic");
  uint32_t num_global, num_columns;
  std::memcpy(&num_global, footer + 24, 4);
  std::memcpy(&num_columns, footer + 28, 4);
  std::memcpy(&out.major, footer + 32, 2);
  std::memcpy(&out.minor, footer + 34, 2);
  LANCE_ASSIGN_OR_RAISE(auto gbo, Bytes(out.bytes, LoadU64(footer + 16), uint64_t{num_global} * 16));
  LANCE_ASSIGN_OR_RAISE(auto descriptor_bytes, Bytes(out.bytes, LoadU64(gbo->data()), LoadU64(gbo->data() + 8)));
  pb::file::FileDescriptor descriptor;
  if (!descriptor.ParseFromArray(descriptor_bytes->data(), static_cast<int>(descriptor_bytes->size()))) {
    return Status::Invalid("bad file descriptor");
  }
  out.num_rows = descriptor.length();
  LANCE_ASSIGN_OR_RAISE(out.schema, SchemaFromProtoFields(descriptor.schema().fields(),
                                                          descriptor.schema().metadata(),
                                                          path.string()));
  LANCE_ASSIGN_OR_RAISE(auto cmo, Bytes(out.bytes, LoadU64(footer + 8), uint64_t{num_columns} * 16));
  for (uint32_t c = 0; c < num_columns; ++c) {
    LANCE_ASSIGN_OR_RAISE(auto meta_bytes,
                          Bytes(out.bytes, LoadU64(cmo->data() + c * 16), LoadU64(cmo->data() + c * 16 + 8)));
    pb::file2::ColumnMetadata meta;
    if (!meta.ParseFromArray(meta_bytes->data(), static_cast<int>(meta_bytes->size()))) {
      return Status::Invalid("bad column metadata ", c);
    }
    ColumnData column;
    if (meta.has_encoding()) LANCE_RETURN_NOT_OK(UnpackAny(meta.encoding(), &column.encoding_type_url,
                                                           &column.encoding));
    for (int b = 0; b < meta.buffer_offsets_size(); ++b) {
      LANCE_ASSIGN_OR_RAISE(auto buffer, Bytes(out.bytes, meta.buffer_offsets(b), meta.buffer_sizes(b)));
      column.buffers.push_back(std::move(buffer));
    }
    for (const auto& page_meta : meta.pages()) {
      PageData page;
      page.length = page_meta.length();
      page.priority = page_meta.priority();
      LANCE_RETURN_NOT_OK(UnpackAny(page_meta.encoding(), &page.encoding_type_url, &page.encoding));
      for (int b = 0; b < page_meta.buffer_offsets_size(); ++b) {
        LANCE_ASSIGN_OR_RAISE(auto buffer, Bytes(out.bytes, page_meta.buffer_offsets(b), page_meta.buffer_sizes(b)));
        page.buffers.push_back(std::move(buffer));
      }
      column.pages.push_back(std::move(page));
    }
    out.columns.push_back(std::move(column));
  }
  return out;
}

Result<std::shared_ptr<arrow::Table>> LoadExpected(const fs::path& path) {
  LANCE_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(path.string()));
  LANCE_ASSIGN_OR_RAISE(auto reader, arrow::ipc::RecordBatchFileReader::Open(file));
  LANCE_ASSIGN_OR_RAISE(auto table, reader->ToTable());
  return table->CombineChunks();
}

// Decodes dictionary arrays (recursively not needed: dictionaries are leaves).
std::shared_ptr<arrow::Array> Undictionary(const std::shared_ptr<arrow::Array>& array) {
  if (array->type_id() != arrow::Type::DICTIONARY) return array;
  const auto& dict = static_cast<const arrow::DictionaryArray&>(*array);
  auto taken = arrow::compute::Take(dict.dictionary(), dict.indices());
  EXPECT_TRUE(taken.ok()) << taken.status().ToString();
  return taken->make_array();
}

// ------------------------------------------------------------------ tests

struct FileCase {
  std::string version;
  std::string name;
};

// The fixture directory; LANCE_V21_FILES_DIR points elsewhere (a directory
// with the same 2.1/ and 2.2/ layout) to check other files the same way.
fs::path FixturesDir() {
  const char* dir = std::getenv("LANCE_V21_FILES_DIR");
  return dir ? fs::path(dir) : kFixtures;
}

std::vector<FileCase> AllFiles() {
  std::vector<FileCase> out;
  for (const char* version : {"2.1", "2.2"}) {
    const fs::path dir = FixturesDir() / version;
    if (!fs::exists(dir)) continue;
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".lance") names.push_back(entry.path().stem().string());
    }
    std::sort(names.begin(), names.end());
    for (auto& n : names) out.push_back({version, n});
  }
  return out;
}

class V21Files : public ::testing::TestWithParam<FileCase> {};

TEST_P(V21Files, DecodesLikePylance) {
  const auto& param = GetParam();
  const fs::path dir = FixturesDir() / param.version;
  auto loaded = Load(dir / (param.name + ".lance"));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_EQ(loaded->major, 2);
  ASSERT_EQ(loaded->minor, param.version == "2.1" ? 1 : 2);
  const FileVersion version = param.version == "2.1" ? FileVersion::kV2_1 : FileVersion::kV2_2;
  auto expected = LoadExpected(dir / (param.name + ".arrow"));
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  ASSERT_EQ((*expected)->num_rows(), static_cast<int64_t>(loaded->num_rows));
  ASSERT_EQ((*expected)->num_columns(), static_cast<int>(loaded->schema.fields.size()));
  auto bytes = loaded->bytes;
  BlobReader blobs = [bytes](uint64_t position, uint64_t size) { return Bytes(bytes, position, size); };
  size_t next = 0;
  int checked = 0;
  int64_t rows_checked = 0;
  for (size_t i = 0; i < loaded->schema.fields.size(); ++i) {
    const Field& field = loaded->schema.fields[i];
    const size_t n = static_cast<size_t>(NumColumns(field));
    ASSERT_LE(next + n, loaded->columns.size()) << field.name;
    std::span<const ColumnData> columns(loaded->columns.data() + next, n);
    next += n;
    const std::string what = param.version + "/" + param.name + "." + field.name;
    auto decoded = DecodeField(field, columns, loaded->num_rows, version, arrow::default_memory_pool(), blobs);
    if (!decoded.ok()) {
      ADD_FAILURE() << what << ": " << decoded.status().ToString();
      continue;
    }
    auto chunks = (*expected)->column(static_cast<int>(i));
    std::shared_ptr<arrow::Array> want =
        chunks->num_chunks() > 0 ? chunks->chunk(0) : arrow::MakeEmptyArray(chunks->type()).ValueOrDie();
    std::shared_ptr<arrow::Array> got = *decoded;
    EXPECT_TRUE(got->type()->Equals(*want->type())) << what << ": " << got->type()->ToString() << " vs "
                                                     << want->type()->ToString();
    if (got->type_id() == arrow::Type::DICTIONARY || want->type_id() == arrow::Type::DICTIONARY) {
      got = Undictionary(got);
      want = Undictionary(want);
    }
    ++checked;
    rows_checked += got->length();
    EXPECT_TRUE(got->Equals(*want)) << what << "\n got:  " << got->ToString().substr(0, 1500)
                                    << "\n want: " << want->ToString().substr(0, 1500);
  }
  EXPECT_EQ(next, loaded->columns.size());
  EXPECT_EQ(checked, static_cast<int>(loaded->schema.fields.size()));
  RecordProperty("fields", checked);
  RecordProperty("values", std::to_string(rows_checked));
}

// Mutates one page of one column of every field many times (flipped and
// overwritten bytes, truncated or dropped buffers, damaged page encodings,
// wrong row counts): decoding must return an error or a valid array, never
// crash or read out of bounds (run under the sanitizer build too).
TEST(V21Files, SurvivesCorruptPages) {
  std::mt19937_64 rng(20251129);
  int ok = 0, failed = 0;
  const char* rounds_env = std::getenv("LANCE_V21_FUZZ_ROUNDS");  // mutations per field
  const int rounds = rounds_env ? std::atoi(rounds_env) : 24;
  for (const auto& c : AllFiles()) {
    auto loaded = Load(FixturesDir() / c.version / (c.name + ".lance"));
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const FileVersion version = c.version == "2.1" ? FileVersion::kV2_1 : FileVersion::kV2_2;
    auto bytes = loaded->bytes;
    BlobReader blobs = [bytes](uint64_t position, uint64_t size) { return Bytes(bytes, position, size); };
    size_t next = 0;
    for (const Field& field : loaded->schema.fields) {
      const size_t n = static_cast<size_t>(NumColumns(field));
      std::vector<ColumnData> original(loaded->columns.begin() + next, loaded->columns.begin() + next + n);
      next += n;
      if (n == 0) continue;
      for (int m = 0; m < rounds; ++m) {
        std::vector<ColumnData> columns = original;
        ColumnData& column = columns[rng() % n];
        if (column.pages.empty()) continue;
        PageData& page = column.pages[rng() % column.pages.size()];
        const int kind = static_cast<int>(rng() % 7);
        if (kind <= 3 && !page.buffers.empty()) {
          auto& buffer = page.buffers[rng() % page.buffers.size()];
          std::string copy = buffer->ToString();
          if (kind == 0 && !copy.empty()) {
            for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k) copy[rng() % copy.size()] ^= 1 << (rng() % 8);
          } else if (kind == 1 && !copy.empty()) {
            copy[rng() % copy.size()] = static_cast<char>(rng() % 2 ? 0xFF : 0x00);
          } else if (kind == 2) {
            copy.resize(copy.empty() ? 0 : rng() % copy.size());
          } else {
            copy.append(static_cast<size_t>(1 + rng() % 64), static_cast<char>(rng()));
          }
          buffer = arrow::Buffer::FromString(std::move(copy));
        } else if (kind == 4 && !page.encoding.empty()) {
          page.encoding[rng() % page.encoding.size()] ^= static_cast<char>(1 << (rng() % 8));
        } else if (kind == 5 && !page.buffers.empty()) {
          page.buffers.erase(page.buffers.begin() + static_cast<long>(rng() % page.buffers.size()));
        } else {
          page.length += (rng() % 2) ? 1 : -1;
        }
        auto decoded = DecodeField(field, columns, loaded->num_rows, version, arrow::default_memory_pool(), blobs);
        if (decoded.ok()) {
          ++ok;
          EXPECT_TRUE((*decoded)->ValidateFull().ok());
        } else {
          ++failed;
        }
      }
    }
  }
  if (rounds >= 24) {
    EXPECT_GT(failed, 1000);
  }
  RecordProperty("decoded", ok);
  RecordProperty("rejected", failed);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, V21Files, ::testing::ValuesIn(AllFiles()),
                         [](const ::testing::TestParamInfo<FileCase>& info) {
                           std::string v = info.param.version;
                           std::replace(v.begin(), v.end(), '.', '_');
                           return "v" + v + "_" + info.param.name;
                         });

// The fixture set is present (so the parametrized test above is not vacuous).
TEST(V21FilesFixtures, Exist) {
  if (std::getenv("LANCE_V21_FILES_DIR") == nullptr) {
    EXPECT_GE(AllFiles().size(), 20u);
  }
}

}  // namespace
}  // namespace lance::file::v2_1
