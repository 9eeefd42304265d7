// The posting lists of pylance 14's INVERTED (full-text) index: the rows of
// `part_N_invert.lance` (schema metadata format_version "2",
// posting_block_size "128", posting_tail_codec "varint_delta_v1",
// positions_layout "shared_stream_v2", positions_codec "packed_delta_v1").
// Row t is the posting list of token id t; its doc ids are row numbers of
// `part_N_docs.lance` (`_rowid: uint64`, `_num_tokens: uint32`).
//
// Facts from the reference (lance-format/lance,
// rust/lance-index/src/scalar/inverted/): encoding.rs (blocks, tail codec,
// position streams), index/posting_builder.rs (row assembly, block scores,
// impacts per block), impact.rs (impact entries, frontier), index/doc_set.rs
// (quantize_doc_length, block max scores), scorer.rs (BM25); the BitPacker4x
// layout from quickwit-oss/bitpacking 0.9 (src/macros.rs,
// src/bitpacker4x.rs). The bytes pylance 14.0.2 writes
// (tests/fixtures/posting/) are the ground truth.
//
// `_posting: list<large_binary>`, one binary per block of 128 postings:
//   full block:  f32 block max score | u32 first doc id | u8 b1 |
//                BitPacker4x sorted(doc ids, initial = first doc id) b1*16 B |
//                u8 b2 | BitPacker4x(frequencies) b2*16 B
//   last block of length % 128 postings (varint_delta_v1):
//                f32 block max score | varint first doc id |
//                varint doc id deltas... | varint frequencies...
// `_max_score: float` the largest block score, `_length: uint32` postings.
// `_impacts: list<large_binary>`: one entry per block (level 0), then one
//   per 32 blocks (level 1) over all their postings; an entry is
//   varint last doc id | varint n | n pairs of the (frequency, quantized doc
//   length) Pareto frontier, each varint((freq delta - 1) << 1 | explicit)
//   then, when explicit, a byte of norm delta (else the delta is 1).
// `_compressed_position: large_binary` the blocks' position streams back to
//   back, `_position_block_offset: list<uint32>` where each block's starts.
//   A block's stream is the per-doc deltas of its postings' positions (a
//   doc's first position as is): groups of 128 as u8 b | BitPacker4x b*16 B,
//   the rest as varints.
// Not read here: format_version 1 (fixed32 tails, per-doc `_position`
// lists) and 3 (256-posting blocks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lance/status.h"

namespace lance::index {

/// Postings per block, values per BitPacker4x block.
inline constexpr size_t kPostingBlockSize = 128;
/// Level-0 impact entries (blocks) one level-1 entry covers.
inline constexpr size_t kImpactLevel1Blocks = 32;

// ---- BitPacker4x: 128 u32 values as 4 interleaved lanes (value i in lane
// i % 4), each lane's 32 values packed LSB-first into `num_bits` u32 words,
// word k of lane j stored (little-endian) as word 4k + j.

/// Bytes 128 values of `num_bits` bits take packed.
constexpr size_t BitPackedBytes(uint8_t num_bits) { return size_t{num_bits} * 16; }

/// The bits of the largest value (0 when all are 0).
uint8_t BitPackNumBits(std::span<const uint32_t, kPostingBlockSize> values);
/// The bits of the largest wrapping delta of the "sorted" variant: values[0]
/// - initial, then values[i] - values[i - 1].
uint8_t BitPackNumBitsSorted(uint32_t initial, std::span<const uint32_t, kPostingBlockSize> values);

/// Appends BitPackedBytes(num_bits) bytes to `out`. Invalid when num_bits >
/// 32 or a value (a delta, for the sorted variant) has more bits; callers
/// pass what BitPackNumBits / BitPackNumBitsSorted give.
Status BitPack(std::span<const uint32_t, kPostingBlockSize> values, uint8_t num_bits, std::string* out);
Status BitPackSorted(uint32_t initial, std::span<const uint32_t, kPostingBlockSize> values, uint8_t num_bits,
                     std::string* out);

/// Unpacks 128 values from the front of `in`; Invalid when num_bits > 32 or
/// `in` is shorter than BitPackedBytes(num_bits). The sorted variant sums
/// the deltas onto `initial` (wrapping, as the crate does).
Status BitUnpack(std::string_view in, uint8_t num_bits, std::span<uint32_t, kPostingBlockSize> out,
                 const std::string& context);
Status BitUnpackSorted(uint32_t initial, std::string_view in, uint8_t num_bits,
                       std::span<uint32_t, kPostingBlockSize> out, const std::string& context);

// ---- Posting lists

/// One token's posting list.
struct PostingList {
  /// Strictly ascending row numbers of part_N_docs.lance.
  std::vector<uint32_t> doc_ids;
  std::vector<uint32_t> frequencies;
  /// One per block of kPostingBlockSize postings (the last may be partial).
  std::vector<float> block_max_scores;
  /// When the index has positions: those of doc_ids[0] (frequencies[0] of
  /// them, non-decreasing), then those of doc_ids[1], ...; else empty.
  std::vector<uint32_t> positions;
};

/// Decodes a row's `_posting` binaries holding `length` (`_length`)
/// postings: ceil(length / 128) blocks. `context` names the file and row in
/// errors; bad bytes are Invalid, never read past.
Result<PostingList> DecodePostingList(std::span<const std::string_view> blocks, uint32_t length,
                                      const std::string& context);

/// Decodes a row's `_compressed_position` and `_position_block_offset` into
/// list->positions, by list's doc ids and frequencies (from
/// DecodePostingList).
Status DecodePositions(std::string_view stream, std::span<const uint32_t> block_offsets, PostingList* list,
                       const std::string& context);

/// The `_posting` binaries pylance writes for these postings (doc ids
/// strictly ascending, one score per block).
Result<std::vector<std::string>> EncodePostingBlocks(std::span<const uint32_t> doc_ids,
                                                     std::span<const uint32_t> frequencies,
                                                     std::span<const float> block_max_scores);

struct EncodedPositions {
  std::string stream;                    // _compressed_position
  std::vector<uint32_t> block_offsets;  // _position_block_offset
};

/// The position columns pylance writes for postings of these frequencies
/// and `positions` (as PostingList::positions).
Result<EncodedPositions> EncodePositions(std::span<const uint32_t> frequencies, std::span<const uint32_t> positions);

// ---- Impacts

/// pylance's byte code of a document length (Lucene SmallFloat style):
/// exact below 8, else the top four significant bits and the shift.
uint8_t QuantizeDocLength(uint32_t doc_length);
/// The least length of a code's bucket.
uint32_t DequantizeDocLength(uint8_t norm);

struct ImpactPair {
  uint32_t frequency;
  uint8_t norm;  // QuantizeDocLength of the doc length
  bool operator==(const ImpactPair&) const = default;
};

/// What block-max WAND bounds a range of postings by: the last doc id it
/// covers and the Pareto frontier of its (frequency, quantized doc length):
/// pairs no other posting beats on both, frequencies and norms strictly
/// ascending (any doc's BM25 weight is at most one of theirs).
struct ImpactEntry {
  uint32_t doc_up_to = 0;
  std::vector<ImpactPair> frontier;
  bool operator==(const ImpactEntry&) const = default;
};

/// The entry of non-empty postings; `doc_lengths[i]` is `_num_tokens` of
/// doc_ids[i]. Invalid for a frequency of 0.
Result<ImpactEntry> MakeImpactEntry(std::span<const uint32_t> doc_ids, std::span<const uint32_t> frequencies,
                                    std::span<const uint32_t> doc_lengths);
Result<std::string> EncodeImpactEntry(const ImpactEntry& entry);
Result<ImpactEntry> DecodeImpactEntry(std::string_view bytes, const std::string& context);

/// A row's `_impacts`, decoded: one entry per block, one per 32 blocks.
struct PostingImpacts {
  std::vector<ImpactEntry> level0;
  std::vector<ImpactEntry> level1;
};

/// The `_impacts` binaries pylance writes for these postings.
Result<std::vector<std::string>> EncodeImpacts(std::span<const uint32_t> doc_ids,
                                               std::span<const uint32_t> frequencies,
                                               std::span<const uint32_t> doc_lengths);
/// Decodes a row's `_impacts` for a list of `length` postings.
Result<PostingImpacts> DecodeImpacts(std::span<const std::string_view> entries, uint32_t length,
                                     const std::string& context);

// ---- Scores

/// pylance's block max scores (BM25, k1 1.2, b 0.75, in f32 as it computes
/// them) for postings of these frequencies in docs of these lengths, in a
/// partition of `num_docs` docs (part_N_docs.lance rows) of `total_tokens`
/// tokens (its total_tokens metadata).
std::vector<float> Bm25BlockMaxScores(std::span<const uint32_t> frequencies, std::span<const uint32_t> doc_lengths,
                                      uint64_t num_docs, uint64_t total_tokens);

// ---- A whole row

struct EncodedPostingRow {
  std::vector<std::string> posting;  // _posting
  float max_score = 0;               // _max_score
  uint32_t length = 0;               // _length
  std::vector<std::string> impacts;  // _impacts
  EncodedPositions positions;        // when with_positions
};

/// The row pylance writes for `list` (its block scores as given, max_score
/// their largest); `doc_lengths` parallel to list.doc_ids. Positions from
/// list.positions when `with_positions`.
Result<EncodedPostingRow> EncodePostingRow(const PostingList& list, std::span<const uint32_t> doc_lengths,
                                           bool with_positions);

}  // namespace lance::index
