// Reading parts of 2.0 pages: which pages can be cut, loading rows between
// cuts, and that a small take reads a small part of the file.
#include <atomic>
#include <filesystem>
#include <random>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>

#include "lance/encodings_v2_0.pb.h"
#include "lance/file/v2_0/page_range.h"
#include "lance/file_reader.h"

namespace lance {
namespace {

namespace enc = lance::pb::encodings20;
using file::v2_0::AnalyzePageCuts;
using file::v2_0::PageCuts;

const std::string kDir = (std::filesystem::path(LANCE_TEST_FIXTURES_DIR) / "v2_0/").string();

PageInfo Page(const enc::ArrayEncoding& e, uint64_t rows, std::vector<uint64_t> buffer_sizes) {
  PageInfo p;
  p.length = rows;
  p.encoding_type_url = "/lance.encodings.ArrayEncoding";
  p.encoding = e.SerializeAsString();
  uint64_t pos = 0;
  for (uint64_t size : buffer_sizes) {
    p.buffers.push_back({pos, size});
    pos += size;
  }
  return p;
}

enc::ArrayEncoding Flat(uint64_t bits, uint32_t buffer) {
  enc::ArrayEncoding e;
  e.mutable_flat()->set_bits_per_value(bits);
  e.mutable_flat()->mutable_buffer()->set_buffer_index(buffer);
  return e;
}

TEST(V2_0PageRangeTest, PlainFixedWidthPagesAreCuttable) {
  auto flat = AnalyzePageCuts(Page(Flat(32, 0), 100, {400}));
  ASSERT_TRUE(flat.cuttable);
  ASSERT_EQ(flat.slices.size(), 1u);
  EXPECT_EQ(flat.slices[0].bits_per_row, 32u);
  EXPECT_EQ(flat.Down(13), 8u);
  EXPECT_EQ(flat.Up(13, 100), 16u);
  EXPECT_EQ(flat.Up(97, 100), 100u);

  enc::ArrayEncoding nullable;
  *nullable.mutable_nullable()->mutable_some_nulls()->mutable_validity() = Flat(1, 0);
  auto* fsl = nullable.mutable_nullable()->mutable_some_nulls()->mutable_values()->mutable_fixed_size_list();
  fsl->set_dimension(3);
  *fsl->mutable_items() = Flat(32, 1);
  auto cuts = AnalyzePageCuts(Page(nullable, 20, {3, 240}));
  ASSERT_TRUE(cuts.cuttable);
  ASSERT_EQ(cuts.slices.size(), 2u);
  EXPECT_EQ(cuts.slices[0].bits_per_row, 1u);
  EXPECT_EQ(cuts.slices[1].bits_per_row, 96u);

  enc::ArrayEncoding all_null;
  all_null.mutable_nullable()->mutable_all_nulls();
  EXPECT_TRUE(AnalyzePageCuts(Page(all_null, 50, {})).cuttable);
}

TEST(V2_0PageRangeTest, OtherPagesAreOnlyCutAtTheirEdges) {
  auto compressed = Flat(32, 0);
  compressed.mutable_flat()->mutable_compression()->set_scheme("zstd");
  EXPECT_FALSE(AnalyzePageCuts(Page(compressed, 100, {400})).cuttable);
  enc::ArrayEncoding dictionary;
  *dictionary.mutable_dictionary()->mutable_indices() = Flat(8, 0);
  *dictionary.mutable_dictionary()->mutable_items() = Flat(32, 1);
  EXPECT_FALSE(AnalyzePageCuts(Page(dictionary, 100, {100, 40})).cuttable);
  EXPECT_FALSE(AnalyzePageCuts(Page(Flat(32, 1), 100, {400})).cuttable) << "no buffer 1";
  EXPECT_FALSE(AnalyzePageCuts(Page(Flat(32, 0), 100, {399})).cuttable) << "buffer too small for the rows";
  enc::ArrayEncoding twice;
  *twice.mutable_nullable()->mutable_some_nulls()->mutable_validity() = Flat(1, 0);
  *twice.mutable_nullable()->mutable_some_nulls()->mutable_values() = Flat(32, 0);
  EXPECT_FALSE(AnalyzePageCuts(Page(twice, 8, {40})).cuttable) << "one buffer used twice";
  auto garbage = Page(Flat(32, 0), 100, {400});
  garbage.encoding = "\xff\xff\xff";
  EXPECT_FALSE(AnalyzePageCuts(garbage).cuttable);
  PageCuts whole;
  EXPECT_EQ(whole.Down(50), 0u);
  EXPECT_EQ(whole.Up(50, 100), 100u);
  EXPECT_EQ(whole.Up(0, 100), 0u);
}

TEST(V2_0PageRangeTest, LoadsRowsBetweenCutsOnly) {
  // 20 int32 rows: bytes 4*i..4*i+3 hold i.
  std::vector<uint8_t> bytes(80);
  for (int i = 0; i < 20; ++i) bytes[4 * i] = static_cast<uint8_t>(i);
  auto page = Page(Flat(32, 0), 20, {80});
  auto cuts = AnalyzePageCuts(page);
  ASSERT_TRUE(cuts.cuttable);
  file::v2_0::FileRangeReader read = [&](uint64_t pos, uint64_t size) -> Result<std::shared_ptr<arrow::Buffer>> {
    if (pos + size > bytes.size()) return Status::IOError("read past the end");
    return arrow::Buffer::FromString(std::string(reinterpret_cast<const char*>(bytes.data()) + pos, size));
  };
  auto part = file::v2_0::LoadPageRowRanges(page, cuts, {{0, 8}, {16, 20}}, read);
  ASSERT_TRUE(part.ok()) << part.status().ToString();
  EXPECT_EQ(part->length, 12u);
  ASSERT_EQ(part->buffers[0]->size(), 48);
  EXPECT_EQ(part->buffers[0]->data()[4 * 7], 7);
  EXPECT_EQ(part->buffers[0]->data()[4 * 8], 16);
  EXPECT_FALSE(file::v2_0::LoadPageRowRanges(page, cuts, {{3, 8}}, read).ok()) << "3 is no cut";
  EXPECT_FALSE(file::v2_0::LoadPageRowRanges(page, cuts, {{8, 16}, {0, 8}}, read).ok()) << "not ascending";
  EXPECT_FALSE(file::v2_0::LoadPageRowRanges(page, cuts, {{16, 24}}, read).ok()) << "past the page";
  EXPECT_FALSE(file::v2_0::LoadPageRowRanges(page, PageCuts{}, {{0, 8}}, read).ok()) << "uncuttable";
}

// Counts the bytes read through it.
class CountingFile : public arrow::io::RandomAccessFile {
 public:
  explicit CountingFile(std::shared_ptr<arrow::io::RandomAccessFile> f) : f_(std::move(f)) {}
  arrow::Status Close() override { return f_->Close(); }
  bool closed() const override { return f_->closed(); }
  arrow::Result<int64_t> Tell() const override { return f_->Tell(); }
  arrow::Status Seek(int64_t p) override { return f_->Seek(p); }
  arrow::Result<int64_t> GetSize() override { return f_->GetSize(); }
  arrow::Result<int64_t> Read(int64_t n, void* out) override {
    bytes += n;
    return f_->Read(n, out);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t n) override {
    bytes += n;
    return f_->Read(n);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t pos, int64_t n) override {
    bytes += n;
    return f_->ReadAt(pos, n);
  }
  std::atomic<int64_t> bytes{0};

 private:
  std::shared_ptr<arrow::io::RandomAccessFile> f_;
};

TEST(V2_0PageRangeTest, ATakeReadsAFractionOfAMultiPageFile) {
  ASSERT_TRUE(arrow::compute::Initialize().ok());
  const std::string path = kDir + "multipage_split.lance";
  auto file = arrow::io::ReadableFile::Open(path).ValueOrDie();
  auto counting = std::make_shared<CountingFile>(file);
  auto reader = FileReader::Open(counting, path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const int64_t size = counting->GetSize().ValueOrDie();
  auto all = (*reader)->ReadAll();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  const uint64_t n = (*reader)->num_rows();
  ASSERT_GT(n, 100u);
  for (const auto& field : (*reader)->schema().fields) {
    counting->bytes = 0;
    auto one = (*reader)->Take({field.name}, {n / 2});
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    auto got = one->get()->column(0)->chunk(0);
    auto want = (*all)->GetColumnByName(field.name)->Slice(n / 2, 1)->chunk(0);
    if (got->type_id() == arrow::Type::DICTIONARY) {
      // Which dictionary holds the value is not part of the data.
      const auto& values = std::static_pointer_cast<arrow::DictionaryType>(got->type())->value_type();
      got = arrow::compute::Cast(got, values).ValueOrDie().make_array();
      want = arrow::compute::Cast(want, values).ValueOrDie().make_array();
    }
    EXPECT_TRUE(got->Equals(*want)) << field.name;
    // Schema and metadata are read at open; a one-row take of a field
    // reads its page(s) holding the row, far less than the file.
    EXPECT_LT(counting->bytes.load(), size / 2) << field.name;
    // Plain fixed-width values: about the 8 rows around it (and their
    // validity bytes), not their page.
    if (field.name == "i64" || field.name == "fsl") {
      EXPECT_LE(counting->bytes.load(), 128) << field.name;
    }
  }
}

}  // namespace
}  // namespace lance
