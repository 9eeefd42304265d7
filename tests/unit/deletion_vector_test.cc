#include "lance/table/deletion_vector.h"

#include <gtest/gtest.h>
#include <roaring/roaring.h>

#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/api.h>
#include <arrow/util/compression.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace lance::table {
namespace {

const std::string kPath = "_deletions/3-7-42.arrow";

std::vector<uint32_t> Sorted(std::vector<uint32_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// ---------------------------------------------------------------------------
// Building .arrow files the way pyarrow / the reference writer do.

std::shared_ptr<arrow::Array> UInt32Column(const std::vector<uint32_t>& values) {
  arrow::UInt32Builder b;
  EXPECT_TRUE(b.AppendValues(values).ok());
  return b.Finish().ValueOrDie();
}

std::shared_ptr<arrow::Schema> RowIdSchema() {
  return arrow::schema({arrow::field("row_id", arrow::uint32(), /*nullable=*/false)});
}

std::string WriteIpcFile(const std::shared_ptr<arrow::Schema>& schema,
                         const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                         bool zstd = true) {
  auto options = arrow::ipc::IpcWriteOptions::Defaults();
  if (zstd) options.codec = arrow::util::Codec::Create(arrow::Compression::ZSTD).ValueOrDie();
  auto sink = arrow::io::BufferOutputStream::Create().ValueOrDie();
  auto writer = arrow::ipc::MakeFileWriter(sink, schema, options).ValueOrDie();
  for (const auto& batch : batches) EXPECT_TRUE(writer->WriteRecordBatch(*batch).ok());
  EXPECT_TRUE(writer->Close().ok());
  return sink->Finish().ValueOrDie()->ToString();
}

std::string RowIdFile(const std::vector<uint32_t>& values, bool zstd = true) {
  auto column = UInt32Column(values);
  auto batch = arrow::RecordBatch::Make(RowIdSchema(), column->length(), {column});
  return WriteIpcFile(RowIdSchema(), {batch}, zstd);
}

void ExpectArrowError(const std::string& bytes, const std::string& fragment) {
  auto parsed = DeletionVector::FromArrowIpc(bytes, kPath);
  ASSERT_FALSE(parsed.ok()) << "expected an error mentioning '" << fragment << "'";
  EXPECT_TRUE(parsed.status().IsInvalid()) << parsed.status().ToString();
  EXPECT_NE(parsed.status().message().find(kPath), std::string::npos)
      << parsed.status().ToString();
  EXPECT_NE(parsed.status().message().find(fragment), std::string::npos)
      << parsed.status().ToString();
}

void ExpectRoaringError(const std::string& bytes) {
  const std::string path = "_deletions/3-7-42.bin";
  auto parsed = DeletionVector::FromRoaringPortable(bytes, path);
  ASSERT_FALSE(parsed.ok());
  EXPECT_TRUE(parsed.status().IsInvalid()) << parsed.status().ToString();
  EXPECT_NE(parsed.status().message().find(path), std::string::npos)
      << parsed.status().ToString();
}

// ---------------------------------------------------------------------------
// In-memory behaviour.

TEST(DeletionVectorTest, BasicOperations) {
  DeletionVector dv;
  EXPECT_TRUE(dv.Empty());
  uint32_t max = 0;
  EXPECT_FALSE(dv.Max(&max));
  dv.Add(9);
  dv.Add(2);
  dv.Add(9);
  dv.Add(4000000000u);
  EXPECT_EQ(dv.Cardinality(), 3u);
  EXPECT_TRUE(dv.Contains(2));
  EXPECT_FALSE(dv.Contains(3));
  ASSERT_TRUE(dv.Max(&max));
  EXPECT_EQ(max, 4000000000u);
  EXPECT_EQ(dv.ToVector(), (std::vector<uint32_t>{2, 9, 4000000000u}));

  auto other = DeletionVector::FromOffsets({1, 2, 3});
  dv.UnionWith(other);
  EXPECT_EQ(dv.ToVector(), (std::vector<uint32_t>{1, 2, 3, 9, 4000000000u}));
  EXPECT_FALSE(dv == other);
  EXPECT_TRUE(DeletionVector::FromOffsets({3, 1, 2}) == other);
}

TEST(DeletionVectorTest, CopyAndMove) {
  auto a = DeletionVector::FromOffsets({5, 6});
  DeletionVector b = a;  // deep copy
  b.Add(7);
  EXPECT_EQ(a.Cardinality(), 2u);
  EXPECT_EQ(b.Cardinality(), 3u);
  DeletionVector c = std::move(b);
  EXPECT_EQ(c.Cardinality(), 3u);
  EXPECT_EQ(b.Cardinality(), 0u);  // moved-from is usable and empty
  EXPECT_FALSE(b.Contains(5));
  b.Add(1);
  EXPECT_EQ(b.ToVector(), (std::vector<uint32_t>{1}));
  a = c;
  EXPECT_TRUE(a == c);
  a = a;
  EXPECT_EQ(a.Cardinality(), 3u);
}

// ---------------------------------------------------------------------------
// .arrow files.

TEST(DeletionVectorTest, ArrowRoundTrip) {
  const std::vector<uint32_t> offsets = {17, 3, 0, 4294967295u, 65536, 3};
  auto dv = DeletionVector::FromOffsets(offsets);
  auto bytes = dv.ToArrowIpc();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  ASSERT_GE(bytes->size(), 12u);
  EXPECT_EQ(bytes->substr(0, 6), "ARROW1");
  EXPECT_EQ(bytes->substr(bytes->size() - 6), "ARROW1");
  auto parsed = DeletionVector::FromArrowIpc(*bytes, kPath);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(*parsed == dv);
  EXPECT_EQ(parsed->ToVector(), Sorted(offsets));
}

TEST(DeletionVectorTest, ArrowFileHasTheReferenceStructure) {
  std::vector<uint32_t> offsets(100000);
  for (uint32_t i = 0; i < offsets.size(); ++i) offsets[i] = i * 3;
  auto bytes = DeletionVector::FromOffsets(offsets).ToArrowIpc();
  ASSERT_TRUE(bytes.ok());
  // The body is compressed: clearly smaller than the same file written plainly.
  const std::string plain = RowIdFile(offsets, /*zstd=*/false);
  EXPECT_GT(plain.size(), 400000u);
  EXPECT_LT(bytes->size(), plain.size() * 4 / 5);

  auto reader = arrow::ipc::RecordBatchFileReader::Open(
                    std::make_shared<arrow::io::BufferReader>(arrow::Buffer::FromString(*bytes)))
                    .ValueOrDie();
  EXPECT_TRUE(reader->schema()->Equals(*RowIdSchema()));
  ASSERT_EQ(reader->num_record_batches(), 1);
  auto batch = reader->ReadRecordBatch(0).ValueOrDie();
  ASSERT_EQ(batch->num_rows(), 100000);
  auto column = std::static_pointer_cast<arrow::UInt32Array>(batch->column(0));
  EXPECT_EQ(column->Value(99999), 99999u * 3);
}

TEST(DeletionVectorTest, EmptyVectorArrowRoundTrip) {
  auto bytes = DeletionVector().ToArrowIpc();
  ASSERT_TRUE(bytes.ok());
  auto parsed = DeletionVector::FromArrowIpc(*bytes, kPath);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(parsed->Empty());
}

TEST(DeletionVectorTest, ParsesPyarrowStyleFiles) {
  const std::vector<uint32_t> offsets = {7, 3, 9, 1000000};  // unsorted, as allowed
  for (bool zstd : {true, false}) {
    auto parsed = DeletionVector::FromArrowIpc(RowIdFile(offsets, zstd), kPath);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->ToVector(), Sorted(offsets)) << "zstd " << zstd;
  }
}

TEST(DeletionVectorTest, WrongTypeIsAnError) {
  arrow::Int64Builder b;
  ASSERT_TRUE(b.AppendValues({1, 2}).ok());
  auto column = b.Finish().ValueOrDie();
  auto schema = arrow::schema({arrow::field("row_id", arrow::int64(), false)});
  auto batch = arrow::RecordBatch::Make(schema, 2, {column});
  ExpectArrowError(WriteIpcFile(schema, {batch}), "int64");
}

TEST(DeletionVectorTest, WrongNameIsAnError) {
  auto column = UInt32Column({1, 2});
  auto schema = arrow::schema({arrow::field("rowid", arrow::uint32(), false)});
  auto batch = arrow::RecordBatch::Make(schema, 2, {column});
  ExpectArrowError(WriteIpcFile(schema, {batch}), "rowid");
}

TEST(DeletionVectorTest, TwoColumnsIsAnError) {
  auto column = UInt32Column({1, 2});
  auto schema = arrow::schema({arrow::field("row_id", arrow::uint32(), false),
                               arrow::field("extra", arrow::uint32(), false)});
  auto batch = arrow::RecordBatch::Make(schema, 2, {column, column});
  ExpectArrowError(WriteIpcFile(schema, {batch}), "extra");
}

TEST(DeletionVectorTest, NullsAreAnError) {
  arrow::UInt32Builder b;
  ASSERT_TRUE(b.Append(1).ok());
  ASSERT_TRUE(b.AppendNull().ok());
  auto column = b.Finish().ValueOrDie();

  // A nullable field does not match the reference schema.
  auto nullable = arrow::schema({arrow::field("row_id", arrow::uint32(), true)});
  ExpectArrowError(WriteIpcFile(nullable, {arrow::RecordBatch::Make(nullable, 2, {column})}),
                   "non-nullable");
  // A field declared non-nullable whose data still has nulls.
  auto batch = arrow::RecordBatch::Make(RowIdSchema(), 2, {column});
  ExpectArrowError(WriteIpcFile(RowIdSchema(), {batch}), "null");
}

TEST(DeletionVectorTest, BatchCountOtherThanOneIsAnError) {
  auto column = UInt32Column({1, 2});
  auto batch = arrow::RecordBatch::Make(RowIdSchema(), 2, {column});
  ExpectArrowError(WriteIpcFile(RowIdSchema(), {batch, batch}), "found 2");
  ExpectArrowError(WriteIpcFile(RowIdSchema(), {}), "found 0");
}

TEST(DeletionVectorTest, GarbageAndTruncatedArrowFilesAreErrors) {
  ExpectArrowError("", "");
  ExpectArrowError("hello, this is not an arrow file at all", "");
  const std::string good = RowIdFile({1, 2, 3, 400});
  for (size_t cut : {size_t{1}, size_t{6}, size_t{10}, good.size() / 2, good.size() - 8}) {
    SCOPED_TRACE(cut);
    ExpectArrowError(good.substr(0, good.size() - cut), "");
  }
  // Right magic at both ends, garbage in between.
  std::string corrupt = good;
  for (size_t i = 8; i + 10 < corrupt.size(); ++i) corrupt[i] = static_cast<char>(0xA5);
  ExpectArrowError(corrupt, "");
}

TEST(DeletionVectorTest, ArrowFileFromMisalignedBuffer) {
  const std::string good = RowIdFile({5, 1, 9}, /*zstd=*/false);
  std::string shifted = "x" + good;  // view starts one byte past an aligned address
  auto parsed = DeletionVector::FromArrowIpc(std::string_view(shifted).substr(1), kPath);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->ToVector(), (std::vector<uint32_t>{1, 5, 9}));
}

// ---------------------------------------------------------------------------
// .bin files (portable Roaring).

std::string CRoaringBytes(roaring_bitmap_t* r) {
  std::string out(roaring_bitmap_portable_size_in_bytes(r), '\0');
  out.resize(roaring_bitmap_portable_serialize(r, out.data()));
  return out;
}

TEST(DeletionVectorTest, RoaringRoundTrip) {
  std::vector<uint32_t> offsets = {0, 1, 2, 70000, 4294967295u};
  for (uint32_t i = 0; i < 10000; ++i) offsets.push_back(200000 + i * 2);  // a bitset container
  auto dv = DeletionVector::FromOffsets(offsets);
  auto parsed = DeletionVector::FromRoaringPortable(dv.ToRoaringPortable(), "x.bin");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_TRUE(*parsed == dv);
  EXPECT_EQ(parsed->ToVector(), Sorted(offsets));

  auto empty = DeletionVector::FromRoaringPortable(DeletionVector().ToRoaringPortable(), "e.bin");
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->Empty());
}

TEST(DeletionVectorTest, RoaringBytesMatchCRoaring) {
  const std::vector<uint32_t> offsets = {3, 1, 100000, 7};
  roaring_bitmap_t* r = roaring_bitmap_of_ptr(offsets.size(), offsets.data());
  EXPECT_EQ(DeletionVector::FromOffsets(offsets).ToRoaringPortable(), CRoaringBytes(r));
  roaring_bitmap_free(r);
}

TEST(DeletionVectorTest, ParsesCRoaringBytesOfEveryContainerKind) {
  roaring_bitmap_t* r = roaring_bitmap_create();
  for (uint32_t v : {5u, 9u, 65535u}) roaring_bitmap_add(r, v);              // array
  for (uint32_t v = 0; v < 6000; ++v) roaring_bitmap_add(r, 65536 + v * 3);  // bitset
  for (uint32_t v = 0; v < 30000; ++v) roaring_bitmap_add(r, 5u * 65536 + v);  // run
  for (uint32_t v = 0; v < 100; ++v) roaring_bitmap_add(r, 9u * 65536 + 2 * v);
  for (uint32_t k = 20; k < 25; ++k) roaring_bitmap_add(r, k * 65536);  // >= 4 containers
  ASSERT_TRUE(roaring_bitmap_run_optimize(r));
  const std::string bytes = CRoaringBytes(r);
  auto parsed = DeletionVector::FromRoaringPortable(bytes, "runs.bin");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->Cardinality(), roaring_bitmap_get_cardinality(r));
  EXPECT_TRUE(parsed->Contains(5u * 65536 + 29999));
  EXPECT_FALSE(parsed->Contains(5u * 65536 + 30000));
  EXPECT_TRUE(parsed->Contains(65536 + 3 * 5999));

  // Written back without run containers, and still the same set.
  auto again = DeletionVector::FromRoaringPortable(parsed->ToRoaringPortable(), "again.bin");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(*again == *parsed);

  // A run bitmap with fewer than 4 containers has no offset header.
  roaring_bitmap_t* small = roaring_bitmap_create();
  roaring_bitmap_add_range(small, 10, 5000);
  ASSERT_TRUE(roaring_bitmap_run_optimize(small));
  auto parsed_small = DeletionVector::FromRoaringPortable(CRoaringBytes(small), "small.bin");
  ASSERT_TRUE(parsed_small.ok()) << parsed_small.status().ToString();
  EXPECT_EQ(parsed_small->Cardinality(), 4990u);
  roaring_bitmap_free(small);
  roaring_bitmap_free(r);
}

TEST(DeletionVectorTest, TruncatedAndGarbageRoaringAreErrors) {
  std::vector<uint32_t> offsets;
  for (uint32_t i = 0; i < 5000; ++i) offsets.push_back(i * 7);
  const std::string good = DeletionVector::FromOffsets(offsets).ToRoaringPortable();
  for (size_t keep : {size_t{0}, size_t{2}, size_t{4}, size_t{7}, size_t{16}, good.size() / 2,
                      good.size() - 1}) {
    SCOPED_TRACE(keep);
    ExpectRoaringError(good.substr(0, keep));
  }
  ExpectRoaringError("not a roaring bitmap");
  ExpectRoaringError(std::string("\x3a\x30\x00\x00\xff\xff\xff\xff", 8));  // absurd count
}

TEST(DeletionVectorTest, InconsistentRoaringContainersAreErrors) {
  // One array container with values {1, 2}: cookie, count, key/card, offset, values.
  const std::string header("\x3a\x30\x00\x00\x01\x00\x00\x00\x00\x00\x01\x00\x10\x00\x00\x00",
                           16);
  auto ok = DeletionVector::FromRoaringPortable(header + std::string("\x01\x00\x02\x00", 4), "a");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->ToVector(), (std::vector<uint32_t>{1, 2}));
  ExpectRoaringError(header + std::string("\x02\x00\x01\x00", 4));  // unsorted array

  // Run containers: cookie with one container, run flags, key/card, no offsets (< 4).
  const std::string run_header("\x3b\x30\x00\x00\x01\x00\x00\x02\x00", 9);
  auto runs = DeletionVector::FromRoaringPortable(
      run_header + std::string("\x01\x00\x05\x00\x02\x00", 6), "r");  // run 5..7
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  EXPECT_EQ(runs->ToVector(), (std::vector<uint32_t>{5, 6, 7}));
  ExpectRoaringError(run_header + std::string("\x00\x00", 2));  // no runs at all
  ExpectRoaringError(run_header +
                     std::string("\x02\x00\x05\x00\x02\x00\x06\x00\x00\x00", 10));  // overlap
  ExpectRoaringError(run_header + std::string("\x01\x00\xff\xff\x01\x00", 6));  // past 65535

  // A bitset container whose header cardinality disagrees with its bits.
  roaring_bitmap_t* r = roaring_bitmap_create();
  for (uint32_t v = 0; v < 5000; ++v) roaring_bitmap_add(r, v * 2);
  std::string bytes = CRoaringBytes(r);
  roaring_bitmap_free(r);
  ASSERT_TRUE(DeletionVector::FromRoaringPortable(bytes, "b").ok());
  bytes[bytes.size() - 1] = static_cast<char>(0xFF);  // sets extra bits in the last word
  ExpectRoaringError(bytes);
}

}  // namespace
}  // namespace lance::table
