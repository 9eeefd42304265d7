// UpdateConfig: the config and the table, schema and field metadata
// changed in one commit (lance/dataset_ops.h UpdateConfigBuilder).
#include <sstream>

#include "lance/dataset_internal.h"
#include "lance/dataset_ops.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/ops/schema_evolution_internal.h"
#include "lance/table/feature_flags.h"

namespace lance {
namespace {

// "s.x" -> the id of field x inside s.
Result<int32_t> FieldIdOf(const Schema& schema, const std::string& path) {
  if (const Field* found = ops::FindFieldByPath(schema, path)) return found->id;
  // pylance's message lists every path.
  std::ostringstream all;
  std::function<void(const std::vector<Field>&, const std::string&)> list = [&](const std::vector<Field>& fields,
                                                                               const std::string& prefix) {
    for (const auto& f : fields) {
      all << (all.tellp() > 0 ? ", " : "") << "'" << prefix << f.name << "'";
      list(f.children, prefix + f.name + ".");
    }
  };
  list(schema.fields, "");
  return Status::Invalid("field '", path, "' not found; available fields: ", all.str());
}

}  // namespace

UpdateConfigBuilder Dataset::NewUpdateConfig() const { return UpdateConfigBuilder(shared_from_this()); }

Result<std::shared_ptr<Dataset>> UpdateConfigBuilder::Commit() {
  const Dataset& dataset = *dataset_;
  // Only the flag checks: the config check refuses keys lance-cpp does not
  // implement, and this is how such a key is removed.
  Status writable = table::CheckCanWrite(dataset.manifest());
  if (!writable.ok()) return writable.WithMessage("cannot write to ", dataset.uri(), ": ", writable.message());
  txn::UpdateConfig op;
  op.config_updates = config_;
  op.table_metadata_updates = table_metadata_;
  op.schema_metadata_updates = schema_metadata_;
  for (const auto& [path, update] : fields_) {
    auto id = FieldIdOf(dataset.manifest().schema, path);
    if (!id.ok()) return id.status().WithMessage("update field metadata of ", dataset.uri(), ": ", id.status().message());
    // Two updates of one field: the later wins, as a map keyed by id keeps one.
    op.field_metadata_updates[*id] = update;
  }
  const txn::BaseVersion base = ops::BaseVersionOf(dataset);
  txn::CommitOptions commit;
  commit.latest = &base;
  commit.num_retries = static_cast<int>(options_.retry.num_retries);
  commit.disable_transaction_file = options_.disable_transaction_file;
  LANCE_ASSIGN_OR_RAISE(auto result,
                        ops::CommitTransaction(*DatasetAccess::Store(dataset),
                                               txn::Transaction::Make(dataset.version(), std::move(op)), commit));
  return ops::AtVersion(dataset, result.version, std::move(result));
}

}  // namespace lance
