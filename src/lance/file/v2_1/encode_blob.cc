#include "lance/file/v2_1/encode_blob.h"

#include <utility>

#include <arrow/buffer.h>
#include <arrow/type.h>

#include "lance/encodings_v2_1.pb.h"
#include "lance/file/v2_1/encode_levels.h"
#include "lance/file/v2_1/page.h"

namespace lance::file::v2_1 {

namespace pb21 = lance::pb::encodings21;

namespace {

// The descriptions are a packed struct of two non-null u64 fields, encoded
// like any other packed struct column (the blob field's own metadata does
// not steer them, as in the reference).
Field DescriptionField(const std::string& name, bool nullable) {
  Field desc;
  desc.name = name;
  desc.logical_type = "struct";
  desc.nullable = nullable;
  desc.metadata["lance-encoding:packed"] = "true";
  for (const char* child_name : {"position", "size"}) {
    Field child;
    child.name = child_name;
    child.logical_type = "uint64";
    child.nullable = false;
    desc.children.push_back(std::move(child));
  }
  return desc;
}

std::shared_ptr<arrow::DataType> DescriptionType() {
  return arrow::struct_({arrow::field("position", arrow::uint64(), false),
                         arrow::field("size", arrow::uint64(), false)});
}

}  // namespace

Result<std::unique_ptr<BlobLeafEncoder>> BlobLeafEncoder::Make(std::string name, bool nullable, uint32_t column,
                                                               const EncoderOptions& options) {
  LANCE_ASSIGN_OR_RAISE(auto descriptions, MakeFieldEncoderV2_1(DescriptionField(name, nullable), column, options));
  return std::unique_ptr<BlobLeafEncoder>(new BlobLeafEncoder(std::move(name), std::move(descriptions)));
}

Result<std::vector<EncodedPage>> BlobLeafEncoder::Append(const arrow::LargeBinaryArray& values,
                                                         const std::vector<uint16_t>& def,
                                                         const std::vector<Layer>& layers,
                                                         OutOfLineBuffers* out_of_line) {
  const int64_t n = values.length();
  if (!def.empty() && def.size() != static_cast<size_t>(n)) {
    return Status::Invalid("blob leaf '", name_, "': ", def.size(), " def levels for ", n, " values");
  }
  // A blob page has one set of layers for all its rows: when this batch's
  // nulls change them, what is buffered becomes a page of its own first.
  std::vector<EncodedPage> pages;
  if (layers_ && *layers_ != layers) {
    LANCE_ASSIGN_OR_RAISE(auto flushed, descriptions_->Flush());
    LANCE_RETURN_NOT_OK(Wrap(std::move(flushed), *layers_, &pages));
  }
  layers_ = layers;

  LANCE_ASSIGN_OR_RAISE(auto positions_buf, arrow::AllocateBuffer(n * 8));
  LANCE_ASSIGN_OR_RAISE(auto sizes_buf, arrow::AllocateBuffer(n * 8));
  auto* positions = reinterpret_cast<uint64_t*>(positions_buf->mutable_data());
  auto* sizes = reinterpret_cast<uint64_t*>(sizes_buf->mutable_data());
  for (int64_t i = 0; i < n; ++i) {
    const uint16_t d = def.empty() ? 0 : def[i];
    const int64_t size = d == 0 ? values.value_length(i) : 0;
    if (d != 0) {
      positions[i] = static_cast<uint64_t>(d) << 16;  // rep 0: blobs are never inside lists
      sizes[i] = 0;
    } else if (size == 0) {
      positions[i] = 0;
      sizes[i] = 0;
    } else {
      if (out_of_line == nullptr) {
        return Status::Invalid("blob leaf '", name_, "': the writer gave no place for out-of-line values");
      }
      positions[i] = out_of_line->Add(arrow::SliceBuffer(values.value_data(), values.value_offset(i), size));
      sizes[i] = static_cast<uint64_t>(size);
    }
  }
  auto position_array =
      std::make_shared<arrow::UInt64Array>(n, std::shared_ptr<arrow::Buffer>(std::move(positions_buf)));
  auto size_array = std::make_shared<arrow::UInt64Array>(n, std::shared_ptr<arrow::Buffer>(std::move(sizes_buf)));
  auto desc = std::make_shared<arrow::StructArray>(DescriptionType(), n,
                                                   arrow::ArrayVector{position_array, size_array});
  LANCE_ASSIGN_OR_RAISE(auto ready, descriptions_->Append(desc));
  LANCE_RETURN_NOT_OK(Wrap(std::move(ready), layers, &pages));
  return pages;
}

Result<std::vector<EncodedPage>> BlobLeafEncoder::Flush() {
  std::vector<EncodedPage> pages;
  LANCE_ASSIGN_OR_RAISE(auto flushed, descriptions_->Flush());
  LANCE_RETURN_NOT_OK(Wrap(std::move(flushed), layers_.value_or(std::vector<Layer>{Layer::kAllValidItem}), &pages));
  return pages;
}

Result<std::vector<EncodedColumn>> BlobLeafEncoder::FinishColumns() { return descriptions_->FinishColumns(); }

// Puts each description page inside a BlobLayout carrying the blob's layers.
Status BlobLeafEncoder::Wrap(std::vector<EncodedPage> inner, const std::vector<Layer>& layers,
                             std::vector<EncodedPage>* out) const {
  for (auto& page : inner) {
    pb21::PageLayout inner_layout;
    if (page.page.encoding_type_url != kPageLayoutTypeUrl || !inner_layout.ParseFromString(page.page.encoding)) {
      return Status::Invalid("blob leaf '", name_, "': its descriptions were not encoded as a 2.1+ page");
    }
    pb21::PageLayout layout;
    auto* blob = layout.mutable_blob_layout();
    *blob->mutable_inner_layout() = std::move(inner_layout);
    for (Layer l : layers) blob->add_layers(static_cast<pb21::RepDefLayer>(LayerToProto(l)));
    page.page.encoding.clear();
    if (!layout.SerializeToString(&page.page.encoding)) {
      return Status::Invalid("blob leaf '", name_, "': cannot serialize its page layout");
    }
    out->push_back(std::move(page));
  }
  return Status::OK();
}

}  // namespace lance::file::v2_1
