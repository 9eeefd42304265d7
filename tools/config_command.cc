// `config`: the dataset's config and its table, schema and field metadata
// (UpdateConfig commits, as pylance's update_config and friends).
#include <iostream>
#include <map>

#include "cli.h"
#include "lance/dataset.h"
#include "lance/dataset_ops.h"

namespace lance::cli {
namespace {

constexpr const char* kUsage =
    "lance-cpp config URI list | list-table-metadata | list-schema-metadata | list-field-metadata FIELD\n"
    "       | set KEY=VALUE... [--replace] | unset KEY...\n"
    "       | set-table-metadata KEY=VALUE... [--replace] | unset-table-metadata KEY...\n"
    "       | set-schema-metadata KEY=VALUE... [--replace] | unset-schema-metadata KEY...\n"
    "       | set-field-metadata FIELD KEY=VALUE... [--replace] | unset-field-metadata FIELD KEY...\n"
    "       [--max-retries N] [--disable-transaction-file]";

// KEY=VALUE pairs (set) or bare keys (unset) into an UpdateMap.
std::optional<UsageError> ToUpdateMap(const std::vector<std::string>& items, bool set, bool replace,
                                      UpdateMap* out) {
  out->replace = replace;
  for (const auto& item : items) {
    if (!set) {
      if (item.empty()) return UsageError{"a key must not be empty"};
      out->entries.emplace_back(item, std::nullopt);
      continue;
    }
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return UsageError{"expected KEY=VALUE, got '" + item + "'"};
    out->entries.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return std::nullopt;
}

}  // namespace

int RunConfig(const std::vector<std::string>& argv) {
  Args args;
  if (auto err = ParseArgs(argv, {"--max-retries"}, {"--replace", "--disable-transaction-file"}, &args)) {
    return ReportUsage(err->message, kUsage);
  }
  const auto& p = args.positional;
  if (p.size() < 2) return ReportUsage("config takes a URI and an action", kUsage);
  const std::string& uri = p[0];
  const std::string& action = p[1];
  UpdateConfigOptions options;
  options.disable_transaction_file = args.Has("--disable-transaction-file");
  if (auto err = ParseRetryFlags(args, /*operation_level=*/false, &options.retry)) {
    return ReportUsage(err->message, kUsage);
  }
  const bool replace = args.Has("--replace");

  // The maps as they are: KEY=VALUE lines, sorted by key.
  if (action == "list" || action == "list-table-metadata" || action == "list-schema-metadata" ||
      action == "list-field-metadata") {
    const bool field = action == "list-field-metadata";
    if (p.size() != (field ? 3u : 2u)) {
      return ReportUsage(action + (field ? " takes a FIELD" : " takes no more arguments"), kUsage);
    }
    // A listing commits nothing: the options of a commit would be ignored.
    for (const char* flag : {"--replace", "--max-retries", "--disable-transaction-file"}) {
      if (args.Has(flag)) {
        return ReportUsage(std::string(flag) + " does not go with " + action + ", which commits nothing", kUsage);
      }
    }
    auto ds = OpenDataset(uri);
    if (!ds.ok()) return ReportError(ds.status());
    const Manifest& m = (*ds)->manifest();
    const std::map<std::string, std::string>* map = &m.config;
    if (action == "list-table-metadata") map = &m.table_metadata;
    if (action == "list-schema-metadata") map = &m.schema.metadata;
    if (field) {
      // A dotted path, as set-field-metadata takes it.
      const std::vector<Field>* level = &m.schema.fields;
      const Field* found = nullptr;
      std::string rest = p[2];
      while (true) {
        const size_t dot = rest.find('.');
        const std::string name = rest.substr(0, dot);
        found = nullptr;
        for (const auto& f : *level) {
          if (f.name == name) found = &f;
        }
        if (!found || dot == std::string::npos) break;
        level = &found->children;
        rest = rest.substr(dot + 1);
      }
      if (!found) return ReportError(Status::Invalid("field '", p[2], "' not found in ", uri));
      map = &found->metadata;
    }
    for (const auto& [k, v] : *map) std::cout << k << "=" << v << "\n";
    return kExitOk;
  }

  enum class Target { kConfig, kTable, kSchema, kField };
  struct Action {
    const char* name;
    Target target;
    bool set;
    const char* what;  // for the printed line
  };
  static const Action kActions[] = {
      {"set", Target::kConfig, true, "config"},
      {"unset", Target::kConfig, false, "config"},
      {"set-table-metadata", Target::kTable, true, "table metadata"},
      {"unset-table-metadata", Target::kTable, false, "table metadata"},
      {"set-schema-metadata", Target::kSchema, true, "schema metadata"},
      {"unset-schema-metadata", Target::kSchema, false, "schema metadata"},
      {"set-field-metadata", Target::kField, true, "field metadata"},
      {"unset-field-metadata", Target::kField, false, "field metadata"},
  };
  const Action* a = nullptr;
  for (const auto& candidate : kActions) {
    if (action == candidate.name) a = &candidate;
  }
  if (!a) return ReportUsage("unknown config action '" + action + "'", kUsage);
  if (replace && !a->set) return ReportUsage("--replace goes with the set actions only", kUsage);
  size_t first = 2;
  std::string field;
  if (a->target == Target::kField) {
    if (p.size() < 3) return ReportUsage(std::string(a->name) + " needs a FIELD", kUsage);
    field = p[2];
    first = 3;
  }
  const std::vector<std::string> items(p.begin() + static_cast<std::ptrdiff_t>(first), p.end());
  // `set --replace` with nothing clears the map, as replace={} does.
  if (items.empty() && !(a->set && replace)) {
    return ReportUsage(std::string(a->name) + (a->set ? " needs KEY=VALUE pairs" : " needs keys"), kUsage);
  }
  UpdateMap update;
  if (auto err = ToUpdateMap(items, a->set, replace, &update)) return ReportUsage(err->message, kUsage);

  auto ds = OpenDataset(uri);
  if (!ds.ok()) return ReportError(ds.status());
  auto builder = (*ds)->NewUpdateConfig();
  switch (a->target) {
    case Target::kConfig: builder.Config(update); break;
    case Target::kTable: builder.TableMetadata(update); break;
    case Target::kSchema: builder.SchemaMetadata(update); break;
    case Target::kField: builder.FieldMetadata(field, update); break;
  }
  auto committed = builder.Options(options).Commit();
  if (!committed.ok()) return ReportError(committed.status());
  std::string what = std::string(a->set ? (replace ? "replaced " : "set ") : "removed ") + a->what +
                     (a->target == Target::kField ? " of " + field : "") + " (" +
                     Counted(items.size(), "key") + ")";
  PrintChange(what, (*committed)->version(), true);
  return kExitOk;
}

}  // namespace lance::cli
