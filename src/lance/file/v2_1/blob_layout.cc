#include "lance/file/v2_1/blob_layout.h"

#include <cstring>
#include <vector>

#include <arrow/buffer_builder.h>
#include <arrow/type.h>

#include "lance/file/v2_1/bytes.h"

namespace lance::file::v2_1 {

namespace {

// The {position, size} descriptions as two u64 vectors.
Result<std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> Descriptions(const DataBlock& block) {
  if (block.kind != BlockKind::kStruct || block.children.size() != 2) {
    return Corrupt("blob descriptions are not a packed struct of two fields");
  }
  std::vector<uint64_t> fields[2];
  for (int f = 0; f < 2; ++f) {
    const DataBlock& child = block.children[f];
    if (child.kind != BlockKind::kFixedWidth || child.bits_per_value != 64) {
      return Corrupt("blob description field ", f, " is not 64-bit");
    }
    LANCE_RETURN_NOT_OK(ValidateBlock(child));
    fields[f].resize(child.num_values);
    if (child.num_values > 0) std::memcpy(fields[f].data(), child.data->data(), child.num_values * 8);
  }
  return std::make_pair(std::move(fields[0]), std::move(fields[1]));
}

}  // namespace

Result<DecodedPage> DecodeBlobPage(const pb21::BlobLayout& layout, const PageData& page, const PageContext& ctx) {
  if (!layout.has_inner_layout()) return Corrupt("blob layout without an inner layout");
  DecodedPage out;
  LANCE_ASSIGN_OR_RAISE(out.levels.layers, LayersFromProto(layout.layers().data(), layout.layers_size()));
  if (MaxRep(out.levels.layers) > 0) {
    return Status::NotImplemented("blob values inside lists are not supported");
  }
  // The inner page holds the descriptions as a non-null packed struct.
  PageData inner_page = page;
  inner_page.encoding_type_url = kPageLayoutTypeUrl;
  if (!layout.inner_layout().SerializeToString(&inner_page.encoding)) {
    return Status::Invalid("cannot re-serialize the blob's inner layout");
  }
  PageContext inner_ctx = ctx;
  inner_ctx.kept_rows = nullptr;  // every description: row i is description i below
  inner_ctx.leaf_type = arrow::struct_({arrow::field("position", arrow::uint64(), false),
                                        arrow::field("size", arrow::uint64(), false)});
  LANCE_ASSIGN_OR_RAISE(DecodedPage inner, DecodePage(inner_page, inner_ctx));
  if (inner.dictionary) return Corrupt("blob descriptions with a dictionary");
  if (inner.levels.rep || (inner.levels.def && MaxDef(inner.levels.layers) > 0)) {
    return Corrupt("blob descriptions with their own repetition/definition levels");
  }
  LANCE_ASSIGN_OR_RAISE(auto desc, Descriptions(inner.values));
  const auto& [positions, sizes] = desc;
  const uint64_t n = positions.size();
  const uint16_t max_def = MaxDef(out.levels.layers);
  const uint16_t max_visible = MaxVisibleDef(out.levels.layers);
  std::vector<uint16_t> def(n, 0);
  arrow::BufferBuilder data(ctx.pool);
  arrow::TypedBufferBuilder<uint64_t> offsets(ctx.pool);
  LANCE_RETURN_NOT_OK(offsets.Append(0));
  uint64_t total = 0, visible = 0;
  size_t next_kept = 0;  // into ctx.kept_rows
  for (uint64_t i = 0; i < n; ++i) {
    bool kept = true;
    if (ctx.kept_rows) {
      while (next_kept < ctx.kept_rows->size() && (*ctx.kept_rows)[next_kept] < i) ++next_kept;
      kept = next_kept < ctx.kept_rows->size() && (*ctx.kept_rows)[next_kept] == i;
    }
    if (sizes[i] == 0) {
      // Null or empty: the position carries the levels (rep in the low 16 bits).
      const uint16_t rep = static_cast<uint16_t>(positions[i] & 0xFFFF);
      def[i] = static_cast<uint16_t>((positions[i] >> 16) & 0xFFFF);
      if (rep != 0) return Corrupt("blob description with repetition level ", rep, " outside a list");
      if (def[i] > max_def) return Corrupt("blob description with definition level ", def[i]);
    } else if (kept) {
      if (!ctx.blob_reader || !*ctx.blob_reader) {
        return Status::NotImplemented("reading blob values needs file access (no blob reader given)");
      }
      LANCE_ASSIGN_OR_RAISE(auto bytes, (*ctx.blob_reader)(positions[i], sizes[i]));
      if (!bytes || static_cast<uint64_t>(bytes->size()) != sizes[i]) {
        return Corrupt("blob value at ", positions[i], " of ", sizes[i], " bytes could not be read in full");
      }
      LANCE_RETURN_NOT_OK(data.Append(bytes->data(), bytes->size()));
      total += sizes[i];
    }  // else: the value of a row the caller drops, left empty and unread
    if (def[i] <= max_visible) {
      ++visible;
      LANCE_RETURN_NOT_OK(offsets.Append(total));
    }
  }
  std::shared_ptr<arrow::Buffer> data_buffer, offsets_buffer;
  LANCE_RETURN_NOT_OK(data.Finish(&data_buffer));
  LANCE_RETURN_NOT_OK(offsets.Finish(&offsets_buffer));
  out.values = DataBlock::Variable(64, visible, offsets_buffer, data_buffer);
  if (max_def > 0) out.levels.def = std::move(def);
  out.levels.num_items = visible;
  LANCE_RETURN_NOT_OK(ValidatePageLevels(out.levels));
  return out;
}

}  // namespace lance::file::v2_1
