// Reader/writer feature flags: the read and write checks, the paired (sticky)
// bit 256, and the computation of both flag words from a manifest's content.
#include "lance/table/feature_flags.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace lance::table {
namespace {

// Sets or clears the overlay opt-in for one scope and restores whatever the
// environment held before.
class OverlayEnvGuard {
 public:
  explicit OverlayEnvGuard(bool enabled) {
    if (const char* old = std::getenv(kEnableDataOverlayFilesEnv)) saved_ = std::string(old);
    if (enabled) {
      setenv(kEnableDataOverlayFilesEnv, "1", /*overwrite=*/1);
    } else {
      unsetenv(kEnableDataOverlayFilesEnv);
    }
  }
  ~OverlayEnvGuard() {
    if (saved_) {
      setenv(kEnableDataOverlayFilesEnv, saved_->c_str(), 1);
    } else {
      unsetenv(kEnableDataOverlayFilesEnv);
    }
  }
  OverlayEnvGuard(const OverlayEnvGuard&) = delete;
  OverlayEnvGuard& operator=(const OverlayEnvGuard&) = delete;

 private:
  std::optional<std::string> saved_;
};

Manifest WithFlags(uint64_t reader, uint64_t writer) {
  Manifest m;
  m.reader_feature_flags = reader;
  m.writer_feature_flags = writer;
  return m;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

DataFile File(const std::string& path, uint32_t major, uint32_t minor) {
  DataFile f;
  f.path = path;
  f.fields = {0};
  if (major != 0 || minor > 2) f.column_indices = {0};
  f.file_major_version = major;
  f.file_minor_version = minor;
  return f;
}

Fragment Frag(uint64_t id, std::vector<DataFile> files = {File("a.lance", 2, 0)}) {
  Fragment f;
  f.id = id;
  f.files = std::move(files);
  f.physical_rows = 10;
  return f;
}

Fragment WithRowIds(Fragment f) {
  f.row_ids.inline_bytes = std::string("\x0a\x04\x0a\x02\x10\x0a", 6);
  return f;
}

Result<FeatureFlags> Compute(const Manifest& m, const std::vector<IndexMetadata>& indices = {},
                             const Manifest* source = nullptr, bool enable_stable_row_ids = false,
                             bool disable_transaction_file = false) {
  return ComputeFeatureFlags(m, indices, source, enable_stable_row_ids, disable_transaction_file);
}

// ---------------------------------------------------------------------------
// Constants and the supported mask.

TEST(FeatureFlagsTest, BitValuesMatchTheFormat) {
  EXPECT_EQ(kFlagDeletionFiles, 1u);
  EXPECT_EQ(kFlagStableRowIds, 2u);
  EXPECT_EQ(kFlagUseV2FormatDeprecated, 4u);
  EXPECT_EQ(kFlagTableConfig, 8u);
  EXPECT_EQ(kFlagBasePaths, 16u);
  EXPECT_EQ(kFlagDisableTransactionFile, 32u);
  EXPECT_EQ(kFlagUnstableDataOverlayFiles, 64u);
  EXPECT_EQ(kFlagCoveredIndexMetadata, 128u);
  EXPECT_EQ(kFlagMixedDataFileVersions, 256u);
  EXPECT_EQ(kKnownFlags, 511u);
}

TEST(FeatureFlagsTest, SupportedFlagsFollowTheOverlayOptIn) {
  EXPECT_EQ(kStableFlags, 511u & ~64u);
  {
    OverlayEnvGuard env(false);
    EXPECT_FALSE(DataOverlayFilesEnabled());
    EXPECT_EQ(SupportedFlags(), 511u & ~64u);
  }
  {
    OverlayEnvGuard env(true);
    EXPECT_TRUE(DataOverlayFilesEnabled());
    EXPECT_EQ(SupportedFlags(), 511u);
  }
}

TEST(FeatureFlagsTest, FlagNamesSayWhatEachBitIs) {
  EXPECT_STREQ(FlagName(1), "deletion files");
  EXPECT_STREQ(FlagName(16), "base paths");
  EXPECT_STREQ(FlagName(64), "data overlay files");
  EXPECT_STREQ(FlagName(256), "mixed data file versions");
  EXPECT_STREQ(FlagName(512), "unknown");
  EXPECT_STREQ(FlagName(3), "unknown");  // not one bit
}

// ---------------------------------------------------------------------------
// Known bits: one decision per bit and side (the table in feature_flags.h).

struct BitRule {
  uint64_t bit;
  bool read;
  bool write;
};
constexpr BitRule kBitRules[] = {
    {1, true, true},     // deletion files: applied on read, merged by delete
    {2, true, true},     // stable row ids: read through, kept by rewrites
    {4, true, true},     // deprecated v2 marker: informational only
    {8, true, true},     // table config: carried by every commit
    {16, true, true},    // base paths: resolved on read, new files at the root
    {32, true, true},    // inline-only transaction: read inline first
    {64, true, true},    // data overlay files: resolved on read, carried (opt-in only)
    {128, true, true},   // covered index metadata: no index use, no in-place rewrite
    {256, true, true},   // mixed data file versions: per-file versions
};

TEST(FeatureFlagsTest, EveryKnownBitHasItsReadAndWriteDecision) {
  for (bool opt_in : {false, true}) {  // without the opt-in, 64 is refused (below)
    OverlayEnvGuard env(opt_in);
    for (const BitRule& rule : kBitRules) {
      if (rule.bit == kFlagUnstableDataOverlayFiles && !opt_in) continue;
      SCOPED_TRACE("bit " + std::to_string(rule.bit) + (opt_in ? " with" : " without") + " the opt-in");
      const Manifest both = WithFlags(rule.bit, rule.bit);
      EXPECT_EQ(CheckCanRead(both).ok(), rule.read) << CheckCanRead(both).ToString();
      EXPECT_EQ(CheckCanWrite(both).ok(), rule.write) << CheckCanWrite(both).ToString();
      if (rule.bit != kFlagMixedDataFileVersions) {  // 256 may not be half set (tested below)
        EXPECT_EQ(CheckCanRead(WithFlags(rule.bit, 0)).ok(), rule.read);
        EXPECT_EQ(CheckCanWrite(WithFlags(0, rule.bit)).ok(), rule.write);
        // One side's bit never matters to the other side's check.
        EXPECT_TRUE(CheckCanRead(WithFlags(0, rule.bit)).ok());
        EXPECT_TRUE(CheckCanWrite(WithFlags(rule.bit, 0)).ok());
      }
      EXPECT_EQ((SupportedFlags() & rule.bit) != 0, rule.read && rule.write);
    }
  }
  // All accepted bits at once.
  const uint64_t all = 511u & ~64u;
  EXPECT_TRUE(CheckCanRead(WithFlags(all, all)).ok());
  EXPECT_TRUE(CheckCanWrite(WithFlags(all, all)).ok());
  EXPECT_TRUE(CheckCanRead(WithFlags(0, 0)).ok());
  EXPECT_TRUE(CheckCanWrite(WithFlags(0, 0)).ok());
}

TEST(FeatureFlagsTest, OverlayBitIsRefusedWithoutTheOptIn) {
  {
    OverlayEnvGuard env(true);
    EXPECT_TRUE(CheckCanRead(WithFlags(64, 64)).ok());
    EXPECT_TRUE(CheckCanWrite(WithFlags(64 | 1, 64 | 1 | 8)).ok());
  }
  for (bool opt_in : {false}) {
    OverlayEnvGuard env(opt_in);
    for (const Manifest& m : {WithFlags(64, 64), WithFlags(64 | 1, 64 | 1 | 8), WithFlags(511, 511)}) {
      SCOPED_TRACE(std::to_string(m.reader_feature_flags) + (opt_in ? " with" : " without") + " the opt-in");
      Status r = CheckCanRead(m);
      Status w = CheckCanWrite(m);
      ASSERT_FALSE(r.ok());
      ASSERT_FALSE(w.ok());
      EXPECT_TRUE(r.IsNotImplemented()) << r.ToString();
      for (const Status* st : {&r, &w}) {
        EXPECT_TRUE(Contains(st->message(), "upgrade")) << st->ToString();
        EXPECT_TRUE(Contains(st->message(), "64 (data overlay files)")) << st->ToString();
        EXPECT_TRUE(Contains(st->message(), kEnableDataOverlayFilesEnv)) << st->ToString();
      }
      EXPECT_TRUE(Contains(r.message(), "reader feature flags " + std::to_string(m.reader_feature_flags)))
          << r.ToString();
      EXPECT_TRUE(Contains(w.message(), "writer feature flags " + std::to_string(m.writer_feature_flags)))
          << w.ToString();
      EXPECT_TRUE(Contains(r.message(), "cannot be read")) << r.ToString();
      EXPECT_TRUE(Contains(w.message(), "cannot be written")) << w.ToString();
      // Only the unsupported bit is listed, not the accepted ones beside it.
      EXPECT_FALSE(Contains(r.message(), "deletion files")) << r.ToString();
    }
  }
}

// ---------------------------------------------------------------------------
// Unknown bits.

TEST(FeatureFlagsTest, UnknownReaderBitsAreRefusedOnRead) {
  OverlayEnvGuard env(true);  // no opt-in makes an unknown bit known
  for (uint64_t bit : {uint64_t{512}, uint64_t{1024}, uint64_t{1} << 40, uint64_t{1} << 63}) {
    SCOPED_TRACE("bit " + std::to_string(bit));
    const uint64_t flags = bit | kFlagDeletionFiles;  // mixed with a known bit
    Status st = CheckCanRead(WithFlags(flags, 0));
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(st.IsNotImplemented()) << st.ToString();
    EXPECT_TRUE(Contains(st.message(), "upgrade")) << st.ToString();
    EXPECT_TRUE(Contains(st.message(), std::to_string(flags))) << st.ToString();
    // A reader-only unknown bit doesn't stop a writer.
    EXPECT_TRUE(CheckCanWrite(WithFlags(flags, 0)).ok());
  }
}

TEST(FeatureFlagsTest, UnknownWriterBitsAreRefusedOnWrite) {
  OverlayEnvGuard env(true);
  for (uint64_t bit : {uint64_t{512}, uint64_t{1024}, uint64_t{1} << 40, uint64_t{1} << 63}) {
    SCOPED_TRACE("bit " + std::to_string(bit));
    const uint64_t flags = bit | kFlagTableConfig;
    Status st = CheckCanWrite(WithFlags(0, flags));
    ASSERT_FALSE(st.ok());
    EXPECT_TRUE(st.IsNotImplemented()) << st.ToString();
    EXPECT_TRUE(Contains(st.message(), "upgrade")) << st.ToString();
    EXPECT_TRUE(Contains(st.message(), std::to_string(flags))) << st.ToString();
    // A writer-only unknown bit doesn't stop a reader.
    EXPECT_TRUE(CheckCanRead(WithFlags(0, flags)).ok());
  }
}

TEST(FeatureFlagsTest, UnknownBitInBothWordsBlocksBoth) {
  const Manifest m = WithFlags(1024, 1024);
  EXPECT_FALSE(CheckCanRead(m).ok());
  EXPECT_FALSE(CheckCanWrite(m).ok());
}

// ---------------------------------------------------------------------------
// The paired bit 256.

TEST(FeatureFlagsTest, HalfSetMixedVersionsBitIsCorrupt) {
  for (const Manifest& m : {WithFlags(256, 0), WithFlags(0, 256), WithFlags(257, 1)}) {
    SCOPED_TRACE(std::to_string(m.reader_feature_flags) + "/" + std::to_string(m.writer_feature_flags));
    Status r = CheckCanRead(m);
    Status w = CheckCanWrite(m);
    ASSERT_FALSE(r.ok());
    ASSERT_FALSE(w.ok());
    EXPECT_TRUE(r.IsInvalid()) << r.ToString();
    EXPECT_TRUE(Contains(r.message(), "corrupt")) << r.ToString();
    EXPECT_TRUE(Contains(w.message(), "corrupt")) << w.ToString();
    EXPECT_FALSE(CheckPairedFlags(m.reader_feature_flags, m.writer_feature_flags).ok());
  }
  EXPECT_TRUE(CheckPairedFlags(256, 256).ok());
  EXPECT_TRUE(CheckPairedFlags(257, 264).ok());  // other bits may differ
  EXPECT_TRUE(CheckPairedFlags(1, 0).ok());
}

TEST(FeatureFlagsTest, ComputeRefusesHalfSetBitOnSourceOrManifest) {
  Manifest m;
  m.fragments = {Frag(0)};
  for (auto [r, w] : {std::pair<uint64_t, uint64_t>{256, 0}, {0, 256}}) {
    const Manifest half = WithFlags(r, w);
    auto from_source = Compute(m, {}, &half);
    EXPECT_FALSE(from_source.ok()) << "source " << r << "/" << w;
    if (!from_source.ok()) {
      EXPECT_TRUE(Contains(from_source.status().message(), "corrupt")) << from_source.status().ToString();
    }

    Manifest self = m;
    self.reader_feature_flags = r;
    self.writer_feature_flags = w;
    auto from_self = Compute(self);
    EXPECT_FALSE(from_self.ok()) << "manifest " << r << "/" << w;
  }
}

// ---------------------------------------------------------------------------
// ComputeFeatureFlags from content.

TEST(ComputeFeatureFlagsTest, EmptyManifestHasNoFlags) {
  auto flags = Compute(Manifest{});
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->reader, 0u);
  EXPECT_EQ(flags->writer, 0u);
}

TEST(ComputeFeatureFlagsTest, DeletionFileSetsBit1InBoth) {
  Manifest m;
  m.fragments = {Frag(0), Frag(1)};
  m.fragments[1].deletion_file = DeletionFile{};
  auto flags = Compute(m);
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->reader, 1u);
  EXPECT_EQ(flags->writer, 1u);
}

TEST(ComputeFeatureFlagsTest, RowIdsOnAllFragmentsSetBit2InBoth) {
  Manifest m;
  m.fragments = {WithRowIds(Frag(0)), WithRowIds(Frag(1))};
  m.fragments[1].row_ids = SequenceRef{std::nullopt, ExternalFile{"_rowids/x", 0, 6}};
  auto flags = Compute(m);
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->reader, 2u);
  EXPECT_EQ(flags->writer, 2u);
}

TEST(ComputeFeatureFlagsTest, RowIdsOnSomeFragmentsIsAnError) {
  Manifest m;
  m.fragments = {WithRowIds(Frag(0)), Frag(1)};
  auto flags = Compute(m);
  ASSERT_FALSE(flags.ok());
  EXPECT_TRUE(Contains(flags.status().message(), "row ids")) << flags.status().ToString();

  m.fragments = {Frag(0), WithRowIds(Frag(1))};  // order doesn't matter
  EXPECT_FALSE(Compute(m).ok());
}

TEST(ComputeFeatureFlagsTest, EnableStableRowIdsNeedsRowIdsOnEveryFragment) {
  Manifest m;
  m.fragments = {Frag(0)};
  EXPECT_FALSE(Compute(m, {}, nullptr, /*enable_stable_row_ids=*/true).ok());

  m.fragments = {WithRowIds(Frag(0))};
  auto with_ids = Compute(m, {}, nullptr, true);
  ASSERT_TRUE(with_ids.ok()) << with_ids.status().ToString();
  EXPECT_EQ(with_ids->reader, 2u);

  Manifest empty;  // a new dataset with no fragments yet
  auto flags = Compute(empty, {}, nullptr, true);
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->reader, 2u);
  EXPECT_EQ(flags->writer, 2u);
}

TEST(ComputeFeatureFlagsTest, ConfigSetsBit8WriterOnly) {
  Manifest m;
  m.config = {{"lance.auto_cleanup.interval", "20"}};
  auto flags = Compute(m);
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->reader, 0u);
  EXPECT_EQ(flags->writer, 8u);

  m.config.clear();
  m.table_metadata = {{"k", "v"}};  // table metadata is not config
  flags = Compute(m);
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->writer, 0u);
}

TEST(ComputeFeatureFlagsTest, BasePathsSetBit16InBoth) {
  Manifest m;
  m.base_paths = {BasePath{1, std::string("b"), true, "s3://bucket/other"}};
  auto flags = Compute(m);
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->reader, 16u);
  EXPECT_EQ(flags->writer, 16u);
}

TEST(ComputeFeatureFlagsTest, OverlaysSetBit64InBoth) {
  Manifest m;
  m.fragments = {Frag(0), Frag(1)};
  m.fragments[1].overlays.resize(2);
  auto flags = Compute(m);
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->reader, 64u);
  EXPECT_EQ(flags->writer, 64u);
}

TEST(ComputeFeatureFlagsTest, DisableTransactionFileSetsBit32WriterOnly) {
  auto flags = Compute(Manifest{}, {}, nullptr, false, /*disable_transaction_file=*/true);
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->reader, 0u);
  EXPECT_EQ(flags->writer, 32u);
}

TEST(ComputeFeatureFlagsTest, CoveringIndexSetsBit128InBoth) {
  IndexMetadata plain;
  plain.name = "plain";
  plain.fields = {0};
  auto flags = Compute(Manifest{}, {plain});
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->reader, 0u);

  IndexMetadata covering = plain;
  covering.name = "covering";
  covering.covering_fields = {1, 2};
  flags = Compute(Manifest{}, {plain, covering});
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->reader, 128u);
  EXPECT_EQ(flags->writer, 128u);
}

TEST(ComputeFeatureFlagsTest, DifferentV2VersionsSetBit256InBoth) {
  Manifest m;
  m.fragments = {Frag(0, {File("a.lance", 2, 1)}), Frag(1, {File("b.lance", 2, 2)})};
  auto flags = Compute(m);
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->reader, 256u);
  EXPECT_EQ(flags->writer, 256u);

  // Within one fragment too.
  m.fragments = {Frag(0, {File("a.lance", 2, 2), File("b.lance", 2, 1)})};
  flags = Compute(m);
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->reader, 256u);
}

TEST(ComputeFeatureFlagsTest, SameV2VersionsDoNotSetBit256) {
  struct Case {
    const char* name;
    std::vector<std::pair<uint32_t, uint32_t>> versions;
  };
  const std::vector<Case> cases = {
      {"(0,3) and (2,0) are both 2.0", {{0, 3}, {2, 0}}},
      {"(2,0) and (0,3)", {{2, 0}, {0, 3}, {2, 0}}},
      {"all 2.1", {{2, 1}, {2, 1}}},
      {"legacy files don't count", {{0, 2}, {2, 1}}},
      {"legacy files don't count (after)", {{2, 2}, {0, 1}, {0, 0}}},
      {"legacy only", {{0, 1}, {0, 2}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Manifest m;
    uint64_t id = 0;
    for (auto [major, minor] : c.versions) {
      m.fragments.push_back(Frag(id, {File("f" + std::to_string(id) + ".lance", major, minor)}));
      ++id;
    }
    auto flags = Compute(m);
    ASSERT_TRUE(flags.ok()) << flags.status().ToString();
    EXPECT_EQ(flags->reader, 0u);
    EXPECT_EQ(flags->writer, 0u);
  }
}

TEST(ComputeFeatureFlagsTest, FilesNotAtTheManifestVersionSetBit256) {
  // As pylance 14: a compaction of a 2.0 dataset into 2.1 files leaves only
  // 2.1 files, which all agree, yet disagree with the dataset's version.
  Manifest m;
  m.data_storage_version = "2.0";
  m.fragments = {Frag(0, {File("a.lance", 2, 1)}), Frag(1, {File("b.lance", 2, 1)})};
  auto flags = Compute(m);
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->reader, 256u);
  EXPECT_EQ(flags->writer, 256u);

  // Files at the manifest's version (2.0 written as (0,3) too) need no bit.
  m.fragments = {Frag(0, {File("a.lance", 0, 3)}), Frag(1, {File("b.lance", 2, 0)})};
  flags = Compute(m);
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->reader, 0u);
  EXPECT_EQ(flags->writer, 0u);
}

TEST(FeatureFlagsTest, StrayFileVersionWithoutBit256IsRefusedByName) {
  Manifest m;
  m.data_storage_version = "2.0";
  m.fragments = {Frag(0, {File("a.lance", 2, 0)}), Frag(7, {File("b.lance", 2, 1)})};
  Status st = CheckDataFileVersions(m);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "'b.lance' in fragment 7 has version 2.1")) << st.message();
  EXPECT_TRUE(Contains(st.message(), "version is 2.0")) << st.message();
  EXPECT_TRUE(Contains(st.message(), "(256)")) << st.message();

  // No recorded version: the files must agree among themselves.
  m.data_storage_version.clear();
  st = CheckDataFileVersions(m);
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "'b.lance' in fragment 7")) << st.message();

  // With the bit, any v2.x mix is read; legacy files are never compared.
  m.reader_feature_flags = m.writer_feature_flags = 256;
  EXPECT_TRUE(CheckDataFileVersions(m).ok());
  Manifest agreed;
  agreed.data_storage_version = "2.1";
  agreed.fragments = {Frag(0, {File("a.lance", 2, 1), File("old.lance", 0, 2)})};
  EXPECT_TRUE(CheckDataFileVersions(agreed).ok());
}

TEST(ComputeFeatureFlagsTest, MixedVersionsBitIsStickyFromSource) {
  Manifest m;
  m.fragments = {Frag(0, {File("a.lance", 2, 1)})};  // content alone wouldn't set 256
  auto plain = Compute(m);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->reader, 0u);

  const Manifest source = WithFlags(256 | 1, 256 | 1 | 8);
  auto flags = Compute(m, {}, &source);
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->reader, 256u);  // only the paired bit travels
  EXPECT_EQ(flags->writer, 256u);

  // Carried by the manifest itself as well (e.g. a Restore of such a version).
  Manifest restored = m;
  restored.reader_feature_flags = 256;
  restored.writer_feature_flags = 256;
  flags = Compute(restored);
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->reader, 256u);
  EXPECT_EQ(flags->writer, 256u);
}

TEST(ComputeFeatureFlagsTest, StaleBitsAreNotCarried) {
  // Flags on the manifest and its source that its content no longer justifies.
  Manifest m;
  m.fragments = {Frag(0)};
  m.reader_feature_flags = 1 | 2 | 16 | 64 | 128;
  m.writer_feature_flags = 1 | 2 | 8 | 16 | 32 | 64 | 128;
  const Manifest source = WithFlags(1 | 2 | 16, 1 | 2 | 8 | 16 | 32);
  auto flags = Compute(m, {}, &source);
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->reader, 0u);
  EXPECT_EQ(flags->writer, 0u);
}

TEST(ComputeFeatureFlagsTest, EverythingAtOnce) {
  Manifest m;
  m.fragments = {WithRowIds(Frag(0, {File("a.lance", 2, 1)})), WithRowIds(Frag(1, {File("b.lance", 2, 2)}))};
  m.fragments[0].deletion_file = DeletionFile{};
  m.fragments[1].overlays.resize(1);
  m.config = {{"k", "v"}};
  m.base_paths = {BasePath{}};
  IndexMetadata idx;
  idx.covering_fields = {3};
  auto flags = Compute(m, {idx}, nullptr, true, true);
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->reader, 1u | 2 | 16 | 64 | 128 | 256);
  EXPECT_EQ(flags->writer, 1u | 2 | 8 | 16 | 32 | 64 | 128 | 256);
}

}  // namespace
}  // namespace lance::table
