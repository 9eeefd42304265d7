// FileWriter round trips through our FileReader (file version 2.0): every
// type the 2.0 encoders write, nulls at every level, 0 rows, many batches,
// small caches and pages; and the errors a writer must report.
#include <filesystem>
#include <random>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/memory.h>
#include <arrow/util/thread_pool.h>
#include <gtest/gtest.h>

#include "lance/file_reader.h"
#include "lance/file_writer.h"

namespace lance {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("lance_file_writer_test_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::shared_ptr<arrow::Buffer> RandomBytes(int64_t n, std::mt19937_64& rng) {
  auto buf = *arrow::AllocateBuffer(n);
  for (int64_t i = 0; i < n; ++i) buf->mutable_data()[i] = static_cast<uint8_t>(rng());
  return std::shared_ptr<arrow::Buffer>(std::move(buf));
}

// A validity bitmap with about `p` nulls (nullptr when p == 0).
std::shared_ptr<arrow::Buffer> RandomValidity(int64_t n, double p, std::mt19937_64& rng) {
  if (p <= 0) return nullptr;
  auto buf = *arrow::AllocateEmptyBitmap(n);
  std::bernoulli_distribution null(p);
  for (int64_t i = 0; i < n; ++i) arrow::bit_util::SetBitTo(buf->mutable_data(), i, !null(rng));
  return std::shared_ptr<arrow::Buffer>(std::move(buf));
}

std::shared_ptr<arrow::Array> RandomArray(const std::shared_ptr<arrow::DataType>& type, int64_t n, double null_p,
                                          std::mt19937_64& rng) {
  using arrow::Type;
  switch (type->id()) {
    case Type::NA:
      return std::make_shared<arrow::NullArray>(n);
    case Type::STRING:
    case Type::LARGE_STRING:
    case Type::BINARY:
    case Type::LARGE_BINARY: {
      const bool large = type->id() == Type::LARGE_STRING || type->id() == Type::LARGE_BINARY;
      std::vector<int64_t> offsets{0};
      std::string bytes;
      const int alphabet = 3 + static_cast<int>(rng() % 20);
      for (int64_t i = 0; i < n; ++i) {
        int len = static_cast<int>(rng() % 4);
        for (int k = 0; k < len; ++k) bytes.push_back(static_cast<char>('a' + rng() % alphabet));
        offsets.push_back(static_cast<int64_t>(bytes.size()));
      }
      std::shared_ptr<arrow::Buffer> off;
      if (large) {
        off = arrow::Buffer::FromVector(offsets);
      } else {
        off = arrow::Buffer::FromVector(std::vector<int32_t>(offsets.begin(), offsets.end()));
      }
      return arrow::MakeArray(arrow::ArrayData::Make(type, n, {RandomValidity(n, null_p, rng), off,
                                                               arrow::Buffer::FromString(bytes)}));
    }
    case Type::FIXED_SIZE_LIST: {
      const auto& t = static_cast<const arrow::FixedSizeListType&>(*type);
      auto child = RandomArray(t.value_type(), n * t.list_size(), null_p, rng);
      auto data = arrow::ArrayData::Make(type, n, {RandomValidity(n, null_p, rng)});
      data->child_data = {child->data()};
      return arrow::MakeArray(data);
    }
    case Type::LIST:
    case Type::LARGE_LIST: {
      std::vector<int64_t> offsets{0};
      for (int64_t i = 0; i < n; ++i) offsets.push_back(offsets.back() + static_cast<int64_t>(rng() % 4));
      auto child = RandomArray(type->field(0)->type(), offsets.back(), null_p, rng);
      std::shared_ptr<arrow::Buffer> off = type->id() == Type::LARGE_LIST
                                               ? arrow::Buffer::FromVector(offsets)
                                               : arrow::Buffer::FromVector(std::vector<int32_t>(offsets.begin(), offsets.end()));
      auto data = arrow::ArrayData::Make(type, n, {RandomValidity(n, null_p, rng), off});
      data->child_data = {child->data()};
      return arrow::MakeArray(data);
    }
    case Type::STRUCT: {
      // 2.0 cannot store null structs: only the children have nulls.
      auto data = arrow::ArrayData::Make(type, n, {nullptr});
      for (const auto& f : type->fields()) data->child_data.push_back(RandomArray(f->type(), n, null_p, rng)->data());
      return arrow::MakeArray(data);
    }
    case Type::DICTIONARY: {
      const auto& t = static_cast<const arrow::DictionaryType&>(*type);
      const int64_t k = 1 + static_cast<int64_t>(rng() % 20);
      auto dict = RandomArray(t.value_type(), k, 0, rng);
      const int width = t.index_type()->bit_width() / 8;
      auto idx = *arrow::AllocateBuffer(n * width);
      for (int64_t i = 0; i < n; ++i) {
        uint64_t v = rng() % static_cast<uint64_t>(k);
        std::memcpy(idx->mutable_data() + i * width, &v, width);
      }
      auto data = arrow::ArrayData::Make(type, n, {RandomValidity(n, null_p, rng), std::move(idx)});
      data->dictionary = dict->data();
      return arrow::MakeArray(data);
    }
    case Type::BOOL:
      return arrow::MakeArray(arrow::ArrayData::Make(type, n, {RandomValidity(n, null_p, rng),
                                                               RandomBytes((n + 7) / 8, rng)}));
    default: {
      const int width = type->bit_width() / 8;
      return arrow::MakeArray(arrow::ArrayData::Make(type, n, {RandomValidity(n, null_p, rng),
                                                               RandomBytes(n * width, rng)}));
    }
  }
}

std::vector<std::shared_ptr<arrow::Field>> AllTypes() {
  using namespace arrow;
  auto item = [](std::shared_ptr<DataType> t) { return field("item", t); };
  return {
      field("bool", boolean()), field("i8", int8()), field("u8", uint8()), field("i16", int16()),
      field("u16", uint16()), field("i32", int32()), field("u32", uint32()), field("i64", int64()),
      field("u64", uint64()), field("f16", float16()), field("f32", float32()), field("f64", float64()),
      field("dec128", decimal128(20, 3)), field("dec256", decimal256(50, 4)), field("date32", date32()),
      field("date64", date64()), field("time32", time32(TimeUnit::MILLI)), field("time64", time64(TimeUnit::NANO)),
      field("ts", timestamp(TimeUnit::MICRO, "UTC")), field("dur", duration(TimeUnit::SECOND)),
      field("null", null()), field("utf8", utf8()), field("large_utf8", large_utf8()), field("binary", binary()),
      field("large_binary", large_binary()), field("fsb", fixed_size_binary(5)),
      field("fsl", fixed_size_list(float32(), 3)), field("fsl_fsl", fixed_size_list(fixed_size_list(int16(), 2), 2)),
      field("list", list(item(int32()))), field("large_list", large_list(item(utf8()))),
      field("list_list", list(item(list(item(int64()))))),
      field("struct", struct_({field("a", int32()), field("b", utf8()), field("c", struct_({field("d", boolean())}))})),
      field("list_struct", list(item(struct_({field("x", float64()), field("y", list(item(utf8())))})))),
      field("dict", dictionary(int16(), utf8())), field("dict_i32_int", dictionary(int32(), int64())),
  };
}

std::shared_ptr<arrow::RecordBatch> RandomBatch(const std::shared_ptr<arrow::Schema>& schema, int64_t n, double null_p,
                                                uint64_t seed) {
  std::mt19937_64 rng(seed);
  arrow::ArrayVector columns;
  for (const auto& f : schema->fields()) columns.push_back(RandomArray(f->type(), n, f->nullable() ? null_p : 0, rng));
  return arrow::RecordBatch::Make(schema, n, columns);
}

// Dictionaries may come back with other dictionaries: compare their values.
std::shared_ptr<arrow::Array> Decoded(const std::shared_ptr<arrow::Array>& a) {
  if (a->type_id() != arrow::Type::DICTIONARY) return a;
  auto value_type = static_cast<const arrow::DictionaryType&>(*a->type()).value_type();
  return arrow::compute::Cast(*a, value_type).ValueOrDie();
}

void ExpectRoundTrip(const std::shared_ptr<arrow::Table>& want, const std::string& path) {
  auto reader = FileReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_EQ((*reader)->num_rows(), static_cast<uint64_t>(want->num_rows()));
  auto got = (*reader)->ReadAll();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ((*got)->num_columns(), want->num_columns());
  ASSERT_EQ((*got)->num_rows(), want->num_rows());
  for (int c = 0; c < want->num_columns(); ++c) {
    SCOPED_TRACE(want->field(c)->name());
    if (want->num_rows() == 0) continue;
    auto a = Decoded(arrow::Concatenate((*got)->column(c)->chunks()).ValueOrDie());
    auto b = Decoded(arrow::Concatenate(want->column(c)->chunks()).ValueOrDie());
    EXPECT_TRUE(a->Equals(*b, arrow::EqualOptions().nans_equal(true)))
        << "got " << a->ToString().substr(0, 2000) << "\nwant " << b->ToString().substr(0, 2000);
  }
}

Status WriteBatches(const std::string& path, const std::shared_ptr<arrow::Schema>& schema,
                    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches, FileWriterOptions options) {
  LANCE_ASSIGN_OR_RAISE(auto writer, FileWriter::Open(path, *schema, options));
  for (const auto& b : batches) LANCE_RETURN_NOT_OK(writer->Write(*b));
  return writer->Finish().status();
}

FileWriterOptions V20() {
  FileWriterOptions o;
  o.version = "2.0";
  return o;
}

TEST(FileWriterV20Test, EveryTypeWithNullsRoundTrips) {
  auto schema = arrow::schema(AllTypes());
  for (uint64_t seed : {1, 2, 3}) {
    SCOPED_TRACE(seed);
    TempDir dir;
    auto batch = RandomBatch(schema, 300, seed == 3 ? 0.0 : 0.25, seed);
    ASSERT_TRUE(WriteBatches(dir.File("a.lance"), schema, {batch}, V20()).ok());
    ExpectRoundTrip(arrow::Table::FromRecordBatches({batch}).ValueOrDie(), dir.File("a.lance"));
  }
}

TEST(FileWriterV20Test, ManyBatchesSmallCacheAndPages) {
  auto schema = arrow::schema(AllTypes());
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (int i = 0; i < 9; ++i) batches.push_back(RandomBatch(schema, 1 + 37 * i, 0.3, 100 + i));
  // Batches sliced out of a larger one, too.
  auto big = RandomBatch(schema, 500, 0.2, 7);
  batches.push_back(big->Slice(13, 200));
  batches.push_back(big->Slice(300, 150));
  for (auto [cache, page] : std::vector<std::pair<uint64_t, uint64_t>>{{1, 64}, {4096 * 35, 1000}, {1 << 30, 1 << 30}}) {
    SCOPED_TRACE(std::to_string(cache) + " " + std::to_string(page));
    TempDir dir;
    auto options = V20();
    options.data_cache_bytes = cache;
    options.max_page_bytes = page;
    auto st = WriteBatches(dir.File("m.lance"), schema, batches, options);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ExpectRoundTrip(arrow::Table::FromRecordBatches(batches).ValueOrDie(), dir.File("m.lance"));
  }
}

TEST(FileWriterV20Test, TinyPagesSplitOneBatch) {
  auto schema = arrow::schema({arrow::field("x", arrow::int64()), arrow::field("s", arrow::large_utf8())});
  auto batch = RandomBatch(schema, 10000, 0.1, 5);
  TempDir dir;
  auto options = V20();
  options.max_page_bytes = 4096;
  ASSERT_TRUE(WriteBatches(dir.File("p.lance"), schema, {batch}, options).ok());
  auto reader = FileReader::Open(dir.File("p.lance")).ValueOrDie();
  EXPECT_GE(reader->layout().columns.at(0).pages.size(), 20u);
  uint64_t rows = 0;
  for (const auto& p : reader->layout().columns[0].pages) rows += p.length;
  EXPECT_EQ(rows, 10000u);
  ExpectRoundTrip(arrow::Table::FromRecordBatches({batch}).ValueOrDie(), dir.File("p.lance"));
}

TEST(FileWriterV20Test, ZeroRowsAndEmptyBatches) {
  auto schema = arrow::schema(AllTypes());
  TempDir dir;
  auto empty = RandomBatch(schema, 0, 0.2, 1);
  ASSERT_TRUE(WriteBatches(dir.File("e.lance"), schema, {}, V20()).ok());
  ExpectRoundTrip(arrow::Table::MakeEmpty(schema).ValueOrDie(), dir.File("e.lance"));
  auto some = RandomBatch(schema, 20, 0.2, 2);
  ASSERT_TRUE(WriteBatches(dir.File("f.lance"), schema, {empty, some, empty}, V20()).ok());
  ExpectRoundTrip(arrow::Table::FromRecordBatches({some}).ValueOrDie(), dir.File("f.lance"));
}

TEST(FileWriterV20Test, LayoutAndSchemaMetadata) {
  auto schema = arrow::schema({arrow::field("l", arrow::list(arrow::field("item", arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b", arrow::utf8())})))),
                               arrow::field("n", arrow::int32(), /*nullable=*/false)},
                              arrow::key_value_metadata({"k"}, {"v"}));
  auto batch = RandomBatch(schema, 50, 0.2, 9);
  TempDir dir;
  auto writer = FileWriter::Open(dir.File("l.lance"), *schema, V20()).ValueOrDie();
  EXPECT_EQ(writer->version_pair(), (std::pair<uint32_t, uint32_t>{0, 3}));
  ASSERT_TRUE(writer->Write(*batch).ok());
  ASSERT_TRUE(writer->AddSchemaMetadata("added", "later").ok());
  EXPECT_EQ(writer->Finish().ValueOrDie(), 50u);
  auto reader = FileReader::Open(dir.File("l.lance")).ValueOrDie();
  const auto& layout = reader->layout();
  EXPECT_EQ(layout.major_version, 0);
  EXPECT_EQ(layout.minor_version, 3);
  // list offsets, struct header, a, b, n
  ASSERT_EQ(layout.columns.size(), 5u);
  EXPECT_EQ(layout.columns[1].pages.size(), 1u);
  EXPECT_TRUE(layout.columns[1].pages[0].buffers.empty());
  EXPECT_EQ(layout.schema.metadata.at("k"), "v");
  EXPECT_EQ(layout.schema.metadata.at("added"), "later");
  EXPECT_FALSE(layout.schema.fields[1].nullable);
  for (const auto& c : layout.columns) {
    for (const auto& p : c.pages)
      for (const auto& b : p.buffers) EXPECT_EQ(b.position % 64, 0u);
  }
}

TEST(FileWriterV20Test, BlobsAndPackedStructs) {
  auto blob_meta = arrow::key_value_metadata({"lance-encoding:blob"}, {"true"});
  auto packed_meta = arrow::key_value_metadata({"lance-encoding:packed"}, {"true"});
  auto schema = arrow::schema({
      arrow::field("blob", arrow::large_binary(), true, blob_meta),
      arrow::field("packed", arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b", arrow::float64()),
                                             arrow::field("v", arrow::fixed_size_list(arrow::int16(), 3))}),
                   true, packed_meta),
      arrow::field("id", arrow::int32()),
  });
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (int i = 0; i < 4; ++i) {
    auto b = RandomBatch(schema, 50 + 10 * i, 0.25, 40 + i);
    // Packed struct children cannot hold nulls.
    std::mt19937_64 rng(i);
    auto packed = RandomArray(schema->field(1)->type(), b->num_rows(), 0, rng);
    batches.push_back(b->SetColumn(1, schema->field(1), packed).ValueOrDie());
  }
  for (uint64_t cache : {uint64_t{1}, uint64_t{1} << 30}) {
    TempDir dir;
    auto options = V20();
    options.data_cache_bytes = cache;
    auto st = WriteBatches(dir.File("b.lance"), schema, batches, options);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ExpectRoundTrip(arrow::Table::FromRecordBatches(batches).ValueOrDie(), dir.File("b.lance"));
    auto reader = FileReader::Open(dir.File("b.lance")).ValueOrDie();
    EXPECT_EQ(reader->layout().columns.size(), 3u);
    EXPECT_EQ(reader->layout().columns[0].encoding_type_url, "/lance.encodings.ColumnEncoding");
  }
  // A blob must be large_binary.
  auto bad = arrow::schema({arrow::field("blob", arrow::binary(), true, blob_meta)});
  TempDir dir;
  EXPECT_FALSE(WriteBatches(dir.File("x.lance"), bad, {RandomBatch(bad, 5, 0, 1)}, V20()).ok());
}

TEST(FileWriterV20Test, CompressionFromFieldMetadata) {
  auto meta = [](std::string scheme) {
    return arrow::key_value_metadata({"lance-encoding:compression", "lance-encoding:compression-level"},
                                     {scheme, "3"});
  };
  auto schema = arrow::schema({
      arrow::field("zstd", arrow::utf8(), true, meta("zstd")),
      arrow::field("lz4", arrow::large_binary(), true, meta("lz4")),
      arrow::field("none", arrow::binary(), true, meta("none")),
      arrow::field("fsst", arrow::utf8(), true, meta("fsst")),
      arrow::field("unknown", arrow::utf8(), true, meta("brotli9")),
  });
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (int i = 0; i < 3; ++i) batches.push_back(RandomBatch(schema, 40 + 200 * i, 0.2, 70 + i));
  TempDir dir;
  auto st = WriteBatches(dir.File("c.lance"), schema, batches, V20());
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectRoundTrip(arrow::Table::FromRecordBatches(batches).ValueOrDie(), dir.File("c.lance"));
}

TEST(FileWriterTest, Errors) {
  TempDir dir;
  auto schema = arrow::schema({arrow::field("x", arrow::int32(), false), arrow::field("s", arrow::utf8())});
  auto options = V20();
  options.version = "3.7";
  auto bad_version = FileWriter::Open(dir.File("v.lance"), *schema, options);
  ASSERT_FALSE(bad_version.ok());
  EXPECT_NE(bad_version.status().message().find("3.7"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.File("v.lance")));
  options.version = "0.1";
  EXPECT_FALSE(FileWriter::Open(dir.File("v.lance"), *schema, options).ok());
  EXPECT_FALSE(fs::exists(dir.File("v.lance")));
  // A type 2.0 cannot store: refused at Open, no file left.
  auto map_schema = arrow::schema({arrow::field("m", arrow::map(arrow::utf8(), arrow::int32()))});
  auto map_open = FileWriter::Open(dir.File("m.lance"), *map_schema, V20());
  EXPECT_FALSE(map_open.ok());
  EXPECT_FALSE(fs::exists(dir.File("m.lance")));

  auto writer = FileWriter::Open(dir.File("e.lance"), *schema, V20()).ValueOrDie();
  auto wrong_type = RandomBatch(arrow::schema({arrow::field("x", arrow::int64()), arrow::field("s", arrow::utf8())}), 3, 0, 1);
  auto st = writer->Write(*wrong_type);
  EXPECT_TRUE(st.IsTypeError()) << st.ToString();
  EXPECT_NE(st.message().find("'x'"), std::string::npos) << st.ToString();
  auto missing = RandomBatch(arrow::schema({arrow::field("x", arrow::int32())}), 3, 0, 1);
  EXPECT_FALSE(writer->Write(*missing).ok());
  auto renamed = RandomBatch(arrow::schema({arrow::field("x", arrow::int32()), arrow::field("t", arrow::utf8())}), 3, 0, 1);
  EXPECT_FALSE(writer->Write(*renamed).ok());
  auto nulls = RandomBatch(arrow::schema({arrow::field("x", arrow::int32()), arrow::field("s", arrow::utf8())}), 64, 0.5, 1);
  st = writer->Write(*nulls);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("null"), std::string::npos) << st.ToString();
  auto good = RandomBatch(schema, 10, 0.1, 3);
  ASSERT_TRUE(writer->Write(*good).ok());
  EXPECT_EQ(writer->Finish().ValueOrDie(), 10u);
  EXPECT_FALSE(writer->Write(*good).ok());
  EXPECT_FALSE(writer->Finish().ok());

  // Null structs cannot be stored in 2.0.
  auto st_schema = arrow::schema({arrow::field("s", arrow::struct_({arrow::field("a", arrow::int32())}))});
  auto child = RandomArray(arrow::int32(), 4, 0, *std::make_unique<std::mt19937_64>(1));
  auto validity = arrow::Buffer::FromString(std::string(1, '\x05'));
  auto data = arrow::ArrayData::Make(st_schema->field(0)->type(), 4, {validity});
  data->child_data = {child->data()};
  auto batch = arrow::RecordBatch::Make(st_schema, 4, {arrow::MakeArray(data)});
  auto w2 = FileWriter::Open(dir.File("s.lance"), *st_schema, V20()).ValueOrDie();
  st = w2->Write(*batch);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'s'"), std::string::npos) << st.ToString();
}

// An output that fails once `limit` bytes have been written (a full disk),
// or when closed.
class FailingStream : public arrow::io::OutputStream {
 public:
  FailingStream(int64_t limit, bool fail_close) : limit_(limit), fail_close_(fail_close) {}
  Status Write(const void*, int64_t n) override {
    if (written_ + n > limit_) return Status::IOError("disk full");
    written_ += n;
    return Status::OK();
  }
  Status Close() override {
    closed_ = true;
    return fail_close_ ? Status::IOError("close failed") : Status::OK();
  }
  arrow::Result<int64_t> Tell() const override { return written_; }
  bool closed() const override { return closed_; }

 private:
  int64_t limit_;
  bool fail_close_;
  int64_t written_ = 0;
  bool closed_ = false;
};

TEST(FileWriterTest, OutputFailuresAreReported) {
  auto schema = arrow::schema({arrow::field("x", arrow::int64()), arrow::field("s", arrow::utf8())});
  auto lance_schema = Schema::FromArrow(*schema).ValueOrDie();
  auto batch = RandomBatch(schema, 1000, 0.1, 4);
  auto options = V20();
  options.data_cache_bytes = 1;  // every Write emits pages
  for (int64_t limit : {0, 100, 5000, 20000}) {
    SCOPED_TRACE(limit);
    auto writer = FileWriter::Open(std::make_shared<FailingStream>(limit, false), "full", lance_schema, options)
                      .ValueOrDie();
    Status st = writer->Write(*batch);
    if (st.ok()) st = writer->Write(*batch);
    if (st.ok()) st = writer->Finish().status();
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("full"), std::string::npos) << st.ToString();
    // After a failure the writer refuses to go on.
    EXPECT_FALSE(writer->Write(*batch).ok());
    EXPECT_FALSE(writer->Finish().ok());
  }
  auto writer = FileWriter::Open(std::make_shared<FailingStream>(1 << 30, true), "close", lance_schema, options)
                    .ValueOrDie();
  ASSERT_TRUE(writer->Write(*batch).ok());
  auto finished = writer->Finish();
  ASSERT_FALSE(finished.ok());
  EXPECT_NE(finished.status().message().find("close failed"), std::string::npos);
}

TEST(FileWriterTest, WritesToAnOutputStream) {
  auto schema = arrow::schema({arrow::field("x", arrow::int32())});
  auto lance_schema = Schema::FromArrow(*schema).ValueOrDie();
  auto sink = arrow::io::BufferOutputStream::Create().ValueOrDie();
  auto writer = FileWriter::Open(sink, "mem", lance_schema, V20()).ValueOrDie();
  auto batch = RandomBatch(schema, 100, 0.1, 4);
  ASSERT_TRUE(writer->Write(*batch).ok());
  ASSERT_TRUE(writer->Finish().ok());
  auto bytes = sink->Finish().ValueOrDie();
  auto reader = FileReader::Open(std::make_shared<arrow::io::BufferReader>(bytes), "mem").ValueOrDie();
  auto got = reader->ReadAll().ValueOrDie();
  EXPECT_TRUE(got->column(0)->chunk(0)->Equals(*batch->column(0)));
}

// Written from the caller's thread, batches are encoded in the background
// while later ones arrive; written from a thread of the CPU pool (which must
// never wait on the pool) they are encoded one call at a time. The bytes
// must be the same either way, for every version.
Result<std::shared_ptr<arrow::Buffer>> WriteToMemory(const Schema& schema,
                                                     const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                                                     const FileWriterOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
  LANCE_ASSIGN_OR_RAISE(auto writer, FileWriter::Open(sink, "mem", schema, options));
  for (const auto& b : batches) LANCE_RETURN_NOT_OK(writer->Write(*b));
  LANCE_RETURN_NOT_OK(writer->Finish().status());
  return sink->Finish();
}

TEST(FileWriterTest, PipelinedAndSynchronousWritesAreTheSameBytes) {
  auto* pool = arrow::internal::GetCpuThreadPool();
  // With one thread every write is synchronous: give the pool a second one.
  const int capacity = pool->GetCapacity();
  if (capacity <= 1) {
    ASSERT_TRUE(pool->SetCapacity(2).ok());
  }
  struct Restore {
    arrow::internal::ThreadPool* pool;
    int capacity;
    ~Restore() { (void)pool->SetCapacity(capacity); }
  } restore{pool, capacity};
  auto fields = AllTypes();
  std::vector<std::shared_ptr<arrow::Field>> no_dict;  // 2.1+ dictionary arrays are covered elsewhere
  for (const auto& f : fields) {
    if (f->type()->id() != arrow::Type::DICTIONARY) no_dict.push_back(f);
  }
  for (const char* version : {"2.0", "2.1", "2.2"}) {
    SCOPED_TRACE(version);
    auto schema = arrow::schema(std::string(version) == "2.0" ? fields : no_dict);
    auto lance_schema = Schema::FromArrow(*schema).ValueOrDie();
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
    auto big = RandomBatch(schema, 3000, 0.2, 11);
    for (int64_t at = 0; at < big->num_rows(); at += 97) batches.push_back(big->Slice(at, 97));
    FileWriterOptions options;
    options.version = version;
    for (uint64_t cache : {uint64_t{1}, uint64_t{64 * 1024}, uint64_t{1} << 30}) {
      SCOPED_TRACE(cache);
      options.data_cache_bytes = cache;
      auto pipelined = WriteToMemory(lance_schema, batches, options);
      ASSERT_TRUE(pipelined.ok()) << pipelined.status().ToString();
      auto synchronous = pool->Submit([&] { return WriteToMemory(lance_schema, batches, options); });
      ASSERT_TRUE(synchronous.ok());
      auto sync_bytes = synchronous->result();
      ASSERT_TRUE(sync_bytes.ok()) << sync_bytes.status().ToString();
      EXPECT_TRUE((*pipelined)->Equals(**sync_bytes)) << (*pipelined)->size() << " vs " << (*sync_bytes)->size();
    }
  }
}

}  // namespace
}  // namespace lance
