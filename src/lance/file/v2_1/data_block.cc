#include "lance/file/v2_1/data_block.h"

#include <algorithm>
#include <cstring>

#include <arrow/array.h>
#include <arrow/array/util.h>
#include <arrow/type_traits.h>
#include <arrow/buffer_builder.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/bitmap_ops.h>
#include <arrow/util/checked_cast.h>

#include "lance/file/v2_1/bytes.h"

namespace lance::file::v2_1 {

namespace {

Result<uint64_t> BytesForBits(uint64_t num_values, uint64_t bits, const char* what) {
  uint64_t total_bits;
  if (MulOverflows(num_values, bits, &total_bits)) {
    return Corrupt(what, ": ", num_values, " values of ", bits, " bits overflow");
  }
  return (total_bits + 7) / 8;
}



// Writes `value` as an unsigned integer of `width` bytes.
void StoreUnsigned(uint8_t* p, unsigned width, uint64_t value) {
  switch (width) {
    case 4: {
      uint32_t v = static_cast<uint32_t>(value);
      std::memcpy(p, &v, 4);
      break;
    }
    default:
      std::memcpy(p, &value, 8);
      break;
  }
}

}  // namespace

DataBlock DataBlock::AllNull(uint64_t num_values) {
  DataBlock b;
  b.kind = BlockKind::kAllNull;
  b.num_values = num_values;
  return b;
}

DataBlock DataBlock::FixedWidth(uint64_t bits_per_value, uint64_t num_values,
                                std::shared_ptr<arrow::Buffer> data) {
  DataBlock b;
  b.kind = BlockKind::kFixedWidth;
  b.bits_per_value = bits_per_value;
  b.num_values = num_values;
  b.data = std::move(data);
  return b;
}

DataBlock DataBlock::Variable(uint32_t bits_per_offset, uint64_t num_values,
                              std::shared_ptr<arrow::Buffer> offsets, std::shared_ptr<arrow::Buffer> data) {
  DataBlock b;
  b.kind = BlockKind::kVariableWidth;
  b.bits_per_offset = bits_per_offset;
  b.num_values = num_values;
  b.offsets = std::move(offsets);
  b.data = std::move(data);
  return b;
}

DataBlock DataBlock::Fsl(uint64_t dimension, uint64_t num_values, DataBlock child) {
  DataBlock b;
  b.kind = BlockKind::kFixedSizeList;
  b.dimension = dimension;
  b.num_values = num_values;
  b.children.push_back(std::move(child));
  return b;
}

DataBlock DataBlock::Nullable(std::shared_ptr<arrow::Buffer> validity, DataBlock child) {
  DataBlock b;
  b.kind = BlockKind::kNullable;
  b.num_values = child.num_values;
  b.data = std::move(validity);
  b.children.push_back(std::move(child));
  return b;
}

DataBlock DataBlock::Struct(uint64_t num_values, std::vector<DataBlock> children) {
  DataBlock b;
  b.kind = BlockKind::kStruct;
  b.num_values = num_values;
  b.children = std::move(children);
  return b;
}

DataBlock DataBlock::Constant(std::shared_ptr<arrow::Buffer> scalar, uint64_t num_values) {
  DataBlock b;
  b.kind = BlockKind::kConstant;
  b.num_values = num_values;
  b.bits_per_value = scalar ? static_cast<uint64_t>(scalar->size()) * 8 : 0;
  b.data = std::move(scalar);
  return b;
}

namespace {

// No early exit and no carried value, so the loop vectorizes; the caller
// looks for the index only when this says no.
template <typename T>
bool OffsetsAscending(const uint8_t* p, uint64_t count) {
  bool bad = false;
  for (uint64_t i = 1; i < count; ++i) {
    T prev, cur;
    std::memcpy(&prev, p + (i - 1) * sizeof(T), sizeof(T));
    std::memcpy(&cur, p + i * sizeof(T), sizeof(T));
    bad |= cur < prev;
  }
  return !bad;
}

}  // namespace

Status ValidateBlock(const DataBlock& block) {
  switch (block.kind) {
    case BlockKind::kAllNull:
      return Status::OK();
    case BlockKind::kConstant:
      if (!block.data) return Corrupt("constant block without a value");
      return Status::OK();
    case BlockKind::kFixedWidth: {
      LANCE_ASSIGN_OR_RAISE(uint64_t need, BytesForBits(block.num_values, block.bits_per_value, "fixed-width block"));
      const uint64_t have = block.data ? static_cast<uint64_t>(block.data->size()) : 0;
      if (have < need) {
        return Corrupt("fixed-width block of ", block.num_values, " values of ", block.bits_per_value,
                       " bits needs ", need, " bytes but has ", have);
      }
      return Status::OK();
    }
    case BlockKind::kVariableWidth: {
      if (block.bits_per_offset != 32 && block.bits_per_offset != 64) {
        return Corrupt("variable-width block with ", block.bits_per_offset, "-bit offsets");
      }
      const uint64_t width = block.bits_per_offset / 8;
      uint64_t count, need;
      if (AddOverflows(block.num_values, 1, &count) || MulOverflows(count, width, &need)) {
        return Corrupt("variable-width block offset count overflows");
      }
      const uint64_t have = block.offsets ? static_cast<uint64_t>(block.offsets->size()) : 0;
      if (have < need) {
        return Corrupt("variable-width block of ", block.num_values, " values needs ", need,
                       " offset bytes but has ", have);
      }
      const uint64_t data_size = block.data ? static_cast<uint64_t>(block.data->size()) : 0;
      const bool ascending = block.bits_per_offset == 32 ? OffsetsAscending<uint32_t>(block.offsets->data(), count)
                                                         : OffsetsAscending<uint64_t>(block.offsets->data(), count);
      if (!ascending) {
        for (uint64_t i = 1; i <= block.num_values; ++i) {
          if (VariableOffset(block, i) < VariableOffset(block, i - 1)) {
            return Corrupt("variable-width offsets decrease at index ", i);
          }
        }
      }
      const uint64_t prev = VariableOffset(block, block.num_values);
      if (prev > data_size) {
        return Corrupt("variable-width offsets end at ", prev, " past ", data_size, " data bytes");
      }
      return Status::OK();
    }
    case BlockKind::kFixedSizeList: {
      if (block.children.size() != 1) return Corrupt("fixed-size-list block without one child");
      uint64_t items;
      if (MulOverflows(block.num_values, block.dimension, &items) || block.children[0].num_values != items) {
        return Corrupt("fixed-size-list block of ", block.num_values, " lists of ", block.dimension,
                       " has ", block.children[0].num_values, " items");
      }
      return ValidateBlock(block.children[0]);
    }
    case BlockKind::kNullable: {
      if (block.children.size() != 1) return Corrupt("nullable block without one child");
      const uint64_t need = (block.num_values + 7) / 8;
      const uint64_t have = block.data ? static_cast<uint64_t>(block.data->size()) : 0;
      if (have < need) return Corrupt("validity bitmap of ", have, " bytes for ", block.num_values, " values");
      if (block.children[0].num_values != block.num_values) return Corrupt("nullable block length mismatch");
      return ValidateBlock(block.children[0]);
    }
    case BlockKind::kStruct: {
      for (const auto& child : block.children) {
        if (child.num_values != block.num_values) {
          return Corrupt("struct block field of ", child.num_values, " values in a struct of ", block.num_values);
        }
        LANCE_RETURN_NOT_OK(ValidateBlock(child));
      }
      return Status::OK();
    }
  }
  return Status::Invalid("unknown block kind");
}

namespace {

Result<DataBlock> ConcatFixed(const std::vector<DataBlock>& blocks, arrow::MemoryPool* pool) {
  const uint64_t bits = blocks[0].bits_per_value;
  uint64_t total = 0;
  for (const auto& b : blocks) {
    if (b.bits_per_value != bits) return Corrupt("chunks disagree on the value width (", bits, " vs ",
                                                 b.bits_per_value, ")");
    LANCE_RETURN_NOT_OK(ValidateBlock(b));
    if (AddOverflows(total, b.num_values, &total)) return Corrupt("value count overflows");
  }
  LANCE_ASSIGN_OR_RAISE(uint64_t size, BytesForBits(total, bits, "concatenation"));
  LANCE_ASSIGN_OR_RAISE(auto out, AllocateZeroed(size, pool));
  uint8_t* dst = out->mutable_data();
  if (bits % 8 == 0) {
    uint64_t pos = 0;
    for (const auto& b : blocks) {
      const uint64_t n = b.num_values * (bits / 8);
      if (n > 0) std::memcpy(dst + pos, b.data->data(), n);
      pos += n;
    }
  } else {
    uint64_t bit_pos = 0;
    for (const auto& b : blocks) {
      const uint64_t n = b.num_values * bits;
      if (n > 0) {
        arrow::internal::CopyBitmap(b.data->data(), 0, static_cast<int64_t>(n), dst,
                                    static_cast<int64_t>(bit_pos));
      }
      bit_pos += n;
    }
  }
  return DataBlock::FixedWidth(bits, total, std::move(out));
}

Result<DataBlock> ConcatVariable(const std::vector<DataBlock>& blocks, arrow::MemoryPool* pool) {
  uint64_t total_values = 0, total_bytes = 0;
  bool wide = false;
  for (const auto& b : blocks) {
    LANCE_RETURN_NOT_OK(ValidateBlock(b));
    total_values += b.num_values;
    total_bytes += VariableOffset(b, b.num_values) - VariableOffset(b, 0);
    wide |= b.bits_per_offset == 64;
  }
  if (total_bytes > 0xFFFFFFFFull) wide = true;
  const unsigned width = wide ? 8 : 4;
  if (blocks.size() == 1 && VariableOffset(blocks[0], 0) == 0) return blocks[0];
  // Every byte below is written: no zero fill.
  LANCE_ASSIGN_OR_RAISE(auto offsets, Allocate((total_values + 1) * width, pool));
  LANCE_ASSIGN_OR_RAISE(auto data, Allocate(total_bytes, pool));
  uint8_t* off = offsets->mutable_data();
  uint8_t* dst = data->mutable_data();
  uint64_t pos = 0, idx = 0;
  StoreUnsigned(off, width, 0);
  // A loop per width pair, each a plain rebase-and-store.
  auto rebase = [&]<typename From, typename To>(const DataBlock& b, uint64_t shift) {
    const uint8_t* src = b.offsets->data();
    for (uint64_t i = 1; i <= b.num_values; ++i) {
      From v;
      std::memcpy(&v, src + i * sizeof(From), sizeof(From));
      const To t = static_cast<To>(static_cast<uint64_t>(v) + shift);
      std::memcpy(off + (idx + i) * sizeof(To), &t, sizeof(To));
    }
  };
  for (const auto& b : blocks) {
    const uint64_t base = VariableOffset(b, 0);
    const uint64_t end = VariableOffset(b, b.num_values);
    if (end > base) std::memcpy(dst + pos, b.data->data() + base, end - base);
    const uint64_t shift = pos - base;  // modular: pos + offset - base
    if (b.bits_per_offset == 64) {
      if (wide) rebase.operator()<uint64_t, uint64_t>(b, shift);
      else rebase.operator()<uint64_t, uint32_t>(b, shift);
    } else {
      if (wide) rebase.operator()<uint32_t, uint64_t>(b, shift);
      else rebase.operator()<uint32_t, uint32_t>(b, shift);
    }
    idx += b.num_values;
    pos += end - base;
  }
  return DataBlock::Variable(wide ? 64 : 32, total_values, std::move(offsets), std::move(data));
}

Result<std::shared_ptr<arrow::Buffer>> ConcatBitmaps(const std::vector<DataBlock>& blocks, arrow::MemoryPool* pool) {
  uint64_t total = 0;
  for (const auto& b : blocks) total += b.num_values;
  LANCE_ASSIGN_OR_RAISE(auto out, AllocateZeroed((total + 7) / 8, pool));
  uint64_t pos = 0;
  for (const auto& b : blocks) {
    if (b.num_values > 0) {
      arrow::internal::CopyBitmap(b.data->data(), 0, static_cast<int64_t>(b.num_values), out->mutable_data(),
                                  static_cast<int64_t>(pos));
    }
    pos += b.num_values;
  }
  return out;
}

}  // namespace

Result<DataBlock> ConcatBlocks(std::vector<DataBlock> blocks, arrow::MemoryPool* pool) {
  if (blocks.empty()) return DataBlock::AllNull(0);
  if (blocks.size() == 1) {
    LANCE_RETURN_NOT_OK(ValidateBlock(blocks[0]));
    return std::move(blocks[0]);
  }
  const BlockKind kind = blocks[0].kind;
  for (const auto& b : blocks) {
    if (b.kind != kind) return Corrupt("chunks of one page decode to different shapes");
  }
  uint64_t total = 0;
  for (const auto& b : blocks) total += b.num_values;
  switch (kind) {
    case BlockKind::kAllNull:
      return DataBlock::AllNull(total);
    case BlockKind::kConstant: {
      for (const auto& b : blocks) {
        if (!b.data || !blocks[0].data || !b.data->Equals(*blocks[0].data)) {
          return Corrupt("chunks of one page have different constants");
        }
      }
      return DataBlock::Constant(blocks[0].data, total);
    }
    case BlockKind::kFixedWidth:
      return ConcatFixed(blocks, pool);
    case BlockKind::kVariableWidth:
      return ConcatVariable(blocks, pool);
    case BlockKind::kFixedSizeList: {
      std::vector<DataBlock> children;
      for (auto& b : blocks) {
        LANCE_RETURN_NOT_OK(ValidateBlock(b));
        if (b.dimension != blocks[0].dimension) return Corrupt("chunks disagree on the list dimension");
        children.push_back(std::move(b.children[0]));
      }
      const uint64_t dimension = blocks[0].dimension;
      LANCE_ASSIGN_OR_RAISE(auto child, ConcatBlocks(std::move(children), pool));
      return DataBlock::Fsl(dimension, total, std::move(child));
    }
    case BlockKind::kNullable: {
      std::vector<DataBlock> children;
      for (auto& b : blocks) LANCE_RETURN_NOT_OK(ValidateBlock(b));
      LANCE_ASSIGN_OR_RAISE(auto bitmap, ConcatBitmaps(blocks, pool));
      for (auto& b : blocks) children.push_back(std::move(b.children[0]));
      LANCE_ASSIGN_OR_RAISE(auto child, ConcatBlocks(std::move(children), pool));
      return DataBlock::Nullable(std::move(bitmap), std::move(child));
    }
    case BlockKind::kStruct: {
      const size_t num_fields = blocks[0].children.size();
      std::vector<DataBlock> fields;
      for (size_t f = 0; f < num_fields; ++f) {
        std::vector<DataBlock> parts;
        for (auto& b : blocks) {
          if (b.children.size() != num_fields) return Corrupt("chunks disagree on the struct width");
          parts.push_back(std::move(b.children[f]));
        }
        LANCE_ASSIGN_OR_RAISE(auto field, ConcatBlocks(std::move(parts), pool));
        fields.push_back(std::move(field));
      }
      return DataBlock::Struct(total, std::move(fields));
    }
  }
  return Status::Invalid("unknown block kind");
}

Result<DataBlock> TakeBlock(const DataBlock& block, const std::vector<uint64_t>& indices, arrow::MemoryPool* pool) {
  LANCE_RETURN_NOT_OK(ValidateBlock(block));
  const uint64_t n = indices.size();
  for (uint64_t idx : indices) {
    if (idx >= block.num_values) {
      return Corrupt("index ", idx, " out of range for ", block.num_values, " values");
    }
  }
  switch (block.kind) {
    case BlockKind::kAllNull:
      return DataBlock::AllNull(n);
    case BlockKind::kConstant:
      return DataBlock::Constant(block.data, n);
    case BlockKind::kFixedWidth: {
      const uint64_t bits = block.bits_per_value;
      LANCE_ASSIGN_OR_RAISE(uint64_t size, BytesForBits(n, bits, "take"));
      LANCE_ASSIGN_OR_RAISE(auto out, AllocateZeroed(size, pool));
      uint8_t* dst = out->mutable_data();
      const uint8_t* src = block.data->data();
      if (bits % 8 == 0) {
        const uint64_t w = bits / 8;
        for (uint64_t i = 0; i < n; ++i) std::memcpy(dst + i * w, src + indices[i] * w, w);
      } else {
        for (uint64_t i = 0; i < n; ++i) {
          arrow::internal::CopyBitmap(src, static_cast<int64_t>(indices[i] * bits), static_cast<int64_t>(bits), dst,
                                      static_cast<int64_t>(i * bits));
        }
      }
      return DataBlock::FixedWidth(bits, n, std::move(out));
    }
    case BlockKind::kVariableWidth: {
      uint64_t total_bytes = 0;
      for (uint64_t idx : indices) total_bytes += VariableOffset(block, idx + 1) - VariableOffset(block, idx);
      const bool wide = block.bits_per_offset == 64 || total_bytes > 0xFFFFFFFFull;
      const unsigned width = wide ? 8 : 4;
      LANCE_ASSIGN_OR_RAISE(auto offsets, AllocateZeroed((n + 1) * width, pool));
      LANCE_ASSIGN_OR_RAISE(auto data, AllocateZeroed(total_bytes, pool));
      uint64_t pos = 0;
      StoreUnsigned(offsets->mutable_data(), width, 0);
      for (uint64_t i = 0; i < n; ++i) {
        const uint64_t start = VariableOffset(block, indices[i]);
        const uint64_t len = VariableOffset(block, indices[i] + 1) - start;
        if (len > 0) std::memcpy(data->mutable_data() + pos, block.data->data() + start, len);
        pos += len;
        StoreUnsigned(offsets->mutable_data() + (i + 1) * width, width, pos);
      }
      return DataBlock::Variable(wide ? 64 : 32, n, std::move(offsets), std::move(data));
    }
    case BlockKind::kFixedSizeList: {
      std::vector<uint64_t> child_indices;
      child_indices.reserve(n * block.dimension);
      for (uint64_t idx : indices) {
        for (uint64_t j = 0; j < block.dimension; ++j) child_indices.push_back(idx * block.dimension + j);
      }
      LANCE_ASSIGN_OR_RAISE(auto child, TakeBlock(block.children[0], child_indices, pool));
      return DataBlock::Fsl(block.dimension, n, std::move(child));
    }
    case BlockKind::kNullable: {
      LANCE_ASSIGN_OR_RAISE(auto bitmap, AllocateZeroed((n + 7) / 8, pool));
      for (uint64_t i = 0; i < n; ++i) {
        if (arrow::bit_util::GetBit(block.data->data(), indices[i])) {
          arrow::bit_util::SetBit(bitmap->mutable_data(), i);
        }
      }
      LANCE_ASSIGN_OR_RAISE(auto child, TakeBlock(block.children[0], indices, pool));
      return DataBlock::Nullable(std::move(bitmap), std::move(child));
    }
    case BlockKind::kStruct: {
      std::vector<DataBlock> fields;
      for (const auto& child : block.children) {
        LANCE_ASSIGN_OR_RAISE(auto field, TakeBlock(child, indices, pool));
        fields.push_back(std::move(field));
      }
      return DataBlock::Struct(n, std::move(fields));
    }
  }
  return Status::Invalid("unknown block kind");
}

Result<DataBlock> SliceBlock(const DataBlock& block, uint64_t start, uint64_t length, arrow::MemoryPool* pool) {
  if (start > block.num_values || block.num_values - start < length) {
    return Corrupt("slice [", start, ", +", length, ") of ", block.num_values, " values");
  }
  std::vector<uint64_t> indices(length);
  for (uint64_t i = 0; i < length; ++i) indices[i] = start + i;
  return TakeBlock(block, indices, pool);
}

int64_t FixedBitWidth(const arrow::DataType& type) {
  if (type.id() == arrow::Type::NA || type.id() == arrow::Type::FIXED_SIZE_LIST ||
      type.id() == arrow::Type::DICTIONARY || type.id() == arrow::Type::EXTENSION) {
    return 0;
  }
  if (!arrow::is_fixed_width(type.id())) return 0;
  return arrow::internal::checked_cast<const arrow::FixedWidthType&>(type).bit_width();
}

namespace {

bool IsBinaryLike(arrow::Type::type id) {
  return id == arrow::Type::STRING || id == arrow::Type::BINARY || id == arrow::Type::LARGE_STRING ||
         id == arrow::Type::LARGE_BINARY;
}

Result<std::shared_ptr<arrow::ArrayData>> VariableToArrow(const DataBlock& block,
                                                          const std::shared_ptr<arrow::DataType>& type,
                                                          arrow::MemoryPool* pool) {
  const bool large = type->id() == arrow::Type::LARGE_STRING || type->id() == arrow::Type::LARGE_BINARY;
  const unsigned target_bits = large ? 64 : 32;
  const uint64_t base = VariableOffset(block, 0);
  const uint64_t end = VariableOffset(block, block.num_values);
  if (!large && end - base > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return Status::CapacityError("more than 2 GiB of values for ", type->ToString(), "; use a large type");
  }
  std::shared_ptr<arrow::Buffer> offsets;
  if (block.bits_per_offset == target_bits && base == 0) {
    offsets = block.offsets;
  } else {
    const unsigned width = target_bits / 8;
    LANCE_ASSIGN_OR_RAISE(offsets, Allocate((block.num_values + 1) * width, pool));
    uint8_t* dst = offsets->mutable_data();
    const uint8_t* src = block.offsets->data();
    const uint64_t count = block.num_values + 1;
    // One loop per width pair, so each compiles to a plain (vectorizable) copy.
    auto convert = [&]<typename From, typename To>() {
      for (uint64_t i = 0; i < count; ++i) {
        From v;
        std::memcpy(&v, src + i * sizeof(From), sizeof(From));
        const To t = static_cast<To>(v - static_cast<From>(base));
        std::memcpy(dst + i * sizeof(To), &t, sizeof(To));
      }
    };
    if (block.bits_per_offset == 64) {
      if (width == 4) convert.operator()<uint64_t, uint32_t>();
      else convert.operator()<uint64_t, uint64_t>();
    } else {
      if (width == 4) convert.operator()<uint32_t, uint32_t>();
      else convert.operator()<uint32_t, uint64_t>();
    }
  }
  std::shared_ptr<arrow::Buffer> data = block.data;
  if (base != 0 || !data) {
    if (!data) {
      LANCE_ASSIGN_OR_RAISE(data, AllocateZeroed(0, pool));
    } else {
      data = arrow::SliceBuffer(data, static_cast<int64_t>(base), static_cast<int64_t>(end - base));
    }
  }
  return arrow::ArrayData::Make(type, static_cast<int64_t>(block.num_values), {nullptr, offsets, data}, 0);
}

}  // namespace

Result<std::shared_ptr<arrow::ArrayData>> BlockToArrow(const DataBlock& block,
                                                       const std::shared_ptr<arrow::DataType>& type,
                                                       arrow::MemoryPool* pool) {
  LANCE_RETURN_NOT_OK(ValidateBlock(block));
  const int64_t n = static_cast<int64_t>(block.num_values);
  switch (block.kind) {
    case BlockKind::kAllNull: {
      LANCE_ASSIGN_OR_RAISE(auto array, arrow::MakeArrayOfNull(type, n, pool));
      return array->data();
    }
    case BlockKind::kConstant: {
      const uint64_t width = static_cast<uint64_t>(block.data->size());
      LANCE_ASSIGN_OR_RAISE(auto out, AllocateZeroed(width * block.num_values, pool));
      for (uint64_t i = 0; i < block.num_values; ++i) {
        if (width > 0) std::memcpy(out->mutable_data() + i * width, block.data->data(), width);
      }
      return BlockToArrow(DataBlock::FixedWidth(width * 8, block.num_values, std::move(out)), type, pool);
    }
    case BlockKind::kNullable: {
      LANCE_ASSIGN_OR_RAISE(auto inner, BlockToArrow(block.children[0], type, pool));
      auto out = inner->Copy();
      if (out->buffers.empty()) return Status::Invalid("type ", type->ToString(), " cannot carry validity");
      out->buffers[0] = block.data;
      out->null_count = arrow::kUnknownNullCount;
      return out;
    }
    case BlockKind::kFixedWidth: {
      if (type->id() == arrow::Type::FIXED_SIZE_LIST) {
        const auto& fsl = arrow::internal::checked_cast<const arrow::FixedSizeListType&>(*type);
        const uint64_t dim = static_cast<uint64_t>(fsl.list_size());
        if (dim == 0 || block.bits_per_value % dim != 0) {
          return Corrupt("values of ", block.bits_per_value, " bits do not split into ", dim, " items");
        }
        DataBlock child = DataBlock::FixedWidth(block.bits_per_value / dim, block.num_values * dim, block.data);
        return BlockToArrow(DataBlock::Fsl(dim, block.num_values, std::move(child)), type, pool);
      }
      const int64_t width = FixedBitWidth(*type);
      if (width <= 0 || static_cast<uint64_t>(width) != block.bits_per_value) {
        return Corrupt("values of ", block.bits_per_value, " bits cannot be read as ", type->ToString());
      }
      return arrow::ArrayData::Make(type, n, {nullptr, block.data}, 0);
    }
    case BlockKind::kVariableWidth: {
      if (!IsBinaryLike(type->id())) {
        return Corrupt("variable-width values cannot be read as ", type->ToString());
      }
      return VariableToArrow(block, type, pool);
    }
    case BlockKind::kFixedSizeList: {
      if (type->id() != arrow::Type::FIXED_SIZE_LIST) {
        return Corrupt("fixed-size-list values cannot be read as ", type->ToString());
      }
      const auto& fsl = arrow::internal::checked_cast<const arrow::FixedSizeListType&>(*type);
      if (static_cast<uint64_t>(fsl.list_size()) != block.dimension) {
        return Corrupt("lists of ", block.dimension, " items cannot be read as ", type->ToString());
      }
      LANCE_ASSIGN_OR_RAISE(auto child, BlockToArrow(block.children[0], fsl.value_type(), pool));
      return arrow::ArrayData::Make(type, n, {nullptr}, {std::move(child)}, 0);
    }
    case BlockKind::kStruct: {
      if (type->id() != arrow::Type::STRUCT || type->num_fields() != static_cast<int>(block.children.size())) {
        return Corrupt("a packed struct of ", block.children.size(), " fields cannot be read as ", type->ToString());
      }
      std::vector<std::shared_ptr<arrow::ArrayData>> children;
      for (size_t i = 0; i < block.children.size(); ++i) {
        LANCE_ASSIGN_OR_RAISE(auto child, BlockToArrow(block.children[i],
                                                       type->field(static_cast<int>(i))->type(), pool));
        children.push_back(std::move(child));
      }
      return arrow::ArrayData::Make(type, n, {nullptr}, std::move(children), 0);
    }
  }
  return Status::Invalid("unknown block kind");
}

}  // namespace lance::file::v2_1
