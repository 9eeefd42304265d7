// Reader and writer feature flags: which bits this build understands, the
// checks that refuse a dataset before anything is read or written, and the
// computation of both flag words from a manifest's content at commit.
#pragma once

#include <cstdint>
#include <vector>

#include "lance/index_metadata.h"
#include "lance/manifest.h"
#include "lance/status.h"

namespace lance::table {

inline constexpr uint64_t kFlagDeletionFiles = 1 << 0;
inline constexpr uint64_t kFlagStableRowIds = 1 << 1;
inline constexpr uint64_t kFlagUseV2FormatDeprecated = 1 << 2;
inline constexpr uint64_t kFlagTableConfig = 1 << 3;
inline constexpr uint64_t kFlagBasePaths = 1 << 4;
inline constexpr uint64_t kFlagDisableTransactionFile = 1 << 5;
inline constexpr uint64_t kFlagUnstableDataOverlayFiles = 1 << 6;
inline constexpr uint64_t kFlagCoveredIndexMetadata = 1 << 7;
inline constexpr uint64_t kFlagMixedDataFileVersions = 1 << 8;
/// Every bit this build knows of; anything above is unknown.
inline constexpr uint64_t kKnownFlags = (1 << 9) - 1;
/// Bits whose reader and writer halves must be set together and, once set,
/// stay set in every later version (restores included).
inline constexpr uint64_t kStickyPairedFlags = kFlagMixedDataFileVersions;

/// Set to any value to opt in to the unstable data-overlay-files bit.
inline constexpr const char* kEnableDataOverlayFilesEnv = "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES";

/// The bits this build supports, given whether overlay files are enabled.
uint64_t SupportedFlags(bool overlay_files_enabled);
/// SupportedFlags() with the overlay opt-in read from the environment.
uint64_t SupportedFlags();

/// Refuses a manifest whose paired bits are half set (corrupt) or whose reader
/// flags hold a bit this build does not support ("upgrade").
Status CheckCanRead(const Manifest& manifest);
/// The same for writer flags, before any write.
Status CheckCanWrite(const Manifest& manifest);
/// Refuses one of the paired bits set without the other.
Status CheckPairedFlags(uint64_t reader_flags, uint64_t writer_flags);

struct FeatureFlags {
  uint64_t reader = 0;
  uint64_t writer = 0;
};

/// Both flag words for `manifest` as it is about to be committed, derived from
/// its content: deletion files, stable row ids, config, base paths, overlays,
/// covering index metadata (from `indices`), data files of different v2.x
/// versions, the transaction-file opt-out, and
/// the sticky paired bits of `source` (the manifest it derives from; may be
/// null for a new dataset). `enable_stable_row_ids` requests bit 2 on a
/// dataset being created. Fails when fragments disagree on row ids or the
/// source's paired bits are half set.
Result<FeatureFlags> ComputeFeatureFlags(const Manifest& manifest,
                                         const std::vector<IndexMetadata>& indices,
                                         const Manifest* source, bool enable_stable_row_ids,
                                         bool disable_transaction_file);

}  // namespace lance::table
