#include "lance/table/feature_flags.h"

#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>

namespace lance::table {
namespace {

Status RefuseUnsupported(const char* who, uint64_t flags, uint64_t supported) {
  return Status::NotImplemented(
      "this dataset cannot be ", who, " by this version of lance-cpp: please upgrade lance-cpp (",
      who == std::string_view("read") ? "reader" : "writer", " feature flags ", flags,
      ", unsupported bits ", flags & ~supported, ")");
}

}  // namespace

uint64_t SupportedFlags(bool overlay_files_enabled) {
  uint64_t supported = kKnownFlags;
  if (!overlay_files_enabled) supported &= ~kFlagUnstableDataOverlayFiles;
  return supported;
}

uint64_t SupportedFlags() {
  return SupportedFlags(std::getenv(kEnableDataOverlayFilesEnv) != nullptr);
}

Status CheckPairedFlags(uint64_t reader_flags, uint64_t writer_flags) {
  if ((reader_flags & kStickyPairedFlags) != (writer_flags & kStickyPairedFlags)) {
    return Status::Invalid(
        "corrupt manifest: only one of the mixed data-file-versions reader and writer feature "
        "bits (256) is set (reader flags ",
        reader_flags, ", writer flags ", writer_flags, ")");
  }
  return Status::OK();
}

Status CheckCanRead(const Manifest& manifest) {
  LANCE_RETURN_NOT_OK(CheckPairedFlags(manifest.reader_feature_flags, manifest.writer_feature_flags));
  const uint64_t supported = SupportedFlags();
  if (manifest.reader_feature_flags & ~supported) {
    return RefuseUnsupported("read", manifest.reader_feature_flags, supported);
  }
  return Status::OK();
}

Status CheckCanWrite(const Manifest& manifest) {
  LANCE_RETURN_NOT_OK(CheckPairedFlags(manifest.reader_feature_flags, manifest.writer_feature_flags));
  const uint64_t supported = SupportedFlags();
  if (manifest.writer_feature_flags & ~supported) {
    return RefuseUnsupported("written", manifest.writer_feature_flags, supported);
  }
  return Status::OK();
}

Result<FeatureFlags> ComputeFeatureFlags(const Manifest& manifest,
                                         const std::vector<IndexMetadata>& indices,
                                         const Manifest* source, bool enable_stable_row_ids,
                                         bool disable_transaction_file) {
  FeatureFlags flags;
  // The paired bits are carried from the manifest itself (restores and
  // constructors keep them) and from the source it derives from.
  LANCE_RETURN_NOT_OK(CheckPairedFlags(manifest.reader_feature_flags, manifest.writer_feature_flags));
  uint64_t sticky = manifest.reader_feature_flags & kStickyPairedFlags;
  if (source != nullptr) {
    LANCE_RETURN_NOT_OK(CheckPairedFlags(source->reader_feature_flags, source->writer_feature_flags));
    sticky |= source->reader_feature_flags & kStickyPairedFlags;
  }

  bool any_deletions = false, any_row_ids = false, all_row_ids = true, any_overlays = false;
  bool mixed_file_versions = false;
  std::optional<std::pair<uint32_t, uint32_t>> first_v2;
  for (const auto& frag : manifest.fragments) {
    for (const auto& file : frag.files) {
      std::pair<uint32_t, uint32_t> v{file.file_major_version, file.file_minor_version};
      if (v == std::pair<uint32_t, uint32_t>{0, 3}) v = {2, 0};  // (0,3) is how 2.0 was first written
      if (v.first < 2) continue;  // legacy files are not part of the v2.x contract
      if (!first_v2) first_v2 = v;
      mixed_file_versions |= v != *first_v2;
    }
    any_deletions |= frag.deletion_file.has_value();
    any_row_ids |= frag.row_ids.present();
    all_row_ids &= frag.row_ids.present();
    any_overlays |= frag.num_overlays > 0;
  }
  auto both = [&](uint64_t bit) {
    flags.reader |= bit;
    flags.writer |= bit;
  };
  if (any_deletions) both(kFlagDeletionFiles);
  if (any_row_ids || enable_stable_row_ids) {
    if (!all_row_ids) {
      return Status::Invalid("every fragment must carry row ids when stable row ids are enabled");
    }
    both(kFlagStableRowIds);
  }
  if (!manifest.config.empty()) flags.writer |= kFlagTableConfig;
  if (!manifest.base_paths.empty()) both(kFlagBasePaths);
  if (any_overlays) both(kFlagUnstableDataOverlayFiles);
  if (disable_transaction_file) flags.writer |= kFlagDisableTransactionFile;
  for (const auto& idx : indices) {
    if (!idx.covering_fields.empty()) both(kFlagCoveredIndexMetadata);
  }
  if (mixed_file_versions) both(kFlagMixedDataFileVersions);
  both(sticky);
  return flags;
}

}  // namespace lance::table
