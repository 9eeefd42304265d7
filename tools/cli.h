// Shared pieces of the lance-cpp command line.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lance/dataset.h"
#include "lance/full_text.h"
#include "lance/retry.h"
#include "lance/status.h"

namespace lance::cli {

/// Exit codes of the contract.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
/// A write lost to a conflicting concurrent commit that retries did not
/// resolve (incompatible, or still conflicting on the last attempt).
inline constexpr int kExitCommitConflict = 3;
/// A write was re-run as often or as long as --max-retries/--retry-timeout
/// allow and still conflicted.
inline constexpr int kExitTooMuchContention = 4;

/// Parsed arguments: positionals in order, and --flag [value] options.
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> options;  // "--json" -> "" for switches
  bool Has(const std::string& flag) const { return options.count(flag) > 0; }
  std::string Get(const std::string& flag, const std::string& def = "") const {
    auto it = options.find(flag);
    return it == options.end() ? def : it->second;
  }
};

/// Thrown nowhere: usage errors are returned as a message.
struct UsageError {
  std::string message;
};

/// Splits argv; `value_flags` take a value, `switch_flags` do not. Anything
/// else starting with "--" is a usage error.
std::optional<UsageError> ParseArgs(const std::vector<std::string>& argv,
                                    const std::vector<std::string>& value_flags,
                                    const std::vector<std::string>& switch_flags, Args* out);

/// ISO-8601 UTC with microseconds: 2026-11-29T12:00:00.123456Z.
std::string FormatTimestamp(int64_t nanos);

int RunInspect(const std::vector<std::string>& argv);
int RunVersions(const std::vector<std::string>& argv);
int RunFile(const std::vector<std::string>& argv);
/// `file write` (tools/file_write_command.cc).
int RunFileWrite(const std::vector<std::string>& argv);
int RunScan(const std::vector<std::string>& argv);
int RunTake(const std::vector<std::string>& argv);
int RunCount(const std::vector<std::string>& argv);
/// `take-blobs` (tools/take_blobs_command.cc).
int RunTakeBlobs(const std::vector<std::string>& argv);
int RunWrite(const std::vector<std::string>& argv);
int RunDelete(const std::vector<std::string>& argv);
int RunRestore(const std::vector<std::string>& argv);
int RunTag(const std::vector<std::string>& argv);
/// `update`, `merge-insert`, `cleanup` (tools/row_ops_commands.cc).
int RunUpdate(const std::vector<std::string>& argv);
int RunMergeInsert(const std::vector<std::string>& argv);
int RunCleanup(const std::vector<std::string>& argv);
/// `shallow-clone`, `deep-clone` (tools/clone_command.cc).
int RunShallowClone(const std::vector<std::string>& argv);
int RunDeepClone(const std::vector<std::string>& argv);
/// `branch` (tools/branch_command.cc).
int RunBranch(const std::vector<std::string>& argv);
/// `verify` (tools/verify_command.cc).
int RunVerify(const std::vector<std::string>& argv);
/// `compact` (tools/compact_command.cc).
int RunCompact(const std::vector<std::string>& argv);
/// `config` (tools/config_command.cc).
int RunConfig(const std::vector<std::string>& argv);
/// `add-columns`, `drop-columns`, `alter-column` (tools/schema_commands.cc).
int RunSchemaCommand(const std::string& cmd, const std::vector<std::string>& argv);
/// `create-index`, `drop-index`, `indices`, `optimize-indices` (tools/index_commands.cc).
int RunIndexCommand(const std::string& cmd, const std::vector<std::string>& argv);

/// `tokenize` (tools/fts_commands.cc), and the tokenizer flags it shares
/// with create-index --type INVERTED.
int RunTokenize(const std::vector<std::string>& argv);
int RunSearch(const std::vector<std::string>& argv);
/// `search --column COL --vector ...` (tools/vector_search_command.cc).
int RunVectorSearch(const std::vector<std::string>& argv);
extern const std::vector<std::string> kTokenizerValueFlags;
extern const std::vector<std::string> kTokenizerSwitchFlags;
std::optional<UsageError> ParseTokenizerFlags(const Args& args, InvertedIndexParams* params);

/// "1 row", "2 rows" (`plural` defaults to `singular` + "s").
std::string Counted(uint64_t n, const std::string& singular, const std::string& plural = "");

/// The one line every writing command prints on stdout: what it changed,
/// then "; new version N" for the version it committed, or "; version N
/// unchanged" (the latest version) when it committed none. E.g.
/// "updated 5 rows; new version 4", "deleted 0 rows; version 3 unchanged".
void PrintChange(const std::string& what, uint64_t version, bool committed);

/// The branch every command reads and writes (the global --branch NAME,
/// taken out of the arguments by main); empty = main.
std::string& BranchOption();
/// The storage options every command opens and writes datasets with (the
/// global, repeatable --storage-option KEY=VALUE, taken out of the
/// arguments by main).
StorageOptions& StorageOptionsFlag();
/// Adds "KEY=VALUE" to StorageOptionsFlag(); a usage error without '=' or
/// with a key given twice.
std::optional<UsageError> AddStorageOption(const std::string& key_value);
/// Dataset::Open on BranchOption()'s branch, with StorageOptionsFlag().
Result<std::shared_ptr<Dataset>> OpenDataset(const std::string& uri, OpenOptions options = {});

/// The latest version of the dataset at `uri`.
Result<uint64_t> LatestVersion(const std::string& uri);

/// The retry flags of writing commands: --max-retries N (re-runs of a
/// delete/update/merge-insert; commit attempts of a write) and
/// --retry-timeout SECONDS.
inline const std::vector<std::string> kRetryFlags = {"--max-retries", "--retry-timeout"};
std::optional<UsageError> ParseRetryFlags(const Args& args, bool operation_level, RetryParams* out);

/// Prints "error: ..." for a failed Status and returns kExitError, or the
/// exit code of its conflict kind.
int ReportError(const Status& status);
/// Prints "error: ..." and the command's usage, returns kExitUsage.
int ReportUsage(const std::string& message, const char* usage);

}  // namespace lance::cli
