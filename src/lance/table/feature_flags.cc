#include "lance/table/feature_flags.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace lance::table {
namespace {

// The "upgrade" error, naming every unsupported bit, and for the overlay bit
// why the opt-in does not help.
Status RefuseUnsupported(bool reading, uint64_t flags, uint64_t supported) {
  std::string bits;
  const uint64_t unsupported = flags & ~supported;
  for (int i = 0; i < 64; ++i) {
    const uint64_t bit = uint64_t{1} << i;
    if ((unsupported & bit) == 0) continue;
    if (!bits.empty()) bits += ", ";
    bits += std::to_string(bit) + " (" + FlagName(bit) + ")";
  }
  std::string why;
  if (unsupported & kFlagUnstableDataOverlayFiles) {
    why = std::string("; data overlay files are unstable: set ") + kEnableDataOverlayFilesEnv + " to opt in";
  }
  return Status::NotImplemented("this dataset cannot be ", reading ? "read" : "written",
                                " by this version of lance-cpp: please upgrade lance-cpp (",
                                reading ? "reader" : "writer", " feature flags ", flags, ", unsupported bits ",
                                bits, why, ")");
}

using FilePair = std::pair<uint32_t, uint32_t>;

// A data file's v2.x version, (0,3) read as 2.0 (how 2.0 was first
// written); nullopt for legacy files, which are not part of the v2.x contract.
std::optional<FilePair> V2FileVersion(const DataFile& file) {
  FilePair v{file.file_major_version, file.file_minor_version};
  if (v == FilePair{0, 3}) v = {2, 0};
  if (v.first < 2) return std::nullopt;
  return v;
}

// The manifest's recorded data storage version when it is a v2.x one.
std::optional<FilePair> ManifestV2Version(const Manifest& manifest) {
  const std::string& v = manifest.data_storage_version;
  if (v == "2.0") return FilePair{2, 0};
  if (v == "2.1") return FilePair{2, 1};
  if (v == "2.2") return FilePair{2, 2};
  return std::nullopt;
}

// The first v2 data file whose version differs from the manifest's recorded
// version (or, when none is recorded, from the first v2 file's): such files
// need bit 256, as pylance 14 decides it.
struct StrayFile {
  const Fragment* fragment;
  const DataFile* file;
  FilePair expected;
};
std::optional<StrayFile> FirstStrayFile(const Manifest& manifest) {
  std::optional<FilePair> expected = ManifestV2Version(manifest);
  for (const auto& frag : manifest.fragments) {
    for (const auto& file : frag.files) {
      auto v = V2FileVersion(file);
      if (!v) continue;
      if (!expected) expected = v;
      if (*v != *expected) return StrayFile{&frag, &file, *expected};
    }
  }
  return std::nullopt;
}

}  // namespace

bool DataOverlayFilesEnabled() { return std::getenv(kEnableDataOverlayFilesEnv) != nullptr; }

uint64_t SupportedFlags() {
  return kStableFlags | (DataOverlayFilesEnabled() ? kFlagUnstableDataOverlayFiles : 0);
}

const char* FlagName(uint64_t bit) {
  switch (bit) {
    case kFlagDeletionFiles: return "deletion files";
    case kFlagStableRowIds: return "stable row ids";
    case kFlagUseV2FormatDeprecated: return "v2 format, deprecated";
    case kFlagTableConfig: return "table config";
    case kFlagBasePaths: return "base paths";
    case kFlagDisableTransactionFile: return "no transaction file";
    case kFlagUnstableDataOverlayFiles: return "data overlay files";
    case kFlagCoveredIndexMetadata: return "covered index metadata";
    case kFlagMixedDataFileVersions: return "mixed data file versions";
    default: return "unknown";
  }
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
  if (manifest.reader_feature_flags & ~SupportedFlags()) {
    return RefuseUnsupported(/*reading=*/true, manifest.reader_feature_flags, SupportedFlags());
  }
  return Status::OK();
}

Status CheckDataFileVersions(const Manifest& manifest) {
  if (manifest.reader_feature_flags & kFlagMixedDataFileVersions) return Status::OK();
  auto stray = FirstStrayFile(manifest);
  if (!stray) return Status::OK();
  const auto v = V2FileVersion(*stray->file);
  return Status::Invalid("data file '", stray->file->path, "' in fragment ", stray->fragment->id, " has version ",
                         v->first, ".", v->second, ", but the dataset's data storage version is ",
                         stray->expected.first, ".", stray->expected.second,
                         " and the mixed data-file-versions feature bit (256) is not set");
}

Status CheckCanWrite(const Manifest& manifest) {
  LANCE_RETURN_NOT_OK(CheckPairedFlags(manifest.reader_feature_flags, manifest.writer_feature_flags));
  if (manifest.writer_feature_flags & ~SupportedFlags()) {
    return RefuseUnsupported(/*reading=*/false, manifest.writer_feature_flags, SupportedFlags());
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
  // pylance 14 sets bit 256 when a v2 file is not at the manifest's version.
  const bool mixed_file_versions = FirstStrayFile(manifest).has_value();
  for (const auto& frag : manifest.fragments) {
    any_deletions |= frag.deletion_file.has_value();
    any_row_ids |= frag.row_ids.present();
    all_row_ids &= frag.row_ids.present();
    any_overlays |= !frag.overlays.empty();
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
