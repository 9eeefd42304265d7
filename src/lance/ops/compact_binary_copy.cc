#include "lance/ops/compact_binary_copy.h"

#include <memory>
#include <optional>
#include <set>

#include "lance/dataset_internal.h"
#include "lance/file.pb.h"
#include "lance/file/blob_v2.h"
#include "lance/file/container.h"
#include "lance/file/page_copy.h"
#include "lance/file/schema_proto.h"
#include "lance/file/v2_0/field_encoders.h"
#include "lance/file/version.h"
#include "lance/ops/fragment_writer.h"

namespace lance::ops {
namespace {

constexpr const char* kDataDir = "data";

std::string SchemaBytes(const Schema& schema) {
  pb::file::Schema proto;
  file::SchemaToProtoFields(schema, proto.mutable_fields());
  return proto.SerializeAsString();
}

// The layouts of the data files of `fragments` (in order) when they are
// eligible, else nullopt.
Result<std::optional<std::vector<FileLayout>>> EligibleLayouts(const Dataset& dataset,
                                                               const std::vector<Fragment>& fragments,
                                                               const std::string& target_version) {
  for (const auto& field : dataset.manifest().schema.FieldsPreOrder()) {
    if (file::IsBlobV2Field(field) || field.metadata.count(file::v2_0::kBlobMetaKey)) return std::nullopt;
  }
  LANCE_ASSIGN_OR_RAISE(std::string storage, dataset.DataStorageVersion());
  LANCE_ASSIGN_OR_RAISE(file::FileVersion version, file::FileVersionFromString(storage));
  if (version == file::FileVersion::kLegacy) return std::nullopt;
  LANCE_ASSIGN_OR_RAISE(file::FileVersion target, file::FileVersionFromString(target_version));
  if (target != version) return std::nullopt;  // the copy cannot change a file's version
  if (fragments.empty() || fragments.front().files.empty()) return std::nullopt;
  const DataFile& first = fragments.front().files.front();
  const std::string schema = SchemaBytes(dataset.manifest().schema);
  std::vector<FileLayout> layouts;
  for (const auto& fragment : fragments) {
    if (fragment.deletion_file || !fragment.overlays.empty()) return std::nullopt;
    if (fragment.files.empty()) return std::nullopt;
    for (const auto& f : fragment.files) {
      auto v = file::FileVersionFromPair(f.file_major_version, f.file_minor_version);
      if (!v.ok() || *v != version) return std::nullopt;
      if (f.fields != first.fields || f.column_indices != first.column_indices) return std::nullopt;
      LANCE_ASSIGN_OR_RAISE(auto input, dataset.OpenDataFile(f));
      LANCE_ASSIGN_OR_RAISE(std::string location, dataset.DataFileLocation(f));
      LANCE_ASSIGN_OR_RAISE(auto layout, file::ReadLayout(*input, location));
      // The footer is written anew: any global buffer but the schema would be lost.
      if (layout.global_buffers.size() > 1) return std::nullopt;
      // Its pages must be what the dataset's schema says (not a file from
      // before a column was dropped).
      if (SchemaBytes(layout.schema) != schema) return std::nullopt;
      layouts.push_back(std::move(layout));
    }
  }
  return layouts;
}

// The columns of a 2.0 file that hold a struct's row count (every field has
// a column there; a packed struct's holds its values).
std::set<uint32_t> StructColumns(const Schema& schema, const DataFile& file) {
  std::set<uint32_t> out;
  for (size_t i = 0; i < file.fields.size() && i < file.column_indices.size(); ++i) {
    const Field* field = schema.FieldById(file.fields[i]);
    if (field && field->logical_type == "struct" && !field->metadata.count(file::v2_0::kPackedStructMetaKey) &&
        file.column_indices[i] >= 0) {
      out.insert(static_cast<uint32_t>(file.column_indices[i]));
    }
  }
  return out;
}

}  // namespace

std::optional<std::vector<FileLayout>> BinaryCopyLayouts(const Dataset& dataset, const std::vector<Fragment>& fragments,
                                                         const std::string& target_version) {
  auto layouts = EligibleLayouts(dataset, fragments, target_version);
  if (!layouts.ok()) return std::nullopt;
  return std::move(*layouts);
}

void ConcatenateLineage(const std::vector<Fragment>& old_fragments, std::vector<Fragment>* new_fragments) {
  size_t next = 0;
  for (auto& f : *new_fragments) {
    uint64_t rows = 0;
    std::string created, updated;
    bool inline_all = true;
    while (next < old_fragments.size() && rows < f.physical_rows.value_or(0)) {
      const Fragment& old = old_fragments[next++];
      rows += old.physical_rows.value_or(0);
      if (!old.created_at_versions.inline_bytes || !old.last_updated_at_versions.inline_bytes) {
        inline_all = false;
        continue;
      }
      // A repeated field's serialized messages concatenate to one with all the runs.
      created += *old.created_at_versions.inline_bytes;
      updated += *old.last_updated_at_versions.inline_bytes;
    }
    if (!inline_all || rows != f.physical_rows.value_or(0)) continue;
    f.created_at_versions.inline_bytes = std::move(created);
    f.last_updated_at_versions.inline_bytes = std::move(updated);
  }
}

Status CheckBinaryCopyTarget(const std::vector<Fragment>& fragments, const std::string& target_version) {
  LANCE_ASSIGN_OR_RAISE(file::FileVersion target, file::FileVersionFromString(target_version));
  for (const auto& fragment : fragments) {
    for (const auto& f : fragment.files) {
      auto v = file::FileVersionFromPair(f.file_major_version, f.file_minor_version);
      if (!v.ok() || *v != target) {
        return Status::NotImplemented("binary copy target is ", file::FileVersionToString(target), ", but data file '",
                                      f.path, "' uses ", f.file_major_version, ".", f.file_minor_version,
                                      ": a copied page keeps its file version");
      }
    }
  }
  return Status::OK();
}

Result<std::vector<Fragment>> BinaryCopyFragments(const Dataset& dataset, const std::vector<Fragment>& fragments,
                                                  const std::vector<FileLayout>& layouts,
                                                  const std::vector<uint64_t>& file_rows) {
  const io::ObjectStore& store = *DatasetAccess::Store(dataset);
  const Schema& schema = dataset.manifest().schema;
  std::vector<Fragment> out;
  std::vector<std::string> created;
  std::unique_ptr<file::PageCopyWriter> writer;
  std::string name;
  std::optional<DataFile> model;  // field ids, column indices, version of the inputs
  auto finish = [&]() -> Status {
    LANCE_ASSIGN_OR_RAISE(uint64_t rows, writer->Finish(schema));
    writer.reset();
    DataFile file = *model;
    file.path = name;
    file.base_id.reset();
    LANCE_ASSIGN_OR_RAISE(int64_t size, store.Size(std::string(kDataDir) + "/" + name));
    file.file_size_bytes = static_cast<uint64_t>(size);
    Fragment fragment;
    fragment.files.push_back(std::move(file));
    fragment.physical_rows = rows;
    out.push_back(std::move(fragment));
    return Status::OK();
  };
  Status st = [&]() -> Status {
    size_t next_layout = 0;
    for (const auto& fragment : fragments) {
      for (const auto& f : fragment.files) {
        if (next_layout == layouts.size()) {
          return Status::Invalid("binary copy: ", layouts.size(), " layouts given for more data files");
        }
        const FileLayout& layout = layouts[next_layout++];
        LANCE_ASSIGN_OR_RAISE(auto input, dataset.OpenDataFile(f));
        LANCE_ASSIGN_OR_RAISE(std::string location, dataset.DataFileLocation(f));
        if (!model) model = f;
        if (!writer) {
          LANCE_ASSIGN_OR_RAISE(auto version, file::FileVersionFromPair(layout.major_version, layout.minor_version));
          name = NewDataFileName();
          created.push_back(name);
          LANCE_ASSIGN_OR_RAISE(auto stream, store.OpenOutputStream(std::string(kDataDir) + "/" + name));
          writer = std::make_unique<file::PageCopyWriter>(std::move(stream), name,
                                                          static_cast<uint32_t>(layout.columns.size()), version);
          if (version == file::FileVersion::kV2_0) writer->SetRowCountColumns(StructColumns(schema, f));
        }
        LANCE_RETURN_NOT_OK(writer->Append(*input, layout, location));
        if (out.size() < file_rows.size() && writer->rows() >= file_rows[out.size()]) {
          LANCE_RETURN_NOT_OK(finish());
        }
      }
    }
    if (writer) LANCE_RETURN_NOT_OK(finish());
    return Status::OK();
  }();
  if (!st.ok()) {
    if (writer) writer->Abort();
    for (const auto& n : created) (void)store.Delete(std::string(kDataDir) + "/" + n);
    return st.WithMessage("binary copy of fragments of ", dataset.uri(), ": ", st.message());
  }
  return out;
}

}  // namespace lance::ops
