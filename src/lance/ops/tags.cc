// Tag creation and removal (reading tags is Dataset::Tags).
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>

#include <nlohmann/json.hpp>

#include "lance/io/object_store.h"
#include "lance/operations.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/table/manifest_location.h"

namespace lance {
namespace {

std::string TagPath(const std::string& name) { return "_refs/tags/" + name + ".json"; }

Status CheckTagName(const std::string& name) {
  auto bad = [&](const char* why) { return Status::Invalid("invalid tag name '", name, "': ", why); };
  if (name.empty()) return bad("it is empty");
  for (unsigned char c : name) {
    if (!(std::isalnum(c) || c == '.' || c == '-' || c == '_')) {
      return bad("only letters, digits, '.', '-' and '_' are allowed");
    }
  }
  if (name.front() == '.') return bad("it begins with a dot");
  if (name.back() == '.') return bad("it ends with a dot");
  if (name.ends_with(".lock")) return bad("it ends with .lock");
  return Status::OK();
}

// RFC 3339 with nanoseconds, as the reference's chrono serializes.
std::string NowRfc3339() {
  const auto now = std::chrono::system_clock::now();
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char frac[16];
  std::snprintf(frac, sizeof frac, ".%09lldZ", static_cast<long long>(ns % 1000000000));
  return std::string(buf) + frac;
}

}  // namespace

Status ops::CreateTagIn(const io::ObjectStore& store, const io::ObjectStore& versions,
                        const std::optional<std::string>& branch, const std::string& name, uint64_t version) {
  LANCE_RETURN_NOT_OK(CheckTagName(name));
  LANCE_ASSIGN_OR_RAISE(auto loc, table::FindManifest(versions, version));
  LANCE_ASSIGN_OR_RAISE(int64_t size, versions.Size(loc.path));
  const std::string now = NowRfc3339();
  nlohmann::ordered_json json;
  json["branch"] = branch ? nlohmann::ordered_json(*branch) : nlohmann::ordered_json(nullptr);
  json["version"] = version;
  json["createdAt"] = now;
  json["updatedAt"] = now;
  json["manifestSize"] = size;
  json["metadata"] = nlohmann::ordered_json::object();
  Status st = store.PutIfNotExists(TagPath(name), json.dump(2));
  if (st.IsAlreadyExists()) return Status::Invalid("tag '", name, "' already exists in ", store.uri());
  return st;
}

Status ops::DeleteTagIn(const io::ObjectStore& store, const std::string& name) {
  LANCE_RETURN_NOT_OK(CheckTagName(name));
  LANCE_ASSIGN_OR_RAISE(bool exists, store.Exists(TagPath(name)));
  if (!exists) return Status::KeyError("tag '", name, "' does not exist in ", store.uri());
  return store.Delete(TagPath(name));
}

}  // namespace lance
