// The JSON forms of compaction plans, tasks and results (the distributed
// form: a task runs wherever its JSON goes, its result comes back as JSON).
// Fragments travel as base64 of their DataFragment protobuf, the manifest's
// own encoding, so nothing about them is lost on the way.
#include <arrow/util/base64.h>

#include <nlohmann/json.hpp>

#include "lance/compaction.h"
#include "lance/table/manifest_proto.h"

namespace lance {
namespace {

using Json = nlohmann::ordered_json;

const char* ModeName(CompactionMode mode) {
  switch (mode) {
    case CompactionMode::kReencode: return "reencode";
    case CompactionMode::kTryBinaryCopy: return "try_binary_copy";
    case CompactionMode::kForceBinaryCopy: return "force_binary_copy";
  }
  return "reencode";
}

Json OptionalNumber(const std::optional<uint64_t>& v) { return v ? Json(*v) : Json(nullptr); }

Json FragmentsToJson(const std::vector<Fragment>& fragments) {
  Json out = Json::array();
  for (const auto& f : fragments) {
    pb::table::DataFragment proto;
    table::FragmentToProto(f, &proto);
    out.push_back(arrow::util::base64_encode(proto.SerializeAsString()));
  }
  return out;
}

Result<std::vector<Fragment>> FragmentsFromJson(const Json& json, const std::string& what) {
  if (!json.is_array()) return Status::Invalid(what, ": expected an array of fragments");
  std::vector<Fragment> out;
  for (const auto& item : json) {
    if (!item.is_string()) return Status::Invalid(what, ": a fragment is not a base64 string");
    auto bytes = arrow::util::base64_decode(item.get<std::string>());
    pb::table::DataFragment proto;
    if (!bytes.ok() || !proto.ParseFromString(*bytes)) {
      return Status::Invalid(what, ": a fragment is not a DataFragment message");
    }
    LANCE_ASSIGN_OR_RAISE(auto f, table::FragmentFromProto(proto, what));
    out.push_back(std::move(f));
  }
  return out;
}

Result<Json> Parse(const std::string& text, const std::string& what) {
  auto json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return Status::Invalid(what, ": not a JSON object");
  return json;
}

Result<uint64_t> Number(const Json& json, const char* key, const std::string& what) {
  if (!json.contains(key) || !json[key].is_number_unsigned()) {
    return Status::Invalid(what, ": '", key, "' must be a non-negative integer");
  }
  return json[key].get<uint64_t>();
}

Result<std::optional<uint64_t>> OptionalNumberFrom(const Json& json, const char* key, const std::string& what) {
  if (!json.contains(key) || json[key].is_null()) return std::optional<uint64_t>();
  LANCE_ASSIGN_OR_RAISE(uint64_t v, Number(json, key, what));
  return std::optional<uint64_t>(v);
}

}  // namespace

std::string CompactionPlanToJson(const CompactionPlan& plan) {
  Json out;
  out["read_version"] = plan.read_version;
  out["tasks"] = Json::array();
  for (const auto& task : plan.tasks) {
    Json t;
    t["read_version"] = task.read_version;
    t["fragment_ids"] = task.fragment_ids;
    out["tasks"].push_back(std::move(t));
  }
  return out.dump();
}

std::string CompactionTaskToJson(const CompactionTask& task, const CompactionOptions& options) {
  Json out;
  out["read_version"] = task.read_version;
  out["fragment_ids"] = task.fragment_ids;
  Json o;
  o["target_rows_per_fragment"] = options.target_rows_per_fragment;
  o["max_rows_per_group"] = options.max_rows_per_group;
  o["max_bytes_per_file"] = OptionalNumber(options.max_bytes_per_file);
  o["batch_size"] = OptionalNumber(options.batch_size);
  o["compaction_mode"] = ModeName(options.compaction_mode);
  o["data_storage_version"] =
      options.data_storage_version ? Json(*options.data_storage_version) : Json(nullptr);
  out["options"] = std::move(o);
  return out.dump();
}

Result<CompactionTask> CompactionTaskFromJson(const std::string& json, CompactionOptions* options) {
  const std::string what = "compaction task JSON";
  LANCE_ASSIGN_OR_RAISE(auto j, Parse(json, what));
  CompactionTask task;
  LANCE_ASSIGN_OR_RAISE(task.read_version, Number(j, "read_version", what));
  if (!j.contains("fragment_ids") || !j["fragment_ids"].is_array()) {
    return Status::Invalid(what, ": 'fragment_ids' must be an array");
  }
  for (const auto& id : j["fragment_ids"]) {
    if (!id.is_number_unsigned()) return Status::Invalid(what, ": a fragment id is not a non-negative integer");
    task.fragment_ids.push_back(id.get<uint64_t>());
  }
  if (options && j.contains("options")) {
    const Json& o = j["options"];
    if (!o.is_object()) return Status::Invalid(what, ": 'options' must be an object");
    LANCE_ASSIGN_OR_RAISE(options->target_rows_per_fragment, Number(o, "target_rows_per_fragment", what));
    LANCE_ASSIGN_OR_RAISE(options->max_rows_per_group, Number(o, "max_rows_per_group", what));
    LANCE_ASSIGN_OR_RAISE(options->max_bytes_per_file, OptionalNumberFrom(o, "max_bytes_per_file", what));
    LANCE_ASSIGN_OR_RAISE(options->batch_size, OptionalNumberFrom(o, "batch_size", what));
    const std::string mode = o.value("compaction_mode", "reencode");
    if (mode == "reencode") {
      options->compaction_mode = CompactionMode::kReencode;
    } else if (mode == "try_binary_copy") {
      options->compaction_mode = CompactionMode::kTryBinaryCopy;
    } else if (mode == "force_binary_copy") {
      options->compaction_mode = CompactionMode::kForceBinaryCopy;
    } else {
      return Status::Invalid(what, ": unknown compaction_mode '", mode, "'");
    }
    if (o.contains("data_storage_version") && o["data_storage_version"].is_string()) {
      options->data_storage_version = o["data_storage_version"].get<std::string>();
    }
  }
  return task;
}

std::string RewriteResultToJson(const RewriteResult& result) {
  Json out;
  out["read_version"] = result.read_version;
  out["original_fragments"] = FragmentsToJson(result.original_fragments);
  out["new_fragments"] = FragmentsToJson(result.new_fragments);
  Json m;
  m["fragments_removed"] = result.metrics.fragments_removed;
  m["fragments_added"] = result.metrics.fragments_added;
  m["files_removed"] = result.metrics.files_removed;
  m["files_added"] = result.metrics.files_added;
  out["metrics"] = std::move(m);
  out["binary_copy"] = result.binary_copy;
  return out.dump();
}

Result<RewriteResult> RewriteResultFromJson(const std::string& json) {
  const std::string what = "compaction result JSON";
  LANCE_ASSIGN_OR_RAISE(auto j, Parse(json, what));
  RewriteResult r;
  LANCE_ASSIGN_OR_RAISE(r.read_version, Number(j, "read_version", what));
  LANCE_ASSIGN_OR_RAISE(r.original_fragments, FragmentsFromJson(j.value("original_fragments", Json()), what));
  LANCE_ASSIGN_OR_RAISE(r.new_fragments, FragmentsFromJson(j.value("new_fragments", Json()), what));
  if (!j.contains("metrics") || !j["metrics"].is_object()) return Status::Invalid(what, ": 'metrics' missing");
  const Json& m = j["metrics"];
  LANCE_ASSIGN_OR_RAISE(r.metrics.fragments_removed, Number(m, "fragments_removed", what));
  LANCE_ASSIGN_OR_RAISE(r.metrics.fragments_added, Number(m, "fragments_added", what));
  LANCE_ASSIGN_OR_RAISE(r.metrics.files_removed, Number(m, "files_removed", what));
  LANCE_ASSIGN_OR_RAISE(r.metrics.files_added, Number(m, "files_added", what));
  if (j.contains("binary_copy")) {
    if (!j["binary_copy"].is_boolean()) return Status::Invalid(what, ": 'binary_copy' must be true or false");
    r.binary_copy = j["binary_copy"].get<bool>();
  }
  return r;
}

}  // namespace lance
