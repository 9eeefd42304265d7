#include "lance/txn/manifest_builder.h"

#include <algorithm>
#include <set>

#include "lance/table/feature_flags.h"
#include "lance/table/row_id_sequence.h"

#ifndef LANCE_CPP_VERSION
#define LANCE_CPP_VERSION "0.0.0"
#endif

namespace lance::txn {
namespace {

constexpr const char* kDefaultDataStorageVersion = "2.2";

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// Gives fragments that are new to the table their ids and, when the dataset
// has stable row ids, their row ids and lineage (all rows created now).
class NewFragmentStamper {
 public:
  NewFragmentStamper(Manifest* m, uint64_t first_id, bool stable_row_ids)
      : m_(m), next_id_(first_id), stable_row_ids_(stable_row_ids) {}

  Status Stamp(Fragment* f) {
    f->id = next_id_++;
    m_->max_fragment_id = static_cast<uint32_t>(
        std::max<uint64_t>(m_->max_fragment_id.value_or(0), f->id));
    if (!stable_row_ids_) return Status::OK();
    if (!f->physical_rows) {
      return Status::Invalid("new fragment ", f->id, " has no physical row count; stable row ids need it");
    }
    const uint64_t rows = *f->physical_rows;
    if (!f->row_ids.present()) {
      f->row_ids.inline_bytes = table::RowIdSequence::FromRange(m_->next_row_id, rows).Serialize();
      m_->next_row_id += rows;
    }
    const std::string versions = table::RowVersionSequence({{rows, m_->version}}).Serialize();
    if (!f->created_at_versions.present()) f->created_at_versions.inline_bytes = versions;
    if (!f->last_updated_at_versions.present()) f->last_updated_at_versions.inline_bytes = versions;
    return Status::OK();
  }

 private:
  Manifest* m_;
  uint64_t next_id_;
  bool stable_row_ids_;
};

uint64_t NextFragmentId(const Manifest& m) {
  if (m.max_fragment_id) return uint64_t{*m.max_fragment_id} + 1;
  // Datasets from before max_fragment_id was recorded.
  uint64_t next = 0;
  for (const auto& f : m.fragments) next = std::max(next, f.id + 1);
  return next;
}

// Replaces fragments by id; every one must exist in `m`.
Status ReplaceFragments(Manifest* m, const std::vector<Fragment>& updated) {
  for (const auto& u : updated) {
    auto it = std::find_if(m->fragments.begin(), m->fragments.end(),
                           [&](const Fragment& f) { return f.id == u.id; });
    if (it == m->fragments.end()) {
      return CommitConflict("fragment " + std::to_string(u.id) + " to update is no longer in the dataset");
    }
    *it = u;
  }
  return Status::OK();
}

void RemoveFragments(Manifest* m, const std::vector<uint64_t>& ids) {
  const std::set<uint64_t> gone(ids.begin(), ids.end());
  std::erase_if(m->fragments, [&](const Fragment& f) { return gone.count(f.id) > 0; });
}

bool BaseUsesStableRowIds(const table::ManifestFile* base) {
  return base != nullptr && (base->manifest.reader_feature_flags & table::kFlagStableRowIds) != 0;
}

}  // namespace

Result<table::ManifestFile> BuildManifest(const Transaction& txn, const BuildInputs& in,
                                          const CommitOptions& options) {
  table::ManifestFile out;
  Manifest& m = out.manifest;
  if (in.base) {
    out.indices = in.base->indices;
    m = in.base->manifest;
  }
  const uint64_t version = in.base ? in.base->manifest.version + 1 : 1;
  const bool stable_row_ids = in.base ? BaseUsesStableRowIds(in.base) : options.enable_stable_row_ids;

  LANCE_RETURN_NOT_OK(std::visit(
      Overloaded{
          [&](const Append& op) -> Status {
            if (!in.base) return Status::Invalid("cannot append: the dataset does not exist yet");
            m.version = version;
            NewFragmentStamper stamper(&m, NextFragmentId(m), stable_row_ids);
            for (Fragment f : op.fragments) {
              LANCE_RETURN_NOT_OK(stamper.Stamp(&f));
              m.fragments.push_back(std::move(f));
            }
            return Status::OK();
          },
          [&](const Overwrite& op) -> Status {
            m.version = version;
            m.schema = op.schema;
            m.fragments.clear();
            out.indices.clear();  // indices describe data that is gone
            for (const auto& [k, v] : op.config_upsert_values) m.config[k] = v;
            if (!options.data_storage_version.empty()) m.data_storage_version = options.data_storage_version;
            if (m.data_storage_version.empty()) m.data_storage_version = kDefaultDataStorageVersion;
            // pylance 14 keeps counting from max_fragment_id (older writers
            // restarted at 0); ids are never reused within a dataset.
            NewFragmentStamper stamper(&m, in.base ? NextFragmentId(m) : 0, stable_row_ids);
            for (Fragment f : op.fragments) {
              LANCE_RETURN_NOT_OK(stamper.Stamp(&f));
              m.fragments.push_back(std::move(f));
            }
            return Status::OK();
          },
          [&](const Delete& op) -> Status {
            if (!in.base) return Status::Invalid("cannot delete: the dataset does not exist");
            m.version = version;
            LANCE_RETURN_NOT_OK(ReplaceFragments(&m, op.updated_fragments));
            RemoveFragments(&m, op.deleted_fragment_ids);
            return Status::OK();
          },
          [&](const Update& op) -> Status {
            if (!in.base) return Status::Invalid("cannot update: the dataset does not exist");
            m.version = version;
            LANCE_RETURN_NOT_OK(ReplaceFragments(&m, op.updated_fragments));
            RemoveFragments(&m, op.removed_fragment_ids);
            NewFragmentStamper stamper(&m, NextFragmentId(m), stable_row_ids);
            for (Fragment f : op.new_fragments) {
              // Rewritten rows keep their created-at versions but were last
              // updated by this commit, whichever version a rebase gives it.
              if (stable_row_ids) f.last_updated_at_versions = {};
              LANCE_RETURN_NOT_OK(stamper.Stamp(&f));
              m.fragments.push_back(std::move(f));
            }
            return Status::OK();
          },
          [&](const Restore& op) -> Status {
            if (!in.base || !in.restore_source) {
              return Status::Invalid("cannot restore version ", op.version, ": the dataset does not exist");
            }
            // The old version's content and indices; the id counters stay
            // those of the latest version, as pylance 14 keeps them, so ids
            // handed out since are not handed out again.
            const auto max_fragment_id = m.max_fragment_id;
            const uint64_t next_row_id = m.next_row_id;
            m = in.restore_source->manifest;
            out.indices = in.restore_source->indices;
            m.version = version;
            if (max_fragment_id) {
              m.max_fragment_id = std::max(*max_fragment_id, m.max_fragment_id.value_or(0));
            }
            m.next_row_id = std::max(next_row_id, m.next_row_id);
            return Status::OK();
          }},
      txn.operation));

  std::sort(m.fragments.begin(), m.fragments.end(),
            [](const Fragment& a, const Fragment& b) { return a.id < b.id; });
  m.timestamp_nanos = in.timestamp_nanos;
  m.writer_version = WriterVersion{"lance-cpp", LANCE_CPP_VERSION, std::nullopt, std::nullopt};
  m.tag.clear();
  m.transaction_file = txn.FileName();
  m.index_section.reset();
  m.transaction_section.reset();
  m.data_file_format = "lance";
  // A dataset whose manifest does not record its storage version (written
  // before 0.10) keeps not recording it: readers infer it from the files.
  if (m.data_storage_version.empty() && !in.base) {
    m.data_storage_version =
        options.data_storage_version.empty() ? kDefaultDataStorageVersion : options.data_storage_version;
  }
  LANCE_ASSIGN_OR_RAISE(auto flags, table::ComputeFeatureFlags(m, out.indices,
                                                               in.base ? &in.base->manifest : nullptr,
                                                               stable_row_ids,
                                                               /*disable_transaction_file=*/false));
  m.reader_feature_flags = flags.reader;
  m.writer_feature_flags = flags.writer;
  return out;
}

}  // namespace lance::txn
