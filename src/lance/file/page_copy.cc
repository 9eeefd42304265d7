#include "lance/file/page_copy.h"

#include "lance/file.pb.h"
#include "lance/file/container.h"
#include "lance/file/schema_proto.h"

namespace lance::file {

using ColumnEncodingPair = std::pair<std::string, std::string>;

PageCopyWriter::PageCopyWriter(std::shared_ptr<arrow::io::OutputStream> out, std::string name,
                               uint32_t num_columns, FileVersion version)
    : container_(std::move(out), name, num_columns, version),
      name_(std::move(name)),
      num_columns_(num_columns),
      version_(version) {
  // As the reference's copy writes them.
  container_.set_padding(version == FileVersion::kV2_0 ? 1 : kPageBufferAlignment, 0);
}

Status PageCopyWriter::Append(arrow::io::RandomAccessFile& file, const FileLayout& layout,
                              const std::string& file_name) {
  LANCE_ASSIGN_OR_RAISE(FileVersion version, FileVersionFromPair(layout.major_version, layout.minor_version));
  if (version != version_) {
    return Status::Invalid("binary copy into ", name_, ": ", file_name, " is a ", FileVersionToString(version),
                           " file, the output a ", FileVersionToString(version_), " file");
  }
  if (layout.columns.size() != num_columns_) {
    return Status::Invalid("binary copy into ", name_, ": ", file_name, " has ", layout.columns.size(),
                           " columns, the output ", num_columns_);
  }
  const bool first = column_encodings_.empty();
  for (uint32_t c = 0; c < num_columns_; ++c) {
    const ColumnInfo& info = layout.columns[c];
    if (first) {
      column_encodings_.emplace_back(info.encoding_type_url, info.encoding);
    } else if (column_encodings_[c] != std::make_pair(info.encoding_type_url, info.encoding)) {
      // Column buffers are concatenated: they must mean the same in every input.
      return Status::Invalid("binary copy into ", name_, ": the column encoding of column ", c, " of ", file_name,
                             " differs from the first input's, so their column buffers cannot be concatenated");
    }
    // One column of one input in memory at a time.
    LANCE_ASSIGN_OR_RAISE(ColumnData data, LoadColumn(file, info, layout.file_size, file_name));
    if (row_count_columns_.count(c)) {
      if (data.pages.size() != 1 || !data.pages[0].buffers.empty() || !data.buffers.empty()) {
        return Status::Invalid("binary copy into ", name_, ": column ", c, " of ", file_name,
                               " should hold one page without buffers (a struct's rows), but has ", data.pages.size(),
                               " pages");
      }
      if (first) row_count_pages_.emplace(c, std::move(data.pages[0]));
      continue;
    }
    for (auto& page : data.pages) {
      EncodedPage encoded;
      encoded.column_index = c;
      encoded.page = std::move(page);
      // The priority is the page's first row in the output.
      encoded.page.priority += rows_;
      LANCE_RETURN_NOT_OK(container_.WritePage(encoded));
    }
    EncodedColumn column;
    column.encoding_type_url = info.encoding_type_url;
    column.encoding = info.encoding;
    column.buffers = std::move(data.buffers);
    LANCE_RETURN_NOT_OK(container_.FinishColumn(c, column));
  }
  rows_ += layout.num_rows;
  return Status::OK();
}

Result<uint64_t> PageCopyWriter::Finish(const Schema& schema) {
  for (auto& [c, page] : row_count_pages_) {
    EncodedPage encoded;
    encoded.column_index = c;
    encoded.page = std::move(page);
    encoded.page.length = rows_;
    encoded.page.priority = 0;
    LANCE_RETURN_NOT_OK(container_.WritePage(encoded));
    const ColumnEncodingPair& enc = column_encodings_[c];
    EncodedColumn column;
    column.encoding_type_url = enc.first;
    column.encoding = enc.second;
    LANCE_RETURN_NOT_OK(container_.FinishColumn(c, column));
  }
  pb::file::FileDescriptor descriptor;
  SchemaToProtoFields(schema, descriptor.mutable_schema()->mutable_fields());
  auto* metadata = descriptor.mutable_schema()->mutable_metadata();
  for (const auto& [k, v] : schema.metadata) (*metadata)[k] = v;
  descriptor.set_length(rows_);
  LANCE_RETURN_NOT_OK(container_.Finish(descriptor));
  return rows_;
}

}  // namespace lance::file
