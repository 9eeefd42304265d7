// `lance-cpp inspect URI [--version V] [--json]`
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "lance/dataset.h"

namespace lance::cli {
namespace {

constexpr const char* kInspectUsage = "lance-cpp inspect URI [--version V] [--json] [--rows]";
using Json = nlohmann::ordered_json;

// Keeps the entries of `values` (one per physical row) whose row is not deleted.
template <typename T>
std::vector<T> LiveOnly(const std::vector<T>& values, const std::vector<uint32_t>& deleted) {
  std::vector<T> out;
  out.reserve(values.size());
  size_t d = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    while (d < deleted.size() && deleted[d] < i) ++d;
    if (d < deleted.size() && deleted[d] == i) continue;
    out.push_back(values[i]);
  }
  return out;
}

// Per-row metadata of a fragment's live rows: stable row ids and lineage.
Status AddRowDetails(const Dataset& ds, const Fragment& frag, Json* jf) {
  LANCE_ASSIGN_OR_RAISE(auto deleted, ds.DeletedRows(frag));
  (*jf)["deleted_offsets"] = deleted;
  LANCE_ASSIGN_OR_RAISE(auto ids, ds.RowIds(frag));
  (*jf)["row_ids"] = frag.row_ids.present() ? Json(LiveOnly(ids, deleted)) : Json(nullptr);
  LANCE_ASSIGN_OR_RAISE(auto created, ds.RowCreatedAtVersions(frag));
  (*jf)["row_created_at_versions"] = created ? Json(LiveOnly(*created, deleted)) : Json(nullptr);
  LANCE_ASSIGN_OR_RAISE(auto updated, ds.RowLastUpdatedAtVersions(frag));
  (*jf)["row_last_updated_at_versions"] = updated ? Json(LiveOnly(*updated, deleted)) : Json(nullptr);
  return Status::OK();
}

Result<Json> BuildInspectJson(const Dataset& ds, bool with_rows) {
  const Manifest& m = ds.manifest();
  Json j;
  j["uri"] = ds.uri();
  j["version"] = ds.version();
  j["latest_version"] = ds.latest_version();
  j["manifest_naming"] = ds.manifest_naming();
  j["versions"] = Json::array();
  if (auto versions = ds.Versions(); versions.ok()) {
    for (const auto& v : *versions) {
      j["versions"].push_back({{"version", v.version},
                               {"timestamp", v.timestamp_nanos ? Json(FormatTimestamp(*v.timestamp_nanos)) : Json(nullptr)},
                               {"operation", v.operation.empty() ? Json(nullptr) : Json(v.operation)}});
    }
  } else {
    // The version asked for opens even when another manifest is unreadable,
    // as in pylance (only its versions() fails): list the numbers bare and
    // say why, rather than refuse the version asked for.
    std::cerr << "warning: the version list is incomplete: " << versions.status().ToString() << "\n";
    j["versions_error"] = versions.status().ToString();
    for (uint64_t v : ds.VersionNumbers()) {
      j["versions"].push_back({{"version", v}, {"timestamp", nullptr}, {"operation", nullptr}});
    }
  }
  LANCE_ASSIGN_OR_RAISE(j["data_storage_version"], ds.DataStorageVersion());
  j["reader_feature_flags"] = m.reader_feature_flags;
  j["writer_feature_flags"] = m.writer_feature_flags;
  j["stable_row_ids"] = m.UsesStableRowIds();
  j["next_row_id"] = m.UsesStableRowIds() ? Json(m.next_row_id) : Json(nullptr);
  j["schema"] = Json::array();
  for (const auto& f : m.schema.FieldsPreOrder()) {
    j["schema"].push_back({{"name", f.name},
                           {"id", f.id},
                           {"parent_id", f.parent_id},
                           {"logical_type", f.logical_type},
                           {"nullable", f.nullable}});
  }
  // A fragment whose row count is neither recorded nor countable (its data
  // file is gone) is reported as unknown, with a warning, not as an error:
  // the rest of the metadata is still worth showing.
  std::optional<uint64_t> live_rows = 0;
  j["fragments"] = Json::array();
  for (const auto& frag : m.fragments) {
    std::optional<uint64_t> physical;
    if (auto rows = ds.PhysicalRows(frag); rows.ok()) {
      physical = *rows;
    } else {
      std::cerr << "warning: row count of fragment " << frag.id << " is unknown: "
                << rows.status().message() << std::endl;
    }
    LANCE_ASSIGN_OR_RAISE(uint64_t deleted, ds.NumDeletedRows(frag));
    if (live_rows && physical) {
      *live_rows += *physical - std::min(*physical, deleted);
    } else {
      live_rows.reset();
    }
    Json jf;
    jf["id"] = frag.id;
    jf["physical_rows"] = physical ? Json(*physical) : Json(nullptr);
    jf["num_deleted_rows"] = deleted;
    jf["data_files"] = Json::array();
    for (const auto& df : frag.files) {
      jf["data_files"].push_back({{"path", df.path},
                                  {"fields", df.fields},
                                  {"file_major_version", df.file_major_version},
                                  {"file_minor_version", df.file_minor_version}});
    }
    if (frag.deletion_file) {
      const auto& d = *frag.deletion_file;
      jf["deletion_file"] = {{"type", d.type == DeletionFile::Type::kBitmap ? "bitmap" : "arrow"},
                             {"read_version", d.read_version},
                             {"id", d.id},
                             {"num_deleted_rows", d.num_deleted_rows ? Json(*d.num_deleted_rows) : Json(nullptr)}};
    } else {
      jf["deletion_file"] = nullptr;
    }
    if (with_rows) LANCE_RETURN_NOT_OK(AddRowDetails(ds, frag, &jf));
    j["fragments"].push_back(std::move(jf));
  }
  j["num_rows"] = live_rows ? Json(*live_rows) : Json(nullptr);
  j["config"] = Json::object();
  for (const auto& [k, v] : m.config) j["config"][k] = v;
  LANCE_ASSIGN_OR_RAISE(auto tags, ds.Tags());
  j["tags"] = Json::object();
  for (const auto& [name, t] : tags) j["tags"][name] = t.version;
  j["indices"] = Json::array();
  for (const auto& idx : ds.indices()) {
    j["indices"].push_back({{"name", idx.name},
                            {"uuid", idx.UuidString()},
                            {"fields", idx.fields},
                            {"fragment_ids", idx.fragment_ids ? Json(*idx.fragment_ids) : Json(nullptr)},
                            {"dataset_version", idx.dataset_version},
                            {"type_url", idx.index_details_type_url},
                            {"index_version", idx.index_version ? Json(*idx.index_version) : Json(nullptr)},
                            {"created_at_ms", idx.created_at_ms ? Json(*idx.created_at_ms) : Json(nullptr)}});
  }
  return j;
}

void PrintHuman(const Json& j) {
  std::cout << "dataset:   " << j["uri"].get<std::string>() << "\n"
            << "version:   " << j["version"] << " (latest " << j["latest_version"] << ", "
            << j["versions"].size() << " versions, " << j["manifest_naming"].get<std::string>()
            << " manifest names)\n"
            << "storage:   lance " << j["data_storage_version"].get<std::string>() << "\n"
            << "rows:      " << (j["num_rows"].is_null() ? std::string("unknown") : j["num_rows"].dump()) << " live in " << j["fragments"].size() << " fragments\n"
            << "flags:     reader " << j["reader_feature_flags"] << ", writer " << j["writer_feature_flags"]
            << (j["stable_row_ids"].get<bool>() ? ", stable row ids (next " + j["next_row_id"].dump() + ")" : "")
            << "\n";
  std::cout << "schema:\n";
  for (const auto& f : j["schema"]) {
    std::cout << "  " << f["id"] << " " << f["name"].get<std::string>() << ": "
              << f["logical_type"].get<std::string>() << (f["nullable"].get<bool>() ? "" : " not null");
    if (f["parent_id"].get<int>() >= 0) std::cout << " (in " << f["parent_id"] << ")";
    std::cout << "\n";
  }
  std::cout << "fragments:\n";
  for (const auto& f : j["fragments"]) {
    std::cout << "  " << f["id"] << ": "
              << (f["physical_rows"].is_null() ? std::string("unknown") : f["physical_rows"].dump()) << " rows";
    if (!f["deletion_file"].is_null()) {
      std::cout << ", " << f["num_deleted_rows"] << " deleted ("
                << f["deletion_file"]["type"].get<std::string>() << " file)";
    }
    std::cout << ", " << f["data_files"].size() << " data file(s)\n";
  }
  if (!j["config"].empty()) {
    std::cout << "config:\n";
    for (const auto& [k, v] : j["config"].items()) std::cout << "  " << k << " = " << v.get<std::string>() << "\n";
  }
  if (!j["tags"].empty()) {
    std::cout << "tags:\n";
    for (const auto& [k, v] : j["tags"].items()) std::cout << "  " << k << " -> version " << v << "\n";
  }
  if (!j["indices"].empty()) {
    std::cout << "indices:\n";
    for (const auto& idx : j["indices"]) {
      std::cout << "  " << idx["name"].get<std::string>() << " " << idx["uuid"].get<std::string>()
                << " on fields " << idx["fields"].dump() << "\n";
    }
  }
}

}  // namespace

int RunInspect(const std::vector<std::string>& argv) {
  Args args;
  if (auto err = ParseArgs(argv, {"--version"}, {"--json", "--rows"}, &args)) {
    return ReportUsage(err->message, kInspectUsage);
  }
  if (args.positional.size() != 1) return ReportUsage("inspect takes exactly one URI", kInspectUsage);
  OpenOptions options;
  options.version = args.Get("--version");
  auto ds = OpenDataset(args.positional[0], options);
  if (!ds.ok()) return ReportError(ds.status());
  auto json = BuildInspectJson(**ds, args.Has("--rows"));
  if (!json.ok()) return ReportError(json.status());
  if (args.Has("--json")) {
    std::cout << json->dump(2) << std::endl;
  } else {
    PrintHuman(*json);
  }
  return kExitOk;
}

}  // namespace lance::cli
