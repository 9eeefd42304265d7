#include "lance/file/schema_proto.h"

#include "lance/file/blob_v2.h"

#include <map>
#include <optional>
#include <vector>

namespace lance::file {
namespace {

std::map<std::string, std::string> ToStdMap(const google::protobuf::Map<std::string, std::string>& m) {
  return {m.begin(), m.end()};
}

Field FieldFromProto(const pb::file::Field& proto) {
  Field f;
  f.name = proto.name();
  f.id = proto.id();
  f.parent_id = proto.parent_id();
  f.logical_type = proto.logical_type();
  f.nullable = proto.nullable();
  f.metadata = ToStdMap(proto.metadata());
  f.extension_name = proto.extension_name();
  f.encoding = proto.encoding();
  if (proto.has_dictionary()) {
    f.dictionary_offset = proto.dictionary().offset();
    f.dictionary_length = proto.dictionary().length();
  }
  f.unenforced_primary_key = proto.unenforced_primary_key();
  return f;
}

void FieldToProto(const Field& f, pb::file::Field* proto) {
  proto->set_type(pb::file::Field::PARENT);  // the reference always writes 0
  proto->set_name(f.name);
  proto->set_id(f.id);
  proto->set_parent_id(f.parent_id);
  proto->set_logical_type(f.logical_type);
  proto->set_nullable(f.nullable);
  proto->set_encoding(static_cast<pb::file::Encoding>(f.encoding));
  if (f.dictionary_offset || f.dictionary_length) {
    proto->mutable_dictionary()->set_offset(f.dictionary_offset.value_or(0));
    proto->mutable_dictionary()->set_length(f.dictionary_length.value_or(0));
  }
  proto->set_extension_name(f.extension_name);
  for (const auto& [k, v] : f.metadata) (*proto->mutable_metadata())[k] = v;
  proto->set_unenforced_primary_key(f.unenforced_primary_key);
}

// Finds the first field with `id` in pre-order, the way the reference
// attaches a child to its parent (this matters for duplicate ids).
Field* FindMutable(std::vector<Field>& fields, int32_t id) {
  for (auto& f : fields) {
    if (f.id == id) return &f;
    if (Field* found = FindMutable(f.children, id)) return found;
  }
  return nullptr;
}

void AppendPreOrder(const Field& f, google::protobuf::RepeatedPtrField<pb::file::Field>* out) {
  FieldToProto(f, out->Add());
  for (const auto& c : f.children) AppendPreOrder(c, out);
}

}  // namespace

Result<Schema> SchemaFromProtoFields(
    const google::protobuf::RepeatedPtrField<pb::file::Field>& fields,
    const google::protobuf::Map<std::string, std::string>& metadata, const std::string& what) {
  // Bounds nesting so a hostile manifest cannot exhaust the stack in the
  // recursive walks below (real schemas nest a handful of levels).
  constexpr int kMaxDepth = 256;
  std::map<int32_t, int> depth_of;  // first field with each id, as the lookup below
  Schema schema;
  // pylance writes a blob v2 descriptor's children into the data file's
  // schema without ids or parent links, right after the descriptor.
  std::optional<size_t> open_descriptor;
  for (const auto& proto : fields) {
    Field f = FieldFromProto(proto);
    if (f.parent_id == -1 && f.id == -1 && open_descriptor) {
      schema.fields[*open_descriptor].children.push_back(std::move(f));
      continue;
    }
    open_descriptor.reset();
    if (f.parent_id == -1) {
      if (IsBlobV2Descriptor(f)) open_descriptor = schema.fields.size();
      depth_of.emplace(f.id, 0);
      schema.fields.push_back(std::move(f));
      continue;
    }
    auto parent_depth = depth_of.find(f.parent_id);
    if (parent_depth != depth_of.end()) {
      if (parent_depth->second + 1 > kMaxDepth) {
        return Status::Invalid(what, ": schema nests deeper than ", kMaxDepth, " levels at field '",
                               f.name, "' (id ", f.id, ")");
      }
      depth_of.emplace(f.id, parent_depth->second + 1);
    }
    Field* parent = FindMutable(schema.fields, f.parent_id);
    if (parent == nullptr) {
      return Status::Invalid(what, ": schema field '", f.name, "' (id ", f.id,
                             ") names parent id ", f.parent_id, ", which no earlier field has");
    }
    parent->children.push_back(std::move(f));
  }
  schema.metadata = ToStdMap(metadata);
  return schema;
}

void SchemaToProtoFields(const Schema& schema,
                         google::protobuf::RepeatedPtrField<pb::file::Field>* fields) {
  for (const auto& f : schema.fields) AppendPreOrder(f, fields);
}

}  // namespace lance::file
