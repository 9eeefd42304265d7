#include "lance/file/container.h"
#include "lance/util/protobuf.h"

#include <cstring>

#include <google/protobuf/any.pb.h>

#include "lance/file.pb.h"
#include "lance/file/schema_proto.h"
#include "lance/file/version.h"
#include "lance/file2.pb.h"

namespace lance::file {
namespace {

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // little-endian on disk and on every target we build
  return v;
}

// Whether [pos, pos + len) lies inside [lo, hi), without overflow.
bool Within(uint64_t pos, uint64_t len, uint64_t lo, uint64_t hi) {
  return pos >= lo && pos <= hi && len <= hi - pos;
}

Status DecodeEncoding(const pb::file2::Encoding& enc, const std::string& name, const std::string& what,
                      std::string* type_url, std::string* value) {
  switch (enc.location_case()) {
    case pb::file2::Encoding::kDirect: {
      google::protobuf::Any any;
      if (!util::ParseMessage(enc.direct().encoding(), &any)) {
        return Status::Invalid("corrupt lance file ", name, ": ", what, " encoding is not a valid Any message");
      }
      *type_url = any.type_url();
      *value = any.value();
      return Status::OK();
    }
    case pb::file2::Encoding::kNone:
    case pb::file2::Encoding::LOCATION_NOT_SET:
      return Status::OK();
    case pb::file2::Encoding::kIndirect:
      return Status::NotImplemented("lance file ", name, ": ", what,
                                    " uses an indirect (deferred) encoding, which lance-cpp does not read");
  }
  return Status::OK();
}

Result<std::vector<BufferRange>> Ranges(const google::protobuf::RepeatedField<uint64_t>& offsets,
                                        const google::protobuf::RepeatedField<uint64_t>& sizes,
                                        uint64_t file_size, const std::string& name,
                                        const std::string& what) {
  if (offsets.size() != sizes.size()) {
    return Status::Invalid("corrupt lance file ", name, ": ", what, " has ", offsets.size(),
                           " buffer offsets but ", sizes.size(), " sizes");
  }
  std::vector<BufferRange> out;
  out.reserve(offsets.size());
  for (int i = 0; i < offsets.size(); ++i) {
    if (!Within(offsets[i], sizes[i], 0, file_size)) {
      return Status::Invalid("corrupt lance file ", name, ": ", what, " buffer ", i, " [", offsets[i], ", +",
                             sizes[i], ") lies outside the file (", file_size, " bytes)");
    }
    out.push_back({offsets[i], sizes[i]});
  }
  return out;
}

}  // namespace

Result<Footer> ParseFooter(std::string_view bytes, uint64_t file_size, const std::string& name) {
  if (bytes.size() != kFooterSize || file_size < kFooterSize) {
    return Status::Invalid("corrupt lance file ", name, ": ", file_size,
                           " bytes is too short for the 40-byte footer");
  }
  if (bytes.substr(36) != kMagic) {
    return Status::Invalid("corrupt lance file ", name, ": bad magic at the end of the file (expected \"LANC\")");
  }
  Footer f;
  f.column_meta_start = Load<uint64_t>(bytes.data());
  f.cmo_table_pos = Load<uint64_t>(bytes.data() + 8);
  f.gbo_table_pos = Load<uint64_t>(bytes.data() + 16);
  f.num_global_buffers = Load<uint32_t>(bytes.data() + 24);
  f.num_columns = Load<uint32_t>(bytes.data() + 28);
  f.major = Load<uint16_t>(bytes.data() + 32);
  f.minor = Load<uint16_t>(bytes.data() + 34);

  LANCE_ASSIGN_OR_RAISE(auto version, FileVersionFromPair(f.major, f.minor));
  if (version == FileVersion::kLegacy) {
    return Status::NotImplemented("lance file ", name, " is a legacy (", f.major, ".", f.minor,
                                  ") file, not a v2 file");
  }
  const uint64_t body_end = file_size - kFooterSize;
  if (!Within(f.cmo_table_pos, uint64_t{f.num_columns} * 16, 0, body_end)) {
    return Status::Invalid("corrupt lance file ", name, ": column offset table (", f.num_columns,
                           " columns at ", f.cmo_table_pos, ") lies outside the file");
  }
  if (f.num_global_buffers == 0 || !Within(f.gbo_table_pos, uint64_t{f.num_global_buffers} * 16, 0, body_end)) {
    return Status::Invalid("corrupt lance file ", name, ": global buffer table (", f.num_global_buffers,
                           " buffers at ", f.gbo_table_pos, ") is empty or lies outside the file");
  }
  if (f.column_meta_start > f.cmo_table_pos) {
    return Status::Invalid("corrupt lance file ", name, ": column metadata starts at ", f.column_meta_start,
                           ", after its offset table at ", f.cmo_table_pos);
  }
  return f;
}

Result<FileLayout> ParseLayout(const Footer& footer, std::string_view tail, uint64_t tail_start,
                               uint64_t file_size, const std::string& name) {
  auto slice = [&](uint64_t pos, uint64_t len, const char* what) -> Result<std::string_view> {
    if (!Within(pos, len, tail_start, file_size)) {
      return Status::Invalid("corrupt lance file ", name, ": ", what, " [", pos, ", +", len,
                             ") lies outside the metadata region");
    }
    return tail.substr(pos - tail_start, len);
  };
  FileLayout layout;
  layout.major_version = footer.major;
  layout.minor_version = footer.minor;
  LANCE_ASSIGN_OR_RAISE(auto version, FileVersionFromPair(footer.major, footer.minor));
  layout.version = FileVersionToString(version);
  layout.file_size = file_size;

  LANCE_ASSIGN_OR_RAISE(auto gbo, slice(footer.gbo_table_pos, uint64_t{footer.num_global_buffers} * 16,
                                        "global buffer table"));
  for (uint32_t i = 0; i < footer.num_global_buffers; ++i) {
    BufferRange r{Load<uint64_t>(gbo.data() + 16 * i), Load<uint64_t>(gbo.data() + 16 * i + 8)};
    if (!Within(r.position, r.size, 0, file_size - kFooterSize)) {
      return Status::Invalid("corrupt lance file ", name, ": global buffer ", i, " lies outside the file");
    }
    layout.global_buffers.push_back(r);
  }

  LANCE_ASSIGN_OR_RAISE(auto descriptor_bytes,
                        slice(layout.global_buffers[0].position, layout.global_buffers[0].size, "schema"));
  pb::file::FileDescriptor descriptor;
  if (!util::ParseMessage(descriptor_bytes, &descriptor)) {
    return Status::Invalid("corrupt lance file ", name, ": the schema (global buffer 0) is not a valid protobuf message");
  }
  layout.num_rows = descriptor.length();
  LANCE_ASSIGN_OR_RAISE(layout.schema, SchemaFromProtoFields(descriptor.schema().fields(),
                                                             descriptor.schema().metadata(), name));

  LANCE_ASSIGN_OR_RAISE(auto cmo, slice(footer.cmo_table_pos, uint64_t{footer.num_columns} * 16,
                                        "column offset table"));
  layout.columns.reserve(footer.num_columns);
  for (uint32_t c = 0; c < footer.num_columns; ++c) {
    const uint64_t pos = Load<uint64_t>(cmo.data() + 16 * c);
    const uint64_t len = Load<uint64_t>(cmo.data() + 16 * c + 8);
    const std::string what = "column " + std::to_string(c);
    LANCE_ASSIGN_OR_RAISE(auto bytes, slice(pos, len, what.c_str()));
    pb::file2::ColumnMetadata meta;
    if (!util::ParseMessage(bytes, &meta)) {
      return Status::Invalid("corrupt lance file ", name, ": metadata of ", what, " is not a valid protobuf message");
    }
    ColumnInfo col;
    LANCE_RETURN_NOT_OK(DecodeEncoding(meta.encoding(), name, what, &col.encoding_type_url, &col.encoding));
    LANCE_ASSIGN_OR_RAISE(col.buffers, Ranges(meta.buffer_offsets(), meta.buffer_sizes(), file_size, name, what));
    for (int p = 0; p < meta.pages_size(); ++p) {
      const auto& page = meta.pages(p);
      const std::string page_what = what + " page " + std::to_string(p);
      PageInfo info;
      info.length = page.length();
      info.priority = page.priority();
      LANCE_RETURN_NOT_OK(DecodeEncoding(page.encoding(), name, page_what, &info.encoding_type_url, &info.encoding));
      LANCE_ASSIGN_OR_RAISE(info.buffers, Ranges(page.buffer_offsets(), page.buffer_sizes(), file_size, name, page_what));
      col.pages.push_back(std::move(info));
    }
    layout.columns.push_back(std::move(col));
  }
  return layout;
}

Result<FileLayout> ReadLayout(arrow::io::RandomAccessFile& file, const std::string& name) {
  LANCE_ASSIGN_OR_RAISE(int64_t size, file.GetSize());
  if (size < static_cast<int64_t>(kFooterSize)) {
    return Status::Invalid("corrupt lance file ", name, ": ", size, " bytes is too short for the 40-byte footer");
  }
  const uint64_t file_size = static_cast<uint64_t>(size);
  LANCE_ASSIGN_OR_RAISE(auto footer_buf, file.ReadAt(size - kFooterSize, kFooterSize));
  LANCE_ASSIGN_OR_RAISE(auto footer, ParseFooter(std::string_view(*footer_buf), file_size, name));
  // The metadata region starts at the first global buffer (the schema) or the
  // column metadata, whichever comes first. Read it in one request.
  LANCE_ASSIGN_OR_RAISE(auto gbo_buf, file.ReadAt(footer.gbo_table_pos, 16));
  if (gbo_buf->size() != 16) return Status::Invalid("corrupt lance file ", name, ": truncated global buffer table");
  const uint64_t schema_pos = Load<uint64_t>(reinterpret_cast<const char*>(gbo_buf->data()));
  uint64_t tail_start = std::min({schema_pos, footer.column_meta_start, footer.cmo_table_pos, footer.gbo_table_pos});
  if (tail_start > file_size) tail_start = footer.column_meta_start;
  LANCE_ASSIGN_OR_RAISE(auto tail, file.ReadAt(tail_start, size - static_cast<int64_t>(tail_start)));
  return ParseLayout(footer, std::string_view(*tail), tail_start, file_size, name);
}

Result<ColumnData> LoadColumn(arrow::io::RandomAccessFile& file, const ColumnInfo& column, uint64_t file_size,
                              const std::string& name) {
  auto read = [&](const BufferRange& r) -> Result<std::shared_ptr<arrow::Buffer>> {
    if (!Within(r.position, r.size, 0, file_size)) {
      return Status::Invalid("corrupt lance file ", name, ": buffer [", r.position, ", +", r.size,
                             ") lies outside the file");
    }
    LANCE_ASSIGN_OR_RAISE(auto buf, file.ReadAt(static_cast<int64_t>(r.position), static_cast<int64_t>(r.size)));
    if (static_cast<uint64_t>(buf->size()) != r.size) {
      return Status::IOError("short read of ", name, " at ", r.position);
    }
    return buf;
  };
  ColumnData data;
  data.encoding_type_url = column.encoding_type_url;
  data.encoding = column.encoding;
  for (const auto& r : column.buffers) {
    LANCE_ASSIGN_OR_RAISE(auto b, read(r));
    data.buffers.push_back(std::move(b));
  }
  for (const auto& page : column.pages) {
    PageData pd;
    pd.length = page.length;
    pd.priority = page.priority;
    pd.encoding_type_url = page.encoding_type_url;
    pd.encoding = page.encoding;
    for (const auto& r : page.buffers) {
      LANCE_ASSIGN_OR_RAISE(auto b, read(r));
      pd.buffers.push_back(std::move(b));
    }
    data.pages.push_back(std::move(pd));
  }
  return data;
}

}  // namespace lance::file
