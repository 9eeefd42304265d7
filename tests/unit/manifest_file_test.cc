// The bytes of a manifest file: round trip of every field, the footer, and
// refusal (never a crash) of corrupt input.
#include "lance/table/manifest_file.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "lance/table.pb.h"

namespace lance::table {
namespace {

const std::string kPath = "/data/ds/_versions/7.manifest";

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

Field MakeField(std::string name, int32_t id, int32_t parent, std::string type) {
  Field f;
  f.name = std::move(name);
  f.id = id;
  f.parent_id = parent;
  f.logical_type = std::move(type);
  return f;
}

Manifest SampleManifest() {
  Manifest m;
  // Schema: id int64 (not null), s struct<a: string, l: list<item: struct<x: float>>>, v fsl.
  Field id = MakeField("id", 0, -1, "int64");
  id.nullable = false;
  id.unenforced_primary_key = true;
  id.metadata = {{"comment", "primary"}};
  Field s = MakeField("s", 1, -1, "struct");
  Field a = MakeField("a", 2, 1, "string");
  a.encoding = 3;
  a.dictionary_offset = 100;
  a.dictionary_length = 42;
  Field l = MakeField("l", 3, 1, "list.struct");
  Field item = MakeField("item", 4, 3, "struct");
  Field x = MakeField("x", 5, 4, "float");
  item.children = {x};
  l.children = {item};
  s.children = {a, l};
  Field v = MakeField("v", 6, -1, "fixed_size_list:lance.bfloat16:8");
  v.extension_name = "lance.custom";
  m.schema.fields = {id, s, v};
  m.schema.metadata = {{"owner", "tests"}, {"bin", std::string("\x00\x01\xff", 3)}};

  Fragment f0;
  f0.id = 0;
  DataFile d0;
  d0.path = "aaa.lance";
  d0.fields = {0, 1, 2, 3, 4, 5};
  d0.column_indices = {0, 1, 2, 3, -1, 4};
  d0.file_major_version = 2;
  d0.file_minor_version = 1;
  d0.file_size_bytes = 123456;
  DataFile d1;
  d1.path = "bbb.lance";
  d1.fields = {6, -2};
  d1.column_indices = {0, -1};
  d1.file_major_version = 2;
  d1.file_minor_version = 1;
  d1.base_id = 3;
  f0.files = {d0, d1};
  DeletionFile del;
  del.type = DeletionFile::Type::kBitmap;
  del.read_version = 5;
  del.id = 987654321012345ULL;
  del.num_deleted_rows = 17;
  del.base_id = 2;
  f0.deletion_file = del;
  f0.physical_rows = 1000;
  f0.row_ids.inline_bytes = std::string("\x0a\x06\x0a\x04\x00\x10\xe8\x07", 8);
  f0.last_updated_at_versions.external = ExternalFile{"_rowids/lu.bin", 16, 32};
  f0.created_at_versions.inline_bytes = std::string("created");

  Fragment f1;
  f1.id = 4;
  DataFile d2;
  d2.path = "ccc.lance";
  d2.fields = {0, 1, 2, 3, 4, 5, 6};
  d2.column_indices = {0, 1, 2, 3, -1, 4, 5};
  d2.file_major_version = 2;
  d2.file_minor_version = 1;
  d2.file_size_bytes = 77;
  f1.files = {d2};
  f1.physical_rows = 5;
  DeletionFile del2;
  del2.type = DeletionFile::Type::kArrowArray;
  del2.read_version = 6;
  del2.id = 1;
  f1.deletion_file = del2;  // num_deleted_rows unknown
  f1.row_ids.external = ExternalFile{"_rowids/4.bin", 0, 9};
  m.fragments = {f0, f1};

  m.version = 7;
  m.writer_version = WriterVersion{"lance-cpp", "0.1.0", std::string("beta.2"), std::string("abc")};
  m.timestamp_nanos = 1731670000123456789LL;
  m.tag = "a-tag";
  m.reader_feature_flags = 1 | 2;
  m.writer_feature_flags = 1 | 2 | 8;
  m.max_fragment_id = 4;
  m.transaction_file = "6-0b1c2d3e-aaaa-bbbb-cccc-123456789abc.txn";
  m.next_row_id = 1005;
  m.data_file_format = "lance";
  m.data_storage_version = "2.1";
  m.config = {{"lance.auto_cleanup.interval", "20"}, {"lance.auto_cleanup.older_than", "14days"}};
  m.table_metadata = {{"team", "storage"}};
  m.base_paths = {BasePath{2, std::string("other"), true, "/mnt/other"},
                  BasePath{3, std::nullopt, false, "/mnt/files"}};
  m.branch = "dev";
  return m;
}

std::vector<IndexMetadata> SampleIndices() {
  IndexMetadata a;
  for (size_t i = 0; i < a.uuid.size(); ++i) a.uuid[i] = static_cast<uint8_t>(0xA0 + i);
  a.name = "id_idx";
  a.fields = {0};
  a.dataset_version = 6;
  a.fragment_ids = std::vector<uint32_t>{0, 4, 70000};
  a.index_details_type_url = "type.googleapis.com/lance.table.BTreeIndexDetails";
  a.index_details_value = std::string("\x08\x01", 2);
  a.index_version = 0;
  a.created_at_ms = 1731670000123ULL;
  a.base_id = 2;
  a.covering_fields = {5, 6};
  a.files = {{"page_data.lance", 1144}, {"page_lookup.lance", 1259}};

  IndexMetadata b;
  for (size_t i = 0; i < b.uuid.size(); ++i) b.uuid[i] = static_cast<uint8_t>(i);
  b.name = "vec_idx";
  b.fields = {6};
  b.dataset_version = 3;
  b.fragment_ids = std::nullopt;  // unknown bitmap
  return {a, b};
}

const std::string kTxn = std::string("\x08\x06\x12\x04uuid\xa2\x06\x00", 11);

void ExpectFieldEq(const Field& got, const Field& want) {
  SCOPED_TRACE("field " + want.name);
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.parent_id, want.parent_id);
  EXPECT_EQ(got.logical_type, want.logical_type);
  EXPECT_EQ(got.nullable, want.nullable);
  EXPECT_EQ(got.metadata, want.metadata);
  EXPECT_EQ(got.extension_name, want.extension_name);
  EXPECT_EQ(got.encoding, want.encoding);
  EXPECT_EQ(got.dictionary_offset, want.dictionary_offset);
  EXPECT_EQ(got.dictionary_length, want.dictionary_length);
  EXPECT_EQ(got.unenforced_primary_key, want.unenforced_primary_key);
  ASSERT_EQ(got.children.size(), want.children.size());
  for (size_t i = 0; i < want.children.size(); ++i) ExpectFieldEq(got.children[i], want.children[i]);
}

void ExpectSequenceEq(const SequenceRef& got, const SequenceRef& want) {
  EXPECT_EQ(got.inline_bytes, want.inline_bytes);
  ASSERT_EQ(got.external.has_value(), want.external.has_value());
  if (want.external) {
    EXPECT_EQ(got.external->path, want.external->path);
    EXPECT_EQ(got.external->offset, want.external->offset);
    EXPECT_EQ(got.external->size, want.external->size);
  }
}

void ExpectFragmentEq(const Fragment& got, const Fragment& want) {
  SCOPED_TRACE("fragment " + std::to_string(want.id));
  EXPECT_EQ(got.id, want.id);
  ASSERT_EQ(got.files.size(), want.files.size());
  for (size_t i = 0; i < want.files.size(); ++i) {
    const DataFile& g = got.files[i];
    const DataFile& w = want.files[i];
    SCOPED_TRACE("file " + w.path);
    EXPECT_EQ(g.path, w.path);
    EXPECT_EQ(g.fields, w.fields);
    EXPECT_EQ(g.column_indices, w.column_indices);
    EXPECT_EQ(g.file_major_version, w.file_major_version);
    EXPECT_EQ(g.file_minor_version, w.file_minor_version);
    EXPECT_EQ(g.file_size_bytes, w.file_size_bytes);
    EXPECT_EQ(g.base_id, w.base_id);
  }
  ASSERT_EQ(got.deletion_file.has_value(), want.deletion_file.has_value());
  if (want.deletion_file) {
    EXPECT_EQ(got.deletion_file->type, want.deletion_file->type);
    EXPECT_EQ(got.deletion_file->read_version, want.deletion_file->read_version);
    EXPECT_EQ(got.deletion_file->id, want.deletion_file->id);
    EXPECT_EQ(got.deletion_file->num_deleted_rows, want.deletion_file->num_deleted_rows);
    EXPECT_EQ(got.deletion_file->base_id, want.deletion_file->base_id);
  }
  EXPECT_EQ(got.physical_rows, want.physical_rows);
  ExpectSequenceEq(got.row_ids, want.row_ids);
  ExpectSequenceEq(got.last_updated_at_versions, want.last_updated_at_versions);
  ExpectSequenceEq(got.created_at_versions, want.created_at_versions);
  ASSERT_EQ(got.overlays.size(), want.overlays.size());
  for (size_t i = 0; i < want.overlays.size(); ++i) {
    EXPECT_EQ(got.overlays[i].data_file.path, want.overlays[i].data_file.path);
    EXPECT_EQ(got.overlays[i].data_file.fields, want.overlays[i].data_file.fields);
    EXPECT_EQ(got.overlays[i].shared_offsets, want.overlays[i].shared_offsets);
    EXPECT_EQ(got.overlays[i].field_offsets, want.overlays[i].field_offsets);
    EXPECT_EQ(got.overlays[i].committed_version, want.overlays[i].committed_version);
  }
}

void ExpectIndexEq(const IndexMetadata& got, const IndexMetadata& want) {
  SCOPED_TRACE("index " + want.name);
  EXPECT_EQ(got.uuid, want.uuid);
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.fields, want.fields);
  EXPECT_EQ(got.dataset_version, want.dataset_version);
  EXPECT_EQ(got.fragment_ids, want.fragment_ids);
  EXPECT_EQ(got.index_details_type_url, want.index_details_type_url);
  EXPECT_EQ(got.index_details_value, want.index_details_value);
  EXPECT_EQ(got.index_version, want.index_version);
  EXPECT_EQ(got.created_at_ms, want.created_at_ms);
  EXPECT_EQ(got.base_id, want.base_id);
  EXPECT_EQ(got.covering_fields, want.covering_fields);
  ASSERT_EQ(got.files.size(), want.files.size());
  for (size_t i = 0; i < want.files.size(); ++i) {
    EXPECT_EQ(got.files[i].path, want.files[i].path);
    EXPECT_EQ(got.files[i].size_bytes, want.files[i].size_bytes);
  }
}

// Every field except the two section offsets, which the writer fills in.
void ExpectManifestEq(const Manifest& got, const Manifest& want) {
  ASSERT_EQ(got.schema.fields.size(), want.schema.fields.size());
  for (size_t i = 0; i < want.schema.fields.size(); ++i) {
    ExpectFieldEq(got.schema.fields[i], want.schema.fields[i]);
  }
  EXPECT_EQ(got.schema.metadata, want.schema.metadata);
  ASSERT_EQ(got.fragments.size(), want.fragments.size());
  for (size_t i = 0; i < want.fragments.size(); ++i) ExpectFragmentEq(got.fragments[i], want.fragments[i]);
  EXPECT_EQ(got.version, want.version);
  ASSERT_EQ(got.writer_version.has_value(), want.writer_version.has_value());
  if (want.writer_version) {
    EXPECT_EQ(got.writer_version->library, want.writer_version->library);
    EXPECT_EQ(got.writer_version->version, want.writer_version->version);
    EXPECT_EQ(got.writer_version->prerelease, want.writer_version->prerelease);
    EXPECT_EQ(got.writer_version->build_metadata, want.writer_version->build_metadata);
  }
  EXPECT_EQ(got.timestamp_nanos, want.timestamp_nanos);
  EXPECT_EQ(got.tag, want.tag);
  EXPECT_EQ(got.reader_feature_flags, want.reader_feature_flags);
  EXPECT_EQ(got.writer_feature_flags, want.writer_feature_flags);
  EXPECT_EQ(got.max_fragment_id, want.max_fragment_id);
  EXPECT_EQ(got.transaction_file, want.transaction_file);
  EXPECT_EQ(got.next_row_id, want.next_row_id);
  EXPECT_EQ(got.data_file_format, want.data_file_format);
  EXPECT_EQ(got.data_storage_version, want.data_storage_version);
  EXPECT_EQ(got.config, want.config);
  EXPECT_EQ(got.table_metadata, want.table_metadata);
  ASSERT_EQ(got.base_paths.size(), want.base_paths.size());
  for (size_t i = 0; i < want.base_paths.size(); ++i) {
    EXPECT_EQ(got.base_paths[i].id, want.base_paths[i].id);
    EXPECT_EQ(got.base_paths[i].name, want.base_paths[i].name);
    EXPECT_EQ(got.base_paths[i].is_dataset_root, want.base_paths[i].is_dataset_root);
    EXPECT_EQ(got.base_paths[i].path, want.base_paths[i].path);
  }
  EXPECT_EQ(got.branch, want.branch);
}

// ---------------------------------------------------------------------------
// Byte-level helpers for building and corrupting files.

uint32_t U32At(const std::string& b, size_t off) {
  uint32_t v;
  std::memcpy(&v, b.data() + off, 4);
  return v;
}
void PutU32(std::string* b, size_t off, uint32_t v) { std::memcpy(b->data() + off, &v, 4); }
int64_t ManifestPos(const std::string& b) {
  int64_t v;
  std::memcpy(&v, b.data() + b.size() - 16, 8);
  return v;
}
void PutPos(std::string* b, int64_t pos) { std::memcpy(b->data() + b->size() - 16, &pos, 8); }

// Rebuilds a file from `prefix` (the sections before the manifest) and a
// manifest message, with a correct footer.
std::string Assemble(const std::string& prefix, const std::string& manifest_msg) {
  std::string out = prefix;
  const int64_t pos = static_cast<int64_t>(out.size());
  uint32_t len = static_cast<uint32_t>(manifest_msg.size());
  out.append(reinterpret_cast<const char*>(&len), 4);
  out += manifest_msg;
  out.append(reinterpret_cast<const char*>(&pos), 8);
  const int16_t major = 0, minor = 2;
  out.append(reinterpret_cast<const char*>(&major), 2);
  out.append(reinterpret_cast<const char*>(&minor), 2);
  out += "LANC";
  return out;
}

struct Split {
  std::string prefix;
  pb::table::Manifest proto;
};

Split SplitFile(const std::string& bytes) {
  Split s;
  const int64_t pos = ManifestPos(bytes);
  s.prefix = bytes.substr(0, pos);
  const uint32_t len = U32At(bytes, pos);
  EXPECT_TRUE(s.proto.ParseFromArray(bytes.data() + pos + 4, static_cast<int>(len)));
  return s;
}

std::string SampleFile() {
  const auto indices = SampleIndices();
  return SerializeManifestFile(SampleManifest(), indices, &kTxn);
}

// A parse that must fail, with a message naming the file and `problem`.
void ExpectCorrupt(const std::string& bytes, const std::string& problem, FlagCheck check = FlagCheck::kRead) {
  auto parsed = ParseManifestFile(bytes, kPath, check);
  ASSERT_FALSE(parsed.ok()) << "parsed " << bytes.size() << " bytes without error";
  const std::string msg = parsed.status().message();
  EXPECT_TRUE(Contains(msg, kPath)) << msg;
  EXPECT_TRUE(Contains(msg, problem)) << "expected '" << problem << "' in: " << msg;
}

// ---------------------------------------------------------------------------
// Round trip.

TEST(ManifestFileTest, RoundTripsEveryField) {
  const Manifest want = SampleManifest();
  const auto indices = SampleIndices();
  const std::string bytes = SerializeManifestFile(want, indices, &kTxn);
  auto parsed = ParseManifestFile(bytes, kPath);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ExpectManifestEq(parsed->manifest, want);
  ASSERT_EQ(parsed->indices.size(), 2u);
  ExpectIndexEq(parsed->indices[0], indices[0]);
  ExpectIndexEq(parsed->indices[1], indices[1]);
  EXPECT_FALSE(parsed->indices[1].fragment_ids.has_value());
  ASSERT_TRUE(parsed->transaction_bytes.has_value());
  EXPECT_EQ(*parsed->transaction_bytes, kTxn);

  // Sections in the reference's order: index section at 0, then the transaction.
  ASSERT_TRUE(parsed->manifest.index_section.has_value());
  EXPECT_EQ(*parsed->manifest.index_section, 0u);
  ASSERT_TRUE(parsed->manifest.transaction_section.has_value());
  const uint64_t txn_at = *parsed->manifest.transaction_section;
  EXPECT_EQ(txn_at, 4u + U32At(bytes, 0));
  EXPECT_EQ(U32At(bytes, txn_at), kTxn.size());
  EXPECT_EQ(bytes.substr(txn_at + 4, kTxn.size()), kTxn);
  EXPECT_EQ(static_cast<uint64_t>(ManifestPos(bytes)), txn_at + 4 + kTxn.size());
}

TEST(ManifestFileTest, SerializingTheParsedManifestGivesAnEquivalentFile) {
  // Not byte-identical in general: protobuf map entries have no fixed order.
  const std::string bytes = SampleFile();
  auto parsed = ParseManifestFile(bytes, kPath);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const std::string again = SerializeManifestFile(parsed->manifest, parsed->indices,
                                                  &*parsed->transaction_bytes);
  EXPECT_EQ(again.size(), bytes.size());
  auto reparsed = ParseManifestFile(again, kPath);
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
  ExpectManifestEq(reparsed->manifest, SampleManifest());
  EXPECT_EQ(reparsed->manifest.index_section, parsed->manifest.index_section);
  EXPECT_EQ(reparsed->manifest.transaction_section, parsed->manifest.transaction_section);
  ASSERT_EQ(reparsed->indices.size(), 2u);
  ExpectIndexEq(reparsed->indices[0], SampleIndices()[0]);
  ExpectIndexEq(reparsed->indices[1], SampleIndices()[1]);
  EXPECT_EQ(reparsed->transaction_bytes, kTxn);
}

TEST(ManifestFileTest, NoIndicesAndNoTransactionWriteNoSections) {
  Manifest m = SampleManifest();
  m.index_section = 99;        // stale offsets must not leak into the file
  m.transaction_section = 99;
  const std::string bytes = SerializeManifestFile(m, {}, nullptr);
  EXPECT_EQ(ManifestPos(bytes), 0);
  auto parsed = ParseManifestFile(bytes, kPath);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_FALSE(parsed->manifest.index_section.has_value());
  EXPECT_FALSE(parsed->manifest.transaction_section.has_value());
  EXPECT_TRUE(parsed->indices.empty());
  EXPECT_FALSE(parsed->transaction_bytes.has_value());
  ExpectManifestEq(parsed->manifest, SampleManifest());
}

TEST(ManifestFileTest, EmptyTransactionAndEmptyFragmentSetRoundTrip) {
  Manifest m;
  m.version = 1;
  IndexMetadata idx;
  idx.name = "empty_set";
  idx.fragment_ids = std::vector<uint32_t>{};  // known and empty: not "unknown"
  const std::string empty;
  const std::string bytes = SerializeManifestFile(m, {idx}, &empty);
  auto parsed = ParseManifestFile(bytes, kPath);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->transaction_bytes.has_value());
  EXPECT_EQ(*parsed->transaction_bytes, "");
  ASSERT_EQ(parsed->indices.size(), 1u);
  ASSERT_TRUE(parsed->indices[0].fragment_ids.has_value());
  EXPECT_TRUE(parsed->indices[0].fragment_ids->empty());
  EXPECT_FALSE(parsed->manifest.timestamp_nanos.has_value());
  EXPECT_FALSE(parsed->manifest.writer_version.has_value());
  EXPECT_FALSE(parsed->manifest.max_fragment_id.has_value());
  EXPECT_FALSE(parsed->manifest.branch.has_value());
}

// pylance 14 writes fragment bitmaps with run containers where they are
// smaller: fragments 0..3 are one run (cookie 12347), bytes as pylance's.
TEST(ManifestFileTest, FragmentBitmapUsesRunContainersAsPylance) {
  Manifest m;
  m.version = 1;
  IndexMetadata idx;
  idx.name = "id_idx";
  idx.fragment_ids = std::vector<uint32_t>{0, 1, 2, 3};
  const std::string bytes = SerializeManifestFile(m, {idx}, nullptr);
  auto parsed = ParseManifestFile(bytes, kPath);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_TRUE(parsed->manifest.index_section.has_value());
  uint32_t len;
  std::memcpy(&len, bytes.data() + *parsed->manifest.index_section, 4);
  pb::table::IndexSection section;
  ASSERT_TRUE(section.ParseFromString(bytes.substr(*parsed->manifest.index_section + 4, len)));
  ASSERT_EQ(section.indices_size(), 1);
  EXPECT_EQ(section.indices(0).fragment_bitmap(),
            std::string(";0\x00\x00\x01\x00\x00\x03\x00\x01\x00\x00\x00\x03\x00", 15));
  EXPECT_EQ(parsed->indices[0].fragment_ids, idx.fragment_ids);
}

TEST(ManifestFileTest, PreEpochTimestampRoundTrips) {
  Manifest m;
  m.version = 1;
  for (int64_t ts : {int64_t{-1}, int64_t{-1500000000}, int64_t{-2000000000}, int64_t{1}}) {
    m.timestamp_nanos = ts;
    auto parsed = ParseManifestFile(SerializeManifestFile(m, {}, nullptr), kPath);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(parsed->manifest.timestamp_nanos, ts);
  }
}

TEST(ManifestFileTest, FooterIsVersion0Point2AndMagic) {
  const std::string bytes = SampleFile();
  ASSERT_GE(bytes.size(), 16u);
  EXPECT_EQ(bytes.substr(bytes.size() - 4), "LANC");
  int16_t major, minor;
  std::memcpy(&major, bytes.data() + bytes.size() - 8, 2);
  std::memcpy(&minor, bytes.data() + bytes.size() - 6, 2);
  EXPECT_EQ(major, 0);
  EXPECT_EQ(minor, 2);
  // The manifest message ends exactly where the footer starts.
  const int64_t pos = ManifestPos(bytes);
  EXPECT_EQ(static_cast<uint64_t>(pos) + 4 + U32At(bytes, pos), bytes.size() - 16);
}

// ---------------------------------------------------------------------------
// Corrupt input.

TEST(ManifestFileCorruptionTest, TooShort) {
  ExpectCorrupt("", "too short");
  ExpectCorrupt(std::string(15, 'L'), "too short");
  ExpectCorrupt(SampleFile().substr(0, 15), "too short");
}

TEST(ManifestFileCorruptionTest, TruncatedByOneByte) {
  const std::string bytes = SampleFile();
  ExpectCorrupt(bytes.substr(0, bytes.size() - 1), "magic");
}

TEST(ManifestFileCorruptionTest, GarbageFooter) {
  std::string bytes = SampleFile();
  for (size_t i = bytes.size() - 16; i < bytes.size(); ++i) bytes[i] = 'Z';
  ExpectCorrupt(bytes, "magic");

  // Garbage everywhere but the magic: the position makes no sense.
  bytes = SampleFile();
  for (size_t i = bytes.size() - 16; i < bytes.size() - 4; ++i) bytes[i] = '\x5a';
  ExpectCorrupt(bytes, "position");
}

TEST(ManifestFileCorruptionTest, BadMagic) {
  std::string bytes = SampleFile();
  bytes[bytes.size() - 1] = 'X';
  ExpectCorrupt(bytes, "magic");
  bytes = SampleFile();
  bytes.replace(bytes.size() - 4, 4, "lanc");
  ExpectCorrupt(bytes, "magic");
}

TEST(ManifestFileCorruptionTest, ManifestPositionOutsideTheFile) {
  const std::string good = SampleFile();
  const int64_t body = static_cast<int64_t>(good.size()) - 16;
  for (int64_t pos : {int64_t{-1}, int64_t{-4}, INT64_MIN, body - 3, body, body + 1,
                      static_cast<int64_t>(good.size()), INT64_MAX, INT64_MAX - 3}) {
    SCOPED_TRACE("pos " + std::to_string(pos));
    std::string bytes = good;
    PutPos(&bytes, pos);
    ExpectCorrupt(bytes, "position");
  }
}

TEST(ManifestFileCorruptionTest, ManifestPositionInsideButWrong) {
  // A position that points at a different length prefix: the length can't end at the footer.
  std::string bytes = SampleFile();
  PutPos(&bytes, 0);
  ExpectCorrupt(bytes, "length");
}

TEST(ManifestFileCorruptionTest, ManifestLengthOffByOne) {
  const std::string good = SampleFile();
  const int64_t pos = ManifestPos(good);
  const uint32_t len = U32At(good, pos);
  for (uint32_t bad : {len + 1, len - 1, 0u, UINT32_MAX}) {
    SCOPED_TRACE("len " + std::to_string(bad));
    std::string bytes = good;
    PutU32(&bytes, pos, bad);
    ExpectCorrupt(bytes, "length");
  }
}

TEST(ManifestFileCorruptionTest, GarbageProtobufInPlaceOfTheManifest) {
  const std::string good = SampleFile();
  const std::string prefix = good.substr(0, ManifestPos(good));
  // 0xff bytes: a varint tag that never ends.
  ExpectCorrupt(Assemble(prefix, std::string(40, '\xff')), "protobuf");
  // A tag with wire type 7, which doesn't exist.
  ExpectCorrupt(Assemble(prefix, std::string("\x0f\x01\x02\x03", 4)), "protobuf");
  // A length-delimited field that claims more bytes than there are.
  ExpectCorrupt(Assemble(prefix, std::string("\x0a\x7f\x01", 3)), "protobuf");
}

TEST(ManifestFileCorruptionTest, IndexSectionOffsetPastTheManifest) {
  Split s = SplitFile(SampleFile());
  ASSERT_TRUE(s.proto.has_index_section());
  const uint64_t body_start = s.prefix.size();
  for (uint64_t off : {body_start, body_start + 2, body_start + 1000, uint64_t{UINT64_MAX}}) {
    SCOPED_TRACE("offset " + std::to_string(off));
    s.proto.set_index_section(off);
    ExpectCorrupt(Assemble(s.prefix, s.proto.SerializeAsString()), "index section");
  }
}

TEST(ManifestFileCorruptionTest, IndexSectionLengthRunsPast) {
  std::string bytes = SampleFile();
  const uint64_t pos = ManifestPos(bytes);
  for (uint64_t len : {pos - 3, pos, uint64_t{UINT32_MAX}}) {
    SCOPED_TRACE("len " + std::to_string(len));
    std::string b = bytes;
    PutU32(&b, 0, static_cast<uint32_t>(len));
    ExpectCorrupt(b, "index section");
  }
}

TEST(ManifestFileCorruptionTest, TransactionSectionOutsideTheBody) {
  Split s = SplitFile(SampleFile());
  s.proto.set_transaction_section(s.prefix.size() + 7);
  ExpectCorrupt(Assemble(s.prefix, s.proto.SerializeAsString()), "transaction section");
  s = SplitFile(SampleFile());
  PutU32(&s.prefix, s.proto.transaction_section(), 1u << 30);
  ExpectCorrupt(Assemble(s.prefix, s.proto.SerializeAsString()), "transaction section");
}

TEST(ManifestFileCorruptionTest, GarbageIndexSection) {
  Split s = SplitFile(SampleFile());
  // Overwrite the index section's bytes (keeping its length) with garbage.
  const uint32_t len = U32At(s.prefix, 0);
  for (uint32_t i = 0; i < len; ++i) s.prefix[4 + i] = '\xff';
  ExpectCorrupt(Assemble(s.prefix, s.proto.SerializeAsString()), "index section");
}

TEST(ManifestFileCorruptionTest, EveryTruncationFails) {
  const std::string bytes = SampleFile();
  ASSERT_EQ(bytes.find("LANC"), bytes.size() - 4) << "the sample must hold the magic only once";
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto parsed = ParseManifestFile(std::string_view(bytes).substr(0, n), kPath);
    ASSERT_FALSE(parsed.ok()) << "a truncation to " << n << " bytes parsed";
    ASSERT_TRUE(Contains(parsed.status().message(), kPath)) << parsed.status().ToString();
  }
  // Dropping bytes from the front: the footer survives but its position doesn't.
  for (size_t n = 1; n < bytes.size(); ++n) {
    auto parsed = ParseManifestFile(std::string_view(bytes).substr(n), kPath);
    ASSERT_FALSE(parsed.ok()) << "dropping " << n << " leading bytes parsed";
  }
}

TEST(ManifestFileCorruptionTest, EverySingleByteFlipIsSafe) {
  // Not every flip is detectable (protobuf payloads), but none may crash.
  const std::string bytes = SampleFile();
  google::protobuf::LogSilencer quiet;  // protobuf logs each invalid UTF-8 string it meets
  size_t failures = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string b = bytes;
    b[i] = static_cast<char>(b[i] ^ 0xff);
    auto parsed = ParseManifestFile(b, kPath, FlagCheck::kNone);
    if (!parsed.ok()) ++failures;
  }
  EXPECT_GT(failures, 16u);  // at least every footer byte
}

// ---------------------------------------------------------------------------
// Feature-flag checks at parse time.

TEST(ManifestFileFlagsTest, UnknownReaderFlagRefusedOnlyWhenReading) {
  Manifest m = SampleManifest();
  m.reader_feature_flags = 512;
  const std::string bytes = SerializeManifestFile(m, SampleIndices(), &kTxn);
  auto read = ParseManifestFile(bytes, kPath, FlagCheck::kRead);
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(Contains(read.status().message(), "upgrade")) << read.status().ToString();
  EXPECT_TRUE(Contains(read.status().message(), kPath)) << read.status().ToString();
  EXPECT_TRUE(Contains(read.status().message(), "512")) << read.status().ToString();

  auto none = ParseManifestFile(bytes, kPath, FlagCheck::kNone);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->manifest.reader_feature_flags, 512u);
  EXPECT_EQ(none->indices.size(), 2u);

  auto write = ParseManifestFile(bytes, kPath, FlagCheck::kWrite);
  EXPECT_TRUE(write.ok()) << write.status().ToString();
}

TEST(ManifestFileFlagsTest, UnknownWriterFlagRefusedOnlyWhenWriting) {
  Manifest m = SampleManifest();
  m.writer_feature_flags = 512 | 8;
  const std::string bytes = SerializeManifestFile(m, {}, nullptr);
  auto write = ParseManifestFile(bytes, kPath, FlagCheck::kWrite);
  ASSERT_FALSE(write.ok());
  EXPECT_TRUE(Contains(write.status().message(), "upgrade")) << write.status().ToString();
  EXPECT_TRUE(Contains(write.status().message(), kPath)) << write.status().ToString();

  EXPECT_TRUE(ParseManifestFile(bytes, kPath, FlagCheck::kRead).ok());
  EXPECT_TRUE(ParseManifestFile(bytes, kPath, FlagCheck::kNone).ok());
}

TEST(ManifestFileFlagsTest, ReadWriteCheckRefusesEitherSide) {
  // What writers load: a commit is built from content it must be able to read.
  for (auto [reader, writer] : {std::pair<uint64_t, uint64_t>{512, 0}, {0, 512 | 8}, {64, 64}}) {
    SCOPED_TRACE(std::to_string(reader) + "/" + std::to_string(writer));
    Manifest m = SampleManifest();
    m.reader_feature_flags = reader;
    m.writer_feature_flags = writer;
    const std::string bytes = SerializeManifestFile(m, {}, nullptr);
    auto both = ParseManifestFile(bytes, kPath, FlagCheck::kReadWrite);
    ASSERT_FALSE(both.ok());
    EXPECT_TRUE(Contains(both.status().message(), "upgrade")) << both.status().ToString();
    EXPECT_TRUE(Contains(both.status().message(), kPath)) << both.status().ToString();
  }
  Manifest m = SampleManifest();
  m.reader_feature_flags = 1 | 2 | 16 | 128 | 256;
  m.writer_feature_flags = 1 | 2 | 8 | 16 | 32 | 128 | 256;
  EXPECT_TRUE(ParseManifestFile(SerializeManifestFile(m, {}, nullptr), kPath, FlagCheck::kReadWrite).ok());
}

TEST(ManifestFileFlagsTest, HalfSetPairedBitRefusedOnReadAndWrite) {
  Manifest m = SampleManifest();
  m.reader_feature_flags = 256;
  m.writer_feature_flags = 0;
  const std::string bytes = SerializeManifestFile(m, {}, nullptr);
  ExpectCorrupt(bytes, "corrupt", FlagCheck::kRead);
  ExpectCorrupt(bytes, "corrupt", FlagCheck::kWrite);
  EXPECT_TRUE(ParseManifestFile(bytes, kPath, FlagCheck::kNone).ok());
}

TEST(ManifestFileFlagsTest, FlagCheckRunsBeforeTheRestIsInterpreted) {
  // A manifest whose schema is broken but whose reader flags are unknown:
  // the "upgrade" error wins, as the reference refuses before reading more.
  pb::table::Manifest proto;
  proto.set_version(1);
  proto.set_reader_feature_flags(1024);
  auto* orphan = proto.add_fields();
  orphan->set_name("orphan");
  orphan->set_id(1);
  orphan->set_parent_id(42);
  const std::string bytes = Assemble("", proto.SerializeAsString());
  auto read = ParseManifestFile(bytes, kPath, FlagCheck::kRead);
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(Contains(read.status().message(), "upgrade")) << read.status().ToString();
  auto none = ParseManifestFile(bytes, kPath, FlagCheck::kNone);
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(Contains(none.status().message(), "parent")) << none.status().ToString();
}

TEST(ManifestFileProtoTest, V2DataFileNeedsOneColumnIndexPerField) {
  Manifest m;
  m.version = 1;
  Fragment f;
  DataFile d;
  d.path = "x.lance";
  d.fields = {0, 1};
  d.column_indices = {0};
  d.file_major_version = 2;
  f.files = {d};
  m.fragments = {f};
  ExpectCorrupt(SerializeManifestFile(m, {}, nullptr), "column indices", FlagCheck::kNone);
  // Legacy files have none, and that's fine.
  m.fragments[0].files[0].file_major_version = 0;
  m.fragments[0].files[0].file_minor_version = 2;
  m.fragments[0].files[0].column_indices.clear();
  EXPECT_TRUE(ParseManifestFile(SerializeManifestFile(m, {}, nullptr), kPath).ok());
}

TEST(ManifestFileProtoTest, BadIndexUuidAndBitmapAreErrors) {
  Manifest m;
  m.version = 1;
  IndexMetadata idx;
  idx.name = "i";
  idx.fragment_ids = std::vector<uint32_t>{1, 2};
  std::string good = SerializeManifestFile(m, {idx}, nullptr);
  Split s = SplitFile(good);
  const uint32_t len = U32At(s.prefix, 0);
  pb::table::IndexSection section;
  ASSERT_TRUE(section.ParseFromString(s.prefix.substr(4, len)));

  pb::table::IndexSection bad_uuid = section;
  bad_uuid.mutable_indices(0)->mutable_uuid()->set_uuid("short");
  std::string msg = bad_uuid.SerializeAsString();
  std::string prefix;
  uint32_t l = static_cast<uint32_t>(msg.size());
  prefix.append(reinterpret_cast<const char*>(&l), 4);
  prefix += msg;
  ExpectCorrupt(Assemble(prefix, s.proto.SerializeAsString()), "uuid");

  pb::table::IndexSection bad_bitmap = section;
  bad_bitmap.mutable_indices(0)->set_fragment_bitmap("not a roaring bitmap");
  msg = bad_bitmap.SerializeAsString();
  prefix.clear();
  l = static_cast<uint32_t>(msg.size());
  prefix.append(reinterpret_cast<const char*>(&l), 4);
  prefix += msg;
  ExpectCorrupt(Assemble(prefix, s.proto.SerializeAsString()), "bitmap");
}

// Protobuf bytes of an IndexSection holding one index whose fragment bitmap
// is `bitmap`, assembled into a manifest file.
std::string FileWithIndexBitmap(const std::string& bitmap) {
  pb::table::IndexSection section;
  auto* idx = section.add_indices();
  idx->set_name("i");
  idx->mutable_uuid()->set_uuid(std::string(16, '\x01'));
  idx->set_fragment_bitmap(bitmap);
  const std::string msg = section.SerializeAsString();
  std::string prefix;
  const uint32_t len = static_cast<uint32_t>(msg.size());
  prefix.append(reinterpret_cast<const char*>(&len), 4);
  prefix += msg;
  pb::table::Manifest proto;
  proto.set_version(1);
  proto.set_index_section(0);
  return Assemble(prefix, proto.SerializeAsString());
}

// BUG (src/lance/table/manifest_proto.cc, IndexMetadataFromProto): CRoaring
// 0.2's roaring_bitmap_portable_deserialize_safe trusts a bitset container's
// declared cardinality; the vector is sized from it and
// roaring_bitmap_to_uint32_array then writes every set bit: a heap overflow
// (65536 values into a 4097-value buffer here). Expected: an Invalid status
// naming the file and the bitmap (deletion_vector.cc's ValidatePortableRoaring
// already checks this for .bin files). Disabled because it corrupts memory.
TEST(ManifestFileProtoTest, InconsistentIndexBitmapIsAnError) {
  std::string bitmap;
  auto u32 = [&](uint32_t v) { bitmap.append(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&](uint16_t v) { bitmap.append(reinterpret_cast<const char*>(&v), 2); };
  u32(12346);  // no-run cookie
  u32(1);      // one container
  u16(0);      // key 0
  u16(4096);   // cardinality - 1: says 4097 values, so a bitset container
  u32(16);     // its offset
  bitmap.append(8192, '\xff');  // but all 65536 bits are set
  ExpectCorrupt(FileWithIndexBitmap(bitmap), "bitmap", FlagCheck::kNone);
}

TEST(ManifestFileProtoTest, ValidIndexBitmapInAHandBuiltSection) {
  // The control for the test above: the same layout, consistent.
  std::string bitmap;
  auto u32 = [&](uint32_t v) { bitmap.append(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&](uint16_t v) { bitmap.append(reinterpret_cast<const char*>(&v), 2); };
  u32(12346);
  u32(1);
  u16(0);
  u16(65535);  // 65536 values
  u32(16);
  bitmap.append(8192, '\xff');
  auto parsed = ParseManifestFile(FileWithIndexBitmap(bitmap), kPath);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->indices.size(), 1u);
  ASSERT_TRUE(parsed->indices[0].fragment_ids.has_value());
  EXPECT_EQ(parsed->indices[0].fragment_ids->size(), 65536u);
  EXPECT_EQ(parsed->indices[0].fragment_ids->back(), 65535u);
}

// BUG (src/lance/table/manifest_proto.cc:218, ManifestFromProto):
// `proto.timestamp().seconds() * 1000000000LL` overflows int64 (undefined
// behaviour; UBSan aborts) for any timestamp after 2262-04-11 or before
// 1677-09-21, e.g. seconds = 10^12 in a hostile or far-future manifest.
// Expected: no wrapped value: either an Invalid status naming the file, or
// the manifest without a timestamp (the reference keeps u128 nanoseconds and
// falls back to the epoch when it can't represent them).
TEST(ManifestFileProtoTest, TimestampOutsideTheInt64RangeIsNotWrapped) {
  pb::table::Manifest proto;
  proto.set_version(1);
  proto.mutable_timestamp()->set_seconds(1000000000000LL);  // year ~33658
  auto parsed = ParseManifestFile(Assemble("", proto.SerializeAsString()), kPath);
  if (parsed.ok()) {
    EXPECT_FALSE(parsed->manifest.timestamp_nanos.has_value())
        << "10^12 s can't be held in int64 nanoseconds, got " << *parsed->manifest.timestamp_nanos;
  } else {
    EXPECT_TRUE(Contains(parsed.status().message(), kPath)) << parsed.status().ToString();
  }
  // The largest representable instant still round-trips exactly.
  proto.mutable_timestamp()->set_seconds(9223372035LL);
  proto.mutable_timestamp()->set_nanos(999999999);
  parsed = ParseManifestFile(Assemble("", proto.SerializeAsString()), kPath);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->manifest.timestamp_nanos, std::optional<int64_t>(9223372035999999999LL));
}

TEST(ManifestFileProtoTest, UnknownDeletionFileTypeIsAnError) {
  Manifest m;
  m.version = 1;
  Fragment f;
  f.deletion_file = DeletionFile{};
  m.fragments = {f};
  Split s = SplitFile(SerializeManifestFile(m, {}, nullptr));
  s.proto.mutable_fragments(0)->mutable_deletion_file()->set_file_type(
      static_cast<pb::table::DeletionFile::DeletionFileType>(7));
  ExpectCorrupt(Assemble(s.prefix, s.proto.SerializeAsString()), "deletion file");
}

}  // namespace
}  // namespace lance::table
