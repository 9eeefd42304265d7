#include "lance/table/tags.h"

#include <nlohmann/json.hpp>

namespace lance::table {
namespace {
constexpr const char* kTagsDir = "_refs/tags";
constexpr std::string_view kTagSuffix = ".json";
}  // namespace

Result<TagContents> ParseTag(const std::string& text, const std::string& path) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return Status::Invalid("corrupt tag file ", path, ": not a JSON object");
  }
  TagContents tag;
  auto version = json.find("version");
  if (version == json.end() || !version->is_number_unsigned()) {
    return Status::Invalid("corrupt tag file ", path, ": missing or non-integer \"version\"");
  }
  tag.version = version->get<uint64_t>();
  if (auto it = json.find("branch"); it != json.end() && it->is_string()) {
    tag.branch = it->get<std::string>();
  }
  if (auto it = json.find("manifestSize"); it != json.end() && it->is_number_unsigned()) {
    tag.manifest_size = it->get<uint64_t>();
  }
  return tag;
}

std::string SerializeTag(const TagContents& tag) {
  nlohmann::ordered_json json;
  json["branch"] = tag.branch ? nlohmann::ordered_json(*tag.branch) : nlohmann::ordered_json(nullptr);
  json["version"] = tag.version;
  json["manifestSize"] = tag.manifest_size;
  return json.dump();
}

Result<std::map<std::string, TagContents>> ListTags(const io::ObjectStore& store) {
  std::map<std::string, TagContents> tags;
  LANCE_ASSIGN_OR_RAISE(auto files, store.ListFiles(kTagsDir));
  for (const auto& f : files) {
    std::string_view name = f.name;
    if (!name.ends_with(kTagSuffix)) continue;
    const std::string rel = std::string(kTagsDir) + "/" + f.name;
    LANCE_ASSIGN_OR_RAISE(auto text, store.ReadAll(rel));
    LANCE_ASSIGN_OR_RAISE(auto tag, ParseTag(text, store.FullPath(rel)));
    tags.emplace(std::string(name.substr(0, name.size() - kTagSuffix.size())), std::move(tag));
  }
  return tags;
}

}  // namespace lance::table
