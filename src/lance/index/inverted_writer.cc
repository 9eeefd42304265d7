#include "lance/index/inverted_writer.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <unordered_map>

#include <arrow/api.h>

#include "lance/file_writer.h"
#include "lance/index/fst.h"
#include "lance/index/fts_tokenizer.h"
#include "lance/index/inverted.h"
#include "lance/index/posting_codec.h"
#include "lance/schema.h"

namespace lance::index {
namespace {

// pylance 14's LANCE_FTS_POSTING_BATCH_ROWS default: posting rows per write.
constexpr size_t kPostingBatchRows = 256;
// An empty portable Roaring bitmap: cookie 12346, no containers.
constexpr char kEmptyRoaring[] = {0x3A, 0x30, 0, 0, 0, 0, 0, 0};

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutTag(uint32_t field, uint32_t wire, std::string* out) { PutVarint(uint64_t{field} << 3 | wire, out); }

void PutString(uint32_t field, const std::string& s, std::string* out) {
  PutTag(field, 2, out);
  PutVarint(s.size(), out);
  out->append(s);
}

void PutUint(uint32_t field, uint64_t v, std::string* out) {
  PutTag(field, 0, out);
  PutVarint(v, out);
}

// One Lance index file being written, as pylance's index store writes it:
// a write per batch, schema metadata given at the end.
class IndexFileOut {
 public:
  static Result<std::unique_ptr<IndexFileOut>> Open(const io::ObjectStore& store, const std::string& dir,
                                                    const std::string& name, std::shared_ptr<arrow::Schema> schema,
                                                    const std::string& file_version) {
    std::unique_ptr<IndexFileOut> f(new IndexFileOut);
    f->store_ = &store;
    f->path_ = dir + "/" + name;
    f->name_ = name;
    f->schema_ = std::move(schema);
    LANCE_ASSIGN_OR_RAISE(auto lance_schema, Schema::FromArrow(*f->schema_));
    LANCE_ASSIGN_OR_RAISE(auto out, store.OpenOutputStream(f->path_));
    FileWriterOptions options;
    options.version = file_version;
    LANCE_ASSIGN_OR_RAISE(f->writer_,
                          FileWriter::Open(std::move(out), store.FullPath(f->path_), lance_schema, options));
    return f;
  }
  const std::shared_ptr<arrow::Schema>& schema() const { return schema_; }
  Status Write(const arrow::ArrayVector& columns) {
    const int64_t rows = columns.empty() ? 0 : columns[0]->length();
    return writer_->Write(*arrow::RecordBatch::Make(schema_, rows, columns));
  }
  Result<IndexFile> Finish(const std::vector<std::pair<std::string, std::string>>& metadata) {
    for (const auto& [k, v] : metadata) LANCE_RETURN_NOT_OK(writer_->AddSchemaMetadata(k, v));
    LANCE_RETURN_NOT_OK(writer_->Finish().status());
    LANCE_ASSIGN_OR_RAISE(int64_t size, store_->Size(path_));
    return IndexFile{name_, static_cast<uint64_t>(size)};
  }

 private:
  IndexFileOut() = default;
  const io::ObjectStore* store_ = nullptr;
  std::string path_, name_;
  std::shared_ptr<arrow::Schema> schema_;
  std::unique_ptr<FileWriter> writer_;
};

std::shared_ptr<arrow::DataType> BinaryList() { return arrow::list(arrow::field("item", arrow::large_binary())); }

std::shared_ptr<arrow::Schema> InvertSchema(bool with_position) {
  arrow::FieldVector fields = {arrow::field("_posting", BinaryList(), false),
                               arrow::field("_max_score", arrow::float32(), false),
                               arrow::field("_length", arrow::uint32(), false),
                               arrow::field("_impacts", BinaryList(), false)};
  if (with_position) {
    fields.push_back(arrow::field("_compressed_position", arrow::large_binary(), false));
    fields.push_back(
        arrow::field("_position_block_offset", arrow::list(arrow::field("item", arrow::uint32())), false));
  }
  return arrow::schema(fields);
}

}  // namespace

std::string InvertedIndexDetailsProto(const InvertedIndexParams& p) {
  // proto3: scalars at their defaults are not written; the optional ones
  // (base_tokenizer, max_token_length, block_size, posting_format_version)
  // are when set. pylance records the language as its JSON text.
  std::string out;
  PutString(1, p.base_tokenizer, &out);
  PutString(2, "\"" + p.language + "\"", &out);
  if (p.with_position) PutUint(3, 1, &out);
  if (p.max_token_length) PutUint(4, *p.max_token_length, &out);
  if (p.lower_case) PutUint(5, 1, &out);
  if (p.stem) PutUint(6, 1, &out);
  if (p.remove_stop_words) PutUint(7, 1, &out);
  if (p.ascii_folding) PutUint(8, 1, &out);
  if (p.min_ngram_length != 0) PutUint(9, p.min_ngram_length, &out);
  if (p.max_ngram_length != 0) PutUint(10, p.max_ngram_length, &out);
  if (p.prefix_only) PutUint(11, 1, &out);
  PutUint(12, p.block_size, &out);
  PutUint(15, 2, &out);  // posting_format_version: V2
  return out;
}

uint64_t InvertedPartitionMemoryLimit() {
  if (const char* env = std::getenv("LANCE_CPP_FTS_PARTITION_MB")) {
    const long long mb = std::atoll(env);
    if (mb > 0) return static_cast<uint64_t>(mb) << 20;
  }
  return uint64_t{2048} << 20;
}

struct InvertedIndexWriter::Impl {
  const io::ObjectStore* store = nullptr;
  std::string dir;
  InvertedIndexParams params;
  std::string file_version;
  uint64_t memory_limit = 0;
  std::optional<FtsTokenizer> tokenizer;

  std::vector<uint64_t> partitions;  // written, in order
  std::vector<IndexFile> files;
  uint64_t next_partition = 0;

  // The partition being built.
  struct Posting {
    std::vector<uint32_t> docs, freqs, positions;
  };
  std::unordered_map<std::string, uint32_t> token_ids;
  std::vector<const std::string*> tokens;  // by id (keys of token_ids)
  std::vector<Posting> postings;           // by token id
  std::vector<uint64_t> row_ids;
  std::vector<uint32_t> num_tokens;
  uint64_t memory = 0;

  // What each base token became (a token id, or kDropped by a filter):
  // text repeats its words, and the filters are a pure function of one.
  // Ids are the partition's, so it is cleared with it.
  static constexpr uint32_t kDropped = std::numeric_limits<uint32_t>::max();
  struct ViewHash {
    using is_transparent = void;
    size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
  };
  std::unordered_map<std::string, uint32_t, ViewHash, std::equal_to<>> base_ids;

  // Per-document scratch.
  std::vector<std::pair<std::string_view, uint32_t>> base_tokens;  // (base token, position)
  std::string joined;

  uint32_t TokenId(std::string_view base) {
    if (auto hit = base_ids.find(base); hit != base_ids.end()) return hit->second;
    std::string token(base);
    uint32_t id = kDropped;
    if (tokenizer->Filter(&token)) {
      auto [it, added] = token_ids.try_emplace(std::move(token), static_cast<uint32_t>(tokens.size()));
      if (added) {
        tokens.push_back(&it->first);
        postings.emplace_back();
        memory += it->first.size() + 96 + sizeof(Posting);
      }
      id = it->second;
    }
    if (base_ids.size() >= (1u << 22)) base_ids.clear();  // a bound for text of unbounded vocabulary
    base_ids.emplace(std::string(base), id);
    return id;
  }

  Status AddDocument(uint64_t row_id, std::string_view text) {
    if (row_ids.size() == std::numeric_limits<uint32_t>::max()) LANCE_RETURN_NOT_OK(Flush());
    base_tokens.clear();
    tokenizer->Split(text, &base_tokens);
    const auto doc = static_cast<uint32_t>(row_ids.size());
    const bool with_position = params.with_position;
    // Tokens come in position order, so each token's occurrences in this
    // document append to its posting together.
    uint32_t count = 0;
    for (const auto& [base, position] : base_tokens) {
      const uint32_t id = TokenId(base);
      if (id == kDropped) continue;
      ++count;
      Posting& p = postings[id];
      if (p.docs.empty() || p.docs.back() != doc) {
        p.docs.push_back(doc);
        p.freqs.push_back(1);
        memory += 8;
      } else {
        ++p.freqs.back();
      }
      if (with_position) {
        p.positions.push_back(position);
        memory += 4;
      }
    }
    if (count == 0) return Status::OK();  // no document, as pylance
    row_ids.push_back(row_id);
    num_tokens.push_back(count);
    memory += 12;
    if (memory >= memory_limit) LANCE_RETURN_NOT_OK(Flush());
    return Status::OK();
  }

  Status MergeOld(const InvertedIndex& index, size_t p, const RowIdMap& map) {
    const bool with_position = params.with_position;
    // The documents `map` keeps, renumbered in order.
    const size_t num_old = index.PartitionDocs(p);
    constexpr uint32_t kGone = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> rank(num_old, kGone);
    std::vector<uint64_t> kept_ids;
    std::vector<uint32_t> kept_lengths;
    for (size_t d = 0; d < num_old; ++d) {
      if (auto to = map(index.RowId(p, static_cast<uint32_t>(d)))) {
        rank[d] = static_cast<uint32_t>(kept_ids.size());
        kept_ids.push_back(*to);
        kept_lengths.push_back(index.DocLength(p, static_cast<uint32_t>(d)));
      }
    }
    if (kept_ids.empty()) return Status::OK();  // nothing of it stays

    // Every token's posting list (by old id), restricted to the kept
    // documents (renumbered).
    struct OldList {
      std::string token;
      Posting posting;
    };
    std::vector<OldList> lists;
    size_t list_bytes = 0, token_bytes = 0;
    LANCE_RETURN_NOT_OK(index.ForEachPostingList(
        p, with_position, [&](uint32_t, std::string_view token, PostingList&& list) -> Status {
          OldList& old = lists.emplace_back();
          old.token = token;
          Posting& out = old.posting;
          size_t pos = 0;
          for (size_t i = 0; i < list.doc_ids.size(); ++i) {
            const uint32_t d = list.doc_ids[i], f = list.frequencies[i];
            if (rank[d] != kGone) {
              out.docs.push_back(rank[d]);
              out.freqs.push_back(f);
              if (with_position) {
                out.positions.insert(out.positions.end(), list.positions.begin() + pos,
                                     list.positions.begin() + pos + f);
              }
            }
            pos += with_position ? f : 0;
          }
          list_bytes += 8 * out.docs.size() + 4 * out.positions.size();
          token_bytes += token.size() + 96 + sizeof(Posting);
          return Status::OK();
        }));

    const size_t adds = list_bytes + token_bytes + 12 * kept_ids.size();
    if (!row_ids.empty() && memory + adds >= memory_limit) LANCE_RETURN_NOT_OK(Flush());
    if (row_ids.size() + kept_ids.size() > std::numeric_limits<uint32_t>::max()) LANCE_RETURN_NOT_OK(Flush());

    // Into an empty partition the old ids' order; else new tokens by key.
    std::vector<uint32_t> order(lists.size());
    std::iota(order.begin(), order.end(), 0u);
    if (!tokens.empty()) {
      std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return lists[a].token < lists[b].token; });
    }
    const auto offset = static_cast<uint32_t>(row_ids.size());
    for (uint32_t k : order) {
      Posting& from = lists[k].posting;
      if (from.docs.empty()) continue;  // no kept document has it: dropped
      auto [it, added] = token_ids.try_emplace(std::move(lists[k].token), static_cast<uint32_t>(tokens.size()));
      if (added) {
        tokens.push_back(&it->first);
        postings.emplace_back();
        memory += it->first.size() + 96 + sizeof(Posting);
      }
      Posting& to = postings[it->second];
      for (uint32_t d : from.docs) to.docs.push_back(offset + d);
      to.freqs.insert(to.freqs.end(), from.freqs.begin(), from.freqs.end());
      to.positions.insert(to.positions.end(), from.positions.begin(), from.positions.end());
      memory += 8 * from.docs.size() + 4 * from.positions.size();
      from = Posting();
    }
    row_ids.insert(row_ids.end(), kept_ids.begin(), kept_ids.end());
    num_tokens.insert(num_tokens.end(), kept_lengths.begin(), kept_lengths.end());
    memory += 12 * kept_ids.size();
    return Status::OK();
  }

  // Writes the partition being built (if it has documents) and starts
  // the next.
  Status Flush() {
    if (row_ids.empty()) return Status::OK();
    return WritePartition(next_partition++);
  }

  // A remap of old partition `p` (pylance's InnerBuilder::remap): the
  // documents `map` keeps, in their order, and the tokens they have, in
  // the order of their old ids; written under the old id even when
  // emptied, as pylance writes it.
  Status RemapPartition(const InvertedIndex& index, size_t p, const RowIdMap& map) {
    LANCE_RETURN_NOT_OK(Flush());
    LANCE_RETURN_NOT_OK(MergeOld(index, p, map));  // into an empty partition: never split
    return WritePartition(index.partition_id(p));
  }

  // Writes the partition being built as part_<id>_* and starts the next.
  Status WritePartition(uint64_t id) {
    const std::string prefix = "part_" + std::to_string(id) + "_";
    const bool with_position = params.with_position;
    const uint64_t num_docs = row_ids.size();
    const uint64_t total_tokens = std::accumulate(num_tokens.begin(), num_tokens.end(), uint64_t{0});

    // part_N_invert.lance, a batch per kPostingBatchRows tokens.
    LANCE_ASSIGN_OR_RAISE(auto invert, IndexFileOut::Open(*store, dir, prefix + "invert.lance",
                                                          InvertSchema(with_position), file_version));
    auto pool = arrow::default_memory_pool();
    auto posting_values = std::make_shared<arrow::LargeBinaryBuilder>(pool);
    auto impact_values = std::make_shared<arrow::LargeBinaryBuilder>(pool);
    auto offset_values = std::make_shared<arrow::UInt32Builder>(pool);
    arrow::ListBuilder posting_b(pool, posting_values, BinaryList());
    arrow::ListBuilder impact_b(pool, impact_values, BinaryList());
    arrow::ListBuilder offset_b(pool, offset_values, arrow::list(arrow::field("item", arrow::uint32())));
    arrow::FloatBuilder max_b(pool);
    arrow::UInt32Builder length_b(pool);
    arrow::LargeBinaryBuilder stream_b(pool);
    std::vector<uint32_t> lengths;
    auto write_batch = [&]() -> Status {
      arrow::ArrayVector cols(4 + (with_position ? 2 : 0));
      LANCE_RETURN_NOT_OK(posting_b.Finish(&cols[0]));
      LANCE_RETURN_NOT_OK(max_b.Finish(&cols[1]));
      LANCE_RETURN_NOT_OK(length_b.Finish(&cols[2]));
      LANCE_RETURN_NOT_OK(impact_b.Finish(&cols[3]));
      if (with_position) {
        LANCE_RETURN_NOT_OK(stream_b.Finish(&cols[4]));
        LANCE_RETURN_NOT_OK(offset_b.Finish(&cols[5]));
      }
      return invert->Write(cols);
    };
    size_t in_batch = 0;
    for (size_t t = 0; t < postings.size(); ++t) {
      Posting& p = postings[t];
      PostingList list;
      list.doc_ids = std::move(p.docs);
      list.frequencies = std::move(p.freqs);
      list.positions = std::move(p.positions);
      p = Posting();
      lengths.resize(list.doc_ids.size());
      for (size_t i = 0; i < list.doc_ids.size(); ++i) lengths[i] = num_tokens[list.doc_ids[i]];
      list.block_max_scores = Bm25BlockMaxScores(list.frequencies, lengths, num_docs, total_tokens);
      LANCE_ASSIGN_OR_RAISE(auto row, EncodePostingRow(list, lengths, with_position));
      LANCE_RETURN_NOT_OK(posting_b.Append());
      for (const auto& b : row.posting) LANCE_RETURN_NOT_OK(posting_values->Append(b));
      LANCE_RETURN_NOT_OK(max_b.Append(row.max_score));
      LANCE_RETURN_NOT_OK(length_b.Append(row.length));
      LANCE_RETURN_NOT_OK(impact_b.Append());
      for (const auto& b : row.impacts) LANCE_RETURN_NOT_OK(impact_values->Append(b));
      if (with_position) {
        LANCE_RETURN_NOT_OK(stream_b.Append(row.positions.stream));
        LANCE_RETURN_NOT_OK(offset_b.Append());
        LANCE_RETURN_NOT_OK(offset_values->AppendValues(row.positions.block_offsets));
      }
      if (++in_batch == kPostingBatchRows) {
        LANCE_RETURN_NOT_OK(write_batch());
        in_batch = 0;
      }
    }
    if (in_batch > 0) LANCE_RETURN_NOT_OK(write_batch());
    LANCE_ASSIGN_OR_RAISE(auto invert_file, invert->Finish(InvertedPostingLayout(with_position)));

    // part_N_tokens.lance: the token map in key order.
    std::vector<uint32_t> order(tokens.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return *tokens[a] < *tokens[b]; });
    FstMapBuilder fst;
    uint64_t token_bytes = 0;
    for (uint32_t t : order) {
      LANCE_RETURN_NOT_OK(fst.Insert(*tokens[t], t));
      token_bytes += tokens[t]->size();
    }
    LANCE_ASSIGN_OR_RAISE(std::string fst_bytes, fst.Finish());
    auto token_schema = arrow::schema({arrow::field("_token_fst_bytes", arrow::large_binary(), false),
                                       arrow::field("_token_next_id", arrow::uint32(), false),
                                       arrow::field("_token_total_length", arrow::uint64(), false)});
    LANCE_ASSIGN_OR_RAISE(auto tokens_out,
                          IndexFileOut::Open(*store, dir, prefix + "tokens.lance", token_schema, file_version));
    {
      arrow::LargeBinaryBuilder fb;
      arrow::UInt32Builder nb;
      arrow::UInt64Builder lb;
      LANCE_RETURN_NOT_OK(fb.Append(fst_bytes));
      LANCE_RETURN_NOT_OK(nb.Append(static_cast<uint32_t>(tokens.size())));
      LANCE_RETURN_NOT_OK(lb.Append(token_bytes));
      arrow::ArrayVector cols(3);
      LANCE_RETURN_NOT_OK(fb.Finish(&cols[0]));
      LANCE_RETURN_NOT_OK(nb.Finish(&cols[1]));
      LANCE_RETURN_NOT_OK(lb.Finish(&cols[2]));
      LANCE_RETURN_NOT_OK(tokens_out->Write(cols));
    }
    LANCE_ASSIGN_OR_RAISE(auto tokens_file, tokens_out->Finish({}));

    // part_N_docs.lance: one batch of every document.
    auto doc_schema = arrow::schema(
        {arrow::field("_rowid", arrow::uint64(), false), arrow::field("_num_tokens", arrow::uint32(), false)});
    LANCE_ASSIGN_OR_RAISE(auto docs_out,
                          IndexFileOut::Open(*store, dir, prefix + "docs.lance", doc_schema, file_version));
    {
      arrow::UInt64Builder rb;
      arrow::UInt32Builder nb;
      LANCE_RETURN_NOT_OK(rb.AppendValues(row_ids));
      LANCE_RETURN_NOT_OK(nb.AppendValues(num_tokens));
      arrow::ArrayVector cols(2);
      LANCE_RETURN_NOT_OK(rb.Finish(&cols[0]));
      LANCE_RETURN_NOT_OK(nb.Finish(&cols[1]));
      LANCE_RETURN_NOT_OK(docs_out->Write(cols));
    }
    LANCE_ASSIGN_OR_RAISE(auto docs_file, docs_out->Finish({{"total_tokens", std::to_string(total_tokens)}}));

    files.push_back(invert_file);
    files.push_back(tokens_file);
    files.push_back(docs_file);
    partitions.push_back(id);

    token_ids.clear();
    base_ids.clear();
    tokens.clear();
    postings.clear();
    postings.shrink_to_fit();
    row_ids.clear();
    row_ids.shrink_to_fit();
    num_tokens.clear();
    num_tokens.shrink_to_fit();
    memory = 0;
    return Status::OK();
  }
};

InvertedIndexWriter::InvertedIndexWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
InvertedIndexWriter::~InvertedIndexWriter() = default;

Result<std::unique_ptr<InvertedIndexWriter>> InvertedIndexWriter::Make(const io::ObjectStore& store, std::string dir,
                                                                       InvertedIndexParams params,
                                                                       std::string file_version,
                                                                       uint64_t memory_limit_bytes) {
  if (params.block_size != kPostingBlockSize) {
    return Status::NotImplemented("INVERTED index with block_size ", params.block_size,
                                  " (pylance's posting format 3) is not implemented in lance-cpp (block_size 128 is)");
  }
  LANCE_ASSIGN_OR_RAISE(auto tokenizer, FtsTokenizer::Make(params, "INVERTED index"));
  auto impl = std::make_unique<Impl>();
  impl->store = &store;
  impl->dir = std::move(dir);
  impl->params = std::move(params);
  impl->file_version = std::move(file_version);
  impl->memory_limit = std::max<uint64_t>(memory_limit_bytes, 1);
  impl->tokenizer.emplace(std::move(tokenizer));
  return std::unique_ptr<InvertedIndexWriter>(new InvertedIndexWriter(std::move(impl)));
}

Status InvertedIndexWriter::MergeOld(const InvertedIndex& index, size_t partition, const RowIdMap& map) {
  return impl_->MergeOld(index, partition, map);
}

Status InvertedIndexWriter::RemapPartition(const InvertedIndex& index, size_t partition, const RowIdMap& map) {
  return impl_->RemapPartition(index, partition, map);
}

Status InvertedIndexWriter::EndPartition() { return impl_->Flush(); }

Status InvertedIndexWriter::Add(const arrow::RecordBatch& batch) {
  Impl& m = *impl_;
  if (batch.num_columns() != 2 || batch.column(1)->type_id() != arrow::Type::UINT64) {
    return Status::Invalid("INVERTED index input: expected documents and uint64 row ids");
  }
  const auto& ids = static_cast<const arrow::UInt64Array&>(*batch.column(1));
  const arrow::Array& values = *batch.column(0);
  auto text_at = [](const arrow::Array& a, int64_t i) -> std::string_view {
    return a.type_id() == arrow::Type::LARGE_STRING ? static_cast<const arrow::LargeStringArray&>(a).GetView(i)
                                                     : static_cast<const arrow::StringArray&>(a).GetView(i);
  };
  auto is_text = [](const arrow::DataType& t) {
    return t.id() == arrow::Type::STRING || t.id() == arrow::Type::LARGE_STRING;
  };
  if (is_text(*values.type())) {
    for (int64_t i = 0; i < batch.num_rows(); ++i) {
      if (values.IsNull(i)) continue;
      LANCE_RETURN_NOT_OK(m.AddDocument(ids.Value(i), text_at(values, i)));
    }
    return Status::OK();
  }
  const bool large = values.type_id() == arrow::Type::LARGE_LIST;
  if ((values.type_id() != arrow::Type::LIST && !large) ||
      !is_text(*static_cast<const arrow::BaseListType&>(*values.type()).value_type())) {
    return Status::Invalid("INVERTED index input: expected strings or lists of strings, got ",
                           values.type()->ToString());
  }
  const arrow::Array& elements = large ? *static_cast<const arrow::LargeListArray&>(values).values()
                                       : *static_cast<const arrow::ListArray&>(values).values();
  for (int64_t i = 0; i < batch.num_rows(); ++i) {
    if (values.IsNull(i)) continue;
    const int64_t begin = large ? static_cast<const arrow::LargeListArray&>(values).value_offset(i)
                                : static_cast<const arrow::ListArray&>(values).value_offset(i);
    const int64_t end = large ? static_cast<const arrow::LargeListArray&>(values).value_offset(i + 1)
                              : static_cast<const arrow::ListArray&>(values).value_offset(i + 1);
    // One document: the non-null elements, a space after each non-empty
    // prefix (the reference's materialize_string_list).
    m.joined.clear();
    for (int64_t k = begin; k < end; ++k) {
      if (elements.IsNull(k)) continue;
      if (!m.joined.empty()) m.joined.push_back(' ');
      m.joined.append(text_at(elements, k));
    }
    LANCE_RETURN_NOT_OK(m.AddDocument(ids.Value(i), m.joined));
  }
  return Status::OK();
}

Result<std::vector<IndexFile>> InvertedIndexWriter::Finish() {
  Impl& m = *impl_;
  LANCE_RETURN_NOT_OK(m.Flush());
  std::string ids_json = "[";
  for (size_t i = 0; i < m.partitions.size(); ++i) ids_json += (i ? "," : "") + std::to_string(m.partitions[i]);
  ids_json += "]";

  auto schema = arrow::schema({arrow::field("deleted_fragments", arrow::binary(), false)});
  LANCE_ASSIGN_OR_RAISE(auto out, IndexFileOut::Open(*m.store, m.dir, "metadata.lance", schema, m.file_version));
  arrow::BinaryBuilder b;
  // No fragment is recorded as deleted: pylance's build and merge record
  // none (the merge drops the documents instead).
  LANCE_RETURN_NOT_OK(b.Append(std::string_view(kEmptyRoaring, sizeof(kEmptyRoaring))));
  arrow::ArrayVector cols(1);
  LANCE_RETURN_NOT_OK(b.Finish(&cols[0]));
  LANCE_RETURN_NOT_OK(out->Write(cols));
  std::vector<std::pair<std::string, std::string>> metadata = {{"partitions", ids_json},
                                                               {"params", m.params.ToJson()},
                                                               {"token_set_format", "fst"}};
  for (auto& kv : InvertedPostingLayout(m.params.with_position)) metadata.push_back(std::move(kv));
  LANCE_ASSIGN_OR_RAISE(auto meta_file, out->Finish(metadata));
  std::vector<IndexFile> files = m.files;
  files.push_back(meta_file);
  return files;
}

Result<std::vector<IndexFile>> WriteRemappedInvertedIndex(const Dataset& dataset, const io::ObjectStore& store,
                                                          const std::string& dir, const IndexMetadata& index,
                                                          const RowIdMap& map, const std::string& file_version) {
  LANCE_ASSIGN_OR_RAISE(auto params, ReadInvertedParams(dataset, index));
  LANCE_ASSIGN_OR_RAISE(auto old, InvertedIndex::Open(dataset, index));
  if (!old->deleted_fragments().empty()) {
    // pylance carries them into the remapped metadata.lance; lance-cpp's
    // writer records none.
    return Status::NotImplemented(InvertedIndexName(index),
                                  ": records deleted fragments, which lance-cpp does not carry through a remap");
  }
  // No memory limit: a remapped partition stays one partition.
  LANCE_ASSIGN_OR_RAISE(auto writer, InvertedIndexWriter::Make(store, dir, std::move(params), file_version,
                                                               std::numeric_limits<uint64_t>::max()));
  for (size_t p = 0; p < old->num_partitions(); ++p) {
    LANCE_RETURN_NOT_OK(writer->RemapPartition(*old, p, map));
  }
  return writer->Finish();
}

Result<InvertedIndexParams> ReadInvertedParams(const Dataset& dataset, const IndexMetadata& index) {
  if (index.index_version.value_or(-1) != 2) {
    return Status::NotImplemented(InvertedIndexName(index), ": index_version ",
                                  index.index_version ? std::to_string(*index.index_version) : "(none)",
                                  " cannot be merged by lance-cpp (version 2, as pylance 14 writes, can)");
  }
  return InvertedIndex::ReadParams(dataset, index);
}

Result<std::vector<IndexFile>> WriteMergedInvertedIndex(const Dataset& dataset, const io::ObjectStore& store,
                                                        const std::string& dir,
                                                        const std::vector<const IndexMetadata*>& old,
                                                        const InvertedIndexParams& params, const RowIdMap& map,
                                                        arrow::RecordBatchReader* rows,
                                                        const std::string& file_version) {
  std::vector<InvertedIndexParams> old_params;
  for (const auto* index : old) {
    LANCE_ASSIGN_OR_RAISE(auto p, ReadInvertedParams(dataset, *index));
    old_params.push_back(std::move(p));
  }
  const InvertedIndexParams& use = old_params.empty() ? params : old_params.front();
  for (size_t k = 1; k < old_params.size(); ++k) {
    if (old_params[k].ToJson() != use.ToJson()) {
      return Status::NotImplemented(InvertedIndexName(*old[k]),
                                    ": segments with different tokenizer parameters cannot be merged by lance-cpp");
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto writer,
                        InvertedIndexWriter::Make(store, dir, use, file_version, InvertedPartitionMemoryLimit()));
  for (const auto* index : old) {
    LANCE_ASSIGN_OR_RAISE(auto segment, InvertedIndex::Open(dataset, *index));
    // Partitions by id.
    std::vector<size_t> parts(segment->num_partitions());
    std::iota(parts.begin(), parts.end(), size_t{0});
    std::stable_sort(parts.begin(), parts.end(),
                     [&](size_t a, size_t b) { return segment->partition_id(a) < segment->partition_id(b); });
    for (size_t p : parts) LANCE_RETURN_NOT_OK(writer->MergeOld(*segment, p, map));
  }
  LANCE_RETURN_NOT_OK(writer->EndPartition());
  while (rows != nullptr) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(rows->ReadNext(&batch));
    if (!batch) break;
    LANCE_RETURN_NOT_OK(writer->Add(*batch));
  }
  return writer->Finish();
}

}  // namespace lance::index
