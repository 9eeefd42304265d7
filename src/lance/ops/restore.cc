// Restore: an older version's content committed as the new latest version.
#include "lance/io/object_store.h"
#include "lance/operations.h"
#include "lance/txn/commit.h"

namespace lance {

Result<uint64_t> RestoreVersion(const std::string& uri, uint64_t version) {
  LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri));
  LANCE_ASSIGN_OR_RAISE(auto base, txn::LoadLatestForWrite(*store));
  if (!base) return Status::IOError("dataset not found: ", uri);
  // Fail early, before any file is written, on a version that is not there.
  LANCE_RETURN_NOT_OK(table::FindManifest(*store, version).status());
  auto t = txn::Transaction::Make(base->location.version, txn::Restore{version});
  LANCE_ASSIGN_OR_RAISE(auto result, txn::Commit(*store, std::move(t)));
  return result.version;
}

}  // namespace lance
