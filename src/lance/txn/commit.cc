#include "lance/txn/commit.h"

#include <chrono>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "lance/transaction.pb.h"
#include "lance/txn/manifest_builder.h"
#include "lance/util/protobuf.h"

namespace lance::txn {
namespace {

constexpr const char* kTransactionsDir = "_transactions";
constexpr const char* kVersionsDir = "_versions";
constexpr const char* kVersionHint = "_versions/latest_version_hint.json";

class CommitConflictDetail : public arrow::StatusDetail {
 public:
  const char* type_id() const override { return "lance::txn::CommitConflict"; }
  std::string ToString() const override { return "commit conflict"; }
};

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What a committed transaction changed, as far as conflicts go.
struct CommittedChange {
  std::string operation;
  std::set<uint64_t> fragment_ids;  // fragments it modified or removed
};

Result<CommittedChange> ReadCommittedChange(const io::ObjectStore& store, const BaseVersion& v) {
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
  pb::table::Transaction proto;
  if (!util::ParseMessage(*bytes, &proto)) {
    return Status::Invalid("corrupt transaction ", what, ": not a valid Transaction protobuf message");
  }
  CommittedChange c;
  switch (proto.operation_case()) {
    case pb::table::Transaction::kAppend: c.operation = "Append"; break;
    case pb::table::Transaction::kDelete:
      c.operation = "Delete";
      for (const auto& f : proto.delete_().updated_fragments()) c.fragment_ids.insert(f.id());
      for (uint64_t id : proto.delete_().deleted_fragment_ids()) c.fragment_ids.insert(id);
      break;
    case pb::table::Transaction::kUpdate:
      c.operation = "Update";
      for (const auto& f : proto.update().updated_fragments()) c.fragment_ids.insert(f.id());
      for (uint64_t id : proto.update().removed_fragment_ids()) c.fragment_ids.insert(id);
      break;
    case pb::table::Transaction::kOverwrite: c.operation = "Overwrite"; break;
    case pb::table::Transaction::kRestore: c.operation = "Restore"; break;
    case pb::table::Transaction::kCreateIndex: c.operation = "CreateIndex"; break;
    case pb::table::Transaction::kRewrite: c.operation = "Rewrite"; break;
    case pb::table::Transaction::kMerge: c.operation = "Merge"; break;
    case pb::table::Transaction::kDataReplacement: c.operation = "DataReplacement"; break;
    case pb::table::Transaction::kUpdateMemWalState: c.operation = "UpdateMemWalState"; break;
    default: c.operation = "Other"; break;
  }
  return c;
}

// The fragments a Delete or Update of ours touches.
std::set<uint64_t> TouchedFragments(const Operation& op) {
  std::set<uint64_t> ids;
  if (const auto* d = std::get_if<Delete>(&op)) {
    for (const auto& f : d->updated_fragments) ids.insert(f.id);
    ids.insert(d->deleted_fragment_ids.begin(), d->deleted_fragment_ids.end());
  } else if (const auto* u = std::get_if<Update>(&op)) {
    for (const auto& f : u->updated_fragments) ids.insert(f.id);
    ids.insert(u->removed_fragment_ids.begin(), u->removed_fragment_ids.end());
  }
  return ids;
}

// The reference's conflict matrix, for the operations this library commits.
// Cases it resolves by a row-level rebase or a retry are refused here.
Status CheckCompatible(const Transaction& mine, const CommittedChange& theirs, uint64_t their_version) {
  const std::string op = OperationName(mine.operation);
  if (op == "Overwrite" || op == "Restore") return Status::OK();
  auto conflict = [&](const char* why) {
    return CommitConflict(op + " based on version " + std::to_string(mine.read_version) +
                          " conflicts with the " + theirs.operation + " committed as version " +
                          std::to_string(their_version) + why);
  };
  if (theirs.operation == "Overwrite" || theirs.operation == "Restore" ||
      theirs.operation == "UpdateMemWalState") {
    return conflict("");
  }
  if (op == "Append") return Status::OK();
  // Delete / Update.
  if (theirs.operation == "Rewrite" || theirs.operation == "Merge" ||
      theirs.operation == "DataReplacement" || theirs.operation == "Other") {
    return conflict("");
  }
  if (theirs.operation == "Delete" || theirs.operation == "Update") {
    for (uint64_t id : TouchedFragments(mine.operation)) {
      if (theirs.fragment_ids.count(id)) return conflict(" (both modify the same fragments)");
    }
  }
  return Status::OK();
}

// Checks `txn` against every version committed after `from` up to `to`.
Status CheckNewerVersions(const io::ObjectStore& store, const Transaction& txn, uint64_t from, uint64_t to) {
  for (uint64_t v = from + 1; v <= to; ++v) {
    LANCE_ASSIGN_OR_RAISE(auto loc, table::FindManifest(store, v));
    LANCE_ASSIGN_OR_RAISE(auto committed, LoadVersion(store, loc));
    LANCE_ASSIGN_OR_RAISE(auto change, ReadCommittedChange(store, committed));
    LANCE_RETURN_NOT_OK(CheckCompatible(txn, change, v));
  }
  return Status::OK();
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
  return Status(arrow::StatusCode::Invalid, "commit conflict: " + message,
                std::make_shared<CommitConflictDetail>());
}

bool IsCommitConflict(const Status& status) {
  return status.detail() != nullptr &&
         std::string(status.detail()->type_id()) == "lance::txn::CommitConflict";
}

Result<BaseVersion> LoadVersion(const io::ObjectStore& store, const table::ManifestLocation& location) {
  LANCE_ASSIGN_OR_RAISE(auto bytes, store.ReadAll(location.path));
  LANCE_ASSIGN_OR_RAISE(auto file, table::ParseManifestFile(bytes, store.FullPath(location.path),
                                                            table::FlagCheck::kReadWrite));
  return BaseVersion{location, std::move(file)};
}

Result<std::optional<BaseVersion>> LoadLatestForWrite(const io::ObjectStore& store) {
  LANCE_ASSIGN_OR_RAISE(auto latest, table::FindLatestManifest(store));
  if (!latest) return std::optional<BaseVersion>();
  LANCE_ASSIGN_OR_RAISE(auto base, LoadVersion(store, *latest));
  return std::optional<BaseVersion>(std::move(base));
}

Result<CommitResult> Commit(const io::ObjectStore& store, Transaction txn, const CommitOptions& options) {
  const bool is_append = std::holds_alternative<Append>(txn.operation);
  const int attempts = std::max(options.max_attempts, 1);
  uint64_t checked_up_to = txn.read_version;
  // The caller's copy of the latest version stands in for the first load;
  // if it is stale, the create-if-absent below fails and the loop reloads.
  const BaseVersion* given_base = options.latest;
  if (given_base && given_base->location.version != txn.read_version) given_base = nullptr;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    const bool trusting_given = given_base != nullptr;
    std::optional<BaseVersion> loaded;
    if (!trusting_given) {
      LANCE_ASSIGN_OR_RAISE(loaded, LoadLatestForWrite(store));
    }
    given_base = nullptr;  // once
    const BaseVersion* base = trusting_given ? options.latest : (loaded ? &*loaded : nullptr);
    const uint64_t latest = base ? base->location.version : 0;
    if (base && txn.read_version == 0) {
      // Read version 0 means the writer saw no dataset: it creates one.
      return CommitConflict("cannot create dataset " + store.uri() + ": it already exists (version " +
                            std::to_string(latest) + ")");
    }
    if (latest > checked_up_to) {
      LANCE_RETURN_NOT_OK(CheckNewerVersions(store, txn, checked_up_to, latest));
      checked_up_to = latest;
    }
    std::optional<BaseVersion> restore_source;
    if (const auto* r = std::get_if<Restore>(&txn.operation)) {
      LANCE_ASSIGN_OR_RAISE(auto loc, table::FindManifest(store, r->version));
      LANCE_ASSIGN_OR_RAISE(restore_source, LoadVersion(store, loc));
    }
    BuildInputs inputs;
    inputs.base = base ? &base->file : nullptr;
    inputs.restore_source = restore_source ? &restore_source->file : nullptr;
    inputs.timestamp_nanos = NowNanos();
    LANCE_ASSIGN_OR_RAISE(auto built, BuildManifest(txn, inputs, options));

    const std::string txn_bytes = txn.Serialize();
    LANCE_RETURN_NOT_OK(store.Write(std::string(kTransactionsDir) + "/" + txn.FileName(), txn_bytes));
    const auto naming = base ? base->location.naming : options.new_dataset_naming;
    const uint64_t version = built.manifest.version;
    const std::string path =
        std::string(kVersionsDir) + "/" + table::ManifestFileName(version, naming);
    const std::string bytes = table::SerializeManifestFile(built.manifest, built.indices, &txn_bytes);
    Status put = store.PutIfNotExists(path, bytes);
    if (put.ok()) {
      WriteVersionHint(store, version);
      LANCE_ASSIGN_OR_RAISE(auto committed, table::ParseManifestFile(bytes, path, table::FlagCheck::kNone));
      return CommitResult{version, path, std::move(committed.manifest)};
    }
    if (!put.IsAlreadyExists() || !is_append) {
      // Nothing refers to the transaction file now; an Append rewrites it.
      (void)store.Delete(std::string(kTransactionsDir) + "/" + txn.FileName());
    }
    if (!put.IsAlreadyExists()) return put;
    if (trusting_given) {
      // Another writer committed after the caller loaded: check against it
      // and rebuild, as if nothing had been given. Not an attempt of its own.
      --attempt;
      continue;
    }
    if (!base) {
      return CommitConflict("dataset " + store.uri() + " was created concurrently by another writer");
    }
    if (!is_append) {
      return CommitConflict(std::string(OperationName(txn.operation)) + ": version " +
                            std::to_string(version) + " of " + store.uri() +
                            " was committed concurrently by another writer");
    }
    // Lost the race: wait a little (randomized), then rebuild on the new latest.
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + (std::hash<std::string>{}(txn.uuid) + attempt) % 20));
  }
  return CommitConflict("failed to commit " + std::string(OperationName(txn.operation)) + " to " +
                        store.uri() + " after " + std::to_string(attempts) + " attempts");
}

Result<CommitResult> Commit(const std::string& uri, Transaction txn, const CommitOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri));
  return Commit(*store, std::move(txn), options);
}

}  // namespace lance::txn
