#include "lance/txn/transaction_builder.h"


#include "lance/file/schema_proto.h"
#include "lance/table/manifest_proto.h"
#include "lance/transaction.pb.h"
#include "lance/util/random.h"

namespace lance::txn {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

void SetUpdateMap(const UpdateMap& in, pb::table::Transaction::UpdateMap* out) {
  for (const auto& [key, value] : in.entries) {
    auto* e = out->add_update_entries();
    e->set_key(key);
    if (value) e->set_value(*value);
  }
  out->set_replace(in.replace);
}

void AddFragments(const std::vector<Fragment>& fragments,
                  google::protobuf::RepeatedPtrField<pb::table::DataFragment>* out) {
  for (const auto& f : fragments) table::FragmentToProto(f, out->Add());
}

}  // namespace

const char* OperationName(const Operation& op) {
  return std::visit(Overloaded{[](const Append&) { return "Append"; },
                               [](const Overwrite&) { return "Overwrite"; },
                               [](const Delete&) { return "Delete"; },
                               [](const Restore&) { return "Restore"; },
                               [](const Update&) { return "Update"; },
                               [](const Rewrite&) { return "Rewrite"; },
                               [](const ReserveFragments&) { return "ReserveFragments"; },
                               [](const UpdateConfig&) { return "UpdateConfig"; },
                               [](const Clone&) { return "Clone"; },
                               [](const Merge&) { return "Merge"; },
                               [](const Project&) { return "Project"; },
                               [](const DataOverlay&) { return "DataOverlay"; },
                               [](const CreateIndex&) { return "CreateIndex"; }},
                    op);
}

std::string NewUuid() {
  const auto b = util::RandomUuidBytes();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[b[i] >> 4];
    out += kHex[b[i] & 0xF];
  }
  return out;
}

Transaction Transaction::Make(uint64_t read_version, Operation operation) {
  Transaction t;
  t.read_version = read_version;
  t.uuid = NewUuid();
  t.operation = std::move(operation);
  return t;
}

std::string Transaction::FileName() const {
  return std::to_string(read_version) + "-" + uuid + ".txn";
}

std::string Transaction::Serialize() const {
  pb::table::Transaction proto;
  proto.set_read_version(read_version);
  proto.set_uuid(uuid);
  proto.set_tag(tag);
  for (const auto& [k, v] : properties) (*proto.mutable_transaction_properties())[k] = v;
  std::visit(
      Overloaded{
          [&](const Append& op) { AddFragments(op.fragments, proto.mutable_append()->mutable_fragments()); },
          [&](const Overwrite& op) {
            auto* o = proto.mutable_overwrite();
            AddFragments(op.fragments, o->mutable_fragments());
            file::SchemaToProtoFields(op.schema, o->mutable_schema());
            // The reference writes schema_metadata empty (and ignores it on
            // read): the schema metadata travels in the manifest.
            for (const auto& [k, v] : op.config_upsert_values) (*o->mutable_config_upsert_values())[k] = v;
            for (const auto& b : op.initial_bases) {
              auto* base = o->add_initial_bases();
              base->set_id(b.id);
              if (b.name) base->set_name(*b.name);
              base->set_is_dataset_root(b.is_dataset_root);
              base->set_path(b.path);
            }
          },
          [&](const Delete& op) {
            auto* d = proto.mutable_delete_();
            AddFragments(op.updated_fragments, d->mutable_updated_fragments());
            for (uint64_t id : op.deleted_fragment_ids) d->add_deleted_fragment_ids(id);
            d->set_predicate(op.predicate);
          },
          [&](const Restore& op) { proto.mutable_restore()->set_version(op.version); },
          [&](const Update& op) {
            auto* u = proto.mutable_update();
            for (uint64_t id : op.removed_fragment_ids) u->add_removed_fragment_ids(id);
            AddFragments(op.updated_fragments, u->mutable_updated_fragments());
            AddFragments(op.new_fragments, u->mutable_new_fragments());
            for (uint32_t f : op.fields_modified) u->add_fields_modified(f);
            for (uint32_t f : op.fields_for_preserving_frag_bitmap) u->add_fields_for_preserving_frag_bitmap(f);
            u->set_update_mode(op.mode == Update::Mode::kRewriteColumns
                                   ? pb::table::Transaction::REWRITE_COLUMNS
                                   : pb::table::Transaction::REWRITE_ROWS);
          },
          [&](const Rewrite& op) {
            // The groups only, as the reference writes them (the single-group
            // fields are deprecated).
            auto* r = proto.mutable_rewrite();
            for (const auto& g : op.groups) {
              auto* group = r->add_groups();
              AddFragments(g.old_fragments, group->mutable_old_fragments());
              AddFragments(g.new_fragments, group->mutable_new_fragments());
              if (g.new_file_sizes_in_manifest_only) {
                for (auto& f : *group->mutable_new_fragments()) {
                  for (auto& file : *f.mutable_files()) file.clear_file_size_bytes();
                }
              }
            }
            for (const auto& ri : op.rewritten_indices) {
              auto* out = r->add_rewritten_indices();
              out->mutable_old_id()->set_uuid(std::string(ri.old_uuid.begin(), ri.old_uuid.end()));
              out->mutable_new_id()->set_uuid(std::string(ri.new_uuid.begin(), ri.new_uuid.end()));
              out->mutable_new_index_details()->set_type_url(ri.details_type_url);
              out->mutable_new_index_details()->set_value(ri.details_value);
              out->set_new_index_version(ri.index_version);
              for (const auto& f : ri.files) {
                auto* file = out->add_new_index_files();
                file->set_path(f.path);
                file->set_size_bytes(f.size_bytes);
              }
            }
          },
          [&](const ReserveFragments& op) {
            proto.mutable_reserve_fragments()->set_num_fragments(op.num_fragments);
          },
          [&](const UpdateConfig& op) {
            // The UpdateMap fields only, as pylance 14 writes them (fields
            // 1-4 are the deprecated form).
            auto* c = proto.mutable_update_config();
            if (op.config_updates) SetUpdateMap(*op.config_updates, c->mutable_config_updates());
            if (op.table_metadata_updates) {
              SetUpdateMap(*op.table_metadata_updates, c->mutable_table_metadata_updates());
            }
            if (op.schema_metadata_updates) {
              SetUpdateMap(*op.schema_metadata_updates, c->mutable_schema_metadata_updates());
            }
            for (const auto& [id, map] : op.field_metadata_updates) {
              SetUpdateMap(map, &(*c->mutable_field_metadata_updates())[id]);
            }
          },
          [&](const Clone& op) {
            auto* c = proto.mutable_clone();
            c->set_is_shallow(op.is_shallow);
            if (op.ref_name) c->set_ref_name(*op.ref_name);
            c->set_ref_version(op.ref_version);
            c->set_ref_path(op.ref_path);
            if (op.branch_name) c->set_branch_name(*op.branch_name);
          },
          [&](const Merge& op) {
            // Schema metadata travels in the manifest, as for Overwrite.
            auto* m = proto.mutable_merge();
            AddFragments(op.fragments, m->mutable_fragments());
            file::SchemaToProtoFields(op.schema, m->mutable_schema());
            m->set_preserves_nullability(op.preserves_nullability);
          },
          [&](const Project& op) {
            auto* p = proto.mutable_project();
            file::SchemaToProtoFields(op.schema, p->mutable_schema());
            p->set_preserves_nullability(op.preserves_nullability);
          },
          [&](const DataOverlay& op) {
            auto* d = proto.mutable_data_overlay();
            for (const auto& g : op.groups) {
              auto* group = d->add_groups();
              group->set_fragment_id(g.fragment_id);
              for (const auto& o : g.overlays) table::OverlayToProto(o, group->add_overlays());
            }
          },
          [&](const CreateIndex& op) {
            auto* c = proto.mutable_create_index();
            for (const auto& i : op.new_indices) table::IndexMetadataToProto(i, c->add_new_indices());
            for (const auto& i : op.removed_indices) table::IndexMetadataToProto(i, c->add_removed_indices());
          }},
      operation);
  return proto.SerializeAsString();
}

}  // namespace lance::txn
