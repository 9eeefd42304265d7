#include "lance/file/v2_1/constant_layout.h"

#include <cstring>
#include <vector>

#include <arrow/type.h>
#include <arrow/util/checked_cast.h>

#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/compressive.h"

namespace lance::file::v2_1 {

namespace {

Result<BufferPtr> CopyBytes(const uint8_t* data, uint64_t size, arrow::MemoryPool* pool) {
  LANCE_ASSIGN_OR_RAISE(auto buffer, arrow::AllocateBuffer(static_cast<int64_t>(size), pool));
  if (size > 0) std::memcpy(buffer->mutable_data(), data, size);
  return BufferPtr(std::move(buffer));
}

// A scalar value buffer: u32 buffer count, u32 length per buffer, then the
// Arrow buffers of a one-value array.
Result<std::vector<ByteSpan>> ParseScalarBuffer(ByteSpan bytes) {
  LANCE_ASSIGN_OR_RAISE(uint32_t count, ReadLE<uint32_t>(bytes, 0, "constant scalar"));
  if (count > 16) return Corrupt("constant scalar with ", count, " buffers");
  uint64_t pos = 4;
  std::vector<uint64_t> lengths(count);
  for (auto& len : lengths) {
    LANCE_ASSIGN_OR_RAISE(uint32_t v, ReadLE<uint32_t>(bytes, pos, "constant scalar"));
    len = v;
    pos += 4;
  }
  std::vector<ByteSpan> out;
  for (uint64_t len : lengths) {
    LANCE_ASSIGN_OR_RAISE(ByteSpan part, SubSpan(bytes, pos, len, "constant scalar"));
    out.push_back(part);
    pos += len;
  }
  if (pos != bytes.size()) return Corrupt("constant scalar has ", bytes.size() - pos, " trailing bytes");
  return out;
}

bool IsBinaryLike(arrow::Type::type id) {
  return id == arrow::Type::STRING || id == arrow::Type::BINARY || id == arrow::Type::LARGE_STRING ||
         id == arrow::Type::LARGE_BINARY;
}

// The scalar repeated `count` times, as a block of `type` (not a dictionary).
Result<DataBlock> RepeatScalar(const std::shared_ptr<arrow::DataType>& type, const std::vector<ByteSpan>& parts,
                               uint64_t count, arrow::MemoryPool* pool) {
  if (IsBinaryLike(type->id())) {
    if (parts.size() != 2) return Corrupt("binary constant scalar with ", parts.size(), " buffers");
    const ByteSpan offsets = parts[0];
    uint64_t start, end;
    if (offsets.size() == 8) {
      start = LoadLE<uint32_t>(offsets.data());
      end = LoadLE<uint32_t>(offsets.data() + 4);
    } else if (offsets.size() == 16) {
      start = LoadLE<uint64_t>(offsets.data());
      end = LoadLE<uint64_t>(offsets.data() + 8);
    } else {
      return Corrupt("binary constant scalar offsets of ", offsets.size(), " bytes");
    }
    if (start > end || end > parts[1].size()) return Corrupt("binary constant scalar offsets out of range");
    const uint64_t len = end - start;
    uint64_t total;
    if (MulOverflows(len, count, &total) || total > (uint64_t{1} << 40)) return Corrupt("constant page too large");
    LANCE_ASSIGN_OR_RAISE(auto data, arrow::AllocateBuffer(static_cast<int64_t>(total), pool));
    LANCE_ASSIGN_OR_RAISE(auto offs, arrow::AllocateBuffer(static_cast<int64_t>((count + 1) * 8), pool));
    for (uint64_t i = 0; i < count; ++i) {
      if (len > 0) std::memcpy(data->mutable_data() + i * len, parts[1].data() + start, len);
    }
    for (uint64_t i = 0; i <= count; ++i) {
      const uint64_t v = i * len;
      std::memcpy(offs->mutable_data() + i * 8, &v, 8);
    }
    return DataBlock::Variable(64, count, BufferPtr(std::move(offs)), BufferPtr(std::move(data)));
  }
  if (parts.size() != 1) return Corrupt("fixed-width constant scalar with ", parts.size(), " buffers");
  if (type->id() == arrow::Type::BOOL) {
    if (parts[0].empty()) return Corrupt("boolean constant scalar without bytes");
    const bool bit = (parts[0][0] & 1) != 0;
    const uint64_t size = (count + 7) / 8;
    LANCE_ASSIGN_OR_RAISE(auto bitmap, arrow::AllocateBuffer(static_cast<int64_t>(size), pool));
    if (size > 0) std::memset(bitmap->mutable_data(), bit ? 0xFF : 0x00, size);
    return DataBlock::FixedWidth(1, count, BufferPtr(std::move(bitmap)));
  }
  const int64_t width = FixedBitWidth(*type);
  if (width <= 0 || width % 8 != 0) {
    return Status::NotImplemented("constant pages of type ", type->ToString());
  }
  if (parts[0].size() != static_cast<uint64_t>(width / 8)) {
    return Corrupt("constant scalar of ", parts[0].size(), " bytes for ", type->ToString());
  }
  LANCE_ASSIGN_OR_RAISE(auto scalar, CopyBytes(parts[0].data(), parts[0].size(), pool));
  return DataBlock::Constant(std::move(scalar), count);
}

Result<std::optional<std::vector<uint16_t>>> ReadLevels(const BufferPtr& buffer,
                                                        const pb21::CompressiveEncoding* compression,
                                                        uint64_t declared_count, const char* what,
                                                        arrow::MemoryPool* pool) {
  if (!buffer || buffer->size() == 0) return std::nullopt;
  if (compression) {
    if (declared_count > kMaxDecodedElements) return Corrupt(what, " levels of ", declared_count, " values");
    LANCE_ASSIGN_OR_RAISE(DataBlock block, DecompressBlock(*compression, buffer, declared_count, pool));
    LANCE_ASSIGN_OR_RAISE(auto levels, LevelsFromBlock(block, declared_count));
    return levels;
  }
  if (buffer->size() % 2 != 0) return Corrupt(what, " levels of ", buffer->size(), " bytes (odd)");
  const uint64_t n = static_cast<uint64_t>(buffer->size()) / 2;
  if (declared_count != 0 && declared_count != n) {
    return Corrupt(what, " levels hold ", n, " values but the layout declares ", declared_count);
  }
  std::vector<uint16_t> levels(n);
  if (n > 0) std::memcpy(levels.data(), buffer->data(), n * 2);
  return levels;
}

}  // namespace

Result<DecodedPage> DecodeConstantPage(const pb21::ConstantLayout& layout, const PageData& page,
                                       const PageContext& ctx) {
  arrow::MemoryPool* pool = ctx.pool;
  DecodedPage out;
  LANCE_ASSIGN_OR_RAISE(out.levels.layers, LayersFromProto(layout.layers().data(), layout.layers_size()));
  const size_t n = page.buffers.size();
  for (const auto& b : page.buffers) {
    if (!b) return Corrupt("constant page buffer missing");
  }
  const bool has_scalar = layout.has_inline_value() || n == 1 || n == 3;
  std::vector<ByteSpan> scalar_parts;
  BufferPtr rep_buffer, def_buffer;
  if (has_scalar) {
    if (layout.has_inline_value()) {
      if (n != 0 && n != 2) return Corrupt("constant page with an inline value has ", n, " buffers");
      scalar_parts.push_back(ByteSpan(reinterpret_cast<const uint8_t*>(layout.inline_value().data()),
                                      layout.inline_value().size()));
      if (n == 2) {
        rep_buffer = page.buffers[0];
        def_buffer = page.buffers[1];
      }
    } else {
      LANCE_ASSIGN_OR_RAISE(scalar_parts, ParseScalarBuffer(AsSpan(page.buffers[0])));
      if (n == 3) {
        rep_buffer = page.buffers[1];
        def_buffer = page.buffers[2];
      }
    }
  } else if (n == 2) {
    rep_buffer = page.buffers[0];
    def_buffer = page.buffers[1];
  } else if (n != 0) {
    return Corrupt("all-null page has ", n, " buffers, expected 0 or 2");
  }

  LANCE_ASSIGN_OR_RAISE(out.levels.rep,
                        ReadLevels(rep_buffer, layout.has_rep_compression() ? &layout.rep_compression() : nullptr,
                                   layout.num_rep_values(), "repetition", pool));
  LANCE_ASSIGN_OR_RAISE(out.levels.def,
                        ReadLevels(def_buffer, layout.has_def_compression() ? &layout.def_compression() : nullptr,
                                   layout.num_def_values(), "definition", pool));
  if (!has_scalar && !out.levels.def && !out.levels.rep) {
    // The simple all-null page: one null per row.
    if (out.levels.layers.size() != 1 || out.levels.layers[0] != Layer::kNullableItem) {
      return Corrupt("all-null page without levels must have the single layer NULLABLE_ITEM");
    }
    if (page.length > kMaxDecodedElements) return Corrupt("all-null page of ", page.length, " rows");
    out.levels.def = std::vector<uint16_t>(page.length, 1);
  }
  uint64_t visible;
  if (out.levels.def) {
    const uint16_t max_visible = MaxVisibleDef(out.levels.layers);
    visible = 0;
    for (uint16_t d : *out.levels.def) visible += d <= max_visible ? 1 : 0;
  } else if (out.levels.rep) {
    visible = out.levels.rep->size();
  } else {
    visible = page.length;
  }
  if (visible > kMaxDecodedElements) return Corrupt("constant page of ", visible, " values");

  if (!has_scalar) {
    out.values = DataBlock::AllNull(visible);
  } else if (ctx.leaf_type->id() == arrow::Type::DICTIONARY) {
    const auto& dict_type = arrow::internal::checked_cast<const arrow::DictionaryType&>(*ctx.leaf_type);
    LANCE_ASSIGN_OR_RAISE(DataBlock scalar, RepeatScalar(dict_type.value_type(), scalar_parts, 1, pool));
    out.dictionary = std::move(scalar);
    LANCE_ASSIGN_OR_RAISE(auto zeros, arrow::AllocateBuffer(static_cast<int64_t>(visible * 4), pool));
    if (visible > 0) std::memset(zeros->mutable_data(), 0, visible * 4);
    out.values = DataBlock::FixedWidth(32, visible, BufferPtr(std::move(zeros)));
  } else {
    LANCE_ASSIGN_OR_RAISE(out.values, RepeatScalar(ctx.leaf_type, scalar_parts, visible, pool));
  }
  out.levels.num_items = visible;
  LANCE_RETURN_NOT_OK(ValidatePageLevels(out.levels));
  return out;
}

}  // namespace lance::file::v2_1
