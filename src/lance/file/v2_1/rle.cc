#include "lance/file/v2_1/rle.h"

#include <cstring>
#include <optional>

#include "lance/file/v2_1/bitpacking.h"
#include "lance/file/v2_1/buffer_compression.h"
#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/compressive.h"

namespace lance::file::v2_1 {

namespace {

using Case = pb21::CompressiveEncoding::CompressionCase;


// Decodes an RLE child (values or run lengths) to raw little-endian words.
// `count` is the number of entries when known.
Result<BufferPtr> RleChild(const pb21::CompressiveEncoding& e, const BufferPtr& data, std::optional<uint64_t> count,
                           arrow::MemoryPool* pool) {
  switch (e.compression_case()) {
    case Case::kFlat:
      if (e.flat().has_data()) return DecompressBuffer(e.flat().data(), data, pool);
      return data;
    case Case::kGeneral: {
      if (!e.general().has_compression() || !e.general().has_values()) {
        return Corrupt("general RLE child without compression or values");
      }
      LANCE_ASSIGN_OR_RAISE(auto raw, DecompressBuffer(e.general().compression(), data, pool));
      return RleChild(e.general().values(), raw, count, pool);
    }
    case Case::kOutOfLineBitpacking: {
      if (!count) return Corrupt("both RLE children need the run count");
      LANCE_ASSIGN_OR_RAISE(auto block, UnpackOutOfLineBitpacking(e.out_of_line_bitpacking(), AsSpan(data),
                                                                  *count, pool));
      return block.data;
    }
    default:
      return Status::NotImplemented("RLE child encoded with ", EncodingName(e));
  }
}

bool RleChildNeedsCount(const pb21::CompressiveEncoding& e) {
  if (e.compression_case() == Case::kOutOfLineBitpacking) return true;
  if (e.compression_case() == Case::kGeneral && e.general().has_values()) {
    return RleChildNeedsCount(e.general().values());
  }
  return false;
}

Result<uint64_t> RleChildBits(const pb21::CompressiveEncoding& e) {
  switch (e.compression_case()) {
    case Case::kFlat: return e.flat().bits_per_value();
    case Case::kGeneral:
      if (!e.general().has_values()) return Corrupt("general RLE child without values");
      return RleChildBits(e.general().values());
    case Case::kOutOfLineBitpacking: return e.out_of_line_bitpacking().uncompressed_bits_per_value();
    default:
      return Status::NotImplemented("RLE child encoded with ", EncodingName(e));
  }
}

struct RleRuns {
  BufferPtr values;
  BufferPtr lengths;
  uint64_t value_bits;
  uint64_t length_bits;
  uint64_t num_runs;
};

Result<RleRuns> DecodeRleRuns(const pb21::Rle& rle, const BufferPtr& values, const BufferPtr& lengths,
                              arrow::MemoryPool* pool) {
  if (!rle.has_values() || !rle.has_run_lengths()) return Corrupt("RLE encoding without values or run lengths");
  RleRuns runs;
  LANCE_ASSIGN_OR_RAISE(runs.value_bits, RleChildBits(rle.values()));
  LANCE_ASSIGN_OR_RAISE(runs.length_bits, RleChildBits(rle.run_lengths()));
  if (!IsWordWidth(runs.value_bits)) return Corrupt("RLE of ", runs.value_bits, "-bit values");
  if (runs.length_bits != 8 && runs.length_bits != 16 && runs.length_bits != 32) {
    return Corrupt("RLE run lengths of ", runs.length_bits, " bits");
  }
  const bool values_need = RleChildNeedsCount(rle.values());
  const bool lengths_need = RleChildNeedsCount(rle.run_lengths());
  if (values_need && lengths_need) return Corrupt("both RLE children need the run count");
  if (values_need) {
    LANCE_ASSIGN_OR_RAISE(runs.lengths, RleChild(rle.run_lengths(), lengths, std::nullopt, pool));
    const uint64_t n = static_cast<uint64_t>(runs.lengths->size()) / (runs.length_bits / 8);
    LANCE_ASSIGN_OR_RAISE(runs.values, RleChild(rle.values(), values, n, pool));
  } else {
    LANCE_ASSIGN_OR_RAISE(runs.values, RleChild(rle.values(), values, std::nullopt, pool));
    const uint64_t n = static_cast<uint64_t>(runs.values->size()) / (runs.value_bits / 8);
    LANCE_ASSIGN_OR_RAISE(runs.lengths, RleChild(rle.run_lengths(), lengths,
                                                 lengths_need ? std::optional<uint64_t>(n) : std::nullopt, pool));
  }
  const uint64_t vw = runs.value_bits / 8, lw = runs.length_bits / 8;
  if (runs.values->size() % vw != 0 || runs.lengths->size() % lw != 0) {
    return Corrupt("RLE buffers of ", runs.values->size(), " and ", runs.lengths->size(), " bytes");
  }
  runs.num_runs = static_cast<uint64_t>(runs.values->size()) / vw;
  if (runs.num_runs != static_cast<uint64_t>(runs.lengths->size()) / lw) {
    return Corrupt("RLE has ", runs.num_runs, " values but ", runs.lengths->size() / lw, " run lengths");
  }
  return runs;
}

uint64_t RunLength(const RleRuns& runs, uint64_t i) {
  return LoadUnsigned(runs.lengths->data() + i * (runs.length_bits / 8), static_cast<unsigned>(runs.length_bits / 8));
}

// Expands runs into num_values values. `clamp` tolerates runs that overshoot
// the count (old mini-block writers did that); otherwise it is an error.
Result<DataBlock> ExpandRuns(const RleRuns& runs, uint64_t num_values, bool clamp, arrow::MemoryPool* pool) {
  const uint64_t w = runs.value_bits / 8;
  uint64_t total = 0;
  for (uint64_t r = 0; r < runs.num_runs && total < num_values; ++r) total += RunLength(runs, r);
  if (total < num_values) return Corrupt("RLE runs hold ", total, " values, expected ", num_values);
  LANCE_ASSIGN_OR_RAISE(auto out, AllocateZeroed(num_values * w, pool));
  uint64_t produced = 0;
  for (uint64_t r = 0; r < runs.num_runs && produced < num_values; ++r) {
    uint64_t len = RunLength(runs, r);
    if (len == 0) return Corrupt("RLE run of length zero");
    if (len > num_values - produced) {
      if (!clamp) return Corrupt("RLE runs hold more than the expected ", num_values, " values");
      len = num_values - produced;
    }
    const uint8_t* value = runs.values->data() + r * w;
    uint8_t* dst = out->mutable_data() + produced * w;
    for (uint64_t i = 0; i < len; ++i) std::memcpy(dst + i * w, value, w);
    produced += len;
  }
  if (produced != num_values) return Corrupt("RLE runs hold ", produced, " values, expected ", num_values);
  return DataBlock::FixedWidth(runs.value_bits, num_values, std::move(out));
}

Result<std::pair<BufferPtr, BufferPtr>> SplitRleFrame(const BufferPtr& data) {
  ByteSpan bytes = AsSpan(data);
  LANCE_ASSIGN_OR_RAISE(uint64_t values_size, ReadLE<uint64_t>(bytes, 0, "RLE block header"));
  if (values_size > bytes.size() - 8) return Corrupt("RLE block values of ", values_size, " bytes exceed the block");
  auto values = arrow::SliceBuffer(data, 8, static_cast<int64_t>(values_size));
  auto lengths = arrow::SliceBuffer(data, static_cast<int64_t>(8 + values_size),
                                    static_cast<int64_t>(bytes.size() - 8 - values_size));
  return std::make_pair(values, lengths);
}

}  // namespace

Result<uint64_t> RleValueBits(const pb21::Rle& rle) {
  if (!rle.has_values()) return Corrupt("RLE encoding without values");
  return RleChildBits(rle.values());
}

Result<DataBlock> DecodeRleChunk(const pb21::Rle& rle, const BufferPtr& values, const BufferPtr& run_lengths,
                                 uint64_t num_values, arrow::MemoryPool* pool) {
  if (num_values == 0) {
    LANCE_ASSIGN_OR_RAISE(uint64_t bits, RleValueBits(rle));
    LANCE_ASSIGN_OR_RAISE(auto empty, AllocateZeroed(0, pool));
    return DataBlock::FixedWidth(bits, 0, std::move(empty));
  }
  LANCE_ASSIGN_OR_RAISE(auto runs, DecodeRleRuns(rle, values, run_lengths, pool));
  return ExpandRuns(runs, num_values, /*clamp=*/true, pool);
}

Result<DataBlock> DecodeRleBlock(const pb21::Rle& rle, const BufferPtr& data, uint64_t num_values,
                                 arrow::MemoryPool* pool) {
  if (num_values == 0 && (!data || data->size() == 0)) {
    LANCE_ASSIGN_OR_RAISE(uint64_t bits, RleValueBits(rle));
    LANCE_ASSIGN_OR_RAISE(auto empty, AllocateZeroed(0, pool));
    return DataBlock::FixedWidth(bits, 0, std::move(empty));
  }
  LANCE_ASSIGN_OR_RAISE(auto parts, SplitRleFrame(data));
  LANCE_ASSIGN_OR_RAISE(auto runs, DecodeRleRuns(rle, parts.first, parts.second, pool));
  return ExpandRuns(runs, num_values, /*clamp=*/false, pool);
}

Result<uint64_t> RleBlockValueCount(const pb21::Rle& rle, const BufferPtr& data, arrow::MemoryPool* pool) {
  LANCE_ASSIGN_OR_RAISE(auto parts, SplitRleFrame(data));
  LANCE_ASSIGN_OR_RAISE(auto runs, DecodeRleRuns(rle, parts.first, parts.second, pool));
  uint64_t total = 0;
  for (uint64_t r = 0; r < runs.num_runs; ++r) {
    if (AddOverflows(total, RunLength(runs, r), &total)) return Corrupt("RLE run lengths overflow");
  }
  return total;
}

}  // namespace lance::file::v2_1
