// TakeBlobs end to end on datasets lance-cpp writes: blob v2 values of every
// stored kind (inline, packed, dedicated, external) and legacy blob columns,
// by index, row id and address; corrupt descriptors and missing .blob files
// give errors naming the file; a take reads only the asked values' bytes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <unordered_map>

#include <arrow/api.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/util/key_value_metadata.h>
#include <arrow/util/uri.h>

#include "lance/blob.h"
#include "lance/dataset.h"
#include "lance/operations.h"
#include "lance/write.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

// Reads through the "countfs" scheme, per file path.
struct ReadCounts {
  std::mutex mu;
  std::map<std::string, std::pair<int64_t, int64_t>> by_path;  // path -> reads, bytes
  void Add(const std::string& path, int64_t n) {
    std::lock_guard<std::mutex> lock(mu);
    auto& c = by_path[path];
    ++c.first;
    c.second += n;
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu);
    by_path.clear();
  }
};
ReadCounts& Counts() {
  static ReadCounts counts;
  return counts;
}

class CountingFile : public arrow::io::RandomAccessFile {
 public:
  CountingFile(std::shared_ptr<arrow::io::RandomAccessFile> f, std::string path) : f_(std::move(f)), path_(path) {}
  arrow::Status Close() override { return f_->Close(); }
  bool closed() const override { return f_->closed(); }
  arrow::Result<int64_t> Tell() const override { return f_->Tell(); }
  arrow::Status Seek(int64_t p) override { return f_->Seek(p); }
  arrow::Result<int64_t> GetSize() override { return f_->GetSize(); }
  arrow::Result<int64_t> Read(int64_t n, void* out) override {
    Counts().Add(path_, n);
    return f_->Read(n, out);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> Read(int64_t n) override {
    Counts().Add(path_, n);
    return f_->Read(n);
  }
  arrow::Result<std::shared_ptr<arrow::Buffer>> ReadAt(int64_t pos, int64_t n) override {
    Counts().Add(path_, n);
    return f_->ReadAt(pos, n);
  }

 private:
  std::shared_ptr<arrow::io::RandomAccessFile> f_;
  std::string path_;
};

class CountingLocalFileSystem : public arrow::fs::LocalFileSystem {
 public:
  using arrow::fs::LocalFileSystem::OpenInputFile;
  arrow::Result<std::shared_ptr<arrow::io::RandomAccessFile>> OpenInputFile(const std::string& path) override {
    ARROW_ASSIGN_OR_RAISE(auto f, arrow::fs::LocalFileSystem::OpenInputFile(path));
    return std::make_shared<CountingFile>(f, path);
  }
};

void RegisterCountingScheme() {
  static const arrow::Status registered = arrow::fs::RegisterFileSystemFactory(
      "countfs",
      {[](const arrow::util::Uri& uri, const arrow::fs::FileSystemFactoryOptions&, const arrow::io::IOContext&,
          std::string* out_path) -> arrow::Result<std::shared_ptr<arrow::fs::FileSystem>> {
         if (out_path != nullptr) *out_path = uri.path();
         return std::make_shared<CountingLocalFileSystem>();
       },
       __FILE__, __LINE__});
  ASSERT_TRUE(registered.ok()) << registered.ToString();
}

// Values of many sizes, some null, one empty: with the thresholds below,
// up to 16 bytes stay inline, up to 100 go to a packed .blob file, larger
// ones to a .blob file of their own.
std::vector<std::optional<std::string>> Values(uint32_t seed, int n, int max_size) {
  std::mt19937 rng(seed);
  std::vector<std::optional<std::string>> out;
  for (int i = 0; i < n; ++i) {
    if (rng() % 8 == 0) {
      out.emplace_back();
      continue;
    }
    std::string v(rng() % max_size, '\0');
    for (auto& c : v) c = static_cast<char>(rng());
    out.emplace_back(std::move(v));
  }
  out[0] = std::string();
  return out;
}

// A binary blob column (legacy blob in 2.0/2.1), or with `thresholds` the
// blob v2 struct<data, uri> pylance's blob_field() makes, which carries them.
std::shared_ptr<arrow::Table> BlobTable(const std::vector<std::optional<std::string>>& values,
                                        const std::map<std::string, std::string>& thresholds) {
  arrow::Int64Builder ids;
  arrow::LargeBinaryBuilder blobs;
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_TRUE(ids.Append(static_cast<int64_t>(i)).ok());
    EXPECT_TRUE((values[i] ? blobs.Append(*values[i]) : blobs.AppendNull()).ok());
  }
  auto data = *blobs.Finish();
  if (thresholds.empty()) {
    auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                                 arrow::field("b", arrow::large_binary(), true,
                                              arrow::key_value_metadata({"lance-encoding:blob"}, {"true"}))});
    return arrow::Table::Make(schema, {*ids.Finish(), data});
  }
  std::unordered_map<std::string, std::string> meta(thresholds.begin(), thresholds.end());
  meta["ARROW:extension:name"] = "lance.blob.v2";
  meta["ARROW:extension:metadata"] = "";
  auto type = arrow::struct_({arrow::field("data", arrow::large_binary()), arrow::field("uri", arrow::utf8())});
  auto uris = *arrow::MakeArrayOfNull(arrow::utf8(), data->length());
  auto blob = std::make_shared<arrow::StructArray>(type, data->length(), arrow::ArrayVector{data, uris},
                                                   data->null_bitmap(), data->null_count());
  auto schema = arrow::schema({arrow::field("id", arrow::int64()),
                               arrow::field("b", type, true, arrow::key_value_metadata(meta))});
  return arrow::Table::Make(schema, {*ids.Finish(), blob});
}

std::vector<std::optional<std::string>> ToVector(const arrow::LargeBinaryArray& a) {
  std::vector<std::optional<std::string>> out;
  for (int64_t i = 0; i < a.length(); ++i) {
    out.push_back(a.IsNull(i) ? std::nullopt : std::optional<std::string>(a.GetString(i)));
  }
  return out;
}

class BlobTakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("lance_blob_take_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    uri_ = (dir_ / "ds").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::shared_ptr<Dataset> Write(const std::shared_ptr<arrow::Table>& t, WriteParams params) {
    auto reader = std::make_shared<arrow::TableBatchReader>(t);
    reader->set_chunksize(37);
    auto ds = WriteDataset(reader, uri_, params);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? *ds : nullptr;
  }
  std::shared_ptr<Dataset> Open(const std::string& uri) {
    auto ds = Dataset::Open(uri);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    return ds.ok() ? *ds : nullptr;
  }
  std::vector<std::string> Sidecars() const {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir_ / "ds" / "data")) {
      if (e.path().extension() == ".blob") out.push_back(e.path().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
  std::string uri_;
};

const std::map<std::string, std::string> kSmallThresholds = {
    {"lance-encoding:blob-inline-size-threshold", "16"}, {"lance-encoding:blob-dedicated-size-threshold", "100"}};

TEST_F(BlobTakeTest, EveryKindByIndexRowIdAndAddressWithDeletions) {
  auto values = Values(1, 300, 200);
  WriteParams params;
  params.max_rows_per_file = 120;
  ASSERT_NE(Write(BlobTable(values, kSmallThresholds), params), nullptr);
  ASSERT_GE(Sidecars().size(), 3u);
  ASSERT_TRUE(DeleteRows(uri_, "id % 7 = 3").ok());
  auto ds = Open(uri_);
  ASSERT_NE(ds, nullptr);
  std::vector<std::optional<std::string>> live;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i % 7 != 3) live.push_back(values[i]);
  }
  // Random, repeated and unsorted indices.
  std::mt19937 rng(5);
  std::vector<uint64_t> indices = {0, 5, 5, live.size() - 1, 2, 0};
  for (int i = 0; i < 60; ++i) indices.push_back(rng() % live.size());
  auto got = TakeBlobs(ds, "b", indices, BlobRows::kIndices);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::vector<std::optional<std::string>> want;
  for (uint64_t i : indices) want.push_back(live[i]);
  EXPECT_EQ(ToVector(**got), want);

  // Without stable row ids, row ids are addresses: fragment 1 starts at row 120.
  std::vector<uint64_t> addresses = {(1ull << 32) | 4, 7, (2ull << 32) | 59, 7};
  auto by_address = TakeBlobs(ds, "b", addresses, BlobRows::kRowAddresses);
  ASSERT_TRUE(by_address.ok()) << by_address.status().ToString();
  EXPECT_EQ(ToVector(**by_address),
            (std::vector<std::optional<std::string>>{values[124], values[7], values[299], values[7]}));
  auto by_id = TakeBlobs(ds, "b", addresses, BlobRows::kRowIds);
  ASSERT_TRUE(by_id.ok()) << by_id.status().ToString();
  EXPECT_EQ(ToVector(**by_id), ToVector(**by_address));

  auto located = LocateBlobs(ds, "b", {0, 1}, BlobRows::kRowAddresses);
  ASSERT_TRUE(located.ok()) << located.status().ToString();
  ASSERT_TRUE((*located)[0].has_value());
  EXPECT_EQ((*located)[0]->size, 0u);

  auto bad = TakeBlobs(ds, "id", {0}, BlobRows::kIndices);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a blob column"), std::string::npos) << bad.status().ToString();
  auto out_of_range = TakeBlobs(ds, "b", {(9ull << 32)}, BlobRows::kRowAddresses);
  EXPECT_FALSE(out_of_range.ok());
  auto past_rows = TakeBlobs(ds, "b", {120}, BlobRows::kRowAddresses);
  EXPECT_FALSE(past_rows.ok());
}

TEST_F(BlobTakeTest, StableRowIds) {
  auto values = Values(2, 90, 150);
  WriteParams params;
  params.enable_stable_row_ids = true;
  params.max_rows_per_file = 40;
  ASSERT_NE(Write(BlobTable(values, kSmallThresholds), params), nullptr);
  ASSERT_TRUE(DeleteRows(uri_, "id < 10").ok());
  auto ds = Open(uri_);
  ASSERT_NE(ds, nullptr);
  auto got = TakeBlobs(ds, "b", {89, 10, 45, 10}, BlobRows::kRowIds);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(ToVector(**got), (std::vector<std::optional<std::string>>{values[89], values[10], values[45], values[10]}));
  EXPECT_FALSE(TakeBlobs(ds, "b", {3}, BlobRows::kRowIds).ok());  // deleted
}

TEST_F(BlobTakeTest, LegacyBlobColumns) {
  for (const char* version : {"2.0", "2.1"}) {
    SCOPED_TRACE(version);
    fs::remove_all(uri_);
    auto values = Values(3, 150, 300);
    WriteParams params;
    params.data_storage_version = version;
    params.max_rows_per_file = 70;
    ASSERT_NE(Write(BlobTable(values, {}), params), nullptr);
    auto ds = Open(uri_);
    ASSERT_NE(ds, nullptr);
    std::vector<uint64_t> indices = {149, 0, 3, 71, 71, 70, 1, 2, 60};
    auto got = TakeBlobs(ds, "b", indices, BlobRows::kIndices);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    std::vector<std::optional<std::string>> want;
    for (uint64_t i : indices) want.push_back(values[i]);
    EXPECT_EQ(ToVector(**got), want);
  }
}

TEST_F(BlobTakeTest, MissingAndTruncatedSidecarsAreClearErrors) {
  std::vector<std::optional<std::string>> values = {std::string(50, 'p'), std::string(60, 'q'),
                                                    std::string(500, 'd'), std::string(8, 'i')};
  ASSERT_NE(Write(BlobTable(values, kSmallThresholds), {}), nullptr);
  auto sidecars = Sidecars();
  ASSERT_EQ(sidecars.size(), 2u);  // one pack file (ids 1), one dedicated (id 2)
  const std::string pack = sidecars[0].find("10000000000000000000000000000000.blob") != std::string::npos
                               ? sidecars[0] : sidecars[1];
  const std::string dedicated = pack == sidecars[0] ? sidecars[1] : sidecars[0];
  auto ds = Open(uri_);
  ASSERT_NE(ds, nullptr);

  fs::resize_file(pack, 70);  // the second packed value ran to byte 110
  auto truncated = TakeBlobs(ds, "b", {1}, BlobRows::kIndices);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("past the end"), std::string::npos) << truncated.status().ToString();
  EXPECT_NE(truncated.status().message().find(pack), std::string::npos) << truncated.status().ToString();
  auto first = TakeBlobs(ds, "b", {0, 3}, BlobRows::kIndices);  // still whole
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(ToVector(**first), (std::vector<std::optional<std::string>>{values[0], values[3]}));

  fs::remove(dedicated);
  auto missing = TakeBlobs(ds, "b", {2}, BlobRows::kIndices);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dedicated), std::string::npos) << missing.status().ToString();
}

TEST_F(BlobTakeTest, ExternalUris) {
  const fs::path ext = dir_ / "external data.bin";
  std::string bytes(200, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i);
  std::ofstream(ext, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  // pylance's blob_field shape: data, uri, position, size.
  arrow::LargeBinaryBuilder data;
  arrow::StringBuilder uris;
  arrow::UInt64Builder positions, sizes;
  const std::string file_uri = "file://" + ext.string();
  struct Row { std::optional<std::string> data, uri; std::optional<uint64_t> position, size; };
  std::vector<Row> rows = {{std::nullopt, file_uri, std::nullopt, std::nullopt},
                           {std::nullopt, file_uri, 10, 5},
                           {std::string("abc"), std::nullopt, std::nullopt, std::nullopt},
                           {std::nullopt, ext.string(), 3, 4}};
  for (const auto& r : rows) {
    ASSERT_TRUE((r.data ? data.Append(*r.data) : data.AppendNull()).ok());
    ASSERT_TRUE((r.uri ? uris.Append(*r.uri) : uris.AppendNull()).ok());
    ASSERT_TRUE((r.position ? positions.Append(*r.position) : positions.AppendNull()).ok());
    ASSERT_TRUE((r.size ? sizes.Append(*r.size) : sizes.AppendNull()).ok());
  }
  auto type = arrow::struct_({arrow::field("data", arrow::large_binary()), arrow::field("uri", arrow::utf8()),
                              arrow::field("position", arrow::uint64()), arrow::field("size", arrow::uint64())});
  auto blob = std::make_shared<arrow::StructArray>(
      type, 4, arrow::ArrayVector{*data.Finish(), *uris.Finish(), *positions.Finish(), *sizes.Finish()});
  auto meta = arrow::key_value_metadata({"ARROW:extension:name", "ARROW:extension:metadata"}, {"lance.blob.v2", ""});
  auto table = arrow::Table::Make(arrow::schema({arrow::field("b", type, true, meta)}), {blob});

  // A plain path is no URI, and URIs outside registered bases need consent.
  auto refused = WriteDataset(std::make_shared<arrow::TableBatchReader>(table), uri_, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("outside registered external bases"), std::string::npos)
      << refused.status().ToString();
  EXPECT_FALSE(fs::exists(uri_ + "/_versions"));
  WriteParams allow;
  allow.allow_external_blob_outside_bases = true;
  auto plain = WriteDataset(std::make_shared<arrow::TableBatchReader>(table), uri_, allow);
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("not a valid absolute URI"), std::string::npos) << plain.status().ToString();

  auto three = table->Slice(0, 3);
  auto ds = WriteDataset(std::make_shared<arrow::TableBatchReader>(*three), uri_, allow);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  auto got = TakeBlobs(*ds, "b", {1, 0, 2}, BlobRows::kIndices);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(ToVector(**got), (std::vector<std::optional<std::string>>{bytes.substr(10, 5), bytes, "abc"}));
  auto located = LocateBlobs(*ds, "b", {0}, BlobRows::kIndices);
  ASSERT_TRUE(located.ok()) << located.status().ToString();
  EXPECT_EQ((*located)[0]->size, 200u);

  // A range past the end of the external file.
  fs::resize_file(ext, 12);
  auto past = TakeBlobs(*ds, "b", {1}, BlobRows::kIndices);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("past the end"), std::string::npos) << past.status().ToString();
}

TEST_F(BlobTakeTest, UnsupportedSchemeIsAClearError) {
  arrow::StringBuilder uris;
  ASSERT_TRUE(uris.Append("s3://bucket/key.bin").ok());
  auto type = arrow::struct_({arrow::field("data", arrow::large_binary()), arrow::field("uri", arrow::utf8())});
  auto blob = std::make_shared<arrow::StructArray>(
      type, 1, arrow::ArrayVector{*arrow::MakeArrayOfNull(arrow::large_binary(), 1), *uris.Finish()});
  auto meta = arrow::key_value_metadata({"ARROW:extension:name"}, {"lance.blob.v2"});
  auto table = arrow::Table::Make(arrow::schema({arrow::field("b", type, true, meta)}), {blob});
  WriteParams allow;
  allow.allow_external_blob_outside_bases = true;
  auto ds = WriteDataset(std::make_shared<arrow::TableBatchReader>(table), uri_, allow);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  auto got = TakeBlobs(*ds, "b", {0}, BlobRows::kIndices);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("unsupported scheme 's3'"), std::string::npos) << got.status().ToString();
}

// 100 random rows of 2000: each packed or dedicated value is one read of
// exactly its bytes; inline values come from the data file without reading
// all of it.
TEST_F(BlobTakeTest, ReadsOnlyTheAskedRanges) {
  RegisterCountingScheme();
  auto values = Values(4, 2000, 3000);
  const std::map<std::string, std::string> thresholds = {{"lance-encoding:blob-inline-size-threshold", "1000"},
                                                         {"lance-encoding:blob-dedicated-size-threshold", "2500"}};
  ASSERT_NE(Write(BlobTable(values, thresholds), {}), nullptr);
  auto ds = Open("countfs://" + uri_);
  ASSERT_NE(ds, nullptr);
  std::mt19937 rng(9);
  std::vector<uint64_t> indices;
  while (indices.size() < 100) {
    const uint64_t i = rng() % values.size();
    if (std::find(indices.begin(), indices.end(), i) == indices.end()) indices.push_back(i);
  }
  Counts().Clear();
  auto got = TakeBlobs(ds, "b", indices, BlobRows::kIndices);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::vector<std::optional<std::string>> want;
  int64_t sidecar_values = 0, sidecar_bytes = 0, inline_bytes = 0;
  for (uint64_t i : indices) {
    want.push_back(values[i]);
    const int64_t size = values[i] ? static_cast<int64_t>(values[i]->size()) : 0;
    if (size > 1000) {
      ++sidecar_values;
      sidecar_bytes += size;
    } else {
      inline_bytes += size;
    }
  }
  EXPECT_EQ(ToVector(**got), want);
  int64_t blob_reads = 0, blob_bytes = 0, data_reads = 0, data_bytes = 0;
  for (const auto& [path, c] : Counts().by_path) {
    const bool sidecar = path.size() > 5 && path.compare(path.size() - 5, 5, ".blob") == 0;
    (sidecar ? blob_reads : data_reads) += c.first;
    (sidecar ? blob_bytes : data_bytes) += c.second;
  }
  EXPECT_EQ(blob_reads, sidecar_values);
  EXPECT_EQ(blob_bytes, sidecar_bytes);
  int64_t data_file_size = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "ds" / "data")) {
    if (e.path().extension() == ".lance") data_file_size += static_cast<int64_t>(fs::file_size(e.path()));
  }
  // The inline values asked for, the descriptors and the file metadata:
  // far less than the file.
  EXPECT_GE(data_bytes, inline_bytes);
  EXPECT_LT(data_bytes, data_file_size / 4) << "data file " << data_file_size << " bytes";
  std::cout << "take_blobs of 100 rows: " << blob_reads << " reads / " << blob_bytes << " bytes of .blob files ("
            << sidecar_values << " values, " << sidecar_bytes << " bytes), " << data_reads << " reads / "
            << data_bytes << " bytes of data files (" << inline_bytes << " inline bytes asked, files "
            << data_file_size << " bytes)\n";
}

}  // namespace
}  // namespace lance
