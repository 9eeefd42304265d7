// lance-cpp: the command line (see shared/design/cli-contract.md).
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <arrow/memory_pool.h>

#include "cli.h"

namespace {

constexpr const char* kUsage =
    "lance-cpp <command> [args]\n"
    "commands:\n"
    "  inspect URI [--version V] [--json]   versions, schema, fragments, flags, indices\n"
    "  versions URI                         one line per version: number timestamp operation\n"
    "  scan URI [--columns a,b.c] [--filter PRED] [--limit N] [--offset N] [--with-row-id]\n"
    "       [--with-row-address] [--version V] [--out FILE] [--format csv|json|table]\n"
    "       [--explain] [--no-index]   the plan instead of rows / never use a scalar index\n"
    "  take URI (--indices I,J,... | --row-ids R,...) [--columns ...] [--out FILE]\n"
    "  count URI [--version V] [--filter PRED]\n"
    "  take-blobs URI COLUMN (--indices I,J,... | --row-ids R,... | --addresses A,...) [--out FILE]\n"
    "       blob values as bytes (large_binary), as pylance's take_blobs\n"
    "  write URI --input FILE [--mode create|append|overwrite] [--data-storage-version legacy|2.0|2.1|2.2]\n"
    "       [--enable-stable-row-ids] [--enable-v2-manifest-paths | --disable-v2-manifest-paths]\n"
    "       [--max-rows-per-file N] [--max-bytes-per-file N] [--quiet]   FILE: Arrow IPC file/stream, Parquet, CSV\n"
    "  delete URI PRED [--quiet]            delete the rows where PRED holds\n"
    "  restore URI VERSION                  commit an old version's content as the latest\n"
    "  tag URI create NAME VERSION | tag URI delete NAME | tag URI list\n"
    "  file inspect IN.lance [--json]       footer version, columns, pages, encodings, global buffers\n"
    "  file read IN.lance [--out FILE] [--format csv|json|table]\n"
    "  file write IN.arrow OUT.lance [--version 2.0|2.1|2.2] [--max-page-bytes N] [--data-cache-bytes N]\n"
    "  update URI --set COL=EXPR [--set ...] [--where PRED] [--quiet]\n"
    "  merge-insert URI --on KEY[,KEY] --input FILE [--when-matched-update-all]\n"
    "       [--when-not-matched-insert-all] [--when-not-matched-by-source-delete [PRED]] [--quiet]\n"
    "  cleanup URI --older-than DURATION [--delete-unverified] [--quiet]   DURATION: seconds or N[s|m|h|d|w]\n"
    "  compact URI [--target-rows-per-fragment N] [--max-rows-per-group N] [--max-bytes-per-file N]\n"
    "       [--materialize-deletions-threshold F] [--no-materialize-deletions] [--defer-index-remap]\n"
    "       [--compaction-mode reencode|try_binary_copy|force_binary_copy] [--data-storage-version V]\n"
    "       [--num-threads N] [--plan [--json]] [--quiet]   merge small fragments, drop deleted rows\n"
    "  verify URI [--all-versions | --version V] [--deep] [--json] [--quiet]   consistency check: one line per\n"
    "       finding (version, check, file, what is wrong), exit 1 on any; --deep decodes every page\n"
    "  config URI list | set KEY=VALUE... [--replace] | unset KEY...\n"
    "       | set-table-metadata / set-schema-metadata KEY=VALUE... [--replace] | unset-table-metadata /\n"
    "       unset-schema-metadata KEY... | set-field-metadata FIELD KEY=VALUE... [--replace]\n"
    "       | unset-field-metadata FIELD KEY...   the config and metadata (UpdateConfig commits)\n"
    "  shallow-clone URI TARGET [--version V|TAG]   a new dataset naming URI's files (no copy)\n"
    "  deep-clone URI TARGET [--version V|TAG]      a new dataset with URI's files copied\n"
    "  branch URI create NAME [--version V|TAG] | branch URI list | branch URI delete NAME\n"
    "  add-columns URI NAME=SQL [NAME=SQL ...] | add-columns URI --null NAME:TYPE [--null ...]\n"
    "  drop-columns URI COL[,COL...]        remove columns from the schema (nested as a.b)\n"
    "  alter-column URI COL [--rename NEW] [--nullable|--not-nullable] [--cast TYPE]   rename, nullability, type\n"
    "  create-index URI COLUMN --type BTREE|BITMAP|LABEL_LIST|ZONEMAP|NGRAM|IVF_FLAT|IVF_SQ [--name N] [--replace] [--rows-per-zone N]\n"
    "                                 a scalar index (default name COLUMN_idx)\n"
    "  optimize-indices URI [--index NAME...]   bring new fragments into the indices\n"
    "  drop-index URI NAME | indices URI [--json]   remove an index / list them with their coverage\n"
    "  search URI (--full-text QUERY | --fts-query-json JSON) [--fts-columns a,b] [--k K] [--filter PRED] [--columns a,b]\n"
    "       [--phrase [--slop N]] [--operator or|and] [--boost B] [--fuzziness N] [--with-row-id] [--out FILE] [--explain]\n"
    "       full-text hits over INVERTED indices, best first, with _score (`lance-cpp search` alone shows the query JSON)\n"
    "  search URI --column COL --vector V1,V2,... [--k K] [--nprobes N] [--refine-factor R] [--metric l2|cosine|dot]\n"
    "       [--filter PRED] [--postfilter] [--columns a,b] [--with-row-id] [--out FILE]\n"
    "       nearest neighbours, nearest first, with _distance (IVF_FLAT/PQ/SQ indices, else exact)\n"
    "  tokenize (TEXT | --input FILE) [tokenizer options]   the tokens of a full-text tokenizer, as JSON\n"
    "--branch NAME (any command): read or write branch NAME instead of main.\n"
    "--storage-option KEY=VALUE (any command, repeatable): pylance's storage_options, e.g. for s3://\n"
    "       aws_endpoint=http://host:port allow_http=true aws_region=... aws_access_key_id=...; AWS_* variables too.\n"
    "Writing commands print one line: what changed, then '; new version N' or '; version N unchanged'.\n"
    "Long ones draw a progress bar on stderr when it is a terminal, unless --quiet.\n";

}  // namespace

// The allocator of the CLI process (a user's ARROW_DEFAULT_MEMORY_POOL
// wins). Arrow's default in the pyarrow wheel, mimalloc, keeps the freed
// pages of every thread mapped: compaction of small fragments peaked at
// ~175 MB with it, ~138 MB with jemalloc at the same speed, ~130 MB with
// the system allocator but ~20% slower (page faults). jemalloc where Arrow
// has it, else the system allocator.
void SetAllocatorPolicy() {
  const auto backends = arrow::SupportedMemoryBackendNames();
  const bool jemalloc = std::find(backends.begin(), backends.end(), "jemalloc") != backends.end();
  setenv("ARROW_DEFAULT_MEMORY_POOL", jemalloc ? "jemalloc" : "system", /*overwrite=*/0);
}

int main(int argc, char** argv) {
  SetAllocatorPolicy();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return lance::cli::ReportUsage("no command given", kUsage);
  const std::string cmd = args.front();
  args.erase(args.begin());
  // --branch NAME works on every command that opens a dataset.
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--branch" || args[i].rfind("--branch=", 0) == 0) {
      std::string name;
      if (args[i] == "--branch") {
        if (i + 1 >= args.size()) return lance::cli::ReportUsage("--branch needs a branch name", kUsage);
        name = args[i + 1];
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      } else {
        name = args[i].substr(9);
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
      }
      if (name.empty()) return lance::cli::ReportUsage("--branch needs a branch name", kUsage);
      lance::cli::BranchOption() = name;
      --i;
    }
  }
  // --storage-option KEY=VALUE (repeatable) too: an s3:// dataset's
  // endpoint, region, credentials, ... (pylance's storage_options).
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--storage-option" || args[i].rfind("--storage-option=", 0) == 0) {
      std::string kv;
      if (args[i] == "--storage-option") {
        if (i + 1 >= args.size()) return lance::cli::ReportUsage("--storage-option needs KEY=VALUE", kUsage);
        kv = args[i + 1];
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      } else {
        kv = args[i].substr(17);
        args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
      }
      if (auto err = lance::cli::AddStorageOption(kv)) return lance::cli::ReportUsage(err->message, kUsage);
      --i;
    }
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << "usage: " << kUsage;
    return lance::cli::kExitOk;
  }
  if (cmd == "inspect") return lance::cli::RunInspect(args);
  if (cmd == "versions") return lance::cli::RunVersions(args);
  if (cmd == "file") return lance::cli::RunFile(args);
  if (cmd == "scan") return lance::cli::RunScan(args);
  if (cmd == "take") return lance::cli::RunTake(args);
  if (cmd == "count") return lance::cli::RunCount(args);
  if (cmd == "take-blobs") return lance::cli::RunTakeBlobs(args);
  if (cmd == "write") return lance::cli::RunWrite(args);
  if (cmd == "delete") return lance::cli::RunDelete(args);
  if (cmd == "restore") return lance::cli::RunRestore(args);
  if (cmd == "tag") return lance::cli::RunTag(args);
  if (cmd == "update") return lance::cli::RunUpdate(args);
  if (cmd == "merge-insert") return lance::cli::RunMergeInsert(args);
  if (cmd == "cleanup") return lance::cli::RunCleanup(args);
  if (cmd == "compact") return lance::cli::RunCompact(args);
  if (cmd == "verify") return lance::cli::RunVerify(args);
  if (cmd == "config") return lance::cli::RunConfig(args);
  if (cmd == "branch") return lance::cli::RunBranch(args);
  if (cmd == "shallow-clone") return lance::cli::RunShallowClone(args);
  if (cmd == "deep-clone") return lance::cli::RunDeepClone(args);
  if (cmd == "add-columns" || cmd == "drop-columns" || cmd == "alter-column") {
    return lance::cli::RunSchemaCommand(cmd, args);
  }
  if (cmd == "tokenize") return lance::cli::RunTokenize(args);
  if (cmd == "search") return lance::cli::RunSearch(args);
  if (cmd == "create-index" || cmd == "drop-index" || cmd == "indices" || cmd == "optimize-indices") {
    return lance::cli::RunIndexCommand(cmd, args);
  }
  return lance::cli::ReportUsage("unknown command '" + cmd + "'", kUsage);
}
