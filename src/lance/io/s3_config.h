// The one resolver of S3 settings: storage options + AWS_* environment ->
// S3Config, with pylance 14's key names, aliases and precedence
// (docs/object-storage.md section 1). No network access.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "lance/status.h"
#include "lance/storage_options.h"

namespace lance::io {

struct S3Config {
  std::string bucket;
  std::string key_prefix;  // the dataset's path in the bucket, no leading/trailing '/'
  // The endpoint as given (scheme://host[:port][/path]); empty = AWS.
  std::string endpoint;
  std::string endpoint_scheme;  // "http" / "https"
  std::string endpoint_host;    // host[:port], a virtual-hosted "{bucket}." prefix removed
  // Empty = not configured: resolved from the bucket (AWS) or "us-west-2"
  // (with an endpoint), as pylance.
  std::string region;
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  bool virtual_hosted_style = false;
  bool skip_signature = false;
  bool allow_http = false;
  bool allow_invalid_certificates = false;
  std::string proxy_url;
  double connect_timeout_seconds = 5;   // object_store's defaults
  double request_timeout_seconds = 30;
  int max_retries = 3;                  // client_max_retries
};

/// Whether `uri` is an s3:// URI (the only object store this build opens).
bool IsS3Uri(const std::string& uri);

/// Checks `options` for `uri` (any scheme): keys pylance knows but this
/// build does not implement are refused by name, malformed values too.
/// For s3:// URIs, also resolves the S3 settings, `env` filling in unset
/// keys (nullopt = the process environment).
Result<std::optional<S3Config>> ResolveStorageOptions(
    const std::string& uri, const StorageOptions& options,
    const std::optional<std::map<std::string, std::string>>& env = std::nullopt);

}  // namespace lance::io
