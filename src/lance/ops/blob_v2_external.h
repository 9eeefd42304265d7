// External blob v2 values: a URI (optionally a byte range of it) stored by
// reference. pylance stores a URI under one of the dataset's registered
// (non-root) base paths as a path relative to that base, with the base's id
// as blob_id; any other URI only when allowed, as an absolute URI with
// blob_id 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lance/manifest.h"
#include "lance/status.h"

namespace lance::ops {

struct BlobV2ExternalPolicy {
  /// The dataset's registered base paths (dataset roots never match).
  std::vector<BasePath> bases;
  /// pylance's allow_external_blob_outside_bases: store URIs outside every
  /// base as absolute URIs instead of refusing them.
  bool allow_outside_bases = false;
};

/// How an external value is stored: the descriptor's blob_id and blob_uri.
struct ExternalBlobRef {
  uint32_t base_id = 0;  // 0 = `uri` is absolute
  std::string uri;
};

/// Resolves `uri` (the input of field `field`) as pylance does, or says why
/// it cannot be stored.
Result<ExternalBlobRef> ResolveExternalBlobUri(const std::string& uri, const BlobV2ExternalPolicy& policy,
                                               const std::string& field);

}  // namespace lance::ops
