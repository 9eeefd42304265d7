// Tags: named versions in _refs/tags/{name}.json (camelCase JSON keys).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "lance/io/object_store.h"
#include "lance/status.h"

namespace lance::table {

struct TagContents {
  std::optional<std::string> branch;  // null = main
  uint64_t version = 0;
  uint64_t manifest_size = 0;
};

/// Parses one tag file. `path` names it in errors.
Result<TagContents> ParseTag(const std::string& json, const std::string& path);
/// Serializes as the reference does: {"branch":...,"version":...,"manifestSize":...}.
std::string SerializeTag(const TagContents& tag);

/// Every tag of the dataset, by name.
Result<std::map<std::string, TagContents>> ListTags(const io::ObjectStore& store);

}  // namespace lance::table
