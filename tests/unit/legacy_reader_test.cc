// Reading legacy (0.1) data files: every legacy file of the shared fixtures and
// of the generated datasets (tests/fixtures/legacy) against what pylance reads,
// and damaged copies of them refused with errors that name the file.
#include "lance/file/legacy/legacy_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <arrow/array.h>
#include <arrow/array/concatenate.h>
#include <arrow/buffer.h>
#include <arrow/compare.h>
#include <arrow/io/file.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/reader.h>
#include <arrow/table.h>

#include "lance/dataset.h"
#include "lance/file.pb.h"
#include "lance/table.pb.h"
#include "shared_fixtures.h"

namespace lance::file::legacy {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = LANCE_FIXTURES_DIR;
const fs::path kLocal = fs::path(LANCE_TEST_FIXTURES_DIR) / "legacy";

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::shared_ptr<arrow::io::RandomAccessFile> InMemory(const std::string& bytes) {
  return std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(bytes));
}

// Whether the footer says legacy: (0,0), (0,1) or (0,2).
bool IsLegacyFile(const fs::path& p) {
  std::string b = ReadBytes(p);
  if (b.size() < 16 || b.substr(b.size() - 4) != "LANC") return false;
  uint16_t major, minor;
  std::memcpy(&major, b.data() + b.size() - 8, 2);
  std::memcpy(&minor, b.data() + b.size() - 6, 2);
  return major == 0 && minor <= 2;
}

std::shared_ptr<arrow::Table> ReadExpected(const fs::path& p) {
  auto file = arrow::io::ReadableFile::Open(p.string());
  EXPECT_TRUE(file.ok()) << p << ": " << file.status().ToString();
  if (!file.ok()) return nullptr;
  auto reader = arrow::ipc::RecordBatchFileReader::Open(*file);
  EXPECT_TRUE(reader.ok()) << p << ": " << reader.status().ToString();
  if (!reader.ok()) return nullptr;
  auto table = (*reader)->ToTable();
  EXPECT_TRUE(table.ok()) << p << ": " << table.status().ToString();
  if (!table.ok()) return nullptr;
  auto combined = (*table)->CombineChunks();
  EXPECT_TRUE(combined.ok()) << p;
  return combined.ok() ? *combined : nullptr;
}

// The top-level fields of `schema` stored in `file` (with their children).
Schema ProjectionFor(const Schema& schema, const std::vector<int32_t>& file_fields) {
  std::set<int32_t> ids(file_fields.begin(), file_fields.end());
  Schema out;
  for (const auto& f : schema.fields) {
    if (ids.count(f.id)) out.fields.push_back(f);
  }
  return out;
}

void ExpectSameData(const arrow::RecordBatch& actual, const arrow::Table& expected, const std::string& what) {
  ASSERT_EQ(actual.num_rows(), expected.num_rows()) << what;
  ASSERT_EQ(actual.num_columns(), expected.num_columns()) << what;
  for (int c = 0; c < actual.num_columns(); ++c) {
    const std::string name = actual.schema()->field(c)->name();
    auto col = expected.GetColumnByName(name);
    ASSERT_NE(col, nullptr) << what << ": pylance read no column " << name;
    std::shared_ptr<arrow::Array> want;
    if (col->num_chunks() == 1) {
      want = col->chunk(0);
    } else {
      auto concat = arrow::Concatenate(col->chunks());
      ASSERT_TRUE(concat.ok()) << concat.status().ToString();
      want = *concat;
    }
    const auto& got = actual.column(c);
    ASSERT_TRUE(got->type()->Equals(*want->type()))
        << what << " column " << name << ": type " << got->type()->ToString() << ", pylance "
        << want->type()->ToString();
    EXPECT_TRUE(got->Equals(*want, arrow::EqualOptions::Defaults().nans_equal(true)))
        << what << " column " << name << " differs:\n"
        << got->Diff(*want);
  }
}

// ---------------------------------------------------------------------------
// The shared fixtures: every legacy data file against reference/<path>.arrow.

struct SharedFile {
  fs::path dataset;        // the fixture dataset directory
  fs::path file;           // the data file
  std::string reference;   // reference/<...>.arrow
};

std::vector<SharedFile> SharedLegacyFiles() {
  std::vector<SharedFile> out;
  if (!fs::is_directory(kShared)) return out;
  for (auto it = fs::recursive_directory_iterator(kShared); it != fs::recursive_directory_iterator(); ++it) {
    if (!it->is_directory() || it->path().filename() != "_versions") continue;
    it.disable_recursion_pending();
    const fs::path ds = it->path().parent_path();
    if (!fs::is_directory(ds / "data")) continue;
    for (const auto& e : fs::directory_iterator(ds / "data")) {
      if (e.path().extension() != ".lance" || !IsLegacyFile(e.path())) continue;
      std::string rel = fs::relative(e.path(), kShared).generic_string();
      std::string ref;
      for (char ch : rel) {
        if (ch == '/') {
          ref += "__";
        } else {
          ref += ch;
        }
      }
      out.push_back({ds, e.path(), ref + ".arrow"});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.file < b.file; });
  return out;
}

TEST(LegacyReaderFixturesTest, FindsTheLegacyFiles) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  auto files = SharedLegacyFiles();
  EXPECT_GE(files.size(), 24u) << "legacy files missing under " << kShared;
}

TEST(LegacyReaderFixturesTest, EverySharedLegacyFileReadsAsPylanceReadsIt) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  auto files = SharedLegacyFiles();
  ASSERT_FALSE(files.empty());
  for (const auto& sf : files) {
    SCOPED_TRACE(sf.file.string());
    auto ds = Dataset::Open(sf.dataset.string());
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    const Schema& schema = (*ds)->manifest().schema;
    // The file's field ids: from its DataFile when the current version has
    // it, else (a leftover file) every top-level field, as gen.py assumes.
    std::vector<int32_t> ids;
    bool referenced = false;
    for (const auto& frag : (*ds)->manifest().fragments) {
      for (const auto& df : frag.files) {
        if (df.path == sf.file.filename().string()) {
          ids = df.fields;
          referenced = true;
        }
      }
    }
    if (!referenced) {
      for (const auto& f : schema.fields) ids.push_back(f.id);
    }
    auto expected = ReadExpected(kLocal / "reference" / sf.reference);
    ASSERT_NE(expected, nullptr) << "no reference " << sf.reference << " (run gen.py)";

    auto file = arrow::io::ReadableFile::Open(sf.file.string());
    ASSERT_TRUE(file.ok());
    auto reader = LegacyFileReader::Open(*file, sf.file.string(), arrow::default_memory_pool());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    EXPECT_EQ((*reader)->num_rows(), static_cast<uint64_t>(expected->num_rows()));
    const Schema projection = ProjectionFor(schema, ids);
    auto batch = (*reader)->ReadAll(projection);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    ExpectSameData(**batch, *expected, sf.file.string());

    // The dataset's way: the page table range from the DataFile's ids.
    LegacyOpenOptions options;
    options.min_field_id = ids.front();
    options.max_field_id = *std::max_element(ids.begin(), ids.end());
    auto file2 = arrow::io::ReadableFile::Open(sf.file.string());
    ASSERT_TRUE(file2.ok());
    auto by_ids = LegacyFileReader::Open(*file2, sf.file.string(), arrow::default_memory_pool(), options);
    ASSERT_TRUE(by_ids.ok()) << by_ids.status().ToString();
    auto batch2 = (*by_ids)->ReadAll(projection);
    ASSERT_TRUE(batch2.ok()) << batch2.status().ToString();
    EXPECT_TRUE((*batch2)->Equals(**batch));
  }
}

// Index files are legacy files too (self-describing: they embed their
// schema). No pylance reading of them exists to compare with; they must read.
TEST(LegacyReaderFixturesTest, LegacyIndexFilesReadWithTheirEmbeddedSchema) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  int seen = 0;
  for (const auto& e : fs::recursive_directory_iterator(kShared)) {
    if (!e.is_regular_file() || e.path().extension() != ".lance") continue;
    if (!Contains(e.path().generic_string(), "/_indices/") || !IsLegacyFile(e.path())) continue;
    SCOPED_TRACE(e.path().string());
    ++seen;
    auto file = arrow::io::ReadableFile::Open(e.path().string());
    ASSERT_TRUE(file.ok());
    auto reader = LegacyFileReader::Open(*file, e.path().string(), arrow::default_memory_pool());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    ASSERT_TRUE((*reader)->embedded_schema().has_value());
    auto batch = (*reader)->ReadAll(*(*reader)->embedded_schema());
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    EXPECT_EQ(static_cast<uint64_t>((*batch)->num_rows()), (*reader)->num_rows());
    EXPECT_GT((*batch)->num_rows(), 0);
  }
  EXPECT_GE(seen, 4);
}

// ---------------------------------------------------------------------------
// The generated datasets: every type, several batches per file.

struct LocalFile {
  std::string dataset;
  DataFile data_file;
  std::string location;
};

void CheckGeneratedDataset(const std::string& name, int min_files) {
  auto ds = Dataset::Open((kLocal / "datasets" / name).string());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  auto version = (*ds)->DataStorageVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, "0.1");
  const Schema& schema = (*ds)->manifest().schema;
  int files = 0;
  bool saw_several_batches = false;
  for (const auto& frag : (*ds)->manifest().fragments) {
    for (const auto& df : frag.files) {
      SCOPED_TRACE(name + "/" + df.path);
      ++files;
      auto location = (*ds)->DataFileLocation(df);
      ASSERT_TRUE(location.ok());
      auto handle = (*ds)->OpenDataFile(df);
      ASSERT_TRUE(handle.ok()) << handle.status().ToString();
      auto reader = LegacyFileReader::Open(*handle, *location, arrow::default_memory_pool());
      ASSERT_TRUE(reader.ok()) << reader.status().ToString();
      const Schema projection = ProjectionFor(schema, df.fields);
      auto expected = ReadExpected(kLocal / "expected" / name / (df.path + ".arrow"));
      ASSERT_NE(expected, nullptr);
      auto all = (*reader)->ReadAll(projection);
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      ExpectSameData(**all, *expected, *location);

      // Batch by batch, the same rows.
      const int nb = (*reader)->num_batches();
      saw_several_batches |= nb > 1;
      uint64_t rows = 0;
      for (int b = 0; b < nb; ++b) {
        auto batch = (*reader)->ReadBatch(b, projection);
        ASSERT_TRUE(batch.ok()) << batch.status().ToString();
        ASSERT_EQ(static_cast<uint64_t>((*batch)->num_rows()), (*reader)->batch_rows(b));
        EXPECT_TRUE((*batch)->Equals(*(*all)->Slice(static_cast<int64_t>(rows), (*batch)->num_rows())))
            << "batch " << b;
        rows += (*reader)->batch_rows(b);
      }
      EXPECT_EQ(rows, (*reader)->num_rows());
      auto past = (*reader)->ReadBatch(nb, projection);
      EXPECT_TRUE(past.status().IsIndexError()) << past.status().ToString();

      // Field by field: any subset of the fields reads the same.
      for (const auto& field : projection.fields) {
        Schema one;
        one.fields.push_back(field);
        auto single = (*reader)->ReadAll(one);
        ASSERT_TRUE(single.ok()) << field.name << ": " << single.status().ToString();
        EXPECT_TRUE((*single)->column(0)->Equals(*(*all)->GetColumnByName(field.name))) << field.name;
      }

      // A struct read with only some of its children.
      for (const auto& field : projection.fields) {
        if (field.logical_type != "struct" || field.children.size() < 2) continue;
        Schema part;
        part.fields.push_back(field);
        part.fields[0].children.erase(part.fields[0].children.begin());
        auto partial = (*reader)->ReadAll(part);
        ASSERT_TRUE(partial.ok()) << field.name << ": " << partial.status().ToString();
        auto whole = std::static_pointer_cast<arrow::StructArray>((*all)->GetColumnByName(field.name));
        auto got = std::static_pointer_cast<arrow::StructArray>((*partial)->column(0));
        ASSERT_EQ(got->num_fields(), whole->num_fields() - 1);
        for (int i = 0; i < got->num_fields(); ++i) {
          EXPECT_TRUE(got->field(i)->Equals(*whole->field(i + 1))) << field.name << " child " << i;
        }
      }

      // The page table range the dataset gives.
      LegacyOpenOptions options;
      options.min_field_id = df.fields.front();
      options.max_field_id = *std::max_element(df.fields.begin(), df.fields.end());
      auto handle2 = (*ds)->OpenDataFile(df);
      ASSERT_TRUE(handle2.ok());
      auto by_ids = LegacyFileReader::Open(*handle2, *location, arrow::default_memory_pool(), options);
      ASSERT_TRUE(by_ids.ok()) << by_ids.status().ToString();
      EXPECT_EQ((*by_ids)->min_field_id(), (*reader)->min_field_id());
      auto again = (*by_ids)->ReadAll(projection);
      ASSERT_TRUE(again.ok()) << again.status().ToString();
      EXPECT_TRUE((*again)->Equals(**all));
    }
  }
  EXPECT_GE(files, min_files);
  EXPECT_TRUE(saw_several_batches);
}

TEST(LegacyReaderGeneratedTest, AllTypes) { CheckGeneratedDataset("alltypes", 3); }

TEST(LegacyReaderGeneratedTest, EvolvedSchema) { CheckGeneratedDataset("evolved", 2); }

TEST(LegacyReaderGeneratedTest, EveryFixtureFileIsListedInTheReadme) {
  const std::string readme = ReadBytes(kLocal / "README.md");
  ASSERT_TRUE(Contains(readme, "<!-- sha256 -->"));
  // Every fixture file is listed (gen.py writes the table).
  for (const auto& e : fs::recursive_directory_iterator(kLocal)) {
    if (!e.is_regular_file() || e.path().filename() == "README.md") continue;
    const std::string rel = fs::relative(e.path(), kLocal).generic_string();
    if (Contains(rel, "__pycache__")) continue;
    EXPECT_TRUE(Contains(readme, "`" + rel + "`")) << rel << " is not in README.md";
  }
}

// ---------------------------------------------------------------------------
// Damaged files.

// A legacy file in memory, with its parsed tail, for building damaged copies.
struct Sample {
  std::string bytes;
  std::string name;
  Schema schema;  // the dataset's schema of its fields
  uint64_t metadata_position = 0;
  pb::file::Metadata metadata;
  int32_t min_field_id = 0;

  int num_batches() const { return metadata.batch_offsets_size() - 1; }
  // Byte offset of the page table entry of (field, batch).
  uint64_t EntryOffset(int32_t field_id, int batch) const {
    return metadata.page_table_position() + 16 * (static_cast<uint64_t>(field_id - min_field_id) * num_batches() + batch);
  }
  int64_t I64At(uint64_t off) const {
    int64_t v;
    std::memcpy(&v, bytes.data() + off, 8);
    return v;
  }
  void SetI64(std::string* b, uint64_t off, int64_t v) const { std::memcpy(b->data() + off, &v, 8); }
  // The file with a different Metadata message (and optionally an extra
  // manifest placed before it, whose position the metadata then records).
  std::string WithMetadata(const pb::file::Metadata& m, const std::string& manifest_message = "") const {
    std::string out = bytes.substr(0, metadata_position);
    pb::file::Metadata meta = m;
    if (!manifest_message.empty()) {
      meta.set_manifest_position(out.size());
      uint32_t len = static_cast<uint32_t>(manifest_message.size());
      out.append(reinterpret_cast<const char*>(&len), 4);
      out += manifest_message;
    }
    const int64_t pos = static_cast<int64_t>(out.size());
    std::string msg = meta.SerializeAsString();
    uint32_t len = static_cast<uint32_t>(msg.size());
    out.append(reinterpret_cast<const char*>(&len), 4);
    out += msg;
    out.append(reinterpret_cast<const char*>(&pos), 8);
    out += bytes.substr(bytes.size() - 8);
    return out;
  }
  pb::table::Manifest EmbeddedManifest() const {
    pb::table::Manifest m;
    uint32_t len;
    std::memcpy(&len, bytes.data() + metadata.manifest_position(), 4);
    EXPECT_TRUE(m.ParseFromArray(bytes.data() + metadata.manifest_position() + 4, static_cast<int>(len)));
    return m;
  }
};

// The first file of the generated alltypes dataset: several batches, every
// type, dictionaries.
Sample LoadSample() {
  Sample s;
  auto ds = Dataset::Open((kLocal / "datasets" / "alltypes").string());
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  if (!ds.ok()) return s;
  const auto& frag = (*ds)->manifest().fragments.front();
  const auto& df = frag.files.front();
  s.schema = ProjectionFor((*ds)->manifest().schema, df.fields);
  s.bytes = ReadBytes(kLocal / "datasets" / "alltypes" / "data" / df.path);
  s.name = "damaged-copy-of-" + df.path;
  std::memcpy(&s.metadata_position, s.bytes.data() + s.bytes.size() - 16, 8);
  uint32_t len;
  std::memcpy(&len, s.bytes.data() + s.metadata_position, 4);
  EXPECT_TRUE(s.metadata.ParseFromArray(s.bytes.data() + s.metadata_position + 4, static_cast<int>(len)));
  s.min_field_id = df.fields.front();
  EXPECT_GT(s.num_batches(), 1);
  return s;
}

const Field* TopField(const Schema& schema, const std::string& name) {
  for (const auto& f : schema.fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// Opens and reads everything; the outcome must be an error naming the file
// (or, for damage the format cannot notice, a successful read).
Status OpenAndRead(const std::string& bytes, const std::string& name, const Schema& schema,
                   const LegacyOpenOptions& options = {}) {
  auto reader = LegacyFileReader::Open(InMemory(bytes), name, arrow::default_memory_pool(), options);
  if (!reader.ok()) return reader.status();
  auto all = (*reader)->ReadAll(schema);
  if (!all.ok()) return all.status();
  return (*all)->ValidateFull();
}

void ExpectError(const Status& st, const std::string& name, const std::string& fragment, const std::string& what) {
  EXPECT_FALSE(st.ok()) << what << ": no error";
  if (st.ok()) return;
  EXPECT_TRUE(Contains(st.message(), name)) << what << ": error does not name the file: " << st.ToString();
  EXPECT_TRUE(Contains(st.message(), fragment)) << what << ": expected '" << fragment << "' in " << st.ToString();
}

TEST(LegacyReaderDamageTest, TheSampleReads) {
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  EXPECT_TRUE(OpenAndRead(s.bytes, s.name, s.schema).ok()) << OpenAndRead(s.bytes, s.name, s.schema).ToString();
}

TEST(LegacyReaderDamageTest, TruncatedFiles) {
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  std::vector<size_t> cuts = {0, 1, 8, 15, 16, 17, 100, s.metadata_position, s.metadata_position + 3,
                              s.bytes.size() / 2, s.bytes.size() - 17, s.bytes.size() - 16, s.bytes.size() - 1};
  for (size_t cut : cuts) {
    const std::string what = "cut at " + std::to_string(cut);
    ExpectError(OpenAndRead(s.bytes.substr(0, cut), s.name, s.schema), s.name, "", what);
  }
  // Cut off the front: every position is off.
  ExpectError(OpenAndRead(s.bytes.substr(64), s.name, s.schema), s.name, "", "front cut");
}

TEST(LegacyReaderDamageTest, NotALegacyVersion) {
  LANCE_REQUIRE_SHARED_FIXTURES();
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  std::string b = s.bytes;
  uint16_t minor = 3;
  std::memcpy(b.data() + b.size() - 6, &minor, 2);
  ExpectError(OpenAndRead(b, s.name, s.schema), s.name, "not a legacy", "version 0.3");
  // A real 2.0 file.
  const fs::path v2 = kShared / "v0.15.0/v2_with_files.lance/data/38639abd-798b-4005-87a1-39d7a151ee30.lance";
  ExpectError(OpenAndRead(ReadBytes(v2), v2.string(), s.schema), v2.string(), "not a legacy", "2.0 file");
  b = s.bytes;
  b[b.size() - 1] = 'X';
  ExpectError(OpenAndRead(b, s.name, s.schema), s.name, "magic", "bad magic");
}

TEST(LegacyReaderDamageTest, BadPageTableEntries) {
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  const Field* i64 = TopField(s.schema, "i64");
  const Field* str = TopField(s.schema, "str");
  const Field* list = TopField(s.schema, "list_i32");
  const Field* fsl = TopField(s.schema, "fsl_f32");
  const Field* boolean = TopField(s.schema, "bool");
  ASSERT_TRUE(i64 && str && list && fsl && boolean);
  const int64_t file_size = static_cast<int64_t>(s.bytes.size());
  struct Damage {
    const Field* field;
    int64_t position_delta;  // added to the position unless `position` is set
    std::optional<int64_t> position;
    std::optional<int64_t> length;
    std::string expect;
  };
  const int64_t big = int64_t{1} << 62;
  std::vector<Damage> damages = {
      {i64, 0, file_size, std::nullopt, "outside the data region"},
      {i64, 0, -8, std::nullopt, "negative"},
      {i64, 0, std::nullopt, -1, "negative"},
      {i64, 0, std::nullopt, big, "holds"},
      {i64, 0, big, std::nullopt, "outside the data region"},
      {i64, 0, std::numeric_limits<int64_t>::max() - 4, std::nullopt, "outside the data region"},
      {i64, 0, 0, 0, "no page"},
      {str, 0, file_size - 16, std::nullopt, "outside the data region"},
      {str, -4, std::nullopt, std::nullopt, ""},  // positions misread: bytes anywhere
      {list, 0, static_cast<int64_t>(s.metadata.page_table_position()) - 8, std::nullopt, "outside the data region"},
      {fsl, 0, static_cast<int64_t>(s.metadata.page_table_position()) - 100, std::nullopt, "outside the data region"},
      {boolean, 0, static_cast<int64_t>(s.metadata.page_table_position()), std::nullopt, "outside the data region"},
  };
  for (const auto& d : damages) {
    for (int batch = 0; batch < s.num_batches(); ++batch) {
      std::string b = s.bytes;
      const uint64_t off = s.EntryOffset(d.field->id, batch);
      if (d.position) {
        s.SetI64(&b, off, *d.position);
      } else {
        s.SetI64(&b, off, s.I64At(off) + d.position_delta);
      }
      if (d.length) s.SetI64(&b, off + 8, *d.length);
      const std::string what = d.field->name + " batch " + std::to_string(batch) + " expecting '" + d.expect + "'";
      Status st = OpenAndRead(b, s.name, s.schema);
      if (d.expect.empty()) {
        // Shifted positions may still be readable; if not, the error names the file.
        EXPECT_TRUE(st.ok() || Contains(st.message(), s.name)) << what << ": " << st.ToString();
      } else {
        ExpectError(st, s.name, d.expect, what);
        ExpectError(st, s.name, d.field->name, what);
      }
    }
  }
}

TEST(LegacyReaderDamageTest, EveryPageTableWordOverwritten) {
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  const uint64_t begin = s.metadata.page_table_position();
  const uint64_t words = (static_cast<uint64_t>(s.schema.MaxFieldId() - s.min_field_id + 1) * s.num_batches()) * 2;
  const int64_t values[] = {-1, 0, 1, 7, static_cast<int64_t>(s.bytes.size()), int64_t{1} << 40,
                            std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  int errors = 0;
  for (uint64_t w = 0; w < words; ++w) {
    for (int64_t v : values) {
      std::string b = s.bytes;
      s.SetI64(&b, begin + 8 * w, v);
      Status st = OpenAndRead(b, s.name, s.schema);
      errors += !st.ok();
      EXPECT_TRUE(st.ok() || Contains(st.message(), s.name)) << "word " << w << " = " << v << ": " << st.ToString();
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(LegacyReaderDamageTest, RandomBytesInTheData) {
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  std::mt19937_64 rng(42);
  const uint64_t data_end = s.metadata.page_table_position();
  for (int i = 0; i < 300; ++i) {
    std::string b = s.bytes;
    for (int k = 0; k < 8; ++k) b[rng() % data_end] = static_cast<char>(rng());
    Status st = OpenAndRead(b, s.name, s.schema);
    EXPECT_TRUE(st.ok() || Contains(st.message(), s.name)) << st.ToString();
  }
}

TEST(LegacyReaderDamageTest, RandomBytesInTheTail) {
  // The page table, statistics, dictionaries, manifest, metadata and footer.
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  std::mt19937_64 rng(7);
  const uint64_t begin = s.metadata.page_table_position();
  const uint64_t span = s.bytes.size() - begin;
  int errors = 0;
  for (int i = 0; i < 500; ++i) {
    std::string b = s.bytes;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) b[begin + rng() % span] = static_cast<char>(rng());
    Status st = OpenAndRead(b, s.name, s.schema);
    errors += !st.ok();
    EXPECT_TRUE(st.ok() || Contains(st.message(), s.name)) << st.ToString();
  }
  EXPECT_GT(errors, 0);
}

TEST(LegacyReaderDamageTest, AbsurdBatchOffsets) {
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  auto with_offsets = [&](std::vector<int32_t> offsets) {
    pb::file::Metadata m = s.metadata;
    m.clear_batch_offsets();
    for (int32_t o : offsets) m.add_batch_offsets(o);
    return s.WithMetadata(m);
  };
  const int32_t rows = s.metadata.batch_offsets(s.num_batches());
  // The offsets must rise.
  ExpectError(OpenAndRead(with_offsets({0, 64, 10, rows}), s.name, s.schema), s.name, "decrease", "decreasing");
  ExpectError(OpenAndRead(with_offsets({-5, 64, 128, rows}), s.name, s.schema), s.name, "negative", "negative");
  // Huge batches: the pages do not hold that many values.
  std::vector<int32_t> huge(s.metadata.batch_offsets().begin(), s.metadata.batch_offsets().end());
  huge.back() = std::numeric_limits<int32_t>::max();
  ExpectError(OpenAndRead(with_offsets(huge), s.name, s.schema), s.name, "holds", "huge last batch");
  // More batches than the page table has: it runs into what follows it.
  std::vector<int32_t> many;
  for (int i = 0; i <= 100000; ++i) many.push_back(i);
  ExpectError(OpenAndRead(with_offsets(many), s.name, s.schema), s.name, "page table", "100000 batches");
  // A manifest position at the end of the 64-bit range: the schema cannot be
  // found, so the page table range cannot either.
  {
    pb::file::Metadata m = s.metadata;
    m.set_manifest_position(std::numeric_limits<uint64_t>::max() - 1);
    ExpectError(OpenAndRead(s.WithMetadata(m), s.name, s.schema), s.name, "manifest position", "far manifest");
  }
  // A page table position past the metadata, or inside the data.
  pb::file::Metadata m = s.metadata;
  m.set_page_table_position(s.bytes.size() * 2);
  ExpectError(OpenAndRead(s.WithMetadata(m), s.name, s.schema), s.name, "page table", "page table past the end");
  m.set_page_table_position(8);
  Status st = OpenAndRead(s.WithMetadata(m), s.name, s.schema);
  ExpectError(st, s.name, "", "page table in the data");
}

TEST(LegacyReaderDamageTest, NoBatches) {
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  pb::file::Metadata m = s.metadata;
  m.clear_batch_offsets();
  auto reader = LegacyFileReader::Open(InMemory(s.WithMetadata(m)), s.name, arrow::default_memory_pool());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->num_rows(), 0u);
  EXPECT_EQ((*reader)->num_batches(), 0);
  auto all = (*reader)->ReadAll(s.schema);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ((*all)->num_rows(), 0);
  EXPECT_EQ((*all)->num_columns(), static_cast<int>(s.schema.fields.size()));
  EXPECT_TRUE((*all)->ValidateFull().ok());
  EXPECT_TRUE((*reader)->ReadBatch(0, s.schema).status().IsIndexError());
}

TEST(LegacyReaderDamageTest, BadMetadata) {
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  std::string b = s.bytes;
  // Metadata position beyond the file.
  int64_t pos = static_cast<int64_t>(b.size());
  std::memcpy(b.data() + b.size() - 16, &pos, 8);
  ExpectError(OpenAndRead(b, s.name, s.schema), s.name, "metadata", "metadata position past the end");
  pos = -1;
  std::memcpy(b.data() + b.size() - 16, &pos, 8);
  ExpectError(OpenAndRead(b, s.name, s.schema), s.name, "metadata", "negative metadata position");
  // A length prefix running past the footer.
  b = s.bytes;
  uint32_t len = 1u << 30;
  std::memcpy(b.data() + s.metadata_position, &len, 4);
  ExpectError(OpenAndRead(b, s.name, s.schema), s.name, "metadata", "metadata length");
  // Garbage instead of the message.
  b = s.bytes;
  for (size_t i = s.metadata_position + 4; i < b.size() - 16; ++i) b[i] = '\xff';
  ExpectError(OpenAndRead(b, s.name, s.schema), s.name, "", "garbage metadata");
}

TEST(LegacyReaderDamageTest, MissingOrBadDictionary) {
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  const Field* dict = TopField(s.schema, "dict_str");
  ASSERT_NE(dict, nullptr);
  Schema only_dict;
  only_dict.fields.push_back(*dict);

  // No embedded manifest: the page table range must be given, and the
  // dictionary then has nowhere to come from.
  pb::file::Metadata m = s.metadata;
  m.set_manifest_position(0);
  const std::string no_manifest = s.WithMetadata(m);
  ExpectError(OpenAndRead(no_manifest, s.name, s.schema), s.name, "cannot tell which field ids", "no range");
  LegacyOpenOptions options;
  options.min_field_id = s.min_field_id;
  options.max_field_id = s.schema.MaxFieldId();
  ExpectError(OpenAndRead(no_manifest, s.name, only_dict, options), s.name, "no dictionary values",
              "no dictionary");
  // Everything else still reads.
  Schema no_dicts;
  for (const auto& f : s.schema.fields) {
    if (f.logical_type.rfind("dict:", 0) != 0) no_dicts.fields.push_back(f);
  }
  EXPECT_TRUE(OpenAndRead(no_manifest, s.name, no_dicts, options).ok());
  // ... and dictionaries the caller gives are used.
  {
    auto reader = LegacyFileReader::Open(InMemory(s.bytes), s.name, arrow::default_memory_pool());
    ASSERT_TRUE(reader.ok());
    auto want = (*reader)->ReadAll(only_dict);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    auto values = std::static_pointer_cast<arrow::DictionaryArray>((*want)->column(0))->dictionary();
    options.dictionaries[dict->id] = values;
    auto given = LegacyFileReader::Open(InMemory(no_manifest), s.name, arrow::default_memory_pool(), options);
    ASSERT_TRUE(given.ok());
    auto got = (*given)->ReadAll(only_dict);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE((*got)->Equals(**want));
    // A dictionary of the wrong type is refused.
    options.dictionaries[dict->id] = arrow::MakeArrayOfNull(arrow::int64(), 3).ValueOrDie();
    auto wrong = LegacyFileReader::Open(InMemory(no_manifest), s.name, arrow::default_memory_pool(), options);
    ASSERT_TRUE(wrong.ok());
    ExpectError((*wrong)->ReadAll(only_dict).status(), s.name, "dictionary", "wrong dictionary type");
    options.dictionaries.clear();
  }

  // An embedded manifest whose dictionary is elsewhere or absent.
  auto with_dictionary = [&](std::optional<int64_t> offset, std::optional<int64_t> length) {
    pb::table::Manifest manifest = s.EmbeddedManifest();
    for (auto& f : *manifest.mutable_fields()) {
      if (f.id() != dict->id) continue;
      if (!offset) {
        f.clear_dictionary();
      } else {
        f.mutable_dictionary()->set_offset(*offset);
        f.mutable_dictionary()->set_length(*length);
      }
    }
    return s.WithMetadata(s.metadata, manifest.SerializeAsString());
  };
  ExpectError(OpenAndRead(with_dictionary(std::nullopt, std::nullopt), s.name, only_dict), s.name,
              "no dictionary values", "dictionary dropped");
  const int64_t size = static_cast<int64_t>(s.bytes.size());
  ExpectError(OpenAndRead(with_dictionary(size * 4, 3), s.name, only_dict), s.name, "dictionary", "far offset");
  ExpectError(OpenAndRead(with_dictionary(-100, 3), s.name, only_dict), s.name, "dictionary", "negative offset");
  ExpectError(OpenAndRead(with_dictionary(0, int64_t{1} << 40), s.name, only_dict), s.name, "dictionary",
              "huge length");
  // A dictionary of one value: the keys point past it.
  pb::table::Manifest manifest = s.EmbeddedManifest();
  int64_t offset = 0;
  for (const auto& f : manifest.fields()) {
    if (f.id() == dict->id) offset = f.dictionary().offset();
  }
  ExpectError(OpenAndRead(with_dictionary(offset, 1), s.name, only_dict), s.name, "outside the dictionary",
              "keys past the dictionary");
}

TEST(LegacyReaderDamageTest, DecreasingStringPositionsAndListOffsets) {
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  for (const char* name : {"str", "list_i32", "large_list_f64"}) {
    const Field* f = TopField(s.schema, name);
    ASSERT_NE(f, nullptr);
    Schema one;
    one.fields.push_back(*f);
    const uint64_t entry = s.EntryOffset(f->id, 0);
    const int64_t page = s.I64At(entry);
    std::string b = s.bytes;
    // Put a large value in the second position / offset.
    if (std::string(name) == "list_i32") {
      int32_t big = 1 << 30;
      std::memcpy(b.data() + page + 4, &big, 4);
    } else {
      s.SetI64(&b, page + 8, int64_t{1} << 50);
    }
    ExpectError(OpenAndRead(b, s.name, one), s.name, "", name);
  }
}

TEST(LegacyReaderDamageTest, FieldsNotInTheFile) {
  Sample s = LoadSample();
  ASSERT_FALSE(s.bytes.empty());
  Field ghost;
  ghost.name = "ghost";
  ghost.id = 9999;
  ghost.logical_type = "int32";
  Schema schema;
  schema.fields.push_back(ghost);
  ExpectError(OpenAndRead(s.bytes, s.name, schema), s.name, "not in this file", "id 9999");
  // Types legacy files cannot hold.
  ghost.id = TopField(s.schema, "i32")->id;
  ghost.logical_type = "map";
  ExpectError(OpenAndRead(s.bytes, s.name, schema), s.name, "", "map");
}

}  // namespace
}  // namespace lance::file::legacy
