#include "lance/index/posting_codec.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace lance::index {
namespace {

constexpr size_t kBlock = kPostingBlockSize;
// f32 score | u32 first doc id | u8 doc id bit width.
constexpr size_t kFullBlockHeader = 9;

size_t NumBlocks(size_t postings) { return (postings + kBlock - 1) / kBlock; }

uint32_t LoadU32(const char* p) {
  uint8_t b[4];
  std::memcpy(b, p, 4);
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

float LoadF32(const char* p) {
  const uint32_t bits = LoadU32(p);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void PutU32(uint32_t v, std::string* out) {
  const char b[4] = {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
                     static_cast<char>(v >> 24)};
  out->append(b, 4);
}

void PutF32(float f, std::string* out) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  PutU32(bits, out);
}

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// LEB128 at *offset, which it advances; false when truncated or when the
// value has more than `max_bits` bits (the reference's decoders reject both).
bool GetVarint(std::string_view in, size_t* offset, unsigned max_bits, uint64_t* out) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < max_bits && *offset < in.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in[(*offset)++]);
    const uint64_t payload = byte & 0x7F;
    if (max_bits - shift < 7 && (payload >> (max_bits - shift)) != 0) return false;
    v |= payload << shift;
    if ((byte & 0x80) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

bool GetVarint32(std::string_view in, size_t* offset, uint32_t* out) {
  uint64_t v;
  if (!GetVarint(in, offset, 32, &v)) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

uint8_t BitWidth(uint32_t v) { return v == 0 ? 0 : static_cast<uint8_t>(32 - std::countl_zero(v)); }

// The deltas of the crate's sorted variant (wrapping).
void SortedDeltas(uint32_t initial, const uint32_t* values, uint32_t* deltas) {
  uint32_t prev = initial;
  for (size_t i = 0; i < kBlock; ++i) {
    deltas[i] = values[i] - prev;
    prev = values[i];
  }
}

// Each lane's 32 values go LSB-first into `num_bits` words; lane j's word k
// is word 4k + j of the output, as the crate's SSE3 registers store them.
void PackLanes(const uint32_t* values, uint8_t num_bits, std::string* out) {
  if (num_bits == 0) return;
  uint32_t words[kBlock];
  const uint64_t mask = (uint64_t{1} << num_bits) - 1;
  for (size_t lane = 0; lane < 4; ++lane) {
    uint64_t acc = 0;
    unsigned filled = 0;
    size_t k = 0;
    for (size_t i = 0; i < 32; ++i) {
      acc |= (values[4 * i + lane] & mask) << filled;
      filled += num_bits;
      if (filled >= 32) {
        words[4 * k + lane] = static_cast<uint32_t>(acc);
        ++k;
        acc >>= 32;
        filled -= 32;
      }
    }
  }
  for (size_t w = 0; w < size_t{num_bits} * 4; ++w) PutU32(words[w], out);
}

// The caller has checked num_bits <= 32 and BitPackedBytes(num_bits) bytes.
void UnpackLanes(const char* in, uint8_t num_bits, uint32_t* out) {
  if (num_bits == 0) {
    std::fill(out, out + kBlock, 0u);
    return;
  }
  const uint64_t mask = (uint64_t{1} << num_bits) - 1;
  for (size_t lane = 0; lane < 4; ++lane) {
    uint64_t acc = 0;
    unsigned avail = 0;
    size_t k = 0;
    for (size_t i = 0; i < 32; ++i) {
      if (avail < num_bits) {
        acc |= uint64_t{LoadU32(in + 4 * (4 * k + lane))} << avail;
        ++k;
        avail += 32;
      }
      out[4 * i + lane] = static_cast<uint32_t>(acc & mask);
      acc >>= num_bits;
      avail -= num_bits;
    }
  }
}

// Checks a packed run at the front of `in`; the message when it is bad.
const char* PackedRunProblem(std::string_view in, uint8_t num_bits) {
  if (num_bits > 32) return "a bit width over 32";
  if (in.size() < BitPackedBytes(num_bits)) return "a truncated bit-packed run";
  return nullptr;
}

void Integrate(uint32_t initial, uint32_t* values) {
  uint32_t acc = initial;
  for (size_t i = 0; i < kBlock; ++i) values[i] = acc += values[i];
}

Status CheckFits(const uint32_t* values, uint8_t num_bits) {
  if (num_bits > 32) return Status::Invalid("BitPacker4x bit width ", int{num_bits}, " is over 32");
  for (size_t i = 0; i < kBlock; ++i) {
    if (BitWidth(values[i]) > num_bits) {
      return Status::Invalid("BitPacker4x value ", values[i], " at ", i, " has more than ", int{num_bits}, " bits");
    }
  }
  return Status::OK();
}

// The Pareto frontier of (frequency, doc length) as the reference builds it:
// the least length of each frequency, then from the highest frequency down
// the pairs shorter than every more frequent one.
std::vector<std::pair<uint32_t, uint32_t>> RawFrontier(std::span<const uint32_t> frequencies,
                                                       std::span<const uint32_t> doc_lengths) {
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  std::vector<std::pair<uint32_t, uint32_t>> frontier;
  uint32_t max_freq = 0;
  for (uint32_t f : frequencies) max_freq = std::max(max_freq, f);
  if (max_freq <= 4 * frequencies.size() + 64) {
    // Frequencies are small: the least length of each, in a table.
    thread_local std::vector<uint32_t> least;
    least.assign(size_t{max_freq} + 1, kNone);
    for (size_t i = 0; i < frequencies.size(); ++i) least[frequencies[i]] = std::min(least[frequencies[i]], doc_lengths[i]);
    uint32_t best = kNone;
    for (uint32_t f = max_freq + 1; f-- > 0;) {
      if (least[f] < best) {
        frontier.emplace_back(f, least[f]);
        best = least[f];
      }
    }
  } else {
    std::vector<std::pair<uint32_t, uint32_t>> pairs(frequencies.size());
    for (size_t i = 0; i < pairs.size(); ++i) pairs[i] = {frequencies[i], doc_lengths[i]};
    std::sort(pairs.begin(), pairs.end());
    uint32_t best = kNone;
    for (size_t i = pairs.size(); i-- > 0;) {
      // After the sort the first pair of a frequency has its least length.
      if (i > 0 && pairs[i - 1].first == pairs[i].first) continue;
      if (pairs[i].second < best) {
        frontier.push_back(pairs[i]);
        best = pairs[i].second;
      }
    }
  }
  std::reverse(frontier.begin(), frontier.end());
  return frontier;
}

}  // namespace

// ---- BitPacker4x

uint8_t BitPackNumBits(std::span<const uint32_t, kPostingBlockSize> values) {
  uint32_t acc = 0;
  for (uint32_t v : values) acc |= v;
  return BitWidth(acc);
}

uint8_t BitPackNumBitsSorted(uint32_t initial, std::span<const uint32_t, kPostingBlockSize> values) {
  uint32_t deltas[kBlock];
  SortedDeltas(initial, values.data(), deltas);
  return BitPackNumBits(deltas);
}

Status BitPack(std::span<const uint32_t, kPostingBlockSize> values, uint8_t num_bits, std::string* out) {
  LANCE_RETURN_NOT_OK(CheckFits(values.data(), num_bits));
  PackLanes(values.data(), num_bits, out);
  return Status::OK();
}

Status BitPackSorted(uint32_t initial, std::span<const uint32_t, kPostingBlockSize> values, uint8_t num_bits,
                     std::string* out) {
  uint32_t deltas[kBlock];
  SortedDeltas(initial, values.data(), deltas);
  LANCE_RETURN_NOT_OK(CheckFits(deltas, num_bits));
  PackLanes(deltas, num_bits, out);
  return Status::OK();
}

Status BitUnpack(std::string_view in, uint8_t num_bits, std::span<uint32_t, kPostingBlockSize> out,
                 const std::string& context) {
  if (const char* problem = PackedRunProblem(in, num_bits)) {
    return Status::Invalid(context, ": ", problem, " (", int{num_bits}, " bits, ", in.size(), " bytes)");
  }
  UnpackLanes(in.data(), num_bits, out.data());
  return Status::OK();
}

Status BitUnpackSorted(uint32_t initial, std::string_view in, uint8_t num_bits,
                       std::span<uint32_t, kPostingBlockSize> out, const std::string& context) {
  LANCE_RETURN_NOT_OK(BitUnpack(in, num_bits, out, context));
  Integrate(initial, out.data());
  return Status::OK();
}

// ---- Posting lists

Result<PostingList> DecodePostingList(std::span<const std::string_view> blocks, uint32_t length,
                                      const std::string& context) {
  if (blocks.size() != NumBlocks(length)) {
    return Status::Invalid(context, ": ", blocks.size(), " posting blocks for ", length, " postings (expected ",
                           NumBlocks(length), ")");
  }
  PostingList list;
  list.doc_ids.reserve(length);
  list.frequencies.reserve(length);
  list.block_max_scores.reserve(blocks.size());
  uint32_t buffer[kBlock];
  for (size_t k = 0; k < blocks.size(); ++k) {
    const std::string_view b = blocks[k];
    auto bad = [&](auto&&... what) {
      return Status::Invalid(context, ": posting block ", k, " of ", blocks.size(), " (", b.size(), " bytes): ",
                             what...);
    };
    if (b.size() < 4) return bad("no block max score");
    list.block_max_scores.push_back(LoadF32(b.data()));
    const size_t first = list.doc_ids.size();
    if (length - first >= kBlock) {
      if (b.size() < kFullBlockHeader) return bad("a truncated full block");
      const uint32_t initial = LoadU32(b.data() + 4);
      const auto id_bits = static_cast<uint8_t>(b[8]);
      if (const char* problem = PackedRunProblem(b.substr(kFullBlockHeader), id_bits)) {
        return bad(problem, " of doc ids (", int{id_bits}, " bits)");
      }
      UnpackLanes(b.data() + kFullBlockHeader, id_bits, buffer);
      Integrate(initial, buffer);
      list.doc_ids.insert(list.doc_ids.end(), buffer, buffer + kBlock);
      const size_t freq_at = kFullBlockHeader + BitPackedBytes(id_bits);
      if (b.size() <= freq_at) return bad("no frequency bit width");
      const auto freq_bits = static_cast<uint8_t>(b[freq_at]);
      if (const char* problem = PackedRunProblem(b.substr(freq_at + 1), freq_bits)) {
        return bad(problem, " of frequencies (", int{freq_bits}, " bits)");
      }
      if (b.size() != freq_at + 1 + BitPackedBytes(freq_bits)) {
        return bad(b.size() - (freq_at + 1 + BitPackedBytes(freq_bits)), " trailing bytes");
      }
      UnpackLanes(b.data() + freq_at + 1, freq_bits, buffer);
      list.frequencies.insert(list.frequencies.end(), buffer, buffer + kBlock);
    } else {
      // varint_delta_v1: the first doc id, the deltas, then the frequencies.
      const size_t n = length - first;
      size_t offset = 4;
      uint32_t doc = 0;
      for (size_t i = 0; i < n; ++i) {
        uint32_t delta;
        if (!GetVarint32(b, &offset, &delta)) return bad("a bad or truncated doc id varint at byte ", offset);
        if (i > 0 && delta > std::numeric_limits<uint32_t>::max() - doc) return bad("a doc id over 2^32");
        doc = i == 0 ? delta : doc + delta;
        list.doc_ids.push_back(doc);
      }
      for (size_t i = 0; i < n; ++i) {
        uint32_t freq;
        if (!GetVarint32(b, &offset, &freq)) return bad("a bad or truncated frequency varint at byte ", offset);
        list.frequencies.push_back(freq);
      }
      if (offset != b.size()) return bad(b.size() - offset, " trailing bytes");
    }
    for (size_t i = std::max<size_t>(first, 1); i < list.doc_ids.size(); ++i) {
      if (list.doc_ids[i] <= list.doc_ids[i - 1]) {
        return bad("doc id ", list.doc_ids[i], " after ", list.doc_ids[i - 1], " (not ascending)");
      }
    }
  }
  return list;
}

Status DecodePositions(std::string_view stream, std::span<const uint32_t> block_offsets, PostingList* list,
                       const std::string& context) {
  const size_t n = list->doc_ids.size();
  if (list->frequencies.size() != n) {
    return Status::Invalid(context, ": ", list->frequencies.size(), " frequencies for ", n, " doc ids");
  }
  const size_t num_blocks = NumBlocks(n);
  if (block_offsets.size() != num_blocks) {
    return Status::Invalid(context, ": ", block_offsets.size(), " position block offsets for ", num_blocks,
                           " posting blocks");
  }
  if (num_blocks == 0 ? !stream.empty() : block_offsets[0] != 0) {
    return Status::Invalid(context, ": the position stream does not start at its first block");
  }
  list->positions.clear();
  std::vector<uint32_t> deltas;
  for (size_t k = 0; k < num_blocks; ++k) {
    const size_t start = block_offsets[k];
    const size_t end = k + 1 < num_blocks ? block_offsets[k + 1] : stream.size();
    auto bad = [&](auto&&... what) {
      return Status::Invalid(context, ": position block ", k, " of ", num_blocks, " (bytes ", start, "..", end,
                             " of ", stream.size(), "): ", what...);
    };
    if (start > end || end > stream.size()) return bad("offsets out of order or past the stream");
    const std::string_view b = stream.substr(start, end - start);
    const size_t doc_begin = k * kBlock, doc_end = std::min(n, doc_begin + kBlock);
    uint64_t total = 0;
    for (size_t i = doc_begin; i < doc_end; ++i) total += list->frequencies[i];
    // Every packed group and tail varint takes a byte at least: this bounds
    // the allocation by the bytes there are.
    if (total / kBlock + total % kBlock > b.size()) return bad(total, " positions cannot fit");
    deltas.resize(total);
    size_t offset = 0;
    for (size_t g = 0; g < total / kBlock; ++g) {
      if (offset >= b.size()) return bad("no bit width for delta group ", g);
      const auto bits = static_cast<uint8_t>(b[offset++]);
      if (const char* problem = PackedRunProblem(b.substr(offset), bits)) {
        return bad(problem, " in delta group ", g, " (", int{bits}, " bits)");
      }
      UnpackLanes(b.data() + offset, bits, deltas.data() + g * kBlock);
      offset += BitPackedBytes(bits);
    }
    for (size_t i = total / kBlock * kBlock; i < total; ++i) {
      if (!GetVarint32(b, &offset, &deltas[i])) return bad("a bad or truncated delta varint at byte ", offset);
    }
    if (offset != b.size()) return bad(b.size() - offset, " trailing bytes");
    size_t at = 0;
    for (size_t i = doc_begin; i < doc_end; ++i) {
      uint32_t pos = 0;
      for (uint32_t j = 0; j < list->frequencies[i]; ++j, ++at) {
        if (j > 0 && deltas[at] > std::numeric_limits<uint32_t>::max() - pos) {
          return bad("a position of doc ", list->doc_ids[i], " over 2^32");
        }
        pos = j == 0 ? deltas[at] : pos + deltas[at];
        list->positions.push_back(pos);
      }
    }
  }
  return Status::OK();
}

Result<std::vector<std::string>> EncodePostingBlocks(std::span<const uint32_t> doc_ids,
                                                     std::span<const uint32_t> frequencies,
                                                     std::span<const float> block_max_scores) {
  const size_t n = doc_ids.size();
  if (frequencies.size() != n) {
    return Status::Invalid("posting list of ", n, " doc ids and ", frequencies.size(), " frequencies");
  }
  if (block_max_scores.size() != NumBlocks(n)) {
    return Status::Invalid("posting list of ", n, " postings and ", block_max_scores.size(),
                           " block max scores (expected ", NumBlocks(n), ")");
  }
  for (size_t i = 1; i < n; ++i) {
    if (doc_ids[i] <= doc_ids[i - 1]) {
      return Status::Invalid("posting doc id ", doc_ids[i], " after ", doc_ids[i - 1], " (not ascending)");
    }
  }
  std::vector<std::string> blocks;
  blocks.reserve(NumBlocks(n));
  for (size_t k = 0; k < NumBlocks(n); ++k) {
    std::string b;
    PutF32(block_max_scores[k], &b);
    const size_t at = k * kBlock;
    if (n - at >= kBlock) {
      const auto ids = doc_ids.subspan(at).first<kBlock>();
      const auto freqs = frequencies.subspan(at).first<kBlock>();
      // The crate's sorted variant with the first doc id as the initial value,
      // so that the first delta is 0.
      PutU32(ids[0], &b);
      const uint8_t id_bits = BitPackNumBitsSorted(ids[0], ids);
      b.push_back(static_cast<char>(id_bits));
      LANCE_RETURN_NOT_OK(BitPackSorted(ids[0], ids, id_bits, &b));
      const uint8_t freq_bits = BitPackNumBits(freqs);
      b.push_back(static_cast<char>(freq_bits));
      LANCE_RETURN_NOT_OK(BitPack(freqs, freq_bits, &b));
    } else {
      for (size_t i = at; i < n; ++i) PutVarint(i == at ? doc_ids[i] : doc_ids[i] - doc_ids[i - 1], &b);
      for (size_t i = at; i < n; ++i) PutVarint(frequencies[i], &b);
    }
    blocks.push_back(std::move(b));
  }
  return blocks;
}

Result<EncodedPositions> EncodePositions(std::span<const uint32_t> frequencies, std::span<const uint32_t> positions) {
  uint64_t total = 0;
  for (uint32_t f : frequencies) total += f;
  if (total != positions.size()) {
    return Status::Invalid(positions.size(), " positions for frequencies summing to ", total);
  }
  EncodedPositions out;
  std::vector<uint32_t> deltas;
  size_t at = 0;
  for (size_t k = 0; k < NumBlocks(frequencies.size()); ++k) {
    out.block_offsets.push_back(static_cast<uint32_t>(out.stream.size()));
    deltas.clear();
    const size_t doc_end = std::min(frequencies.size(), (k + 1) * kBlock);
    for (size_t i = k * kBlock; i < doc_end; ++i) {
      for (uint32_t j = 0; j < frequencies[i]; ++j, ++at) {
        if (j > 0 && positions[at] < positions[at - 1]) {
          return Status::Invalid("positions of posting ", i, " decrease (", positions[at], " after ",
                                 positions[at - 1], ")");
        }
        deltas.push_back(j == 0 ? positions[at] : positions[at] - positions[at - 1]);
      }
    }
    size_t g = 0;
    for (; g + kBlock <= deltas.size(); g += kBlock) {
      const auto group = std::span<const uint32_t>(deltas).subspan(g).first<kBlock>();
      const uint8_t bits = BitPackNumBits(group);
      out.stream.push_back(static_cast<char>(bits));
      LANCE_RETURN_NOT_OK(BitPack(group, bits, &out.stream));
    }
    for (; g < deltas.size(); ++g) PutVarint(deltas[g], &out.stream);
  }
  return out;
}

// ---- Impacts

uint8_t QuantizeDocLength(uint32_t doc_length) {
  const unsigned bits = BitWidth(doc_length);
  if (bits < 4) return static_cast<uint8_t>(doc_length);
  const unsigned shift = bits - 4;
  return static_cast<uint8_t>(((doc_length >> shift) & 0x07) | ((shift + 1) << 3));
}

uint32_t DequantizeDocLength(uint8_t norm) {
  const uint64_t bits = norm & 0x07;
  const int shift = (norm >> 3) - 1;
  if (shift < 0) return static_cast<uint32_t>(bits);
  // Codes past the largest u32's are never made; saturate as the reference.
  const uint64_t v = (bits | 0x08) << shift;
  return v > std::numeric_limits<uint32_t>::max() ? std::numeric_limits<uint32_t>::max() : static_cast<uint32_t>(v);
}

Result<ImpactEntry> MakeImpactEntry(std::span<const uint32_t> doc_ids, std::span<const uint32_t> frequencies,
                                    std::span<const uint32_t> doc_lengths) {
  if (doc_ids.empty()) return Status::Invalid("an impact entry of no postings");
  if (frequencies.size() != doc_ids.size() || doc_lengths.size() != doc_ids.size()) {
    return Status::Invalid("impact entry of ", doc_ids.size(), " doc ids, ", frequencies.size(),
                           " frequencies and ", doc_lengths.size(), " doc lengths");
  }
  for (size_t i = 0; i < frequencies.size(); ++i) {
    if (frequencies[i] == 0) return Status::Invalid("impact entry: posting ", i, " has frequency 0");
  }
  ImpactEntry entry;
  entry.doc_up_to = doc_ids.back();
  for (const auto& [freq, len] : RawFrontier(frequencies, doc_lengths)) {
    const uint8_t norm = QuantizeDocLength(len);
    // At an equal quantized length the more frequent pair dominates.
    if (!entry.frontier.empty() && entry.frontier.back().norm == norm) {
      entry.frontier.back().frequency = freq;
    } else {
      entry.frontier.push_back({freq, norm});
    }
  }
  return entry;
}

Result<std::string> EncodeImpactEntry(const ImpactEntry& entry) {
  std::string out;
  PutVarint(entry.doc_up_to, &out);
  PutVarint(entry.frontier.size(), &out);
  uint32_t prev_freq = 0;
  uint8_t prev_norm = 0;
  for (size_t i = 0; i < entry.frontier.size(); ++i) {
    const auto [freq, norm] = entry.frontier[i];
    if (freq <= prev_freq) {
      return Status::Invalid("impact frontier frequencies must be positive and ascending: ", freq, " after ",
                             prev_freq);
    }
    if (norm < prev_norm || (i > 0 && norm == prev_norm)) {
      return Status::Invalid("impact frontier norms must ascend: ", int{norm}, " after ", int{prev_norm});
    }
    const uint8_t norm_delta = norm - prev_norm;
    // The low bit says whether a norm delta byte follows; most are 1.
    PutVarint(uint64_t{freq - prev_freq - 1} << 1 | (norm_delta != 1), &out);
    if (norm_delta != 1) out.push_back(static_cast<char>(norm_delta));
    prev_freq = freq;
    prev_norm = norm;
  }
  return out;
}

Result<ImpactEntry> DecodeImpactEntry(std::string_view bytes, const std::string& context) {
  auto bad = [&](auto&&... what) {
    return Status::Invalid(context, ": impact entry of ", bytes.size(), " bytes: ", what...);
  };
  ImpactEntry entry;
  size_t offset = 0;
  uint32_t count;
  if (!GetVarint32(bytes, &offset, &entry.doc_up_to)) return bad("a bad or truncated last doc id");
  if (!GetVarint32(bytes, &offset, &count)) return bad("a bad or truncated pair count");
  if (count == 0) return bad("no frontier pairs");
  if (count > bytes.size() - offset) return bad(count, " pairs cannot fit");
  entry.frontier.reserve(count);
  uint32_t freq = 0;
  unsigned norm = 0;
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t packed;
    if (!GetVarint(bytes, &offset, 64, &packed)) return bad("a bad or truncated varint of pair ", i);
    const uint64_t freq_delta = (packed >> 1) + 1;
    if (freq_delta > std::numeric_limits<uint32_t>::max() - freq) return bad("a frequency over 2^32 in pair ", i);
    freq += static_cast<uint32_t>(freq_delta);
    unsigned norm_delta = 1;
    if (packed & 1) {
      if (offset >= bytes.size()) return bad("no norm delta byte for pair ", i);
      norm_delta = static_cast<uint8_t>(bytes[offset++]);
    }
    if (i > 0 && norm_delta == 0) return bad("norms not ascending at pair ", i);
    norm += norm_delta;
    if (norm > 0xFF) return bad("a norm over 255 in pair ", i);
    entry.frontier.push_back({freq, static_cast<uint8_t>(norm)});
  }
  if (offset != bytes.size()) return bad(bytes.size() - offset, " trailing bytes");
  return entry;
}

Result<std::vector<std::string>> EncodeImpacts(std::span<const uint32_t> doc_ids,
                                               std::span<const uint32_t> frequencies,
                                               std::span<const uint32_t> doc_lengths) {
  const size_t n = doc_ids.size();
  if (frequencies.size() != n || doc_lengths.size() != n) {
    return Status::Invalid("impacts of ", n, " doc ids, ", frequencies.size(), " frequencies and ",
                           doc_lengths.size(), " doc lengths");
  }
  const size_t blocks = NumBlocks(n);
  std::vector<std::string> out;
  auto append = [&](size_t begin, size_t end) -> Status {
    const size_t len = end - begin;
    LANCE_ASSIGN_OR_RAISE(auto entry, MakeImpactEntry(doc_ids.subspan(begin, len), frequencies.subspan(begin, len),
                                                      doc_lengths.subspan(begin, len)));
    LANCE_ASSIGN_OR_RAISE(auto bytes, EncodeImpactEntry(entry));
    out.push_back(std::move(bytes));
    return Status::OK();
  };
  for (size_t k = 0; k < blocks; ++k) LANCE_RETURN_NOT_OK(append(k * kBlock, std::min(n, (k + 1) * kBlock)));
  const size_t group = kImpactLevel1Blocks * kBlock;
  for (size_t begin = 0; begin < n; begin += group) LANCE_RETURN_NOT_OK(append(begin, std::min(n, begin + group)));
  return out;
}

Result<PostingImpacts> DecodeImpacts(std::span<const std::string_view> entries, uint32_t length,
                                     const std::string& context) {
  const size_t level0 = NumBlocks(length);
  const size_t level1 = (level0 + kImpactLevel1Blocks - 1) / kImpactLevel1Blocks;
  if (entries.size() != level0 + level1) {
    return Status::Invalid(context, ": ", entries.size(), " impact entries for ", length, " postings (expected ",
                           level0, " + ", level1, ")");
  }
  PostingImpacts impacts;
  impacts.level0.reserve(level0);
  impacts.level1.reserve(level1);
  for (size_t i = 0; i < entries.size(); ++i) {
    auto decoded = DecodeImpactEntry(entries[i], context);
    if (!decoded.ok()) {
      return Status::Invalid(decoded.status().message(), " (level ", i < level0 ? 0 : 1, " entry ",
                             i < level0 ? i : i - level0, ")");
    }
    (i < level0 ? impacts.level0 : impacts.level1).push_back(std::move(*decoded));
  }
  return impacts;
}

// ---- Scores

std::vector<float> Bm25BlockMaxScores(std::span<const uint32_t> frequencies, std::span<const uint32_t> doc_lengths,
                                      uint64_t num_docs, uint64_t total_tokens) {
  // scorer.rs's constants and idf, in f32 and in the reference's order of
  // operations so that the bits match.
  constexpr float kK1 = 1.2f, kB = 0.75f;
  const size_t n = std::min(frequencies.size(), doc_lengths.size());
  const float docs = static_cast<float>(num_docs);
  const float avgdl = static_cast<float>(total_tokens) / docs;
  const float token_docs = static_cast<float>(n);
  const float idf = std::log((docs - token_docs + 0.5f) / (token_docs + 0.5f) + 1.0f);
  const float idf_scale = idf * (kK1 + 1.0f);
  std::vector<float> scores;
  float block_max = std::numeric_limits<float>::lowest();
  for (size_t i = 0; i < n; ++i) {
    const float doc_norm = kK1 * (1.0f - kB + kB * static_cast<float>(doc_lengths[i]) / avgdl);
    const float freq = static_cast<float>(frequencies[i]);
    block_max = std::max(block_max, freq / (freq + doc_norm));
    if ((i + 1) % kBlock == 0 || i + 1 == n) {
      scores.push_back(block_max * idf_scale);
      block_max = std::numeric_limits<float>::lowest();
    }
  }
  return scores;
}

// ---- A whole row

Result<EncodedPostingRow> EncodePostingRow(const PostingList& list, std::span<const uint32_t> doc_lengths,
                                           bool with_positions) {
  EncodedPostingRow row;
  LANCE_ASSIGN_OR_RAISE(row.posting, EncodePostingBlocks(list.doc_ids, list.frequencies, list.block_max_scores));
  row.max_score = std::numeric_limits<float>::lowest();
  for (float s : list.block_max_scores) row.max_score = std::max(row.max_score, s);
  row.length = static_cast<uint32_t>(list.doc_ids.size());
  LANCE_ASSIGN_OR_RAISE(row.impacts, EncodeImpacts(list.doc_ids, list.frequencies, doc_lengths));
  if (with_positions) {
    LANCE_ASSIGN_OR_RAISE(row.positions, EncodePositions(list.frequencies, list.positions));
  }
  return row;
}

}  // namespace lance::index
