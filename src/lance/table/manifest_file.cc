#include "lance/table/manifest_file.h"
#include "lance/util/protobuf.h"

#include <cstring>

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
