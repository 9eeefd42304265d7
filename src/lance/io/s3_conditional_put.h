// The one conditional PUT of this build: create an S3 object only if no
// object has the key (If-None-Match: *), which Arrow's S3 filesystem cannot
// do. A manifest commit depends on it (docs/object-storage.md section 3).
#pragma once

#include <string>
#include <string_view>

#include "lance/io/s3_config.h"
#include "lance/status.h"

namespace lance::io {

struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
};

/// PUTs `bytes` at `key` of `config.bucket` (SigV4-signed through libcurl
/// unless config.skip_signature). AlreadyExists when the key exists (412)
/// or a concurrent conditional write to it won (409); IOError naming the
/// S3 error code otherwise. Retries 5xx and connection errors up to
/// config.max_retries; `*retried` tells the caller a 412 may be its own
/// earlier attempt.
Status S3PutIfNotExists(const S3Config& config, const S3Credentials& credentials, const std::string& region,
                        const std::string& key, std::string_view bytes, bool* retried);

/// The URL of `key` as S3PutIfNotExists requests it (path style with an
/// endpoint, virtual-hosted without one or when asked), each key segment
/// percent-encoded as SigV4's canonical URI wants.
std::string S3ObjectUrl(const S3Config& config, const std::string& region, const std::string& key);

}  // namespace lance::io
