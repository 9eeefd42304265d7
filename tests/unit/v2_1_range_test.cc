// Row ranges inside single 2.1/2.2 pages: which pages can be cut, that the
// cut parts decode to the same rows as whole reads, that a take reads only
// the bytes it needs, and that bad ranges or reads fail cleanly.
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>

#include <unistd.h>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/api.h>
#include <gtest/gtest.h>

#include "lance/file/v2_1/field_decoder.h"
#include "lance/file/v2_1/page_range.h"
#include "lance/file_reader.h"
#include "lance/file_writer.h"

namespace lance {
namespace {

namespace fs = std::filesystem;
using file::v2_1::PageCuts;

std::vector<fs::path> Fixtures() {
  std::vector<fs::path> out;
  const fs::path root = fs::path(LANCE_TEST_FIXTURES_DIR) / "v2_1";
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.path().extension() == ".lance") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A file in memory that counts the bytes read through ReadAt.
class CountingFile : public arrow::io::RandomAccessFile {
 public:
  explicit CountingFile(std::shared_ptr<arrow::Buffer> data)
      : inner_(std::make_shared<arrow::io::BufferReader>(std::move(data))) {}
  arrow::Status Close() override { return inner_->Close(); }
  bool closed() const override { return inner_->closed(); }
  arrow::Result<int64_t> Tell() const override { return inner_->Tell(); }
  arrow::Status Seek(int64_t position) override { return inner_->Seek(position); }
  arrow::Result<int64_t> Read(int64_t n, void* out) override { return inner_->Read(n, out); }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t n) override { return inner_->Read(n); }
  arrow::Result<int64_t> GetSize() override { return inner_->GetSize(); }
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t position, int64_t n) override {
    bytes_read += n;
    return inner_->ReadAt(position, n);
  }
  int64_t bytes_read = 0;

 private:
  std::shared_ptr<arrow::io::BufferReader> inner_;
};

std::shared_ptr<arrow::Buffer> Slurp(const fs::path& path) {
  auto f = arrow::io::ReadableFile::Open(path.string()).ValueOrDie();
  return f->Read(f->GetSize().ValueOrDie()).ValueOrDie();
}

file::v2_1::BlobReader ReaderOf(std::shared_ptr<arrow::Buffer> data) {
  return [data](uint64_t position, uint64_t size) -> Result<std::shared_ptr<arrow::Buffer>> {
    if (position > static_cast<uint64_t>(data->size()) || size > data->size() - position) {
      return Status::Invalid("outside");
    }
    return arrow::SliceBuffer(data, static_cast<int64_t>(position), static_cast<int64_t>(size));
  };
}

void ExpectSame(const arrow::Table& got, const arrow::Table& want, const std::string& what) {
  ASSERT_EQ(got.num_rows(), want.num_rows()) << what;
  ASSERT_EQ(got.num_columns(), want.num_columns()) << what;
  for (int c = 0; c < want.num_columns(); ++c) {
    if (got.column(c)->chunks().empty() || want.column(c)->chunks().empty()) continue;
    auto a = arrow::Concatenate(got.column(c)->chunks()).ValueOrDie();
    auto b = arrow::Concatenate(want.column(c)->chunks()).ValueOrDie();
    if (a->type_id() == arrow::Type::DICTIONARY) {
      auto vt = std::static_pointer_cast<arrow::DictionaryType>(a->type())->value_type();
      a = arrow::compute::Cast(a, vt).ValueOrDie().make_array();
      b = arrow::compute::Cast(b, vt).ValueOrDie().make_array();
    }
    EXPECT_TRUE(a->Equals(*b)) << what << ": column " << want.schema()->field(c)->name() << " got "
                               << a->ToString().substr(0, 400) << " want " << b->ToString().substr(0, 400);
  }
}

TEST(V21RangeTest, FixturesHaveCuttablePages) {
  size_t every_row_fullzip = 0, multi_chunk = 0, constant = 0, repeated = 0, indexed = 0;
  for (const auto& path : Fixtures()) {
    auto data = Slurp(path);
    auto reader = FileReader::Open(std::make_shared<arrow::io::BufferReader>(data), path.string());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    for (const auto& column : (*reader)->layout().columns) {
      for (const auto& page : column.pages) {
        auto cuts = file::v2_1::AnalyzePageCuts(page, ReaderOf(data));
        ASSERT_TRUE(cuts.ok()) << cuts.status().ToString();
        if (cuts->kind == PageCuts::Kind::kEveryRow) {
          (cuts->row_bytes > 0 ? every_row_fullzip : constant) += 1;
        }
        if (cuts->kind == PageCuts::Kind::kChunks && cuts->chunks.size() > 1) ++multi_chunk;
        if (cuts->kind == PageCuts::Kind::kIndexed) ++indexed;
        if (cuts->kind == PageCuts::Kind::kChunks && cuts->repeated && cuts->starts.size() > 2) ++repeated;
      }
    }
  }
  EXPECT_GT(every_row_fullzip, 2u);
  EXPECT_GT(multi_chunk, 2u);
  EXPECT_GT(constant, 0u);
  EXPECT_GT(repeated, 0u);
  EXPECT_GT(indexed, 0u) << "variable-width full-zip pages are cut by their repetition index";
}

// Every cut part of every cuttable page, and single rows around the cuts,
// read through FileReader, against the whole file.
TEST(V21RangeTest, RangesInsidePagesAgreeWithWholeReads) {
  ASSERT_TRUE(arrow::compute::Initialize().ok());
  std::mt19937_64 rng(11);
  for (const auto& path : Fixtures()) {
    SCOPED_TRACE(path.string());
    auto reader = FileReader::Open(path.string());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto all = (*reader)->ReadAll();
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    const uint64_t n = (*reader)->num_rows();
    if (n == 0) continue;
    std::vector<uint64_t> probes{0, n - 1, n / 2, n / 3 + 1};
    for (int k = 0; k < 12; ++k) probes.push_back(rng() % n);
    for (uint64_t r : probes) {
      for (uint64_t count : {uint64_t{1}, uint64_t{3}, uint64_t{100}}) {
        count = std::min(count, n - r);
        auto part = (*reader)->ReadRange({}, r, count);
        ASSERT_TRUE(part.ok()) << part.status().ToString();
        ExpectSame(**part, *(*all)->Slice(r, count), "range at " + std::to_string(r));
      }
    }
    // Takes of scattered rows, each in a different part of a page.
    std::vector<uint64_t> rows;
    for (int k = 0; k < 20; ++k) rows.push_back(rng() % n);
    std::sort(rows.begin(), rows.end());
    auto taken = (*reader)->Take({}, rows);
    ASSERT_TRUE(taken.ok()) << taken.status().ToString();
    arrow::UInt64Builder idx;
    ASSERT_TRUE(idx.AppendValues(rows).ok());
    auto indices = idx.Finish().ValueOrDie();
    auto want = arrow::compute::Take(*all, indices).ValueOrDie().table();
    ExpectSame(**taken, *want, "take");
    // Small windows: may now cut inside pages; each reads back correctly.
    auto windows = (*reader)->ReadWindows({}, 1 + n / 7);
    ASSERT_TRUE(windows.ok()) << windows.status().ToString();
    ASSERT_EQ(windows->back(), n);
    for (size_t w = 1; w < windows->size(); ++w) {
      ASSERT_LT((*windows)[w - 1], (*windows)[w]);
      auto part = (*reader)->ReadRange({}, (*windows)[w - 1], (*windows)[w] - (*windows)[w - 1]);
      ASSERT_TRUE(part.ok()) << part.status().ToString();
      ExpectSame(**part, *(*all)->Slice((*windows)[w - 1], (*windows)[w] - (*windows)[w - 1]), "window");
    }
  }
}

// Every span between two cuts of every cuttable page of a one-column field,
// read on its own, against the whole file.
TEST(V21RangeTest, EveryCutSpanAgreesWithWholeReads) {
  ASSERT_TRUE(arrow::compute::Initialize().ok());
  size_t spans = 0, repeated_spans = 0;
  for (const auto& path : Fixtures()) {
    SCOPED_TRACE(path.string());
    auto data = Slurp(path);
    auto reader = FileReader::Open(std::make_shared<arrow::io::BufferReader>(data), path.string());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    const auto& layout = (*reader)->layout();
    size_t column = 0;
    for (const auto& field : layout.schema.fields) {
      const size_t first = column;
      column += static_cast<size_t>(file::v2_1::NumColumns(field));
      if (column != first + 1) continue;
      const auto& pages = layout.columns[first].pages;
      uint64_t page_start = 0, total = 0;
      for (const auto& page : pages) total += page.length;
      if (total != layout.num_rows) continue;
      auto all = (*reader)->ReadAll({field.name});
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      for (const auto& page : pages) {
        auto cuts = file::v2_1::AnalyzePageCuts(page, ReaderOf(data));
        ASSERT_TRUE(cuts.ok());
        std::vector<uint64_t> at;
        if (cuts->kind == PageCuts::Kind::kChunks) at = cuts->starts;
        if (cuts->kind == PageCuts::Kind::kEveryRow) {
          for (uint64_t r = 0; r <= page.length; r += std::max<uint64_t>(1, page.length / 9)) at.push_back(r);
          if (at.back() != page.length) at.push_back(page.length);
        }
        for (size_t k = 1; k < at.size(); ++k) {
          const uint64_t offset = page_start + at[k - 1], count = at[k] - at[k - 1];
          auto part = (*reader)->ReadRange({field.name}, offset, count);
          ASSERT_TRUE(part.ok()) << field.name << ": " << part.status().ToString();
          ExpectSame(**part, *(*all)->Slice(offset, count), field.name + " span " + std::to_string(offset));
          ++spans;
          repeated_spans += cuts->repeated;
        }
        page_start += page.length;
      }
    }
  }
  EXPECT_GT(spans, 100u);
  EXPECT_GT(repeated_spans, 4u);
  std::cout << spans << " spans, " << repeated_spans << " of pages with repetition\n";
}

// The vector column is one full-zip page: a one-row take reads about one
// vector, not the page, and windows of a single-page column are cut.
TEST(V21RangeTest, TakeOfOneVectorReadsOneVector) {
  for (const char* version : {"2.1", "2.2"}) {
    const fs::path path = fs::path(LANCE_TEST_FIXTURES_DIR) / "v2_1" / version / "vectors.lance";
    auto counting = std::make_shared<CountingFile>(Slurp(path));
    auto reader = FileReader::Open(counting, path.string());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    const auto& layout = (*reader)->layout();
    std::string vector_field;
    uint64_t page_bytes = 0;
    for (size_t c = 0; c < layout.columns.size(); ++c) {
      const auto& pages = layout.columns[c].pages;
      if (pages.size() != 1 || pages[0].buffers.empty()) continue;
      auto cuts = file::v2_1::AnalyzePageCuts(pages[0], ReaderOf(Slurp(path)));
      ASSERT_TRUE(cuts.ok());
      if (cuts->kind == PageCuts::Kind::kEveryRow && cuts->row_bytes >= 768 * 4 && c < layout.schema.fields.size()) {
        vector_field = layout.schema.fields[c].name;
        page_bytes = pages[0].buffers[0].size;
      }
    }
    ASSERT_FALSE(vector_field.empty()) << version;
    const uint64_t n = (*reader)->num_rows();
    ASSERT_GT(n, 4u);
    counting->bytes_read = 0;
    auto one = (*reader)->Take({vector_field}, {n / 2});
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    EXPECT_LT(static_cast<uint64_t>(counting->bytes_read), 768 * 4 + 4096) << version;
    EXPECT_GE(static_cast<uint64_t>(counting->bytes_read), 768 * 4u) << version;
    EXPECT_GT(page_bytes, 2 * 768 * 4u);
    auto windows = (*reader)->ReadWindows({vector_field}, 2);
    ASSERT_TRUE(windows.ok());
    EXPECT_EQ(windows->size(), 1 + (n + 1) / 2) << version;
  }
}

// A take reads the blob values of its rows only, whatever part of the
// descriptions page it decodes.
TEST(V21RangeTest, TakeOfOneBlobReadsOneBlob) {
  for (const char* version : {"2.1", "2.2"}) {
    const fs::path path = fs::path(LANCE_TEST_FIXTURES_DIR) / "v2_1" / version / "blob.lance";
    auto counting = std::make_shared<CountingFile>(Slurp(path));
    auto reader = FileReader::Open(counting, path.string());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    auto all = (*reader)->ReadAll({"data"});
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    auto values = std::static_pointer_cast<arrow::LargeBinaryArray>((*all)->column(0)->chunk(0));
    const uint64_t n = (*reader)->num_rows();
    uint64_t total = 0;
    for (uint64_t r = 0; r < n; ++r) total += static_cast<uint64_t>(values->value_length(r));
    for (uint64_t row : {uint64_t{1}, n / 2, n - 1}) {
      counting->bytes_read = 0;
      auto one = (*reader)->Take({"data"}, {row, row});
      ASSERT_TRUE(one.ok()) << one.status().ToString();
      auto got = (*one)->column(0)->chunk(0);
      ASSERT_EQ(got->length(), 2);
      EXPECT_TRUE(got->Slice(0, 1)->Equals(*values->Slice(row, 1))) << version << " row " << row;
      EXPECT_TRUE(got->Slice(1, 1)->Equals(*values->Slice(row, 1))) << version << " row " << row;
      // The descriptions (16 bytes a row) and the one value.
      EXPECT_LT(static_cast<uint64_t>(counting->bytes_read), 16 * n + values->value_length(row) + 1024)
          << version << " row " << row;
    }
    EXPECT_GT(total, 16 * n + 2000 + 1024) << "the values outweigh what one take may read";
  }
}

// Rows `rows` (ascending, repeats allowed) of `column` taken from `reader`,
// against the same rows of a whole read; returns the bytes the take read.
int64_t TakeAndCompare(FileReader& reader, CountingFile& counting, const std::string& column,
                       const std::vector<uint64_t>& rows, const std::string& what) {
  auto all = reader.ReadAll({column});
  EXPECT_TRUE(all.ok()) << all.status().ToString();
  if (!all.ok()) return -1;
  counting.bytes_read = 0;
  auto taken = reader.Take({column}, rows);
  EXPECT_TRUE(taken.ok()) << what << ": " << taken.status().ToString();
  if (!taken.ok()) return -1;
  const int64_t bytes = counting.bytes_read;
  arrow::UInt64Builder idx;
  EXPECT_TRUE(idx.AppendValues(rows).ok());
  auto want = arrow::compute::Take(*all, idx.Finish().ValueOrDie()).ValueOrDie().table();
  ExpectSame(**taken, *want, what);
  return bytes;
}

uint64_t FieldPageBytes(const FileReader& reader, const std::string& column) {
  // The field's columns: those after the fields before it (no nested field
  // precedes the ones these tests use).
  const auto& layout = reader.layout();
  uint64_t bytes = 0;
  for (size_t f = 0; f < layout.schema.fields.size(); ++f) {
    if (layout.schema.fields[f].name != column) continue;
    for (const auto& page : layout.columns[f].pages) {
      for (const auto& b : page.buffers) bytes += b.size;
    }
  }
  return bytes;
}

// FSST strings in mini-block chunks: a take reads the chunks of its rows
// (a chunk is read whole: its buffers are compressed together), and a second
// take on the same reader no longer reads the chunk metadata.
TEST(V21RangeTest, TakeOfFsstStringsReadsTheirChunks) {
  ASSERT_TRUE(arrow::compute::Initialize().ok());
  for (const char* version : {"2.1", "2.2"}) {
    SCOPED_TRACE(version);
    const fs::path path = fs::path(LANCE_TEST_FIXTURES_DIR) / "v2_1" / version / "forced.lance";
    auto counting = std::make_shared<CountingFile>(Slurp(path));
    auto reader = FileReader::Open(counting, path.string());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    const uint64_t n = (*reader)->num_rows();
    const uint64_t page_bytes = FieldPageBytes(**reader, "fsst_str");
    ASSERT_GT(page_bytes, 0u);
    const int64_t first = TakeAndCompare(**reader, *counting, "fsst_str", {n / 3, n / 3, n / 3 + 1}, "first");
    const int64_t second = TakeAndCompare(**reader, *counting, "fsst_str", {n / 2}, "second");
    EXPECT_GT(first, 0);
    EXPECT_LT(static_cast<uint64_t>(first), page_bytes / 4);
    EXPECT_LT(second, first) << "the chunk metadata is read once per reader";
    EXPECT_GT(TakeAndCompare(**reader, *counting, "fsst_str", {0, 5, n / 4, n / 4, n - 1}, "scattered"), 0);
  }
}

// Constant pages with levels (lists all null, or null and empty): their
// levels are read once; after that a take reads nothing of them.
TEST(V21RangeTest, TakeOfConstantPagesWithLevelsReadsLevelsOnce) {
  ASSERT_TRUE(arrow::compute::Initialize().ok());
  for (const char* version : {"2.1", "2.2"}) {
    SCOPED_TRACE(version);
    const fs::path path = fs::path(LANCE_TEST_FIXTURES_DIR) / "v2_1" / version / "nested.lance";
    auto data = Slurp(path);
    auto counting = std::make_shared<CountingFile>(data);
    auto reader = FileReader::Open(counting, path.string());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    const uint64_t n = (*reader)->num_rows();
    size_t with_levels = 0;
    for (const char* column : {"all_null_lists", "empty_or_null_lists", "all_empty_lists"}) {
      SCOPED_TRACE(column);
      // Is the field's page a constant page with levels here?
      const auto& layout = (*reader)->layout();
      size_t c = 0, f = 0;
      for (; f < layout.schema.fields.size() && layout.schema.fields[f].name != column; ++f) {
        c += static_cast<size_t>(file::v2_1::NumColumns(layout.schema.fields[f]));
      }
      ASSERT_LT(f, layout.schema.fields.size());
      bool levels = true;
      for (const auto& page : layout.columns[c].pages) {
        auto cuts = file::v2_1::AnalyzePageCuts(page, ReaderOf(data));
        ASSERT_TRUE(cuts.ok());
        levels = levels && cuts->constant_levels && cuts->kind == PageCuts::Kind::kEveryRow;
      }
      TakeAndCompare(**reader, *counting, column, {1, n / 2, n / 2, n - 1}, "first");
      const int64_t again = TakeAndCompare(**reader, *counting, column, {0, 2, n / 3}, "again");
      if (levels) {
        ++with_levels;
        EXPECT_EQ(again, 0) << "the levels were decoded with the page's cuts";
      }
    }
    EXPECT_GT(with_levels, 0u) << "the fixture has constant pages with levels";
  }
}

// A fixed-size list of structs: its leaves count items (rows times the
// dimension), and a take reads the chunks of its rows' items, not whole
// pages. The fixture (one chunk a column) cannot show it; a file of 20000
// rows written here can.
TEST(V21RangeTest, TakeOfFixedSizeListOfStructsReadsItsItems) {
  ASSERT_TRUE(arrow::compute::Initialize().ok());
  const fs::path path = fs::path(LANCE_TEST_FIXTURES_DIR) / "v2_1/2.2/fsl_struct.lance";
  {
    auto counting = std::make_shared<CountingFile>(Slurp(path));
    auto reader = FileReader::Open(counting, path.string());
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    const uint64_t n = (*reader)->num_rows();
    TakeAndCompare(**reader, *counting, "fs", {0, 0, 7, n / 2, n - 1}, "fixture");
  }
  const int64_t rows = 20000, dim = 4;
  auto item = arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b", arrow::int64())});
  arrow::Int32Builder a;
  arrow::Int64Builder b;
  for (int64_t i = 0; i < rows * dim; ++i) {
    ASSERT_TRUE(a.Append(static_cast<int32_t>(i * 7919 % 100003)).ok());
    ASSERT_TRUE((i % 5 == 0 ? b.AppendNull() : b.Append(i * 1000003)).ok());
  }
  auto items = arrow::StructArray::Make({a.Finish().ValueOrDie(), b.Finish().ValueOrDie()},
                                        item->fields()).ValueOrDie();
  auto fsl = arrow::FixedSizeListArray::FromArrays(items, static_cast<int32_t>(dim)).ValueOrDie();
  auto schema = arrow::schema({arrow::field("fs", fsl->type())});
  const fs::path out = fs::temp_directory_path() / ("fsl_struct_take_" + std::to_string(::getpid()) + ".lance");
  {
    auto writer = FileWriter::Open(out.string(), *schema, FileWriterOptions{});
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    ASSERT_TRUE((*writer)->Write(*arrow::RecordBatch::Make(schema, rows, {fsl})).ok());
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  auto counting = std::make_shared<CountingFile>(Slurp(out));
  fs::remove(out);
  auto reader = FileReader::Open(counting, out.string());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  uint64_t all_bytes = 0;
  for (const auto& column : (*reader)->layout().columns) {
    for (const auto& page : column.pages) {
      for (const auto& buf : page.buffers) all_bytes += buf.size;
    }
  }
  const int64_t one = TakeAndCompare(**reader, *counting, "fs", {rows / 2}, "one row");
  EXPECT_GT(one, 0);
  EXPECT_LT(static_cast<uint64_t>(one), all_bytes / 4);
  const int64_t again = TakeAndCompare(**reader, *counting, "fs", {rows / 3}, "another row");
  EXPECT_LT(static_cast<uint64_t>(again), all_bytes / 8);
  TakeAndCompare(**reader, *counting, "fs", {0, 0, 7, rows / 2, rows - 1, rows - 1}, "repeated rows");
  auto windows = (*reader)->ReadWindows({"fs"}, 1000);
  ASSERT_TRUE(windows.ok());
  EXPECT_GT(windows->size(), 3u) << "the field is cut into windows";
}

TEST(V21RangeTest, BadRangesAndReadsFailCleanly) {
  const fs::path root = fs::path(LANCE_TEST_FIXTURES_DIR) / "v2_1";
  for (const char* name : {"2.1/vectors.lance", "2.1/multipage.lance", "2.2/primitives.lance", "2.1/strings.lance"}) {
    auto data = Slurp(root / name);
    auto reader = FileReader::Open(std::make_shared<arrow::io::BufferReader>(data), name);
    ASSERT_TRUE(reader.ok());
    auto short_reader = [data](uint64_t position, uint64_t size) -> Result<std::shared_ptr<arrow::Buffer>> {
      return arrow::SliceBuffer(data, 0, static_cast<int64_t>(std::min<uint64_t>(size / 2, 10)));
    };
    auto failing = [](uint64_t, uint64_t) -> Result<std::shared_ptr<arrow::Buffer>> {
      return Status::IOError("no");
    };
    for (const auto& column : (*reader)->layout().columns) {
      for (const auto& page : column.pages) {
        auto cuts = file::v2_1::AnalyzePageCuts(page, ReaderOf(data));
        ASSERT_TRUE(cuts.ok());
        // Short or failing reads are errors.
        auto bad = file::v2_1::AnalyzePageCuts(page, short_reader);
        if (cuts->kind == PageCuts::Kind::kChunks) {
          EXPECT_FALSE(bad.ok());
        }
        if (cuts->kind == PageCuts::Kind::kWhole || page.length < 2) continue;
        const uint64_t mid = cuts->Up(1, page.length);
        if (mid >= page.length) continue;
        // (Constant pages without buffers read nothing.)
        if (!page.buffers.empty()) {
          EXPECT_FALSE(file::v2_1::LoadPageRows(page, *cuts, 0, mid, failing).ok());
        }
        if (cuts->kind != PageCuts::Kind::kEveryRow) {
          EXPECT_FALSE(file::v2_1::LoadPageRows(page, *cuts, 0, mid - 1, ReaderOf(data)).ok());
        }
        EXPECT_FALSE(file::v2_1::LoadPageRows(page, *cuts, mid, page.length + 1, ReaderOf(data)).ok());
        EXPECT_FALSE(file::v2_1::LoadPageRows(page, *cuts, mid, mid - 1, ReaderOf(data)).ok());
        EXPECT_TRUE(file::v2_1::LoadPageRows(page, *cuts, 0, mid, ReaderOf(data)).ok());
        // Page buffers pointing past the file are refused.
        PageInfo broken = page;
        for (auto& b : broken.buffers) b.position = UINT64_MAX - 3;
        if (!page.buffers.empty()) {
          EXPECT_FALSE(file::v2_1::LoadPageRows(broken, *cuts, 0, mid, ReaderOf(data)).ok());
        }
      }
    }
  }
}

// Damaged page buffers (chunk metadata, repetition indexes, values) make
// ranges and takes fail or return rows, never crash.
TEST(V21RangeTest, DamagedPagesNeverCrash) {
  ASSERT_TRUE(arrow::compute::Initialize().ok());
  const fs::path root = fs::path(LANCE_TEST_FIXTURES_DIR) / "v2_1";
  std::mt19937_64 rng(5);
  for (const char* name : {"2.1/multipage.lance", "2.2/multipage.lance", "2.1/nested.lance", "2.2/nested.lance",
                           "2.1/vectors_small.lance", "2.1/strings.lance", "2.2/fullzip.lance"}) {
    SCOPED_TRACE(name);
    auto original = Slurp(root / name);
    auto layout_reader = FileReader::Open(std::make_shared<arrow::io::BufferReader>(original), name);
    ASSERT_TRUE(layout_reader.ok());
    std::vector<BufferRange> ranges;
    for (const auto& column : (*layout_reader)->layout().columns) {
      for (const auto& page : column.pages) {
        for (const auto& b : page.buffers) {
          if (b.size > 0) ranges.push_back(b);
        }
      }
    }
    ASSERT_FALSE(ranges.empty());
    const uint64_t n = (*layout_reader)->num_rows();
    for (int iter = 0; iter < 150; ++iter) {
      auto copy = arrow::AllocateBuffer(original->size()).ValueOrDie();
      std::memcpy(copy->mutable_data(), original->data(), original->size());
      for (int k = 0; k < 4; ++k) {
        const BufferRange& r = ranges[rng() % ranges.size()];
        const uint64_t at = r.position + rng() % std::min<uint64_t>(r.size, 64 + (rng() % 2) * r.size);
        copy->mutable_data()[at] = static_cast<uint8_t>(rng());
      }
      std::shared_ptr<arrow::Buffer> damaged(std::move(copy));
      auto reader = FileReader::Open(std::make_shared<arrow::io::BufferReader>(damaged), name);
      if (!reader.ok() || n == 0) continue;
      const uint64_t offset = rng() % n;
      (void)(*reader)->ReadRange({}, offset, std::min<uint64_t>(n - offset, 1 + rng() % 50));
      std::vector<uint64_t> rows{rng() % n, rng() % n, rng() % n};
      std::sort(rows.begin(), rows.end());
      (void)(*reader)->Take({}, rows);
      (void)(*reader)->ReadWindows({}, 1 + rng() % 100);
    }
  }
}

}  // namespace
}  // namespace lance
