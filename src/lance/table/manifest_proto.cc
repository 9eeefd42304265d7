#include "lance/table/manifest_proto.h"
#include "lance/table/roaring_portable.h"
#include "lance/file/schema_proto.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include <roaring/roaring.h>

namespace lance::table {
namespace {

using file::SchemaFromProtoFields;
using file::SchemaToProtoFields;

std::map<std::string, std::string> ToStdMap(const google::protobuf::Map<std::string, std::string>& m) {
  return {m.begin(), m.end()};
}

Result<SequenceRef> SequenceFromProto(bool has_inline, const std::string& inline_bytes,
                                      bool has_external, const pb::table::ExternalFile& ext) {
  SequenceRef ref;
  if (has_inline) ref.inline_bytes = inline_bytes;
  if (has_external) ref.external = ExternalFile{ext.path(), ext.offset(), ext.size()};
  return ref;
}

void DataFileToProto(const DataFile& file, pb::table::DataFile* proto) {
  proto->set_path(file.path);
  for (int32_t id : file.fields) proto->add_fields(id);
  for (int32_t c : file.column_indices) proto->add_column_indices(c);
  proto->set_file_major_version(file.file_major_version);
  proto->set_file_minor_version(file.file_minor_version);
  proto->set_file_size_bytes(file.file_size_bytes);
  if (file.base_id) proto->set_base_id(*file.base_id);
}

DataFile DataFileFromProto(const pb::table::DataFile& pf) {
  DataFile file;
  file.path = pf.path();
  file.fields.assign(pf.fields().begin(), pf.fields().end());
  file.column_indices.assign(pf.column_indices().begin(), pf.column_indices().end());
  file.file_major_version = pf.file_major_version();
  file.file_minor_version = pf.file_minor_version();
  file.file_size_bytes = pf.file_size_bytes();
  if (pf.has_base_id()) file.base_id = pf.base_id();
  return file;
}

}  // namespace

Result<DataOverlayFile> OverlayFromProto(const pb::table::DataOverlayFile& proto, const std::string& what,
                                         uint64_t fragment_id) {
  if (!proto.has_data_file()) {
    return Status::Invalid(what, ": a data overlay file of fragment ", fragment_id, " is missing its data_file");
  }
  DataOverlayFile overlay;
  overlay.data_file = DataFileFromProto(proto.data_file());
  const std::string where = what + ": overlay " + overlay.data_file.path + " of fragment " + std::to_string(fragment_id);
  switch (proto.coverage_case()) {
    case pb::table::DataOverlayFile::kSharedOffsetBitmap:
      LANCE_RETURN_NOT_OK(ValidatePortableRoaring(proto.shared_offset_bitmap(), where + " coverage"));
      overlay.shared_offsets = proto.shared_offset_bitmap();
      break;
    case pb::table::DataOverlayFile::kFieldCoverage: {
      const auto& bitmaps = proto.field_coverage().offset_bitmaps();
      if (bitmaps.size() != static_cast<int>(overlay.data_file.fields.size())) {
        return Status::Invalid(where, " has ", bitmaps.size(), " coverage bitmaps for ",
                               overlay.data_file.fields.size(), " fields");
      }
      overlay.field_offsets.emplace();
      for (const auto& b : bitmaps) {
        LANCE_RETURN_NOT_OK(ValidatePortableRoaring(b, where + " coverage"));
        overlay.field_offsets->push_back(b);
      }
      break;
    }
    default: return Status::Invalid(where, " is missing its coverage");
  }
  overlay.committed_version = proto.committed_version();
  return overlay;
}

void OverlayToProto(const DataOverlayFile& overlay, pb::table::DataOverlayFile* proto) {
  DataFileToProto(overlay.data_file, proto->mutable_data_file());
  if (overlay.shared_offsets) {
    proto->set_shared_offset_bitmap(*overlay.shared_offsets);
  } else {
    auto* fc = proto->mutable_field_coverage();
    if (overlay.field_offsets) {
      for (const auto& b : *overlay.field_offsets) fc->add_offset_bitmaps(b);
    }
  }
  proto->set_committed_version(overlay.committed_version);
}

Result<::lance::Fragment> FragmentFromProto(const pb::table::DataFragment& proto,
                                            const std::string& what) {
  ::lance::Fragment frag;
  frag.id = proto.id();
  for (const auto& pf : proto.files()) {
    DataFile file = DataFileFromProto(pf);
    if (file.file_major_version != 0 || file.file_minor_version > 2) {
      // v2 files name a column (or -1) for every field.
      if (file.column_indices.size() != file.fields.size()) {
        return Status::Invalid(what, ": fragment ", frag.id, " data file ", file.path, " has ",
                               file.fields.size(), " fields but ", file.column_indices.size(),
                               " column indices");
      }
    }
    frag.files.push_back(std::move(file));
  }
  if (proto.has_deletion_file()) {
    const auto& pd = proto.deletion_file();
    DeletionFile del;
    switch (pd.file_type()) {
      case pb::table::DeletionFile::ARROW_ARRAY: del.type = DeletionFile::Type::kArrowArray; break;
      case pb::table::DeletionFile::BITMAP: del.type = DeletionFile::Type::kBitmap; break;
      default:
        return Status::Invalid(what, ": fragment ", frag.id, " has a deletion file of unknown type ",
                               static_cast<int>(pd.file_type()));
    }
    del.read_version = pd.read_version();
    del.id = pd.id();
    if (pd.num_deleted_rows() != 0) del.num_deleted_rows = pd.num_deleted_rows();
    if (pd.has_base_id()) del.base_id = pd.base_id();
    frag.deletion_file = del;
  }
  if (proto.physical_rows() != 0) frag.physical_rows = proto.physical_rows();
  LANCE_ASSIGN_OR_RAISE(frag.row_ids,
                        SequenceFromProto(proto.has_inline_row_ids(), proto.inline_row_ids(),
                                          proto.has_external_row_ids(), proto.external_row_ids()));
  LANCE_ASSIGN_OR_RAISE(
      frag.last_updated_at_versions,
      SequenceFromProto(proto.has_inline_last_updated_at_versions(),
                        proto.inline_last_updated_at_versions(),
                        proto.has_external_last_updated_at_versions(),
                        proto.external_last_updated_at_versions()));
  LANCE_ASSIGN_OR_RAISE(
      frag.created_at_versions,
      SequenceFromProto(proto.has_inline_created_at_versions(), proto.inline_created_at_versions(),
                        proto.has_external_created_at_versions(),
                        proto.external_created_at_versions()));
  for (const auto& po : proto.overlays()) {
    LANCE_ASSIGN_OR_RAISE(auto overlay, OverlayFromProto(po, what, frag.id));
    frag.overlays.push_back(std::move(overlay));
  }
  // Newest last, list order breaking ties, as the reference sorts on load.
  std::stable_sort(frag.overlays.begin(), frag.overlays.end(),
                   [](const DataOverlayFile& a, const DataOverlayFile& b) {
                     return a.committed_version < b.committed_version;
                   });
  return frag;
}

void FragmentToProto(const ::lance::Fragment& frag, pb::table::DataFragment* proto) {
  proto->set_id(frag.id);
  for (const auto& file : frag.files) DataFileToProto(file, proto->add_files());
  if (frag.deletion_file) {
    auto* pd = proto->mutable_deletion_file();
    pd->set_file_type(frag.deletion_file->type == DeletionFile::Type::kBitmap
                          ? pb::table::DeletionFile::BITMAP
                          : pb::table::DeletionFile::ARROW_ARRAY);
    pd->set_read_version(frag.deletion_file->read_version);
    pd->set_id(frag.deletion_file->id);
    pd->set_num_deleted_rows(frag.deletion_file->num_deleted_rows.value_or(0));
    if (frag.deletion_file->base_id) pd->set_base_id(*frag.deletion_file->base_id);
  }
  proto->set_physical_rows(frag.physical_rows.value_or(0));
  auto set_external = [](const ExternalFile& e, pb::table::ExternalFile* p) {
    p->set_path(e.path);
    p->set_offset(e.offset);
    p->set_size(e.size);
  };
  if (frag.row_ids.inline_bytes) proto->set_inline_row_ids(*frag.row_ids.inline_bytes);
  else if (frag.row_ids.external) set_external(*frag.row_ids.external, proto->mutable_external_row_ids());
  if (frag.last_updated_at_versions.inline_bytes)
    proto->set_inline_last_updated_at_versions(*frag.last_updated_at_versions.inline_bytes);
  else if (frag.last_updated_at_versions.external)
    set_external(*frag.last_updated_at_versions.external,
                 proto->mutable_external_last_updated_at_versions());
  if (frag.created_at_versions.inline_bytes)
    proto->set_inline_created_at_versions(*frag.created_at_versions.inline_bytes);
  else if (frag.created_at_versions.external)
    set_external(*frag.created_at_versions.external, proto->mutable_external_created_at_versions());
  for (const auto& overlay : frag.overlays) OverlayToProto(overlay, proto->add_overlays());
}

Result<Manifest> ManifestFromProto(const pb::table::Manifest& proto, const std::string& what) {
  Manifest m;
  LANCE_ASSIGN_OR_RAISE(m.schema,
                        SchemaFromProtoFields(proto.fields(), proto.schema_metadata(), what));
  for (const auto& pf : proto.fragments()) {
    LANCE_ASSIGN_OR_RAISE(auto frag, FragmentFromProto(pf, what));
    m.fragments.push_back(std::move(frag));
  }
  m.version = proto.version();
  if (proto.has_writer_version()) {
    const auto& wv = proto.writer_version();
    WriterVersion w{wv.library(), wv.version(), std::nullopt, std::nullopt};
    if (wv.has_prerelease()) w.prerelease = wv.prerelease();
    if (wv.has_build_metadata()) w.build_metadata = wv.build_metadata();
    m.writer_version = w;
  }
  if (proto.has_index_section()) m.index_section = proto.index_section();
  if (proto.has_timestamp()) {
    // Times outside int64 nanoseconds (years before 1677 or after 2262) are
    // dropped rather than wrapped; the reference falls back to the epoch.
    constexpr int64_t kMaxSeconds = std::numeric_limits<int64_t>::max() / 1000000000LL - 1;
    const int64_t secs = proto.timestamp().seconds();
    const int32_t nanos = proto.timestamp().nanos();
    if (secs >= -kMaxSeconds && secs <= kMaxSeconds && nanos >= 0 && nanos < 1000000000) {
      m.timestamp_nanos = secs * 1000000000LL + nanos;
    }
  }
  m.tag = proto.tag();
  m.reader_feature_flags = proto.reader_feature_flags();
  m.writer_feature_flags = proto.writer_feature_flags();
  if (proto.has_max_fragment_id()) m.max_fragment_id = proto.max_fragment_id();
  m.transaction_file = proto.transaction_file();
  if (proto.has_transaction_section()) {
    m.transaction_section = proto.transaction_section();
  } else if (proto.has_transaction_section_deprecated()) {
    m.transaction_section = proto.transaction_section_deprecated();
  }
  m.next_row_id = proto.next_row_id();
  if (proto.has_data_format()) {
    m.data_file_format = proto.data_format().file_format();
    m.data_storage_version = proto.data_format().version();
  }
  m.config = ToStdMap(proto.config());
  m.table_metadata = ToStdMap(proto.table_metadata());
  for (const auto& pb_base : proto.base_paths()) {
    BasePath b;
    b.id = pb_base.id();
    if (pb_base.has_name()) b.name = pb_base.name();
    b.is_dataset_root = pb_base.is_dataset_root();
    b.path = pb_base.path();
    m.base_paths.push_back(std::move(b));
  }
  if (proto.has_branch()) m.branch = proto.branch();
  return m;
}

pb::table::Manifest ManifestToProto(const ::lance::Manifest& m) {
  pb::table::Manifest proto;
  SchemaToProtoFields(m.schema, proto.mutable_fields());
  for (const auto& [k, v] : m.schema.metadata) (*proto.mutable_schema_metadata())[k] = v;
  for (const auto& frag : m.fragments) FragmentToProto(frag, proto.add_fragments());
  proto.set_version(m.version);
  if (m.writer_version) {
    auto* wv = proto.mutable_writer_version();
    wv->set_library(m.writer_version->library);
    wv->set_version(m.writer_version->version);
    if (m.writer_version->prerelease) wv->set_prerelease(*m.writer_version->prerelease);
    if (m.writer_version->build_metadata) wv->set_build_metadata(*m.writer_version->build_metadata);
  }
  if (m.index_section) proto.set_index_section(*m.index_section);
  if (m.timestamp_nanos && *m.timestamp_nanos != 0) {
    // Floor division so pre-epoch times keep nanos in [0, 1e9).
    int64_t secs = *m.timestamp_nanos / 1000000000LL;
    int64_t nanos = *m.timestamp_nanos % 1000000000LL;
    if (nanos < 0) { nanos += 1000000000LL; secs -= 1; }
    proto.mutable_timestamp()->set_seconds(secs);
    proto.mutable_timestamp()->set_nanos(static_cast<int32_t>(nanos));
  }
  proto.set_tag(m.tag);
  proto.set_reader_feature_flags(m.reader_feature_flags);
  proto.set_writer_feature_flags(m.writer_feature_flags);
  if (m.max_fragment_id) proto.set_max_fragment_id(*m.max_fragment_id);
  proto.set_transaction_file(m.transaction_file);
  if (m.transaction_section) proto.set_transaction_section(*m.transaction_section);
  proto.set_next_row_id(m.next_row_id);
  if (!m.data_storage_version.empty()) {
    proto.mutable_data_format()->set_file_format(m.data_file_format);
    proto.mutable_data_format()->set_version(m.data_storage_version);
  }
  for (const auto& [k, v] : m.config) (*proto.mutable_config())[k] = v;
  for (const auto& [k, v] : m.table_metadata) (*proto.mutable_table_metadata())[k] = v;
  for (const auto& b : m.base_paths) {
    auto* pb_base = proto.add_base_paths();
    pb_base->set_id(b.id);
    if (b.name) pb_base->set_name(*b.name);
    pb_base->set_is_dataset_root(b.is_dataset_root);
    pb_base->set_path(b.path);
  }
  if (m.branch) proto.set_branch(*m.branch);
  return proto;
}

Result<IndexMetadata> IndexMetadataFromProto(const pb::table::IndexMetadata& proto,
                                             const std::string& what) {
  IndexMetadata idx;
  idx.name = proto.name();
  const std::string& uuid = proto.uuid().uuid();
  if (uuid.size() != idx.uuid.size()) {
    return Status::Invalid(what, ": index '", proto.name(), "' has a ", uuid.size(),
                           "-byte uuid, expected 16");
  }
  std::memcpy(idx.uuid.data(), uuid.data(), uuid.size());
  idx.fields.assign(proto.fields().begin(), proto.fields().end());
  idx.dataset_version = proto.dataset_version();
  const std::string& bitmap = proto.fragment_bitmap();
  if (!bitmap.empty()) {  // empty bytes mean "unknown"
    LANCE_ASSIGN_OR_RAISE(idx.fragment_ids,
                          DecodePortableRoaring(bitmap, what + ": fragment bitmap of index '" + proto.name() + "'"));
    idx.stored_fragment_bitmap = bitmap;
  }
  if (proto.has_index_details()) {
    idx.index_details_type_url = proto.index_details().type_url();
    idx.index_details_value = proto.index_details().value();
  }
  if (proto.has_index_version()) idx.index_version = proto.index_version();
  if (proto.has_created_at()) idx.created_at_ms = proto.created_at();
  if (proto.has_base_id()) idx.base_id = proto.base_id();
  idx.covering_fields.assign(proto.covering_fields().begin(), proto.covering_fields().end());
  for (const auto& f : proto.files()) idx.files.push_back(IndexFile{f.path(), f.size_bytes()});
  return idx;
}

namespace {

// Whether roaring-rs would store these fragment ids as run containers (all
// below 65536: one container; more containers keep CRoaring's choice).
bool UseRunContainer(std::vector<uint32_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (ids.empty() || (ids.front() >> 16) != (ids.back() >> 16)) return true;
  uint64_t runs = 1;
  for (size_t i = 1; i < ids.size(); ++i) runs += ids[i] != ids[i - 1] + 1;
  const uint64_t as_run = 2 + 4 * runs;
  const uint64_t as_other = ids.size() > 4096 ? 8192 : 2 * ids.size();
  return as_run < as_other;
}

}  // namespace

void IndexMetadataToProto(const IndexMetadata& idx, pb::table::IndexMetadata* proto) {
  proto->mutable_uuid()->set_uuid(std::string(idx.uuid.begin(), idx.uuid.end()));
  for (int32_t f : idx.fields) proto->add_fields(f);
  proto->set_name(idx.name);
  proto->set_dataset_version(idx.dataset_version);
  if (idx.fragment_ids && !idx.stored_fragment_bitmap.empty() &&
      DecodePortableRoaring(idx.stored_fragment_bitmap, "stored fragment bitmap").ValueOr({}) == *idx.fragment_ids) {
    proto->set_fragment_bitmap(idx.stored_fragment_bitmap);
  } else if (idx.fragment_ids) {
    roaring_bitmap_t* rb = roaring_bitmap_create();
    roaring_bitmap_add_many(rb, idx.fragment_ids->size(), idx.fragment_ids->data());
    // Run containers where strictly smaller, as the reference's roaring-rs
    // writes them: runs when 2 + 4 * runs < 2 * values (array) or < 8192
    // bytes (bitset). CRoaring's own rule also counts the array's length
    // prefix, so {0, 1, 2} would become a run there but not in pylance;
    // the rule is applied here for the usual single-container bitmap.
    if (UseRunContainer(*idx.fragment_ids)) roaring_bitmap_run_optimize(rb);
    std::string bytes(roaring_bitmap_portable_size_in_bytes(rb), '\0');
    roaring_bitmap_portable_serialize(rb, bytes.data());
    roaring_bitmap_free(rb);
    proto->set_fragment_bitmap(bytes);
  }
  if (!idx.index_details_type_url.empty()) {
    proto->mutable_index_details()->set_type_url(idx.index_details_type_url);
    proto->mutable_index_details()->set_value(idx.index_details_value);
  }
  if (idx.index_version) proto->set_index_version(*idx.index_version);
  if (idx.created_at_ms) proto->set_created_at(*idx.created_at_ms);
  if (idx.base_id) proto->set_base_id(*idx.base_id);
  for (int32_t f : idx.covering_fields) proto->add_covering_fields(f);
  for (const auto& f : idx.files) {
    auto* out = proto->add_files();
    out->set_path(f.path);
    out->set_size_bytes(f.size_bytes);
  }
}

}  // namespace lance::table
