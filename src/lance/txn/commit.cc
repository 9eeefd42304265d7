#include "lance/txn/commit.h"

#include <chrono>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "lance/table/frag_reuse.h"
#include "lance/transaction.pb.h"
#include "lance/txn/backoff.h"
#include "lance/txn/manifest_builder.h"
#include "lance/util/protobuf.h"
#include "lance/util/clock.h"

namespace lance::txn {
namespace {

constexpr const char* kTransactionsDir = "_transactions";
constexpr const char* kVersionsDir = "_versions";
constexpr const char* kVersionHint = "_versions/latest_version_hint.json";

// The transaction committed as version `v`: inline in its manifest, else
// its _transactions/ file. Every writer records one; without it the
// version cannot be checked, so nothing is committed on top of it.
Result<OperationFacts> ReadCommittedFacts(const io::ObjectStore& store, const BaseVersion& v) {
  std::optional<std::string> bytes = v.file.transaction_bytes;
  std::string what = store.FullPath(v.location.path);
  if (!bytes && !v.file.manifest.transaction_file.empty()) {
    const std::string rel = std::string(kTransactionsDir) + "/" + v.file.manifest.transaction_file;
    what = store.FullPath(rel);
    LANCE_ASSIGN_OR_RAISE(bytes, store.ReadAll(rel));
  }
  if (!bytes) {
    return Status::Invalid("version ", v.location.version, " of ", store.uri(),
                           " records no transaction; cannot check it for conflicts");
  }
  return ParseOperationFacts(*bytes, what);
}

// The deletion files `txn` refers to.
std::set<std::string> ReferencedDeletionFiles(const Transaction& txn) {
  std::set<std::string> paths;
  auto add = [&](const std::vector<Fragment>& fragments) {
    for (const auto& f : fragments) {
      if (f.deletion_file) paths.insert(f.deletion_file->RelativePath(f.id));
    }
  };
  if (const auto* d = std::get_if<Delete>(&txn.operation)) add(d->updated_fragments);
  if (const auto* u = std::get_if<Update>(&txn.operation)) add(u->updated_fragments);
  return paths;
}

// Best effort, as the reference: readers list _versions/ and use the hint
// only to start from, so a stale or missing hint is harmless.
void WriteVersionHint(const io::ObjectStore& store, uint64_t version) {
  auto old = store.ReadAll(kVersionHint);
  if (old.ok()) {
    auto json = nlohmann::json::parse(*old, nullptr, /*allow_exceptions=*/false);
    if (json.is_object() && json.contains("version") && json["version"].is_number_unsigned() &&
        json["version"].get<uint64_t>() >= version) {
      return;
    }
  }
  nlohmann::ordered_json hint;
  hint["version"] = version;
  (void)store.Write(kVersionHint, hint.dump());
}

}  // namespace

Status CommitConflict(const std::string& message) {
  return MakeError(ErrorKind::kCommitConflict, "commit conflict: " + message);
}

bool IsCommitConflict(const Status& status) {
  const ErrorKind kind = GetErrorKind(status);
  return kind == ErrorKind::kCommitConflict || kind == ErrorKind::kRetryableCommitConflict;
}

bool IsRetryableConflict(const Status& status) {
  return GetErrorKind(status) == ErrorKind::kRetryableCommitConflict;
}

Result<BaseVersion> LoadVersion(const io::ObjectStore& store, const table::ManifestLocation& location) {
  LANCE_ASSIGN_OR_RAISE(auto bytes, store.ReadAll(location.path));
  LANCE_ASSIGN_OR_RAISE(auto file, table::ParseManifestFile(bytes, store.FullPath(location.path),
                                                            table::FlagCheck::kReadWrite));
  // pylance commits on the indices as load_indices gives them: the bitmaps
  // remapped through a fragment reuse index.
  LANCE_RETURN_NOT_OK(table::ApplyFragReuseToBitmaps(store, &file.indices).status());
  return BaseVersion{location, std::move(file)};
}

Result<std::optional<BaseVersion>> LoadLatestForWrite(const io::ObjectStore& store) {
  LANCE_ASSIGN_OR_RAISE(auto latest, table::FindLatestManifest(store));
  if (!latest) return std::optional<BaseVersion>();
  LANCE_ASSIGN_OR_RAISE(auto base, LoadVersion(store, *latest));
  return std::optional<BaseVersion>(std::move(base));
}

namespace {

// One commit, from the first attempt to the last.
class Committer {
 public:
  Committer(const io::ObjectStore& store, const CommitOptions& options) : store_(store), options_(options) {}

  Result<CommitResult> Run(Transaction txn) {
    const std::set<std::string> callers = ReferencedDeletionFiles(txn);
    Result<CommitResult> result = Loop(std::move(txn));
    // Deletion files a rebase wrote that the committed transaction does not
    // refer to (superseded by a later rebase, or nothing committed), and,
    // once committed, the caller's that a rebase replaced.
    const std::set<std::string> kept =
        result.ok() ? committed_deletion_files_ : std::set<std::string>{};
    for (const auto& path : rebase_written_) {
      if (!kept.count(path)) (void)store_.Delete(path);
    }
    if (result.ok()) {
      for (const auto& path : callers) {
        if (!kept.count(path)) (void)store_.Delete(path);
      }
    }
    return result;
  }

 private:
  Result<CommitResult> Loop(Transaction txn);
  // Checks `txn` against the versions after `checked_up_to_` up to
  // `latest`, and rebases it on `latest` where they allow.
  Result<Transaction> CheckAndRebase(Transaction txn, const BaseVersion& latest);

  const io::ObjectStore& store_;
  const CommitOptions& options_;
  uint64_t checked_up_to_ = 0;
  std::vector<std::string> rebase_written_;
  std::set<std::string> committed_deletion_files_;
};

Result<Transaction> Committer::CheckAndRebase(Transaction txn, const BaseVersion& latest) {
  const uint64_t to = latest.location.version;
  if (to <= checked_up_to_) return txn;
  // The fragments as the transaction read them, for the row-level checks.
  Manifest read_manifest;
  if (!FactsOf(txn.operation).ModifiedFragmentIds().empty()) {
    LANCE_ASSIGN_OR_RAISE(auto loc, table::FindManifest(store_, txn.read_version));
    LANCE_ASSIGN_OR_RAISE(auto read, LoadVersion(store_, loc));
    read_manifest = std::move(read.file.manifest);
  }
  TransactionRebase rebase(std::move(txn), read_manifest, options_.affected_rows);
  for (uint64_t v = checked_up_to_ + 1; v <= to; ++v) {
    LANCE_ASSIGN_OR_RAISE(auto loc, table::FindManifest(store_, v));
    LANCE_ASSIGN_OR_RAISE(auto committed, LoadVersion(store_, loc));
    LANCE_ASSIGN_OR_RAISE(auto theirs, ReadCommittedFacts(store_, committed));
    LANCE_RETURN_NOT_OK(rebase.Check(theirs, v));
  }
  checked_up_to_ = to;
  return rebase.Finish(store_, latest.file.manifest, &rebase_written_);
}

Result<CommitResult> Committer::Loop(Transaction txn) {
  const int attempts = std::max(options_.num_retries, 1);
  const auto start = std::chrono::steady_clock::now();
  SlotBackoff backoff;
  checked_up_to_ = txn.read_version;
  // The caller's copy of the latest version stands in for the first load;
  // if it is stale, the create-if-absent below fails and the loop reloads.
  const BaseVersion* given_base = options_.latest;
  if (given_base && given_base->location.version != txn.read_version) given_base = nullptr;
  uint64_t last_version = 0;
  while (true) {
    const bool trusting_given = given_base != nullptr;
    std::optional<BaseVersion> loaded;
    if (!trusting_given) {
      LANCE_ASSIGN_OR_RAISE(loaded, LoadLatestForWrite(store_));
    }
    given_base = nullptr;  // once
    const BaseVersion* base = trusting_given ? options_.latest : (loaded ? &*loaded : nullptr);
    const uint64_t latest = base ? base->location.version : 0;
    const bool creates = txn.read_version == 0 || std::holds_alternative<Clone>(txn.operation);
    if (base && creates) {
      // Read version 0 means the writer saw no dataset: it creates one.
      return CommitConflict("cannot create dataset " + store_.uri() + ": it already exists (version " +
                            std::to_string(latest) + ")");
    }
    if (base) {
      LANCE_ASSIGN_OR_RAISE(txn, CheckAndRebase(std::move(txn), *base));
    }
    std::optional<BaseVersion> restore_source;
    if (const auto* r = std::get_if<Restore>(&txn.operation)) {
      LANCE_ASSIGN_OR_RAISE(auto loc, table::FindManifest(store_, r->version));
      LANCE_ASSIGN_OR_RAISE(restore_source, LoadVersion(store_, loc));
    }
    BuildInputs inputs;
    inputs.base = base ? &base->file : nullptr;
    inputs.restore_source = restore_source ? &restore_source->file : nullptr;
    inputs.clone_source = options_.clone_source;
    inputs.timestamp_nanos = util::NowNanos();
    LANCE_ASSIGN_OR_RAISE(auto built, BuildManifest(txn, inputs, options_));

    const std::string txn_path =
        options_.disable_transaction_file ? "" : std::string(kTransactionsDir) + "/" + txn.FileName();
    const std::string txn_bytes = txn.Serialize();
    if (!txn_path.empty()) LANCE_RETURN_NOT_OK(store_.Write(txn_path, txn_bytes));
    const auto naming = base ? base->location.naming : options_.new_dataset_naming;
    const uint64_t version = built.manifest.version;
    last_version = version;
    const std::string path = std::string(kVersionsDir) + "/" + table::ManifestFileName(version, naming);
    const std::string bytes = table::SerializeManifestFile(built.manifest, built.indices, &txn_bytes);
    Status put = store_.PutIfNotExists(path, bytes);
    if (put.ok()) {
      // As pylance: no hint where the listing is lexically ordered (S3),
      // there it would cost a GET and a PUT per commit for nothing.
      if (!store_.IsObjectStore()) WriteVersionHint(store_, version);
      committed_deletion_files_ = ReferencedDeletionFiles(txn);
      LANCE_ASSIGN_OR_RAISE(auto committed, table::ParseManifestFile(bytes, path, table::FlagCheck::kNone));
      return CommitResult{version, path, std::move(committed.manifest), std::move(committed.indices),
                          std::move(committed.transaction_bytes), naming};
    }
    // Nothing refers to the transaction file now; the next attempt writes
    // its own.
    if (!txn_path.empty()) (void)store_.Delete(txn_path);
    if (!put.IsAlreadyExists()) return put;
    // Another writer took the version, after this one's own load or after
    // the caller's copy was read: either way a lost race, which counts as
    // an attempt (a --max-retries 1 write that loses it fails).
    if (!base) {
      return CommitConflict("dataset " + store_.uri() + " was created concurrently by another writer");
    }
    // Lost the race for the version: wait a random slot, then check and
    // rebuild on the new latest.
    if (backoff.attempt() == 0) backoff.set_unit(SlotUnitAfter(std::chrono::steady_clock::now() - start));
    if (static_cast<int>(backoff.attempt()) + 1 >= attempts) break;
    std::this_thread::sleep_for(backoff.Next());
  }
  return CommitConflict("failed to commit " + std::string(OperationName(txn.operation)) + " to " + store_.uri() +
                        " after " + std::to_string(attempts) +
                        " attempts: other writers kept committing first (last tried version " +
                        std::to_string(last_version) + ")");
}

}  // namespace

Result<CommitResult> Commit(const io::ObjectStore& store, Transaction txn, const CommitOptions& options) {
  return Committer(store, options).Run(std::move(txn));
}

Result<CommitResult> Commit(const std::string& uri, Transaction txn, const CommitOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri));
  return Commit(*store, std::move(txn), options);
}

}  // namespace lance::txn
