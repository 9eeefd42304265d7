#include "lance/file/legacy_metadata.h"
#include "lance/util/protobuf.h"

#include <cstring>

#include "lance/file.pb.h"

namespace lance::file {

Result<uint64_t> LegacyMetadataPosition(std::string_view footer, uint64_t file_size,
                                        const std::string& path) {
  if (footer.size() != kLegacyFooterSize || file_size < kLegacyFooterSize) {
    return Status::Invalid("corrupt lance file ", path, ": too short for the footer");
  }
  if (footer.substr(12) != "LANC") {
    return Status::Invalid("corrupt lance file ", path, ": bad magic (expected \"LANC\")");
  }
  int64_t pos;
  std::memcpy(&pos, footer.data(), sizeof pos);
  if (pos < 0 || static_cast<uint64_t>(pos) + 4 > file_size - kLegacyFooterSize) {
    return Status::Invalid("corrupt lance file ", path, ": metadata position ", pos,
                           " is outside the file (", file_size, " bytes)");
  }
  return static_cast<uint64_t>(pos);
}

Result<LegacyFileMetadata> ParseLegacyMetadata(std::string_view message, const std::string& path) {
  if (message.size() < 4) return Status::Invalid("corrupt lance file ", path, ": truncated metadata");
  uint32_t len;
  std::memcpy(&len, message.data(), 4);
  if (len > message.size() - 4) {
    return Status::Invalid("corrupt lance file ", path, ": metadata length ", len, " runs past the footer");
  }
  pb::file::Metadata proto;
  if (!util::ParseMessage(message.substr(4, len), &proto)) {
    return Status::Invalid("corrupt lance file ", path, ": metadata is not a valid protobuf message");
  }
  LegacyFileMetadata out;
  out.batch_offsets.assign(proto.batch_offsets().begin(), proto.batch_offsets().end());
  for (size_t i = 1; i < out.batch_offsets.size(); ++i) {
    if (out.batch_offsets[i] < out.batch_offsets[i - 1]) {
      return Status::Invalid("corrupt lance file ", path, ": batch offsets decrease");
    }
  }
  if (!out.batch_offsets.empty() && out.batch_offsets.front() < 0) {
    return Status::Invalid("corrupt lance file ", path, ": negative batch offset");
  }
  out.manifest_position = proto.manifest_position();
  out.page_table_position = proto.page_table_position();
  return out;
}

}  // namespace lance::file
