#include "lance/file/container_writer.h"

#include <array>
#include <cstring>

#include <google/protobuf/any.pb.h>

#include "lance/encodings_v2_0.pb.h"

namespace lance::file {
namespace {

// The Any the reference stores for an encoding: type URL and message bytes.
std::string EncodeAny(const std::string& type_url, const std::string& value) {
  google::protobuf::Any any;
  any.set_type_url(type_url);
  any.set_value(value);
  return any.SerializeAsString();
}

void SetDirect(pb::file2::Encoding* encoding, std::string any_bytes) {
  encoding->mutable_direct()->set_encoding(std::move(any_bytes));
}

// The column encoding the reference records when an encoder has none of its
// own: ColumnEncoding { values: {} }.
std::string DefaultColumnEncodingAny() {
  pb::encodings20::ColumnEncoding encoding;
  encoding.mutable_values();
  return EncodeAny("/lance.encodings.ColumnEncoding", encoding.SerializeAsString());
}

}  // namespace

std::pair<uint16_t, uint16_t> FooterVersionPair(FileVersion version) {
  switch (version) {
    case FileVersion::kV2_0: return {0, 3};
    case FileVersion::kV2_1: return {2, 1};
    case FileVersion::kV2_2: return {2, 2};
    case FileVersion::kLegacy: break;
  }
  return {0, 2};
}

ContainerWriter::ContainerWriter(std::shared_ptr<arrow::io::OutputStream> out, std::string name,
                                 uint32_t num_columns, FileVersion version)
    : out_(std::move(out)), name_(std::move(name)), version_(version), columns_(num_columns) {}

namespace {
// Writes shorter than this are gathered; the gathered bytes go out when they
// reach it. Larger buffers go straight through, uncopied.
constexpr uint64_t kGatherBytes = 1 << 20;
}  // namespace

Status ContainerWriter::FlushPending() {
  if (pending_.empty()) return Status::OK();
  Status st = out_->Write(pending_.data(), static_cast<int64_t>(pending_.size()));
  if (!st.ok()) {
    return st.WithMessage("writing ", name_, " at byte ", position_ - pending_.size(), ": ", st.message());
  }
  pending_.clear();
  return Status::OK();
}

Status ContainerWriter::WriteRaw(const void* data, uint64_t size) {
  if (size == 0) return Status::OK();
  if (size < kGatherBytes) {
    if (pending_.capacity() < kGatherBytes) pending_.reserve(kGatherBytes);
    const auto* bytes = static_cast<const uint8_t*>(data);
    pending_.insert(pending_.end(), bytes, bytes + size);
    position_ += size;
    return pending_.size() >= kGatherBytes ? FlushPending() : Status::OK();
  }
  LANCE_RETURN_NOT_OK(FlushPending());
  Status st = out_->Write(data, static_cast<int64_t>(size));
  if (!st.ok()) return st.WithMessage("writing ", name_, " at byte ", position_, ": ", st.message());
  position_ += size;
  return Status::OK();
}

Status ContainerWriter::WritePadded(const void* data, uint64_t size) {
  std::array<uint8_t, kPageBufferAlignment> fill;  // this writer's pad byte (set_padding)
  fill.fill(pad_byte_);
  LANCE_RETURN_NOT_OK(WriteRaw(data, size));
  // Padding depends on the buffer's length alone, as in the reference (a
  // buffer that starts unaligned stays so; none does in practice).
  const uint64_t pad = (alignment_ - size % alignment_) % alignment_;
  return WriteRaw(fill.data(), pad);
}

Status ContainerWriter::WriteU64(uint64_t v) {
  uint8_t bytes[8];
  std::memcpy(bytes, &v, 8);  // little-endian targets only
  return WriteRaw(bytes, 8);
}

Status ContainerWriter::WriteOutOfLine(const OutOfLineBuffers& buffers) {
  for (const auto& b : buffers.buffers()) LANCE_RETURN_NOT_OK(WritePadded(b->data(), static_cast<uint64_t>(b->size())));
  return Status::OK();
}

Status ContainerWriter::WritePage(const EncodedPage& page) {
  if (page.column_index >= columns_.size()) {
    return Status::Invalid("writing ", name_, ": page for column ", page.column_index, " but the file has ",
                           columns_.size(), " columns");
  }
  auto* meta = columns_[page.column_index].add_pages();
  for (const auto& buffer : page.page.buffers) {
    const uint64_t size = buffer ? static_cast<uint64_t>(buffer->size()) : 0;
    meta->add_buffer_offsets(position_);
    meta->add_buffer_sizes(size);
    LANCE_RETURN_NOT_OK(WritePadded(buffer ? buffer->data() : nullptr, size));
  }
  SetDirect(meta->mutable_encoding(), EncodeAny(page.page.encoding_type_url, page.page.encoding));
  meta->set_length(page.page.length);
  meta->set_priority(page.page.priority);
  return Status::OK();
}

Status ContainerWriter::FinishColumn(uint32_t column, const EncodedColumn& encoded) {
  if (column >= columns_.size()) {
    return Status::Invalid("writing ", name_, ": metadata for column ", column, " but the file has ",
                           columns_.size(), " columns");
  }
  auto& meta = columns_[column];
  for (const auto& buffer : encoded.buffers) {
    const uint64_t size = buffer ? static_cast<uint64_t>(buffer->size()) : 0;
    meta.add_buffer_offsets(position_);
    meta.add_buffer_sizes(size);
    LANCE_RETURN_NOT_OK(WritePadded(buffer ? buffer->data() : nullptr, size));
  }
  SetDirect(meta.mutable_encoding(), encoded.encoding_type_url.empty()
                                         ? DefaultColumnEncodingAny()
                                         : EncodeAny(encoded.encoding_type_url, encoded.encoding));
  return Status::OK();
}

Result<uint32_t> ContainerWriter::AddGlobalBuffer(const void* data, uint64_t size) {
  global_buffers_.emplace_back(position_, size);
  LANCE_RETURN_NOT_OK(WritePadded(data, size));
  return static_cast<uint32_t>(global_buffers_.size());
}

Status ContainerWriter::Finish(const pb::file::FileDescriptor& descriptor) {
  // Global buffer 0, the schema, is written unpadded, right after the data.
  const std::string schema_bytes = descriptor.SerializeAsString();
  const uint64_t schema_pos = position_;
  LANCE_RETURN_NOT_OK(WriteRaw(schema_bytes.data(), schema_bytes.size()));

  const uint64_t column_meta_start = position_;
  std::vector<std::pair<uint64_t, uint64_t>> column_positions;
  column_positions.reserve(columns_.size());
  for (auto& meta : columns_) {
    const std::string bytes = meta.SerializeAsString();
    column_positions.emplace_back(position_, bytes.size());
    LANCE_RETURN_NOT_OK(WriteRaw(bytes.data(), bytes.size()));
  }
  const uint64_t cmo_pos = position_;
  for (const auto& [pos, len] : column_positions) {
    LANCE_RETURN_NOT_OK(WriteU64(pos));
    LANCE_RETURN_NOT_OK(WriteU64(len));
  }
  const uint64_t gbo_pos = position_;
  LANCE_RETURN_NOT_OK(WriteU64(schema_pos));
  LANCE_RETURN_NOT_OK(WriteU64(schema_bytes.size()));
  for (const auto& [pos, size] : global_buffers_) {
    LANCE_RETURN_NOT_OK(WriteU64(pos));
    LANCE_RETURN_NOT_OK(WriteU64(size));
  }

  const auto [major, minor] = FooterVersionPair(version_);
  uint8_t footer[40];
  const uint32_t num_global_buffers = 1 + static_cast<uint32_t>(global_buffers_.size());
  const uint32_t num_columns = static_cast<uint32_t>(columns_.size());
  std::memcpy(footer, &column_meta_start, 8);
  std::memcpy(footer + 8, &cmo_pos, 8);
  std::memcpy(footer + 16, &gbo_pos, 8);
  std::memcpy(footer + 24, &num_global_buffers, 4);
  std::memcpy(footer + 28, &num_columns, 4);
  std::memcpy(footer + 32, &major, 2);
  std::memcpy(footer + 34, &minor, 2);
  std::memcpy(footer + 36, "LANC", 4);
  LANCE_RETURN_NOT_OK(WriteRaw(footer, sizeof footer));
  LANCE_RETURN_NOT_OK(FlushPending());
  Status st = out_->Close();
  if (!st.ok()) return st.WithMessage("closing ", name_, ": ", st.message());
  return Status::OK();
}

void ContainerWriter::Abort() {
  if (!out_->closed()) (void)out_->Close();
}

}  // namespace lance::file
