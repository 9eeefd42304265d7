#include "lance/table/branches.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "lance/util/random.h"

namespace lance::table {
namespace {

constexpr const char* kBranchesDir = "_refs/branches";
constexpr std::string_view kSuffix = ".json";

Status InvalidRef(const std::string& why) { return Status::Invalid("Ref is invalid: ", why); }

std::string Hex(const uint8_t* bytes, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0xF];
  }
  return out;
}

// The reference's deterministic id for branch files written before ids
// were stored (BranchIdentifier::synthetic_identifier): two FNV-1a hashes.
std::string SyntheticId(const std::string& name, const BranchContents& b) {
  const std::string input = "branch_name=" + name + "\nparent_branch=" + b.parent_branch.value_or("") +
                            "\nparent_version=" + std::to_string(b.parent_version) +
                            "\ncreate_at=" + std::to_string(b.create_at);
  auto fnv = [&](uint64_t seed) {
    uint64_t h = seed;
    for (unsigned char c : input) h = (h ^ c) * 0x100000001b3ULL;
    return h;
  };
  const uint64_t first = fnv(0xcbf29ce484222325ULL);
  const uint64_t second = fnv(0xcbf29ce484222325ULL ^ 0x9e3779b97f4a7c15ULL);
  uint8_t bytes[16];
  for (int i = 0; i < 8; ++i) {
    bytes[i] = static_cast<uint8_t>(first >> (56 - 8 * i));
    bytes[8 + i] = static_cast<uint8_t>(second >> (56 - 8 * i));
  }
  return Hex(bytes, 16);
}

}  // namespace

std::optional<uint64_t> BranchContents::ReferencedVersionOf(
    const std::vector<std::pair<uint64_t, std::string>>& ancestor) const {
  const size_t n = ancestor.size();
  if (version_mapping.size() <= n) return std::nullopt;
  for (size_t i = 0; i < n; ++i) {
    if (version_mapping[i] != ancestor[i]) return std::nullopt;
  }
  if (version_mapping[n].first == 0) return std::nullopt;
  return version_mapping[n].first;
}

Status CheckBranchName(const std::string& name) {
  if (name.empty()) return InvalidRef("Branch name cannot be empty");
  if (name.front() == '/' || name.back() == '/') return InvalidRef("Branch name cannot start or end with a '/'");
  if (name.find("//") != std::string::npos) return InvalidRef("Branch name cannot contain consecutive '/'");
  if (name.find("..") != std::string::npos || name.find('\\') != std::string::npos) {
    return InvalidRef("Branch name cannot contain '..' or '\\'");
  }
  size_t start = 0;
  while (true) {
    const size_t slash = name.find('/', start);
    const std::string segment = name.substr(start, slash - start);
    for (unsigned char c : segment) {
      if (!(std::isalnum(c) || c == '.' || c == '-' || c == '_')) {
        return InvalidRef("Branch segment '" + segment +
                          "' contains invalid characters. Only alphanumeric, '.', '-', '_' are allowed.");
      }
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (name.ends_with(".lock")) return InvalidRef("Branch name cannot end with '.lock'");
  if (name == kMainBranch) {
    return InvalidRef("\"main\" is reserved for the default branch; use a different branch name");
  }
  return Status::OK();
}

std::optional<std::string> StandardizeBranch(const std::string& name) {
  if (name.empty() || name == kMainBranch) return std::nullopt;
  return name;
}

std::string BranchFilePath(const std::string& name) {
  std::string encoded;
  for (char c : name) encoded += c == '/' ? std::string("%2F") : std::string(1, c);
  return std::string(kBranchesDir) + "/" + encoded + std::string(kSuffix);
}

std::string BranchDirectory(const std::string& name) { return "tree/" + name; }

Result<std::shared_ptr<io::ObjectStore>> BranchRoot(const io::ObjectStore& store, const std::string& name) {
  const std::string suffix = "/" + BranchDirectory(name);
  const std::string full = store.FullPath("");
  std::string uri = store.uri();
  while (uri.size() > 1 && uri.back() == '/') uri.pop_back();
  if (!full.ends_with(suffix) || !uri.ends_with(suffix)) {
    return Status::Invalid("dataset ", store.uri(), " is branch ", name, " but is not at tree/", name,
                           " of a dataset root");
  }
  return store.WithRoot(full.substr(0, full.size() - suffix.size()), uri.substr(0, uri.size() - suffix.size()));
}

Result<BranchContents> ParseBranch(const std::string& text, const std::string& name, const std::string& path) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string& why) { return Status::Invalid("corrupt branch file ", path, ": ", why); };
  if (json.is_discarded() || !json.is_object()) return bad("not a JSON object");
  BranchContents b;
  auto number = [&](const char* key, uint64_t* out) -> Status {
    auto it = json.find(key);
    if (it == json.end() || !it->is_number_unsigned()) return bad(std::string("missing or non-integer \"") + key + "\"");
    *out = it->get<uint64_t>();
    return Status::OK();
  };
  LANCE_RETURN_NOT_OK(number("parentVersion", &b.parent_version));
  LANCE_RETURN_NOT_OK(number("createAt", &b.create_at));
  LANCE_RETURN_NOT_OK(number("manifestSize", &b.manifest_size));
  if (auto it = json.find("parentBranch"); it != json.end() && it->is_string()) b.parent_branch = it->get<std::string>();
  if (auto it = json.find("metadata"); it != json.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (v.is_string()) b.metadata[k] = v.get<std::string>();
    }
  }
  auto id = json.find("identifier");
  if (id != json.end()) {
    auto mapping = id->find("version_mapping");
    if (!id->is_object() || mapping == id->end() || !mapping->is_array()) return bad("bad \"identifier\"");
    for (const auto& entry : *mapping) {
      if (!entry.is_array() || entry.size() != 2 || !entry[0].is_number_unsigned() || !entry[1].is_string()) {
        return bad("bad \"identifier\" entry");
      }
      b.version_mapping.emplace_back(entry[0].get<uint64_t>(), entry[1].get<std::string>());
    }
  } else {
    b.version_mapping = {{0, SyntheticId(name, b)}};
  }
  return b;
}

std::string SerializeBranch(const BranchContents& b) {
  nlohmann::ordered_json json;
  json["parentBranch"] = b.parent_branch ? nlohmann::ordered_json(*b.parent_branch) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json mapping = nlohmann::ordered_json::array();
  for (const auto& [v, id] : b.version_mapping) mapping.push_back(nlohmann::ordered_json::array({v, id}));
  json["identifier"]["version_mapping"] = mapping;
  json["parentVersion"] = b.parent_version;
  json["createAt"] = b.create_at;
  json["manifestSize"] = b.manifest_size;
  json["metadata"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : b.metadata) json["metadata"][k] = v;
  return json.dump(2);
}

Result<std::map<std::string, BranchContents>> ListBranches(const io::ObjectStore& root) {
  std::map<std::string, BranchContents> out;
  // Some stores keep an encoded '/' as a nested path: list recursively.
  LANCE_ASSIGN_OR_RAISE(auto files, root.ListFilesRecursive(kBranchesDir));
  for (const auto& f : files) {
    std::string_view rel = f.name;
    if (!rel.ends_with(kSuffix)) continue;
    std::string name;
    const std::string_view stem = rel.substr(0, rel.size() - kSuffix.size());
    for (size_t i = 0; i < stem.size(); ++i) {
      if (stem.compare(i, 3, "%2F") == 0 || stem.compare(i, 3, "%2f") == 0) {
        name += '/';
        i += 2;
      } else {
        name += stem[i];
      }
    }
    const std::string path = std::string(kBranchesDir) + "/" + f.name;
    LANCE_ASSIGN_OR_RAISE(auto text, root.ReadAll(path));
    LANCE_ASSIGN_OR_RAISE(auto branch, ParseBranch(text, name, root.FullPath(path)));
    out.emplace(std::move(name), std::move(branch));
  }
  return out;
}

std::string NewBranchId() {
  const auto b = util::RandomUuidBytes();
  return Hex(b.data(), b.size());
}

}  // namespace lance::table
