// WriteDataset: rows into new data files (fragments, by ops::FragmentWriter),
// then one commit: Overwrite for create and overwrite, Append for append.
#include <algorithm>

#include <arrow/array.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include "lance/file/blob_v2.h"
#include "lance/file/version.h"
#include "lance/io/object_store.h"
#include "lance/ops/auto_cleanup.h"
#include "lance/ops/blob_v2_external.h"
#include "lance/ops/blob_v2_input.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/ops/fragment_writer.h"
#include "lance/txn/commit.h"
#include "lance/util/progress_reporter.h"
#include "lance/util/strings.h"
#include "lance/write.h"

namespace lance {
namespace {

// The input's columns in the dataset's order, matched by name.
Result<std::shared_ptr<arrow::RecordBatch>> ConformToSchema(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                            const arrow::Schema& target,
                                                            const std::string& uri) {
  if (batch->schema()->Equals(target, /*check_metadata=*/false)) return batch;
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (const auto& field : target.fields()) {
    auto column = batch->GetColumnByName(field->name());
    if (!column) {
      return Status::Invalid("cannot append to ", uri, ": the input has no column '", field->name(), "'");
    }
    if (!column->type()->Equals(*field->type())) {
      return Status::Invalid("cannot append to ", uri, ": column '", field->name(), "' is ",
                             column->type()->ToString(), " in the input but ", field->type()->ToString(),
                             " in the dataset");
    }
    columns.push_back(column);
  }
  if (batch->num_columns() != target.num_fields()) {
    return Status::Invalid("cannot append to ", uri, ": the input has ", batch->num_columns(),
                           " columns, the dataset ", target.num_fields(), " (", target.ToString(), ")");
  }
  return arrow::RecordBatch::Make(std::make_shared<arrow::Schema>(target.fields()), batch->num_rows(),
                                  std::move(columns));
}

// Writes every batch of `data` through `writer`.
Result<std::vector<Fragment>> WriteAll(arrow::RecordBatchReader& data, ops::FragmentWriter& writer,
                                       const Schema& schema, bool conform, const arrow::Schema& target,
                                       const std::string& uri) {
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(data.ReadNext(&batch));
    if (!batch) break;
    LANCE_ASSIGN_OR_RAISE(batch, ops::ToBlobV2Input(batch, schema, uri));
    if (conform) {
      LANCE_ASSIGN_OR_RAISE(batch, ConformToSchema(batch, target, uri));
    }
    LANCE_RETURN_NOT_OK(writer.Write(std::move(batch)));
  }
  return writer.Finish();
}

const Field* FirstBlobV2Field(const std::vector<Field>& fields) {
  for (const auto& f : fields) {
    if (file::IsBlobV2Field(f)) return &f;
    if (const Field* inner = FirstBlobV2Field(f.children)) return inner;
  }
  return nullptr;
}

// A blob column of either kind (v2, or lance-encoding:blob on large_binary).
const Field* FirstBlobField(const std::vector<Field>& fields) {
  for (const auto& f : fields) {
    if (file::IsBlobV2Field(f) || f.metadata.count("lance-encoding:blob")) return &f;
    if (const Field* inner = FirstBlobField(f.children)) return inner;
  }
  return nullptr;
}

// The base paths of the new version (the dataset's, plus initial_bases
// with their ids assigned when creating) and the targets the data files
// go to, as the reference's validate_and_resolve_target_bases.
struct ResolvedBases {
  std::vector<BasePath> all;
  std::vector<BasePath> initial;
  std::vector<ops::WriteTarget> targets;
};

Result<ResolvedBases> ResolveBases(const WriteParams& params, const Manifest* existing, const io::ObjectStore& store) {
  const std::string& uri = store.uri();
  ResolvedBases out;
  if (existing) out.all = existing->base_paths;
  if (!params.initial_bases.empty()) {
    if (params.mode != WriteMode::kCreate || existing) {
      return Status::Invalid("cannot register new base paths in ", uri,
                             ": initial bases are only taken when creating a dataset");
    }
    uint32_t next = 1;
    for (const auto& b : params.initial_bases) next = std::max(next, b.id + 1);
    for (BasePath b : params.initial_bases) {
      if (b.id == 0) b.id = next++;
      for (const auto& other : out.all) {
        if (other.id == b.id) return Status::Invalid("base path id ", b.id, " is given twice for ", uri);
      }
      out.all.push_back(b);
      out.initial.push_back(std::move(b));
    }
  }
  for (const auto& ref : params.target_bases) {
    const BasePath* found = nullptr;
    for (const auto& b : out.all) {
      if ((b.name && *b.name == ref) || b.path == ref) {
        found = &b;
        break;
      }
    }
    if (!found && util::AllDigits(ref)) {
      for (const auto& b : out.all) {
        if (std::to_string(b.id) == ref) found = &b;
      }
    }
    if (!found) {
      std::string listed;
      for (const auto& b : out.all) {
        listed += (listed.empty() ? "" : ", ") + std::to_string(b.id) + (b.name ? " (" + *b.name + ")" : "") + " " +
                  b.path;
      }
      return Status::Invalid("target base '", ref, "' is not a registered base path of ", uri,
                             " (its base paths: ", listed.empty() ? "none" : listed, ")");
    }
    // A base path is opened with the dataset's storage options.
    auto target = io::ObjectStore::Open(found->path, store.storage_options());
    if (!target.ok()) {
      return target.status().WithMessage("opening target base ", found->id, " (", found->path,
                                         "): ", target.status().message());
    }
    out.targets.push_back(ops::WriteTarget{found->id, *target, found->is_dataset_root});
  }
  return out;
}

}  // namespace

Result<WriteResult> ops::WriteRows(const std::shared_ptr<io::ObjectStore>& store, const Dataset* dataset,
                                 arrow::RecordBatchReader& data, const WriteParams& params,
                                 ops::Committed* committed_out) {
  const std::string& uri = store->uri();
  if (params.max_rows_per_file == 0) return Status::Invalid("max_rows_per_file must be at least 1");
  // Checks the writer feature flags before any file is written.
  if (dataset) LANCE_RETURN_NOT_OK(ops::CheckWritable(*dataset));
  LANCE_RETURN_NOT_OK(ops::CheckConfigKeys(params.config, uri));
  std::optional<txn::BaseVersion> base;
  if (dataset) base = ops::BaseVersionOf(*dataset);
  if (params.mode == WriteMode::kCreate && base) {
    return Status::Invalid("cannot create dataset ", uri, ": it already exists (version ",
                           base->location.version, "); use append or overwrite");
  }
  const bool appending = params.mode == WriteMode::kAppend && base;
  if (appending && !params.config.empty()) {
    // An Append transaction carries no config (as the reference's): refuse
    // rather than drop the entries.
    return Status::Invalid("cannot append to ", uri, " with config entries (", params.config.begin()->first,
                           "…): an append sets no config; use UpdateConfig");
  }

  Schema schema;
  std::string storage_version;  // the dataset's
  std::string file_version;     // the new files'; empty = storage_version
  std::shared_ptr<arrow::Schema> target;
  if (appending) {
    schema = base->file.manifest.schema;
    LANCE_ASSIGN_OR_RAISE(storage_version, dataset->DataStorageVersion());
    if (params.data_storage_version) {
      // Files of another v2.x version than the dataset's: the commit sets
      // bit 256 and the dataset keeps its own version, as pylance 14.
      file_version = file::CanonicalVersionName(*params.data_storage_version);
      if (file_version != storage_version) {
        if (storage_version == "0.1" || file_version == "0.1") {
          return Status::Invalid("cannot append data files of version ", file_version, " to ", uri,
                                 " of data storage version ", storage_version,
                                 ": v1 and v2 storage versions cannot be mixed");
        }
        if (const Field* blob = FirstBlobField(schema.fields)) {
          return Status::NotImplemented("cannot append version ", file_version, " files to ", uri,
                                        " (version ", storage_version, "): blob column '", blob->name,
                                        "' is stored differently by each version");
        }
      }
    }
    LANCE_ASSIGN_OR_RAISE(target, schema.ToArrow());
  } else {
    if (params.data_storage_version) {
      storage_version = file::CanonicalVersionName(*params.data_storage_version);
    } else if (base && !base->file.manifest.data_storage_version.empty()) {
      storage_version = base->file.manifest.data_storage_version;
    } else {
      storage_version = "2.2";
    }
    target = data.schema();
    // A 2.2 dataset keeps binary blob columns as blob v2, as pylance's.
    if (storage_version == "2.2") target = ops::BlobV2InputSchema(*target);
    LANCE_ASSIGN_OR_RAISE(schema, Schema::FromArrow(*target, 0));
  }
  if (file_version.empty()) file_version = storage_version;
  if (file_version != "0.1" && file_version != "2.0" && file_version != "2.1" && file_version != "2.2") {
    return Status::Invalid("cannot write data storage version '", file_version, "' to ", uri,
                           ": lance-cpp writes 0.1 (legacy), 2.0, 2.1 and 2.2");
  }

  if (file_version == "2.2") {
    // pylance keeps blob columns of 2.2 datasets as blob v2: the logical
    // struct<data, uri> in the manifest, descriptors in the files.
    LANCE_RETURN_NOT_OK(ops::CheckBlobV2Writable(schema, uri));
    std::vector<std::shared_ptr<arrow::Field>> fields = target->fields();
    for (size_t i = 0; i < schema.fields.size() && i < fields.size(); ++i) {
      if (file::IsBlobV2Field(schema.fields[i])) fields[i] = fields[i]->WithType(ops::BlobV2WriteType());
    }
    target = arrow::schema(fields, target->metadata());
  } else if (const Field* blob = FirstBlobV2Field(schema.fields)) {
    return Status::NotImplemented("cannot write blob v2 column '", blob->name, "' to ", uri,
                                  ": blob v2 needs data storage version 2.2");
  }

  LANCE_ASSIGN_OR_RAISE(auto bases, ResolveBases(params, base ? &base->file.manifest : nullptr, *store));
  auto writer_options = ops::FragmentWriterOptions::FromParams(params, file_version);
  writer_options.external.bases = bases.all;
  writer_options.targets = std::move(bases.targets);
  writer_options.external.allow_outside_bases = params.allow_external_blob_outside_bases;
  util::ProgressStage progress(params.progress, "writing", "rows", params.expected_rows);
  writer_options.on_progress = [&progress](uint64_t rows_written) { progress.AdvanceTo(rows_written); };
  ops::FragmentWriter writer(*store, schema, std::move(writer_options));
  auto written = WriteAll(data, writer, schema, appending, *target, uri);
  if (!written.ok()) {
    writer.RemoveFiles();
    return written.status();
  }
  std::vector<Fragment> fragments = std::move(*written);
  // A new legacy schema's dictionary values are the written data's.
  if (!appending) schema = writer.schema();
  WriteResult result;
  result.fragments_written = fragments.size();
  for (const auto& f : fragments) result.rows_written += f.physical_rows.value_or(0);

  txn::CommitOptions options;
  options.new_dataset_naming =
      params.enable_v2_manifest_paths ? table::ManifestNamingScheme::kV2 : table::ManifestNamingScheme::kV1;
  options.enable_stable_row_ids = params.enable_stable_row_ids;
  options.data_storage_version = storage_version;
  const uint64_t read_version = base ? base->location.version : 0;
  txn::Operation op;
  if (appending) {
    op = txn::Append{std::move(fragments)};
  } else {
    std::map<std::string, std::string> config = params.config;
    if (!base && params.auto_cleanup) {
      // As pylance's auto_cleanup_options: a new dataset only.
      config[ops::kAutoCleanupInterval] = std::to_string(params.auto_cleanup->interval);
      config[ops::kAutoCleanupOlderThan] = ops::FormatHumanDuration(params.auto_cleanup->older_than_seconds);
    }
    op = txn::Overwrite{std::move(fragments), std::move(schema), std::move(config), std::move(bases.initial)};
  }
  options.num_retries = params.mode == WriteMode::kCreate ? 1 : static_cast<int>(params.retry.num_retries);
  if (base) options.latest = &*base;
  options.disable_transaction_file = params.disable_transaction_file;
  auto committed = ops::CommitTransaction(*store, txn::Transaction::Make(read_version, std::move(op)), options);
  if (!committed.ok()) {
    writer.RemoveFiles();  // no manifest refers to them
    return committed.status();
  }
  result.version = committed->version;
  if (committed_out) *committed_out = std::move(*committed);
  return result;
}

}  // namespace lance
