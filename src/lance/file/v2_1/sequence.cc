#include "lance/file/v2_1/sequence.h"

#include <cstring>

#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/compressive.h"

namespace lance::file::v2_1 {


namespace {

uint64_t MaskBits(uint64_t v, uint64_t bits) { return bits >= 64 ? v : (v & ((uint64_t{1} << bits) - 1)); }

void StoreWord(uint8_t* p, uint64_t bits, uint64_t v) {
  switch (bits) {
    case 8: p[0] = static_cast<uint8_t>(v); break;
    case 16: { uint16_t x = static_cast<uint16_t>(v); std::memcpy(p, &x, 2); break; }
    case 32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); break; }
    default: std::memcpy(p, &v, 8); break;
  }
}

}  // namespace

Result<DataBlock> DecodeRange(const pb21::Range& range, uint64_t num_values, arrow::MemoryPool* pool) {
  const uint64_t bits = range.uncompressed_bits_per_value();
  if (!IsWordWidth(bits)) return Corrupt("range of ", bits, "-bit values");
  LANCE_ASSIGN_OR_RAISE(auto out, AllocateZeroed(num_values * (bits / 8), pool));
  uint64_t v = range.start();
  for (uint64_t i = 0; i < num_values; ++i) {
    StoreWord(out->mutable_data() + i * (bits / 8), bits, MaskBits(v, bits));
    v += range.step();
  }
  return DataBlock::FixedWidth(bits, num_values, std::move(out));
}

Result<DataBlock> ConstantToFixed(const DataBlock& constant, uint64_t bits, arrow::MemoryPool* pool) {
  if (constant.data->size() > 8) return Corrupt("constant of ", constant.data->size(), " bytes in a sequence");
  uint8_t word[8] = {0};
  std::memcpy(word, constant.data->data(), static_cast<size_t>(constant.data->size()));
  const uint64_t v = LoadLE<uint64_t>(word);
  LANCE_ASSIGN_OR_RAISE(auto out, AllocateZeroed(constant.num_values * (bits / 8), pool));
  for (uint64_t i = 0; i < constant.num_values; ++i) StoreWord(out->mutable_data() + i * (bits / 8), bits,
                                                               MaskBits(v, bits));
  return DataBlock::FixedWidth(bits, constant.num_values, std::move(out));
}

Result<DataBlock> DecodeDelta(const pb21::Delta& delta, const BufferPtr& data, uint64_t num_values,
                             arrow::MemoryPool* pool) {
  const uint64_t bits = delta.uncompressed_bits_per_value();
  if (!IsWordWidth(bits)) return Corrupt("delta of ", bits, "-bit values");
  if (!delta.has_deltas()) return Corrupt("delta encoding without deltas");
  LANCE_ASSIGN_OR_RAISE(auto out, AllocateZeroed(num_values * (bits / 8), pool));
  if (num_values == 0) return DataBlock::FixedWidth(bits, 0, std::move(out));
  LANCE_ASSIGN_OR_RAISE(DataBlock deltas, DecompressBlock(delta.deltas(), data, num_values - 1, pool));
  if (deltas.kind == BlockKind::kConstant) {
    LANCE_ASSIGN_OR_RAISE(deltas, ConstantToFixed(deltas, bits, pool));
  }
  if (deltas.kind != BlockKind::kFixedWidth || deltas.bits_per_value != bits || deltas.num_values != num_values - 1) {
    return Corrupt("delta deltas decoded to ", deltas.num_values, " values of ", deltas.bits_per_value, " bits");
  }
  uint64_t v = delta.base();
  const unsigned w = static_cast<unsigned>(bits / 8);
  StoreWord(out->mutable_data(), bits, MaskBits(v, bits));
  for (uint64_t i = 1; i < num_values; ++i) {
    v += LoadUnsigned(deltas.data->data() + (i - 1) * w, w);
    StoreWord(out->mutable_data() + i * w, bits, MaskBits(v, bits));
  }
  return DataBlock::FixedWidth(bits, num_values, std::move(out));
}

Result<DataBlock> DecodeConstant(const pb21::Constant& constant, uint64_t num_values, arrow::MemoryPool* pool) {
  if (!constant.has_value()) return DataBlock::AllNull(num_values);
  LANCE_ASSIGN_OR_RAISE(auto scalar, AllocateZeroed(constant.value().size(), pool));
  if (!constant.value().empty()) std::memcpy(scalar->mutable_data(), constant.value().data(),
                                             constant.value().size());
  return DataBlock::Constant(std::move(scalar), num_values);
}

}  // namespace lance::file::v2_1
