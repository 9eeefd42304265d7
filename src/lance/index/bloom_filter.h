// The split-block Bloom filter of Parquet's spec (BloomFilter.md), as
// pylance 14's BLOOMFILTER index keeps one per zone
// (rust/lance-core/src/utils/bloomfilter/sbbf.rs): 32-byte blocks of eight
// 32-bit words, xxHash64 (seed 0) of the value's bytes, the block chosen
// by the hash's high half, one bit per word from its low half times the
// spec's salts. Serialized as the blocks' little-endian words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/index/index_writer.h"
#include "lance/index/scalar_index.h"
#include "lance/status.h"

namespace lance::index {

/// pylance 14's BLOOMFILTER defaults: the items each zone's filter is
/// sized for (also the zone's rows) and its false-positive probability.
inline constexpr uint64_t kBloomFilterDefaultItems = 8192;
inline constexpr double kBloomFilterDefaultProbability = 0.00057;

class SplitBlockBloomFilter {
 public:
  /// An empty filter sized as pylance sizes it for `ndv` distinct values
  /// at false-positive probability `fpp` (0 <= fpp < 1): the least power of
  /// two of bytes whose estimated rate is at most `fpp`, 32 B to 128 MiB.
  static Result<SplitBlockBloomFilter> ForItems(uint64_t ndv, double fpp);
  /// A serialized filter; `context` names it in errors.
  static Result<SplitBlockBloomFilter> FromBytes(std::string_view bytes, const std::string& context);

  void InsertHash(uint64_t hash);
  bool CheckHash(uint64_t hash) const;
  size_t size_bytes() const { return words_.size() * 4; }
  std::string ToBytes() const;

 private:
  size_t Block(uint64_t hash) const;
  std::vector<uint32_t> words_;  // 8 per block
};

/// Whether a BLOOMFILTER index takes values of `type` (pylance 14's list).
bool BloomFilterValueType(const arrow::DataType& type);

/// The hash of a value's bytes: xxHash64, seed 0.
uint64_t BloomHashBytes(const void* data, size_t size);

/// The hash pylance gives value `i` of `values` (a BloomFilterValueType):
/// xxHash64 of its little-endian bytes, or of the string's or binary's
/// bytes. nullopt for a null.
std::optional<uint64_t> BloomHash(const arrow::Array& values, int64_t i);

/// A bloomfilter.lance as read: its zones, the null rows (none in files
/// older than pylance 14's) and its parameters.
struct BloomFilterIndexData {
  BloomFilterZones zones;
  std::optional<RowIds> null_rows;
  uint64_t number_of_items = kBloomFilterDefaultItems;
  double probability = kBloomFilterDefaultProbability;
};

/// Reads `file`, a bloomfilter.lance; NotImplemented when it is not the
/// layout above. `context` names the index in errors.
Result<BloomFilterIndexData> ReadBloomFilterFile(const FileReader& file, const std::string& context);

}  // namespace lance::index
