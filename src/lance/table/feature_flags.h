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
/// Every bit this build knows the meaning of; anything above is unknown.
inline constexpr uint64_t kKnownFlags = (1 << 9) - 1;
/// Bits whose reader and writer halves must be set together and, once set,
/// stay set in every later version (restores included).
inline constexpr uint64_t kStickyPairedFlags = kFlagMixedDataFileVersions;

// A bit is accepted only where lance-cpp implements what it means, and the
// read and write sides are decided separately (rust/lance-table/src/
// feature_flags.rs gives the meanings):
//
//   1 deletion files      read: applied by every scan, take, count and filter.
//                         write: delete merges the old set with the new rows,
//                         update/merge-insert delete the rows they rewrite,
//                         every commit carries the files of untouched fragments.
//   2 stable row ids      read: _rowid and takes by row id go through the
//                         sequences. write: ids assigned at commit, rewritten
//                         rows keep theirs (update, merge-insert), lineage kept.
//   4 v2 format (old)     read and write: it only says "files are v2", which
//                         each data file's own version says too; it is used to
//                         infer the storage version of a manifest that does
//                         not record one. Never set by a commit (as pylance).
//   8 table config        writer-only bit: a writer must carry `config`, which
//                         every commit does (Overwrite upserts into it,
//                         UpdateConfig edits it). The `lance.` keys pylance 14
//                         acts on are honoured: lance.auto_cleanup.* runs the
//                         automatic cleanup after each commit (ops/auto_cleanup.h),
//                         and writes refuse a key whose meaning lance-cpp does
//                         not implement (ops::CheckConfigSupported).
//  16 base paths          read: data, deletion and blob sidecar files are
//                         found through their base id (table/file_locations.h).
//                         write: new files go under the dataset's own root
//                         with no base id, as pylance writes by default; files
//                         of other bases are read through the same rule
//                         (deletions merged, blob values rewritten) and never
//                         removed by cleanup, which only lists the root.
//  32 no transaction file writer-only bit describing one commit: the
//                         transaction is inline only. Readers take the inline
//                         copy first (versions, conflict checks; cleanup has
//                         none to keep). Our commits write both and clear the
//                         bit, as pylance's do, unless disable_transaction_file
//                         is asked for: then inline only, with the bit set.
//  64 data overlay files  only with LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES
//                         set (any value), as pylance 14 release builds;
//                         without it the bit is unknown ("upgrade").
//                         read: every fragment read resolves the overlays
//                         (scan/overlays.h), newest winning, deletions after.
//                         write: overlays are kept in the fragment model and
//                         carried by every commit that keeps a fragment;
//                         rows rewritten elsewhere (update, merge-insert,
//                         compaction) are read through them, so materialized.
// 128 covered index meta  read: no query is answered from an index, so what
//                         `fields` means to an index does not change a result.
//                         write: indices are carried unchanged; rows are only
//                         ever rewritten into new fragments (the old rows
//                         deleted), never in place, so no index carries a
//                         value that a lance-cpp write made stale.
// 256 mixed file versions read: every data file is decoded by the version in
//                         its own footer; without the bit, a file not at the
//                         dataset's version is refused (CheckDataFileVersions).
//                         write: set when a v2 file is not at the manifest's
//                         data storage version (appends and compactions with
//                         another data_storage_version), then kept (sticky,
//                         paired) as the reference.
//
// Where the checks run: Dataset::Open checks the reader flags of the version
// it opens. Every writer (append, overwrite, delete, update, merge-insert,
// restore, cleanup) loads the latest version, the versions it is checked
// against, a restore's source and every version cleanup looks at with both
// checks (FlagCheck::kReadWrite): a commit is built from content it read,
// and a bit it cannot read would be lost when the flags are recomputed.
// Tags and the version list interpret no content (a version number, the
// timestamps and operation names), so no bit matters to them.
/// The bits lance-cpp implements on both sides; bit 64 besides these only
/// with the opt-in (SupportedFlags).
inline constexpr uint64_t kStableFlags = kKnownFlags & ~kFlagUnstableDataOverlayFiles;

/// pylance's opt-in for the unstable data-overlay-files bit: set (to any
/// value, even empty), lance-cpp reads and writes datasets with overlays.
inline constexpr const char* kEnableDataOverlayFilesEnv = "LANCE_ENABLE_UNSTABLE_DATA_OVERLAY_FILES";

/// Whether the opt-in is set in this process's environment.
bool DataOverlayFilesEnabled();
/// The reader and writer bits accepted now: kStableFlags, plus bit 64 when
/// DataOverlayFilesEnabled().
uint64_t SupportedFlags();

/// A readable name for one flag bit ("data overlay files"), or "unknown".
const char* FlagName(uint64_t bit);

/// Refuses a manifest whose paired bits are half set (corrupt) or whose reader
/// flags hold a bit outside SupportedFlags() ("upgrade", naming each bit).
Status CheckCanRead(const Manifest& manifest);
/// The same for writer flags, before any write.
Status CheckCanWrite(const Manifest& manifest);
/// Refuses, without bit 256, a v2 data file whose version is not the
/// manifest's data storage version (or, with none recorded, the first v2
/// file's), naming the fragment and file, as pylance 14 refuses it.
Status CheckDataFileVersions(const Manifest& manifest);
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
