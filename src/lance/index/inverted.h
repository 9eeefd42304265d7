// Reading INVERTED (full-text) indices, in the layouts pylance writes:
//
// index_version 2 (pylance 14; rust/lance-index/src/scalar/inverted/):
//   metadata.lance         schema metadata "params" (the tokenizer's JSON),
//                          "partitions" (JSON ids), "token_set_format"
//                          ("fst"); a deleted_fragments column
//   part_N_tokens.lance    _token_fst_bytes (the token -> id map, fst.h),
//                          _token_next_id, _token_total_length
//   part_N_invert.lance    row t: token t's postings (posting_codec.h);
//                          format_version "2", posting_block_size,
//                          posting_tail_codec "varint_delta_v1", and with
//                          positions positions_layout "shared_stream_v2",
//                          positions_codec "packed_delta_v1"
//   part_N_docs.lance      row d: document d's _rowid and _num_tokens;
//                          "total_tokens"
// the legacy layout (pylance ~0.27, no index_version): tokens.lance
//   (_token, _token_id; "tokenizer" holds the params), invert.lance (flat
//   _rowid, _frequency; "offsets" where each token's postings start),
//   docs.lance as above.
// Anything else (index_version 0/1 files of pylance 0.3x, other codecs or
// token formats) is refused, naming what: a full-text query has no scan to
// fall back on that would give pylance's scores.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lance/dataset.h"
#include "lance/index/fts_tokenizer.h"
#include "lance/index/posting_codec.h"
#include "lance/index_metadata.h"
#include "lance/status.h"

namespace lance::index {

/// How errors name `metadata`'s index: INVERTED index <name> (<uuid>).
std::string InvertedIndexName(const IndexMetadata& metadata);

/// The posting layout of index_version 2 that lance-cpp reads and writes,
/// as the schema metadata keys naming it (on metadata.lance and each
/// part_N_invert.lance): format_version "2", posting_block_size "128",
/// posting_tail_codec "varint_delta_v1", and with positions
/// positions_layout "shared_stream_v2", positions_codec "packed_delta_v1".
/// Open refuses files saying anything else; the writer writes these.
std::vector<std::pair<std::string, std::string>> InvertedPostingLayout(bool with_position);

class InvertedIndex {
 public:
  /// Reads the index's metadata and every partition's token map, documents
  /// and posting list lengths (the postings themselves on demand).
  static Result<std::unique_ptr<InvertedIndex>> Open(const Dataset& dataset, const IndexMetadata& metadata);
  /// The tokenizer parameters alone: metadata.lance (with the checks Open
  /// makes of it), or tokens.lance of the legacy layout.
  static Result<InvertedIndexParams> ReadParams(const Dataset& dataset, const IndexMetadata& metadata);
  /// Open through a process-wide cache of the indices opened last (the
  /// files under an index's uuid never change), as pylance keeps an index
  /// cache: a query does not re-read the documents and the token map.
  static Result<std::shared_ptr<const InvertedIndex>> OpenCached(const Dataset& dataset,
                                                                 const IndexMetadata& metadata);
  ~InvertedIndex();

  /// The entry the index was opened with. Through OpenCached that may be
  /// another version's entry: take what a version decides (fragment_ids)
  /// from the searched dataset's own entry, never from here.
  const IndexMetadata& metadata() const { return metadata_; }
  const InvertedIndexParams& params() const { return params_; }
  const FtsTokenizer& tokenizer() const { return tokenizer_; }
  bool has_positions() const { return params_.with_position; }
  /// Fragments whose documents the index no longer answers for (its
  /// deleted_fragments column).
  const std::vector<uint32_t>& deleted_fragments() const { return deleted_fragments_; }

  size_t num_partitions() const { return partitions_.size(); }
  /// Partition `p`'s id (its files are part_<id>_*; 0 in the legacy
  /// layout). Partitions are in the order metadata.lance lists them.
  uint64_t partition_id(size_t p) const;
  /// Documents and their tokens over all partitions (BM25's N and the sum
  /// behind its average document length).
  uint64_t num_docs() const;
  uint64_t total_tokens() const;
  /// Documents over all partitions holding `token`.
  uint64_t DocFreq(std::string_view token) const;

  /// `token`'s postings in partition `p`; nullopt when it has none. With
  /// `positions`, PostingList::positions too (the index must have them).
  Result<std::optional<PostingList>> Postings(size_t p, std::string_view token, bool positions) const;
  /// Every token of partition `p` with its postings, in order of token ids
  /// (the invert file's rows; not the tokens' key order), as Postings
  /// gives them: the invert file read window by window, each page decoded
  /// once. Posting rows no token names are skipped.
  Status ForEachPostingList(
      size_t p, bool positions,
      const std::function<Status(uint32_t token_id, std::string_view token, PostingList&& list)>& fn) const;
  /// Tokens of partition `p` (in order) starting with `prefix`, or (empty
  /// prefix) all of them; for fuzzy and prefix matching.
  Status ForEachToken(size_t p, std::string_view prefix,
                      const std::function<Status(std::string_view token)>& fn) const;
  /// Document `doc` of partition `p`: the dataset row id and token count.
  uint64_t RowId(size_t p, uint32_t doc) const;
  uint32_t DocLength(size_t p, uint32_t doc) const;
  size_t PartitionDocs(size_t p) const;

 private:
  struct Partition;
  InvertedIndex(IndexMetadata metadata, InvertedIndexParams params, FtsTokenizer tokenizer);

  IndexMetadata metadata_;
  InvertedIndexParams params_;
  FtsTokenizer tokenizer_;
  std::vector<uint32_t> deleted_fragments_;
  std::vector<std::unique_ptr<Partition>> partitions_;
};

}  // namespace lance::index
