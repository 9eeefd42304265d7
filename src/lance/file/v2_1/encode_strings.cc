#include "lance/file/v2_1/encode_strings.h"

#include "lance/file/compression/fsst.h"
#include "lance/file/compression/general.h"

namespace lance::file::v2_1::encode {

// FSST needs enough input to pay for its symbol table: the reference asks
// for values of 5+ bytes and 32 KiB of data (bytes plus offsets).
constexpr uint64_t kFsstMinMaxLength = 5;
constexpr uint64_t kFsstMinDataSize = 32 * 1024;

bool UseFsst(const PageValues& values, const CompressionParams& params) {
  if (values.kind != PageValues::Kind::kVariable) return false;
  if (params.compression == "fsst") return true;
  if (!params.compression.empty() || !values.is_string) return false;
  const uint64_t data_size = values.offsets.back() + values.offsets.size() * (values.bits_per_offset / 8);
  return MaxValueBytes(values) >= kFsstMinMaxLength && data_size >= kFsstMinDataSize;
}

// The values FSST-compressed (same offset width) and the symbol table.
Result<std::pair<std::string, PageValues>> FsstValues(const PageValues& values) {
  std::string_view bytes = Bytes(values.data);
  LANCE_ASSIGN_OR_RAISE(auto compressed, comp::FsstCompress(values.offsets, bytes));
  PageValues out;
  out.kind = PageValues::Kind::kVariable;
  out.num_values = values.num_values;
  out.bits_per_offset = values.bits_per_offset;
  out.offsets = std::move(compressed.second.offsets);
  out.data = arrow::Buffer::FromString(std::move(compressed.second.data));
  if (values.bits_per_offset == 32 && out.offsets.back() > 0xFFFFFFFFull) {
    return Status::CapacityError("FSST output exceeds 32-bit offsets");
  }
  return std::make_pair(std::move(compressed.first), std::move(out));
}

// Full-zip values are zstd-compressed one by one when they are huge (over
// 32 KiB) or a general compression is requested, given 32 KiB+ of data; the
// reference then always uses zstd at level 0.
constexpr uint64_t kPerValueMinLength = 32 * 1024;

bool UsePerValueZstd(const PageValues& values, const CompressionParams& params) {
  if (values.kind != PageValues::Kind::kVariable || params.compression == "none") return false;
  const bool requested = !params.compression.empty() && params.compression != "fsst";
  const uint64_t data_size = values.offsets.back() + values.offsets.size() * (values.bits_per_offset / 8);
  return (MaxValueBytes(values) > kPerValueMinLength || requested) && data_size >= kFsstMinDataSize;
}

Result<PageValues> CompressEachValue(const PageValues& values) {
  PageValues out;
  out.kind = PageValues::Kind::kVariable;
  out.num_values = values.num_values;
  out.bits_per_offset = values.bits_per_offset;
  out.offsets.assign(1, 0);
  std::string data;
  const std::string_view bytes = Bytes(values.data);
  for (uint64_t i = 0; i < values.num_values; ++i) {
    const std::string_view value = bytes.substr(values.offsets[i], values.offsets[i + 1] - values.offsets[i]);
    LANCE_ASSIGN_OR_RAISE(auto framed, comp::GeneralCompress(comp::GeneralCodec::kZstd, value, kPerValueZstdLevel));
    data += framed;
    out.offsets.push_back(data.size());
  }
  if (values.bits_per_offset == 32 && data.size() > 0xFFFFFFFFull) {
    return Status::CapacityError("compressed values exceed 32-bit offsets");
  }
  out.data = arrow::Buffer::FromString(std::move(data));
  return out;
}

}  // namespace lance::file::v2_1::encode
