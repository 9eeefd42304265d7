// Storage options: pylance's `storage_options` dict, passed where a dataset
// is opened or written (OpenOptions, WriteParams, the CLI's
// --storage-option KEY=VALUE, the C ABI, the Python binding).
//
// Keys are pylance's (object_store's names and aliases, matched
// case-insensitively): for s3:// URIs aws_endpoint, allow_http, aws_region,
// aws_access_key_id, ... and AWS_* environment variables fill in what the
// options leave unset. A key pylance knows but lance-cpp does not implement
// is refused by name; a key pylance ignores is ignored. docs/object-storage.md
// lists them.
#pragma once

#include <map>
#include <string>

namespace lance {

using StorageOptions = std::map<std::string, std::string>;

}  // namespace lance
