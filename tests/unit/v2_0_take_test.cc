// Takes of 2.0 files read only what their rows need: strings by their offsets
// and then their bytes, lists by their offsets and then their items, and
// random takes equal the same rows of a whole read (in 2.1+ files too).
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>

#include "lance/file_reader.h"
#include "lance/file_writer.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

// Counts the bytes and the reads made through it.
class CountingFile : public arrow::io::RandomAccessFile {
 public:
  explicit CountingFile(std::shared_ptr<arrow::io::RandomAccessFile> f) : f_(std::move(f)) {}
  arrow::Status Close() override { return f_->Close(); }
  bool closed() const override { return f_->closed(); }
  arrow::Result<int64_t> Tell() const override { return f_->Tell(); }
  arrow::Status Seek(int64_t p) override { return f_->Seek(p); }
  arrow::Result<int64_t> GetSize() override { return f_->GetSize(); }
  arrow::Result<int64_t> Read(int64_t n, void* out) override {
    Count(n);
    return f_->Read(n, out);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t n) override {
    Count(n);
    return f_->Read(n);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t pos, int64_t n) override {
    Count(n);
    return f_->ReadAt(pos, n);
  }
  void Reset() {
    bytes = 0;
    reads = 0;
  }
  std::atomic<int64_t> bytes{0};
  std::atomic<int64_t> reads{0};

 private:
  void Count(int64_t n) {
    bytes += n;
    ++reads;
  }
  std::shared_ptr<arrow::io::RandomAccessFile> f_;
};

std::shared_ptr<arrow::Array> Finish(arrow::ArrayBuilder& b) {
  std::shared_ptr<arrow::Array> out;
  EXPECT_TRUE(b.Finish(&out).ok());
  return out;
}

// Rows with nulls, empty strings and lists, values of many lengths.
std::shared_ptr<arrow::RecordBatch> MakeBatch(int64_t first, int64_t rows) {
  arrow::StringBuilder s;
  arrow::LargeStringBuilder ls;
  arrow::StringBuilder cat;
  arrow::Int32Builder i32;
  arrow::BooleanBuilder flag;
  auto l32 = std::make_shared<arrow::ListBuilder>(arrow::default_memory_pool(), std::make_shared<arrow::Int32Builder>());
  auto* l32_items = static_cast<arrow::Int32Builder*>(l32->value_builder());
  auto lstr = std::make_shared<arrow::LargeListBuilder>(arrow::default_memory_pool(),
                                                         std::make_shared<arrow::StringBuilder>());
  auto* lstr_items = static_cast<arrow::StringBuilder*>(lstr->value_builder());
  arrow::FixedSizeListBuilder fsl(arrow::default_memory_pool(), std::make_shared<arrow::FloatBuilder>(), 3);
  auto* fsl_items = static_cast<arrow::FloatBuilder*>(fsl.value_builder());
  arrow::StringDictionary32Builder dict;
  arrow::LargeBinaryBuilder blob;
  arrow::Int32Builder pa;
  arrow::DoubleBuilder pb;
  arrow::Int64Builder sx;
  arrow::StringBuilder sy;
  const char* colors[] = {"red", "green", "blue"};
  for (int64_t r = first; r < first + rows; ++r) {
    const std::string text = std::string(static_cast<size_t>(r % 9), static_cast<char>('a' + r % 26)) + std::to_string(r);
    if (r % 11 == 3) {
      EXPECT_TRUE(s.AppendNull().ok());
    } else if (r % 7 == 0) {
      EXPECT_TRUE(s.Append("").ok());
    } else {
      EXPECT_TRUE(s.Append(text).ok());
    }
    EXPECT_TRUE((r % 5 == 1 ? ls.AppendNull() : ls.Append(r % 3 == 0 ? std::string() : text + text)).ok());
    EXPECT_TRUE((r % 10 == 9 ? cat.AppendNull() : cat.Append(colors[r % 3])).ok());
    EXPECT_TRUE((r % 6 == 2 ? i32.AppendNull() : i32.Append(static_cast<int32_t>(r * 7))).ok());
    EXPECT_TRUE((r % 8 == 5 ? flag.AppendNull() : flag.Append(r % 3 == 1)).ok());
    if (r % 13 == 5) {
      EXPECT_TRUE(l32->AppendNull().ok());
    } else {
      EXPECT_TRUE(l32->Append().ok());
      for (int64_t k = 0; k < r % 5; ++k) EXPECT_TRUE(l32_items->Append(static_cast<int32_t>(r + k)).ok());
    }
    if (r % 17 == 4) {
      EXPECT_TRUE(lstr->AppendNull().ok());
    } else {
      EXPECT_TRUE(lstr->Append().ok());
      for (int64_t k = 0; k < r % 4; ++k) {
        EXPECT_TRUE((k == 1 && r % 3 == 0 ? lstr_items->AppendNull() : lstr_items->Append(text.substr(0, k * 2))).ok());
      }
    }
    EXPECT_TRUE(fsl.Append().ok());
    for (int k = 0; k < 3; ++k) EXPECT_TRUE(fsl_items->Append(static_cast<float>(r) + 0.25f * k).ok());
    EXPECT_TRUE((r % 9 == 2 ? dict.AppendNull() : dict.Append("k" + std::to_string(r % 13))).ok());
    EXPECT_TRUE((r % 10 == 1 ? blob.AppendNull() : blob.Append(std::string(static_cast<size_t>(r % 4) * 50, 'b'))).ok());
    EXPECT_TRUE(pa.Append(static_cast<int32_t>(r)).ok());
    EXPECT_TRUE(pb.Append(static_cast<double>(r) / 4).ok());
    EXPECT_TRUE(sx.Append(-r).ok());
    EXPECT_TRUE((r % 4 == 3 ? sy.AppendNull() : sy.Append(text.substr(0, r % 5))).ok());
  }
  auto st = arrow::StructArray::Make({Finish(sx), Finish(sy)}, {arrow::field("x", arrow::int64()),
                                                                 arrow::field("y", arrow::utf8())})
                .ValueOrDie();
  auto packed = arrow::StructArray::Make({Finish(pa), Finish(pb)}, {arrow::field("a", arrow::int32()),
                                                                     arrow::field("b", arrow::float64())})
                    .ValueOrDie();
  auto schema = arrow::schema({
      arrow::field("s", arrow::utf8()),
      arrow::field("ls", arrow::large_utf8()),
      arrow::field("cat", arrow::utf8()),
      arrow::field("i32", arrow::int32()),
      arrow::field("flag", arrow::boolean()),
      arrow::field("l32", arrow::list(arrow::int32())),
      arrow::field("lstr", arrow::large_list(arrow::utf8())),
      arrow::field("fsl", arrow::fixed_size_list(arrow::float32(), 3)),
      arrow::field("st", st->type()),
      arrow::field("dict", arrow::dictionary(arrow::int32(), arrow::utf8())),
      arrow::field("blob", arrow::large_binary(), true, arrow::key_value_metadata({"lance-encoding:blob"}, {"true"})),
      arrow::field("packed", packed->type(), true,
                   arrow::key_value_metadata({"lance-encoding:packed"}, {"true"})),
  });
  return arrow::RecordBatch::Make(schema, rows,
                                  {Finish(s), Finish(ls), Finish(cat), Finish(i32), Finish(flag), Finish(*l32),
                                   Finish(*lstr), Finish(fsl), st, Finish(dict), Finish(blob), packed});
}

class V2_0TakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(arrow::compute::Initialize().ok());
    dir_ = fs::temp_directory_path() /
           ("lance_v2_0_take_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `batches` batches of `rows` rows as a file of `version`.
  std::string Write(const std::string& name, int batches, int64_t rows, std::optional<uint64_t> cache,
                    const std::string& version = "2.0") {
    const std::string path = (dir_ / name).string();
    FileWriterOptions options;
    options.version = version;
    options.data_cache_bytes = cache;
    // This writer stores blob fields in 2.0 files only.
    auto make = [&](int64_t first) {
      auto batch = MakeBatch(first, rows);
      if (version == "2.0") return batch;
      return batch->RemoveColumn(batch->schema()->GetFieldIndex("blob")).ValueOrDie();
    };
    auto writer = FileWriter::Open(path, *make(0)->schema(), options);
    EXPECT_TRUE(writer.ok()) << writer.status().ToString();
    for (int b = 0; b < batches; ++b) {
      auto st = (*writer)->Write(*make(b * rows));
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
    auto done = (*writer)->Finish();
    EXPECT_TRUE(done.ok()) << done.status().ToString();
    return path;
  }

  std::shared_ptr<FileReader> Open(const std::string& path, std::shared_ptr<CountingFile>* counting = nullptr) {
    auto file = arrow::io::ReadableFile::Open(path).ValueOrDie();
    auto wrapped = std::make_shared<CountingFile>(file);
    if (counting) *counting = wrapped;
    auto reader = FileReader::Open(wrapped, path);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    return *reader;
  }

  fs::path dir_;
};

// The first row of every page of every column (and the end), where takes
// must cross from one page to the next.
std::vector<uint64_t> PageEdges(const FileReader& reader) {
  std::vector<uint64_t> edges;
  for (const auto& column : reader.layout().columns) {
    uint64_t row = 0;
    for (const auto& page : column.pages) {
      row += page.length;
      edges.push_back(row);
    }
  }
  return edges;
}

void ExpectSameRows(const std::shared_ptr<arrow::Table>& whole, const std::vector<uint64_t>& rows, const arrow::Table& got,
                    const std::string& what) {
  arrow::UInt64Builder b;
  ASSERT_TRUE(b.AppendValues(rows).ok());
  auto indices = Finish(b);
  auto want = arrow::compute::Take(whole, indices).ValueOrDie().table();
  ASSERT_EQ(got.num_columns(), want->num_columns());
  for (int c = 0; c < want->num_columns(); ++c) {
    auto w = want->column(c)->num_chunks() ? arrow::Concatenate(want->column(c)->chunks()).ValueOrDie() : nullptr;
    auto g = arrow::Concatenate(got.column(c)->chunks()).ValueOrDie();
    ASSERT_TRUE(g->ValidateFull().ok()) << what << " " << want->field(c)->name();
    EXPECT_TRUE(g->Equals(*w)) << what << " column " << want->field(c)->name() << "\n got " << g->ToString()
                               << "\n want " << w->ToString();
  }
}

TEST_F(V2_0TakeTest, RandomTakesEqualAWholeRead) {
  // Many small pages: a small cache makes each batch a page of every column.
  const std::string path = Write("pages.lance", 6, 700, 4096);
  auto reader = Open(path);
  const uint64_t n = reader->num_rows();
  ASSERT_EQ(n, 4200u);
  auto whole = reader->ReadAll().ValueOrDie();
  const auto edges = PageEdges(*reader);
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
    std::mt19937_64 rng(seed);
    std::vector<uint64_t> rows;
    const size_t count = seed == 1 ? 1 : seed * 37;
    for (size_t k = 0; k < count; ++k) rows.push_back(rng() % n);
    // Rows on either side of page edges, and repeats.
    for (size_t k = 0; k < edges.size(); k += seed) {
      if (edges[k] > n) continue;  // pages of list items
      if (edges[k] < n) rows.push_back(edges[k]);
      if (edges[k] > 0) rows.push_back(edges[k] - 1);
    }
    if (seed % 2 == 0) rows.insert(rows.end(), rows.begin(), rows.begin() + rows.size() / 3);
    rows.push_back(0);
    rows.push_back(n - 1);
    std::sort(rows.begin(), rows.end());
    auto got = reader->Take({}, rows);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ExpectSameRows(whole, rows, **got, "seed " + std::to_string(seed));
  }
  // Runs of neighbouring rows and every row.
  std::vector<uint64_t> runs;
  for (uint64_t r = 0; r < n; r += 97) {
    for (uint64_t k = r; k < std::min(n, r + 40); ++k) runs.push_back(k);
  }
  ExpectSameRows(whole, runs, *reader->Take({}, runs).ValueOrDie(), "runs");
  std::vector<uint64_t> all(n);
  for (uint64_t r = 0; r < n; ++r) all[r] = r;
  ExpectSameRows(whole, all, *reader->Take({}, all).ValueOrDie(), "all");
  ExpectSameRows(whole, {}, *reader->Take({}, {}).ValueOrDie(), "none");
}

// 2.1+ takes keep only their rows of each decoded page (fields without
// lists) or take them from the decoded pages (fields with lists).
TEST_F(V2_0TakeTest, TakesOfLaterVersionsEqualAWholeRead) {
  for (const std::string version : {"2.1", "2.2"}) {
    const std::string path = Write("v" + version + ".lance", 4, 900, 8192, version);
    auto reader = Open(path);
    const uint64_t n = reader->num_rows();
    auto whole = reader->ReadAll().ValueOrDie();
    for (uint32_t seed : {7u, 8u, 9u}) {
      std::mt19937_64 rng(seed);
      std::vector<uint64_t> rows;
      for (size_t k = 0; k < seed * 20; ++k) rows.push_back(rng() % n);
      rows.insert(rows.end(), rows.begin(), rows.begin() + rows.size() / 4);
      rows.push_back(0);
      rows.push_back(n - 1);
      std::sort(rows.begin(), rows.end());
      auto got = reader->Take({}, rows);
      ASSERT_TRUE(got.ok()) << version << ": " << got.status().ToString();
      ExpectSameRows(whole, rows, **got, version + " seed " + std::to_string(seed));
    }
  }
}

TEST_F(V2_0TakeTest, OneRowReadsAFewBytesNotThePage) {
  // Default cache: each column of 60k rows is one page of hundreds of KiB.
  const std::string path = Write("big.lance", 3, 20000, std::nullopt);
  std::shared_ptr<CountingFile> counting;
  auto reader = Open(path, &counting);
  const uint64_t n = reader->num_rows();
  auto whole = reader->ReadAll().ValueOrDie();
  for (const auto& column : reader->layout().columns) EXPECT_LE(column.pages.size(), 2u);
  struct Bound {
    std::string field;
    int64_t bytes;  // at most, for one row
  };
  // Offsets (16 bytes) and the value bytes; lists add their items' offsets
  // and bytes; fixed width a few bytes and validity.
  for (const Bound& b : std::vector<Bound>{{"s", 64},
                                           {"ls", 96},
                                           {"cat", 64},
                                           {"i32", 16},
                                           {"flag", 8},
                                           {"l32", 64},
                                           {"lstr", 128},
                                           {"fsl", 24},
                                           {"st", 64},
                                           {"dict", 512},
                                           {"blob", 200},
                                           {"packed", 32}}) {
    for (uint64_t row : {uint64_t{0}, n / 3 + 1, n - 1}) {
      counting->Reset();
      auto got = reader->Take({b.field}, {row});
      ASSERT_TRUE(got.ok()) << b.field << ": " << got.status().ToString();
      EXPECT_LE(counting->bytes.load(), b.bytes) << b.field << " row " << row;
      // Offsets then bytes, each column of the field.
      EXPECT_LE(counting->reads.load(), 6) << b.field << " row " << row;
      ExpectSameRows(whole->SelectColumns({whole->schema()->GetFieldIndex(b.field)}).ValueOrDie(), {row}, **got,
                     b.field);
    }
  }
  // 20 rows spread over the file (further apart than reads are joined
  // across): far less than the file.
  std::vector<uint64_t> rows;
  for (uint64_t k = 0; k < 20; ++k) rows.push_back(k * (n / 20) + k % 7);
  counting->Reset();
  auto got = reader->Take({}, rows);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ExpectSameRows(whole, rows, **got, "20 rows");
  EXPECT_LT(counting->bytes.load(), static_cast<int64_t>(fs::file_size(path) / 10));
}

}  // namespace
}  // namespace lance
