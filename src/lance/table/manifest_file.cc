#include "lance/table/manifest_file.h"
#include "lance/util/protobuf.h"

#include <algorithm>
#include <cstring>

#include <arrow/array.h>
#include <arrow/buffer.h>
#include <arrow/io/memory.h>
#include <arrow/type.h>

#include "lance/file/legacy/legacy_reader.h"
#include "lance/file/legacy/legacy_writer.h"
#include "lance/table.pb.h"
#include "lance/table/feature_flags.h"
#include "lance/table/manifest_proto.h"

namespace lance::table {
namespace {

uint32_t LoadU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);  // the format is little-endian, as is every target we build for
  return v;
}

void AppendU32(std::string* out, uint32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }

// The length-prefixed message at `offset`, which must end by `limit`.
Result<std::string_view> MessageAt(std::string_view bytes, uint64_t offset, uint64_t limit,
                                   const std::string& path, const char* what) {
  if (offset > limit || limit - offset < 4) {
    return Status::Invalid("corrupt manifest ", path, ": ", what, " offset ", offset,
                           " is outside the file body (", limit, " bytes)");
  }
  uint32_t len = LoadU32(bytes.data() + offset);
  if (len > limit - offset - 4) {
    return Status::Invalid("corrupt manifest ", path, ": ", what, " at offset ", offset,
                           " claims ", len, " bytes, past the end of the body");
  }
  return bytes.substr(offset + 4, len);
}

// Every field of the tree, parents before children.
void CollectFields(std::vector<Field>* fields, std::vector<Field*>* out) {
  for (auto& f : *fields) {
    out->push_back(&f);
    CollectFields(&f.children, out);
  }
}

// A legacy dataset's dictionary values live in its manifest file, where its
// fields locate them: loaded with the schema, as the reference loads them.
Status LoadDictionaries(std::string_view bytes, uint64_t body, const std::string& path, Schema* schema) {
  std::vector<Field*> fields;
  CollectFields(&schema->fields, &fields);
  std::shared_ptr<arrow::Buffer> owned;  // the values may point into it: a copy of the caller's bytes
  for (Field* f : fields) {
    if (f->dictionary_length.value_or(0) <= 0 || !f->dictionary_offset) continue;
    auto type = ArrowTypeFromField(*f);
    if (!type.ok() || (*type)->id() != arrow::Type::DICTIONARY) continue;  // v2 fields never have one
    // Up to the body's end: the reader takes the last 16 bytes as a footer.
    if (owned == nullptr) owned = arrow::Buffer::FromString(std::string(bytes.substr(0, body + kManifestFooterSize)));
    arrow::io::BufferReader reader(owned);
    auto values = file::legacy::ReadLegacyDictionary(
        &reader, path, static_cast<const arrow::DictionaryType&>(**type).value_type(), *f->dictionary_offset,
        *f->dictionary_length, nullptr);
    if (!values.ok()) {
      return Status::Invalid("manifest ", path, ": dictionary of field '", f->name, "': ",
                             values.status().message());
    }
    f->dictionary_values = *values;
  }
  return Status::OK();
}

}  // namespace

Result<ManifestFile> ParseManifestFile(std::string_view bytes, const std::string& path,
                                       FlagCheck check) {
  if (bytes.size() < kManifestFooterSize) {
    return Status::Invalid("corrupt manifest ", path, ": ", bytes.size(),
                           " bytes is too short for the 16-byte footer");
  }
  const size_t size = bytes.size();
  if (bytes.substr(size - 4) != kManifestMagic) {
    return Status::Invalid("corrupt manifest ", path, ": bad magic at the end of the file "
                           "(expected \"LANC\")");
  }
  int64_t pos;
  std::memcpy(&pos, bytes.data() + size - kManifestFooterSize, sizeof pos);
  const uint64_t body = size - kManifestFooterSize;
  if (pos < 0 || static_cast<uint64_t>(pos) + 4 > body) {
    return Status::Invalid("corrupt manifest ", path, ": manifest position ", pos,
                           " is outside the file (", size, " bytes)");
  }
  const uint32_t len = LoadU32(bytes.data() + pos);
  // The manifest message must end exactly where the footer starts.
  if (static_cast<uint64_t>(pos) + 4 + len != body) {
    return Status::Invalid("corrupt manifest ", path, ": manifest message at ", pos, " has length ",
                           len, " but must end at the footer (expected ", body - pos - 4, ")");
  }
  pb::table::Manifest proto;
  if (!util::ParseMessage(bytes.substr(pos + 4, len), &proto)) {
    return Status::Invalid("corrupt manifest ", path, ": the manifest is not a valid protobuf message");
  }
  if (check != FlagCheck::kNone) {
    // Refuse unknown features before interpreting anything else.
    Manifest flags_only;
    flags_only.reader_feature_flags = proto.reader_feature_flags();
    flags_only.writer_feature_flags = proto.writer_feature_flags();
    Status st = check == FlagCheck::kWrite ? Status::OK() : CheckCanRead(flags_only);
    if (st.ok() && check != FlagCheck::kRead) st = CheckCanWrite(flags_only);
    if (!st.ok()) return st.WithMessage(path, ": ", st.message());
  }
  ManifestFile out;
  LANCE_ASSIGN_OR_RAISE(out.manifest, ManifestFromProto(proto, path));
  if (check != FlagCheck::kNone) {
    Status st = CheckDataFileVersions(out.manifest);
    if (!st.ok()) return st.WithMessage(path, ": ", st.message());
  }

  LANCE_RETURN_NOT_OK(LoadDictionaries(bytes, static_cast<uint64_t>(pos), path, &out.manifest.schema));
  if (out.manifest.index_section) {
    LANCE_ASSIGN_OR_RAISE(auto msg, MessageAt(bytes, *out.manifest.index_section,
                                              static_cast<uint64_t>(pos), path, "index section"));
    pb::table::IndexSection section;
    if (!util::ParseMessage(msg, &section)) {
      return Status::Invalid("corrupt manifest ", path, ": the index section is not a valid protobuf message");
    }
    for (const auto& pi : section.indices()) {
      LANCE_ASSIGN_OR_RAISE(auto idx, IndexMetadataFromProto(pi, path));
      out.indices.push_back(std::move(idx));
    }
  }
  if (out.manifest.transaction_section) {
    LANCE_ASSIGN_OR_RAISE(auto msg, MessageAt(bytes, *out.manifest.transaction_section,
                                              static_cast<uint64_t>(pos), path, "transaction section"));
    out.transaction_bytes = std::string(msg);
  }
  return out;
}

std::string SerializeManifestFile(const Manifest& manifest, const std::vector<IndexMetadata>& indices,
                                  const std::string* transaction_bytes) {
  std::string out;
  Manifest m = manifest;
  m.index_section.reset();
  m.transaction_section.reset();
  // Legacy datasets' dictionary values come first, in field id order, as
  // the reference writes them; the fields record where.
  std::vector<Field*> fields;
  CollectFields(&m.schema.fields, &fields);
  std::stable_sort(fields.begin(), fields.end(), [](const Field* a, const Field* b) { return a->id < b->id; });
  for (Field* f : fields) {
    if (f->dictionary_values == nullptr) continue;
    // The values were read or written as legacy dictionaries: their types
    // encode (BuildManifest refuses a field without them).
    auto at = file::legacy::AppendLegacyDictionary(*f->dictionary_values, static_cast<int64_t>(out.size()), &out);
    if (!at.ok()) continue;
    f->dictionary_offset = *at;
    f->dictionary_length = f->dictionary_values->length();
  }
  if (!indices.empty()) {
    pb::table::IndexSection section;
    for (const auto& idx : indices) IndexMetadataToProto(idx, section.add_indices());
    std::string msg = section.SerializeAsString();
    m.index_section = out.size();
    AppendU32(&out, static_cast<uint32_t>(msg.size()));
    out += msg;
  }
  if (transaction_bytes != nullptr) {
    m.transaction_section = out.size();
    AppendU32(&out, static_cast<uint32_t>(transaction_bytes->size()));
    out += *transaction_bytes;
  }
  const int64_t pos = static_cast<int64_t>(out.size());
  std::string msg = ManifestToProto(m).SerializeAsString();
  AppendU32(&out, static_cast<uint32_t>(msg.size()));
  out += msg;
  out.append(reinterpret_cast<const char*>(&pos), 8);
  const int16_t major = 0, minor = 2;  // lance_file's format version, as the reference writes
  out.append(reinterpret_cast<const char*>(&major), 2);
  out.append(reinterpret_cast<const char*>(&minor), 2);
  out += kManifestMagic;
  return out;
}

}  // namespace lance::table
