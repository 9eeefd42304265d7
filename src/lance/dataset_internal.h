// What src/ needs of a Dataset beyond its public API: the object store it
// reads through (every operation started from it uses the same one), and
// opening a dataset in a given store. Internal to src/lance.
#pragma once

#include <memory>

#include "lance/dataset.h"
#include "lance/io/object_store.h"
#include "lance/table/frag_reuse.h"
#include "lance/table/manifest_file.h"
#include "lance/table/manifest_location.h"
#include "lance/txn/commit.h"

namespace lance {

struct DatasetAccess {
  /// The store of the dataset's branch (the root itself for main).
  static const std::shared_ptr<io::ObjectStore>& Store(const Dataset& dataset);
  /// The dataset's root, where _refs/ (tags, branches) and tree/ live.
  static const std::shared_ptr<io::ObjectStore>& RootStore(const Dataset& dataset);
  static const table::ManifestLocation& Location(const Dataset& dataset);
  static const table::ManifestFile& File(const Dataset& dataset);
  /// The details of the version's fragment reuse index (null: it has none).
  static const std::shared_ptr<const table::FragReuseDetails>& FragReuse(const Dataset& dataset);
  /// The bytes of a fragment's inline or external row id / version sequence.
  static Result<std::string> SequenceBytes(const Dataset& dataset, const SequenceRef& ref);
  /// Dataset::Open on an already opened store (the dataset root).
  static Result<std::shared_ptr<Dataset>> Open(std::shared_ptr<io::ObjectStore> store, const OpenOptions& options);
  /// The version `committed` made on the branch of `from`, as Checkout of it
  /// would open it, from the manifest the commit already holds: no read of
  /// it back. `from` is null when the commit created the dataset in `store`.
  static Result<std::shared_ptr<Dataset>> FromCommit(const Dataset* from, std::shared_ptr<io::ObjectStore> store,
                                                     txn::CommitResult committed);
};

}  // namespace lance
