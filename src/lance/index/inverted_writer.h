// Building INVERTED (full-text) indices as pylance 14 builds them, in the
// layout inverted.h reads (index_version 2). Facts from the reference
// (lance-format/lance, rust/lance-index/src/scalar/inverted/): builder.rs
// (InvertedIndexBuilder::update_index, IndexWorker::process_document,
// materialize_string_list, InnerBuilder::write_to / write_metadata),
// index.rs and index/token_set.rs (the files' columns), and the files
// pylance 14.0.2 writes (tests/interop/test_fts_index_build.py compares
// them):
//
// - A document is a row whose value yields at least one token: null
//   values, empty strings and texts whose tokens are all removed (stop
//   words, too long) are left out. A list<string> row is one document, its
//   non-null elements joined by single spaces (an empty element adds a
//   space only after a non-empty text). Documents are numbered in scan
//   order (fragments in manifest order, rows ascending, deleted rows
//   absent); `_rowid` is the dataset's row id (the stable id when it has
//   them, else the row address).
// - Token ids are given in order of first appearance in the token
//   stream; positions are the token's place among the base tokenizer's
//   tokens (removed tokens keep theirs; 0 for the raw and ngram
//   tokenizers). `_num_tokens` counts a document's kept tokens,
//   `total_tokens` (docs file metadata) their sum over the partition.
// - part_N_tokens.lance: one row: the fst map token -> id, the number of
//   tokens (_token_next_id) and the sum of their byte lengths
//   (_token_total_length).
// - part_N_invert.lance: row t is token t's posting list (posting_codec.h),
//   block scores by BM25 over the partition; written in batches of 256 rows
//   (LANCE_FTS_POSTING_BATCH_ROWS).
// - metadata.lance: one row of deleted_fragments (a portable Roaring
//   bitmap, empty on a build) and the schema metadata params (the params
//   JSON), partitions (JSON ids, "[]" when no row has a token: then no
//   partition files at all), token_set_format, posting_tail_codec,
//   format_version, posting_block_size, and with positions
//   positions_layout / positions_codec.
//
// optimize-indices (pylance's InvertedIndexBuilder::update_from_segments):
// the old segments' documents that stay (by fragment; with stable row ids,
// by live row id; rows deleted from a kept fragment stay without stable row
// ids) are merged into new partitions numbered from 0, their scores
// recomputed over the merged documents; the new fragments' documents follow
// in partitions of their own. pylance loads the old partitions in parallel
// and merges them in the order they arrive; lance-cpp merges them by id
// (the same files when there is one).
//
// compaction (pylance's InvertedIndexBuilder::remap, InnerBuilder::remap):
// each old partition is rewritten alone under its id, its documents that
// stay in order with their new row addresses, the tokens they still have in
// the order of their ids, the scores recomputed; an emptied partition is
// still written (no documents, no tokens). pylance remaps the partitions in
// the order it loads them (in parallel); lance-cpp in metadata.lance's.
//
// Memory: one partition is held in memory (its tokens, every posting and
// position, the documents). When its estimate passes the limit the
// partition is written and the next documents go to a new one, as
// pylance's workers flush at their memory limit (2 GiB by default); the
// split points are lance-cpp's own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/type_fwd.h>

#include "lance/dataset.h"
#include "lance/file_reader.h"
#include "lance/full_text.h"
#include "lance/index/scalar_index.h"
#include "lance/index_metadata.h"
#include "lance/io/object_store.h"
#include "lance/status.h"

namespace lance::index {

/// The InvertedIndexDetails message pylance 14 records in the manifest for
/// an index of `params` (protos/index_old.proto of the reference): the
/// tokenizer settings, block_size and posting_format_version 2.
std::string InvertedIndexDetailsProto(const InvertedIndexParams& params);

/// Partition memory limit: LANCE_CPP_FTS_PARTITION_MB (MiB) from the
/// environment, else 2048 MiB (pylance's LANCE_FTS_PARTITION_SIZE default).
uint64_t InvertedPartitionMemoryLimit();

class InvertedIndex;  // inverted.h

/// Writes one INVERTED index into `dir` of `store`.
class InvertedIndexWriter {
 public:
  /// Fails for parameters lance-cpp's tokenizer does not implement and for
  /// posting layouts other than pylance 14's default (block_size 128).
  static Result<std::unique_ptr<InvertedIndexWriter>> Make(const io::ObjectStore& store, std::string dir,
                                                           InvertedIndexParams params, std::string file_version,
                                                           uint64_t memory_limit_bytes);
  ~InvertedIndexWriter();

  /// Appends the documents of partition `partition` of old segment `index`
  /// (read through it, InvertedIndex::ForEachPostingList) that `map` keeps
  /// (with the row ids it gives) and their postings to the partition being
  /// built, as pylance's optimize merges old segments
  /// (InnerBuilder::filter_old_data, merge_from): into an empty partition
  /// the tokens keep their order of ids (emptied ones dropped); into a
  /// non-empty one the new tokens are added in key order. The partition is
  /// written first when it would pass the memory limit with them.
  Status MergeOld(const InvertedIndex& index, size_t partition, const RowIdMap& map);
  /// Writes the partition being built, if any, then partition `partition`
  /// of old segment `index` with the documents `map` keeps (their row ids
  /// mapped) as one partition under the old partition's id, even when none
  /// is kept, as pylance's remap (InnerBuilder::remap) writes it.
  Status RemapPartition(const InvertedIndex& index, size_t partition, const RowIdMap& map);
  /// Writes the partition being built, if it has documents: what follows
  /// starts a new one (pylance writes the merged old documents and the new
  /// rows as separate partitions).
  Status EndPartition();
  /// `batch`: the documents (utf8, large_utf8, or a list / large list of
  /// them) and then their uint64 row ids.
  Status Add(const arrow::RecordBatch& batch);
  /// Writes the last partition and metadata.lance; the files in pylance's
  /// order (each partition's invert, tokens, docs; metadata last).
  Result<std::vector<IndexFile>> Finish();

 private:
  struct Impl;
  explicit InvertedIndexWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// optimize-indices: the files of a new segment in `dir` holding the
/// documents of the `old` segments' partitions (in their order, partitions
/// by id) that `map` keeps, merged into as few partitions as the memory
/// limit allows, then the documents of `rows` (the new fragments'; may be
/// null) in partitions of their own, with the tokenizer parameters of
/// `old`'s first segment, or `params` when `old` is empty. deleted_fragments
/// stays empty, as pylance's merge leaves it.
Result<std::vector<IndexFile>> WriteMergedInvertedIndex(const Dataset& dataset, const io::ObjectStore& store,
                                                        const std::string& dir,
                                                        const std::vector<const IndexMetadata*>& old,
                                                        const InvertedIndexParams& params, const RowIdMap& map,
                                                        arrow::RecordBatchReader* rows,
                                                        const std::string& file_version);

/// compaction (pylance's InvertedIndexBuilder::remap): the files of a copy
/// of `index` in `dir` whose documents have the row ids `map` gives, those
/// it drops left out. Each partition stays one partition under its id
/// (written even when emptied), its documents in their order, the tokens
/// no kept document has dropped and the others in the order of their ids,
/// BM25 scores recomputed over the kept documents. Refused unless `index`
/// is index_version 2, and when it records deleted fragments.
Result<std::vector<IndexFile>> WriteRemappedInvertedIndex(const Dataset& dataset, const io::ObjectStore& store,
                                                          const std::string& dir, const IndexMetadata& index,
                                                          const RowIdMap& map, const std::string& file_version);

/// The tokenizer parameters in `index`'s metadata.lance
/// (InvertedIndex::ReadParams); refused unless `index` is index_version 2,
/// the one layout the merge reads.
Result<InvertedIndexParams> ReadInvertedParams(const Dataset& dataset, const IndexMetadata& index);

}  // namespace lance::index
