#include "lance/index/inverted.h"

#include <algorithm>
#include <charconv>
#include <unordered_map>

#include <arrow/api.h>
#include <nlohmann/json.hpp>

#include "lance/file_reader.h"
#include "lance/index/fst.h"
#include "lance/index/index_cache.h"
#include "lance/index/scalar_index.h"
#include "lance/table/roaring_portable.h"

namespace lance::index {
namespace {

// The INVERTED layout lance-cpp reads besides the legacy one.
constexpr int32_t kFstIndexVersion = 2;

std::string MetaOr(const FileReader& file, const std::string& key, const std::string& def = "") {
  const auto& meta = file.schema().metadata;
  auto it = meta.find(key);
  return it == meta.end() ? def : it->second;
}

Result<uint64_t> ParseCount(const std::string& text, const std::string& what) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return Status::Invalid(what, " is not a count: '", text, "'");
  return v;
}

template <typename ArrayT>
Result<std::shared_ptr<ArrayT>> Column(const arrow::Table& table, const std::string& name, const std::string& ctx) {
  auto col = table.GetColumnByName(name);
  if (!col) return Status::Invalid(ctx, ": no column ", name);
  LANCE_ASSIGN_OR_RAISE(auto array, arrow::Concatenate(col->chunks()));
  auto typed = std::dynamic_pointer_cast<ArrayT>(array);
  if (!typed) return Status::Invalid(ctx, ": column ", name, " has type ", array->type()->ToString());
  if (typed->null_count() > 0) return Status::Invalid(ctx, ": column ", name, " holds nulls");
  return typed;
}

Result<std::shared_ptr<FileReader>> OpenPart(const Dataset& dataset, const IndexMetadata& metadata,
                                             const std::string& name) {
  LANCE_ASSIGN_OR_RAISE(auto file, OpenIndexFile(dataset, metadata, name));
  if (!file) {
    return Status::NotImplemented(InvertedIndexName(metadata), ": ", name,
                                  " is a legacy (0.1) Lance file, which lance-cpp does not read for INVERTED indices");
  }
  return file;
}

// The layout keys of an index file must be InvertedPostingLayout's.
Status CheckPostingLayout(const FileReader& file, bool with_position, const std::string& ctx) {
  for (const auto& [key, value] : InvertedPostingLayout(with_position)) {
    const std::string got = MetaOr(file, key, "(none)");
    if (got != value) {
      return Status::NotImplemented(ctx, ": ", key, " '", got, "' is not supported by lance-cpp (", value, ")");
    }
  }
  return Status::OK();
}

// The legacy layout's parameters: tokens.lance's "tokenizer".
Result<InvertedIndexParams> LegacyParams(const FileReader& tokens, const std::string& what) {
  const std::string json = MetaOr(tokens, "tokenizer");
  if (json.empty()) return Status::Invalid(what, ": tokens.lance has no tokenizer parameters");
  return InvertedIndexParams::FromJson(json, what + " tokens.lance");
}

// What metadata.lance of an index_version 2 index records.
struct Header {
  InvertedIndexParams params;
  std::vector<uint32_t> deleted_fragments;  // ascending
  std::vector<uint64_t> partitions;         // as listed
};

Result<Header> ReadHeader(const Dataset& dataset, const IndexMetadata& metadata) {
  if (*metadata.index_version != kFstIndexVersion) {
    return Status::NotImplemented(InvertedIndexName(metadata), ": index_version ", *metadata.index_version,
                                  " is not supported by lance-cpp (it reads version 2, as pylance 14 writes, and "
                                  "the legacy layout)");
  }
  LANCE_ASSIGN_OR_RAISE(auto file, OpenPart(dataset, metadata, "metadata.lance"));
  const std::string ctx = InvertedIndexName(metadata) + " metadata.lance";
  Header header;
  LANCE_ASSIGN_OR_RAISE(header.params, InvertedIndexParams::FromJson(MetaOr(*file, "params"), ctx));
  const std::string token_format = MetaOr(*file, "token_set_format", "arrow");
  if (token_format != "fst") {
    return Status::NotImplemented(ctx, ": token set format '", token_format, "' is not supported by lance-cpp (fst)");
  }
  LANCE_RETURN_NOT_OK(CheckPostingLayout(*file, header.params.with_position, ctx));
  auto partitions = nlohmann::json::parse(MetaOr(*file, "partitions"), nullptr, false);
  if (!partitions.is_array()) return Status::Invalid(ctx, ": partitions are not a JSON array");
  for (const auto& id : partitions) {
    if (!id.is_number_unsigned()) return Status::Invalid(ctx, ": partition id ", id.dump(), " is not a count");
    header.partitions.push_back(id.get<uint64_t>());
  }
  LANCE_ASSIGN_OR_RAISE(auto fragments, file->ReadAll({"deleted_fragments"}));
  auto col = fragments->GetColumnByName("deleted_fragments");
  if (!col) return Status::Invalid(ctx, ": no deleted_fragments column");
  for (const auto& chunk : col->chunks()) {
    auto bin = std::dynamic_pointer_cast<arrow::BinaryArray>(chunk);
    if (!bin) return Status::Invalid(ctx, ": deleted_fragments is not binary");
    for (int64_t i = 0; i < bin->length(); ++i) {
      if (bin->IsNull(i)) continue;
      LANCE_ASSIGN_OR_RAISE(auto frags, table::DecodePortableRoaring(bin->GetView(i), ctx));
      header.deleted_fragments.insert(header.deleted_fragments.end(), frags.begin(), frags.end());
    }
  }
  std::sort(header.deleted_fragments.begin(), header.deleted_fragments.end());
  return header;
}

// The invert file's columns a posting list is decoded from.
std::vector<std::string> PostingColumns(bool positions) {
  std::vector<std::string> columns = {"_posting"};
  if (positions) {
    columns.push_back("_compressed_position");
    columns.push_back("_position_block_offset");
  }
  return columns;
}

// Rows of an invert file read with PostingColumns, each decoded as one
// posting list.
struct PostingRows {
  std::shared_ptr<arrow::ListArray> posting;
  std::shared_ptr<arrow::LargeBinaryArray> stream;  // with positions
  std::shared_ptr<arrow::ListArray> offsets;        // with positions

  static Result<PostingRows> From(const arrow::Table& rows, bool positions, const std::string& ctx) {
    PostingRows r;
    LANCE_ASSIGN_OR_RAISE(r.posting, Column<arrow::ListArray>(rows, "_posting", ctx));
    if (positions) {
      LANCE_ASSIGN_OR_RAISE(r.stream, Column<arrow::LargeBinaryArray>(rows, "_compressed_position", ctx));
      LANCE_ASSIGN_OR_RAISE(r.offsets, Column<arrow::ListArray>(rows, "_position_block_offset", ctx));
    }
    return r;
  }

  int64_t length() const { return posting->length(); }

  // Row `r`: `length` postings, of documents below `num_docs`.
  Result<PostingList> Decode(int64_t r, uint32_t length, size_t num_docs, const std::string& ctx) const {
    auto blocks = std::dynamic_pointer_cast<arrow::LargeBinaryArray>(posting->value_slice(r));
    if (!blocks) return Status::Invalid(ctx, ": _posting blocks are not large_binary");
    std::vector<std::string_view> views;
    views.reserve(static_cast<size_t>(blocks->length()));
    for (int64_t i = 0; i < blocks->length(); ++i) views.push_back(blocks->GetView(i));
    LANCE_ASSIGN_OR_RAISE(auto list, DecodePostingList(views, length, ctx));
    if (stream) {
      auto values = std::dynamic_pointer_cast<arrow::UInt32Array>(offsets->value_slice(r));
      if (!values) return Status::Invalid(ctx, ": _position_block_offset is not uint32");
      std::vector<uint32_t> block_offsets(values->raw_values(), values->raw_values() + values->length());
      LANCE_RETURN_NOT_OK(DecodePositions(stream->GetView(r), block_offsets, &list, ctx));
    }
    for (uint32_t d : list.doc_ids) {
      if (d >= num_docs) return Status::Invalid(ctx, ": posting names document ", d, " of ", num_docs);
    }
    return list;
  }
};

// The posting rows ForEachPostingList reads at a time (at least: windows
// end where the file's pages do); the rows pylance writes per batch.
constexpr uint64_t kPostingWindowRows = 256;

}  // namespace

std::string InvertedIndexName(const IndexMetadata& metadata) {
  return "INVERTED index " + metadata.name + " (" + metadata.UuidString() + ")";
}

std::vector<std::pair<std::string, std::string>> InvertedPostingLayout(bool with_position) {
  std::vector<std::pair<std::string, std::string>> m = {{"format_version", "2"},
                                                        {"posting_block_size", std::to_string(kPostingBlockSize)},
                                                        {"posting_tail_codec", "varint_delta_v1"}};
  if (with_position) {
    m.emplace_back("positions_layout", "shared_stream_v2");
    m.emplace_back("positions_codec", "packed_delta_v1");
  }
  return m;
}

struct InvertedIndex::Partition {
  uint64_t id = 0;      // the files' part_<id>_ prefix
  std::string context;  // names the partition's files in errors
  // Token -> id: an FST (pylance 14) or a hash map (legacy).
  std::optional<FstMap> fst;
  std::unordered_map<std::string, uint32_t> token_ids;
  std::vector<std::string> sorted_tokens;  // legacy: for prefix walks
  std::vector<uint64_t> row_ids;
  std::vector<uint32_t> num_tokens;
  uint64_t total_tokens = 0;
  std::vector<uint32_t> lengths;  // per token id
  std::shared_ptr<FileReader> invert;
  // Legacy: every posting, flat, and where each token's start.
  std::vector<uint32_t> legacy_docs;
  std::vector<uint32_t> legacy_freqs;
  std::vector<uint64_t> legacy_offsets;

  std::optional<uint32_t> TokenId(std::string_view token) const {
    if (fst) {
      auto id = fst->Get(token);
      if (!id || *id >= lengths.size()) return std::nullopt;
      return static_cast<uint32_t>(*id);
    }
    auto it = token_ids.find(std::string(token));
    if (it == token_ids.end()) return std::nullopt;
    return it->second;
  }

  // Legacy: token `id`'s postings.
  PostingList LegacyList(uint32_t id) const {
    PostingList list;
    const size_t b = legacy_offsets[id], e = legacy_offsets[id + 1];
    list.doc_ids.assign(legacy_docs.begin() + b, legacy_docs.begin() + e);
    list.frequencies.assign(legacy_freqs.begin() + b, legacy_freqs.begin() + e);
    return list;
  }
};

InvertedIndex::InvertedIndex(IndexMetadata metadata, InvertedIndexParams params, FtsTokenizer tokenizer)
    : metadata_(std::move(metadata)), params_(std::move(params)), tokenizer_(std::move(tokenizer)) {}
InvertedIndex::~InvertedIndex() = default;

namespace {

Status ReadDocs(const FileReader& docs, const std::string& ctx, std::vector<uint64_t>* row_ids,
                std::vector<uint32_t>* num_tokens, uint64_t* total_tokens) {
  LANCE_ASSIGN_OR_RAISE(auto table, docs.ReadAll({"_rowid", "_num_tokens"}));
  LANCE_ASSIGN_OR_RAISE(auto ids, Column<arrow::UInt64Array>(*table, "_rowid", ctx));
  LANCE_ASSIGN_OR_RAISE(auto counts, Column<arrow::UInt32Array>(*table, "_num_tokens", ctx));
  if (ids->length() != counts->length()) return Status::Invalid(ctx, ": columns of different lengths");
  row_ids->assign(ids->raw_values(), ids->raw_values() + ids->length());
  num_tokens->assign(counts->raw_values(), counts->raw_values() + counts->length());
  uint64_t sum = 0;
  for (uint32_t n : *num_tokens) sum += n;
  const std::string stored = MetaOr(docs, "total_tokens");
  if (stored.empty()) {
    *total_tokens = sum;
  } else {
    LANCE_ASSIGN_OR_RAISE(*total_tokens, ParseCount(stored, ctx + ": total_tokens"));
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<InvertedIndex>> InvertedIndex::Open(const Dataset& dataset, const IndexMetadata& metadata) {
  const std::string what = InvertedIndexName(metadata);
  auto open = [&](const std::string& name) { return OpenPart(dataset, metadata, name); };

  if (!metadata.index_version.has_value()) {
    // The legacy layout: one partition, params in tokens.lance.
    auto part = std::make_unique<Partition>();
    part->context = what;
    LANCE_ASSIGN_OR_RAISE(auto tokens, open("tokens.lance"));
    LANCE_ASSIGN_OR_RAISE(auto params, LegacyParams(*tokens, what));
    LANCE_ASSIGN_OR_RAISE(auto tokenizer, FtsTokenizer::Make(params, what));
    std::unique_ptr<InvertedIndex> index(new InvertedIndex(metadata, params, std::move(tokenizer)));
    LANCE_ASSIGN_OR_RAISE(auto token_table, tokens->ReadAll({"_token", "_token_id"}));
    LANCE_ASSIGN_OR_RAISE(auto names, Column<arrow::StringArray>(*token_table, "_token", what + " tokens.lance"));
    LANCE_ASSIGN_OR_RAISE(auto ids, Column<arrow::UInt32Array>(*token_table, "_token_id", what + " tokens.lance"));
    for (int64_t i = 0; i < names->length(); ++i) {
      part->token_ids.emplace(names->GetString(i), ids->Value(i));
      part->sorted_tokens.push_back(names->GetString(i));
    }
    std::sort(part->sorted_tokens.begin(), part->sorted_tokens.end());
    LANCE_ASSIGN_OR_RAISE(auto docs, open("docs.lance"));
    LANCE_RETURN_NOT_OK(ReadDocs(*docs, what + " docs.lance", &part->row_ids, &part->num_tokens, &part->total_tokens));
    std::unordered_map<uint64_t, uint32_t> doc_of;
    for (size_t d = 0; d < part->row_ids.size(); ++d) doc_of.emplace(part->row_ids[d], static_cast<uint32_t>(d));

    LANCE_ASSIGN_OR_RAISE(auto invert, open("invert.lance"));
    const std::string ictx = what + " invert.lance";
    if (invert->schema().metadata.count("offsets") == 0 || invert->schema().metadata.count("_position")) {
      return Status::NotImplemented(ictx, ": a legacy posting layout lance-cpp does not read");
    }
    auto offsets = nlohmann::json::parse(MetaOr(*invert, "offsets"), nullptr, false);
    if (!offsets.is_array()) return Status::Invalid(ictx, ": offsets are not a JSON array");
    LANCE_ASSIGN_OR_RAISE(auto postings, invert->ReadAll({"_rowid", "_frequency"}));
    LANCE_ASSIGN_OR_RAISE(auto rows, Column<arrow::UInt64Array>(*postings, "_rowid", ictx));
    LANCE_ASSIGN_OR_RAISE(auto freqs, Column<arrow::FloatArray>(*postings, "_frequency", ictx));
    for (const auto& o : offsets) {
      if (!o.is_number_unsigned() || o.get<uint64_t>() > static_cast<uint64_t>(rows->length()) ||
          (!part->legacy_offsets.empty() && o.get<uint64_t>() < part->legacy_offsets.back())) {
        return Status::Invalid(ictx, ": offsets are not ascending positions of the postings");
      }
      part->legacy_offsets.push_back(o.get<uint64_t>());
    }
    part->legacy_offsets.push_back(static_cast<uint64_t>(rows->length()));
    for (int64_t i = 0; i < rows->length(); ++i) {
      auto it = doc_of.find(rows->Value(i));
      if (it == doc_of.end()) return Status::Invalid(ictx, ": row ", rows->Value(i), " has postings but no document");
      const float f = freqs->Value(i);
      if (!(f >= 1.0f) || f != static_cast<float>(static_cast<uint32_t>(f))) {
        return Status::Invalid(ictx, ": frequency ", f, " is not a positive count");
      }
      part->legacy_docs.push_back(it->second);
      part->legacy_freqs.push_back(static_cast<uint32_t>(f));
    }
    // Each token's postings sorted by document, as the new layout keeps them.
    for (size_t t = 0; t + 1 < part->legacy_offsets.size(); ++t) {
      const size_t b = part->legacy_offsets[t], e = part->legacy_offsets[t + 1];
      std::vector<std::pair<uint32_t, uint32_t>> p;
      for (size_t i = b; i < e; ++i) p.emplace_back(part->legacy_docs[i], part->legacy_freqs[i]);
      std::sort(p.begin(), p.end());
      for (size_t i = b; i < e; ++i) {
        part->legacy_docs[i] = p[i - b].first;
        part->legacy_freqs[i] = p[i - b].second;
      }
      part->lengths.push_back(static_cast<uint32_t>(e - b));
    }
    for (const auto& [token, id] : part->token_ids) {
      if (id >= part->lengths.size()) return Status::Invalid(ictx, ": token '", token, "' has no postings entry");
    }
    index->partitions_.push_back(std::move(part));
    return index;
  }

  LANCE_ASSIGN_OR_RAISE(auto header, ReadHeader(dataset, metadata));
  const InvertedIndexParams& params = header.params;
  LANCE_ASSIGN_OR_RAISE(auto tokenizer, FtsTokenizer::Make(params, what));
  std::unique_ptr<InvertedIndex> index(new InvertedIndex(metadata, params, std::move(tokenizer)));
  index->deleted_fragments_ = std::move(header.deleted_fragments);
  for (uint64_t id : header.partitions) {
    const std::string prefix = "part_" + std::to_string(id) + "_";
    auto part = std::make_unique<Partition>();
    part->id = id;
    part->context = what + " " + prefix + "*";

    LANCE_ASSIGN_OR_RAISE(auto tokens, open(prefix + "tokens.lance"));
    const std::string tctx = what + " " + prefix + "tokens.lance";
    LANCE_ASSIGN_OR_RAISE(auto token_table, tokens->ReadAll({"_token_fst_bytes"}));
    LANCE_ASSIGN_OR_RAISE(auto fst_col, Column<arrow::LargeBinaryArray>(*token_table, "_token_fst_bytes", tctx));
    if (fst_col->length() != 1) return Status::Invalid(tctx, ": ", fst_col->length(), " token maps, expected 1");
    LANCE_ASSIGN_OR_RAISE(auto fst, FstMap::Open(std::string(fst_col->GetView(0)), tctx));
    part->fst = std::move(fst);

    LANCE_ASSIGN_OR_RAISE(auto docs, open(prefix + "docs.lance"));
    LANCE_RETURN_NOT_OK(ReadDocs(*docs, what + " " + prefix + "docs.lance", &part->row_ids, &part->num_tokens,
                                 &part->total_tokens));

    LANCE_ASSIGN_OR_RAISE(part->invert, open(prefix + "invert.lance"));
    const std::string ictx = what + " " + prefix + "invert.lance";
    // The layout's knobs: refuse any this reader does not decode.
    LANCE_RETURN_NOT_OK(CheckPostingLayout(*part->invert, params.with_position, ictx));
    LANCE_ASSIGN_OR_RAISE(auto lengths_table, part->invert->ReadAll({"_length"}));
    LANCE_ASSIGN_OR_RAISE(auto lengths, Column<arrow::UInt32Array>(*lengths_table, "_length", ictx));
    part->lengths.assign(lengths->raw_values(), lengths->raw_values() + lengths->length());
    if (part->fst->size() > part->lengths.size()) {
      return Status::Invalid(ictx, ": ", part->fst->size(), " tokens but ", part->lengths.size(), " posting lists");
    }
    index->partitions_.push_back(std::move(part));
  }
  return index;
}

Result<InvertedIndexParams> InvertedIndex::ReadParams(const Dataset& dataset, const IndexMetadata& metadata) {
  if (!metadata.index_version.has_value()) {
    LANCE_ASSIGN_OR_RAISE(auto tokens, OpenPart(dataset, metadata, "tokens.lance"));
    return LegacyParams(*tokens, InvertedIndexName(metadata));
  }
  LANCE_ASSIGN_OR_RAISE(auto header, ReadHeader(dataset, metadata));
  return std::move(header.params);
}

Result<std::shared_ptr<const InvertedIndex>> InvertedIndex::OpenCached(const Dataset& dataset,
                                                                       const IndexMetadata& metadata) {
  // A handful of indices: each holds its documents' row ids and lengths.
  static OpenedIndexCache<InvertedIndex> cache(8);
  return cache.GetOrOpen(OpenedIndexKey(dataset, metadata), [&] { return Open(dataset, metadata); });
}

uint64_t InvertedIndex::num_docs() const {
  uint64_t n = 0;
  for (const auto& p : partitions_) n += p->row_ids.size();
  return n;
}

uint64_t InvertedIndex::total_tokens() const {
  uint64_t n = 0;
  for (const auto& p : partitions_) n += p->total_tokens;
  return n;
}

uint64_t InvertedIndex::DocFreq(std::string_view token) const {
  uint64_t n = 0;
  for (const auto& p : partitions_) {
    if (auto id = p->TokenId(token)) n += p->lengths[*id];
  }
  return n;
}

uint64_t InvertedIndex::RowId(size_t p, uint32_t doc) const { return partitions_[p]->row_ids[doc]; }
uint32_t InvertedIndex::DocLength(size_t p, uint32_t doc) const { return partitions_[p]->num_tokens[doc]; }
size_t InvertedIndex::PartitionDocs(size_t p) const { return partitions_[p]->row_ids.size(); }
uint64_t InvertedIndex::partition_id(size_t p) const { return partitions_[p]->id; }

Status InvertedIndex::ForEachToken(size_t p, std::string_view prefix,
                                   const std::function<Status(std::string_view token)>& fn) const {
  const Partition& part = *partitions_[p];
  if (part.fst) {
    return part.fst->ForEachWithPrefix(prefix, [&](std::string_view key, uint64_t) { return fn(key); });
  }
  auto it = std::lower_bound(part.sorted_tokens.begin(), part.sorted_tokens.end(), prefix);
  for (; it != part.sorted_tokens.end() && std::string_view(*it).substr(0, prefix.size()) == prefix; ++it) {
    LANCE_RETURN_NOT_OK(fn(*it));
  }
  return Status::OK();
}

Result<std::optional<PostingList>> InvertedIndex::Postings(size_t p, std::string_view token, bool positions) const {
  const Partition& part = *partitions_[p];
  auto id = part.TokenId(token);
  if (!id) return std::optional<PostingList>();
  if (positions && !params_.with_position) {
    return Status::Invalid(part.context, ": the index has no positions (build it with with_position=True)");
  }
  if (!part.invert) return std::optional<PostingList>(part.LegacyList(*id));
  const std::string ctx = part.context + " token " + std::to_string(*id);
  LANCE_ASSIGN_OR_RAISE(auto row, part.invert->Take(PostingColumns(positions), {*id}));
  LANCE_ASSIGN_OR_RAISE(auto rows, PostingRows::From(*row, positions, ctx));
  if (rows.length() != 1) return Status::Invalid(ctx, ": ", rows.length(), " posting rows taken, expected 1");
  LANCE_ASSIGN_OR_RAISE(auto list, rows.Decode(0, part.lengths[*id], part.row_ids.size(), ctx));
  return std::optional<PostingList>(std::move(list));
}

Status InvertedIndex::ForEachPostingList(
    size_t p, bool positions,
    const std::function<Status(uint32_t token_id, std::string_view token, PostingList&& list)>& fn) const {
  const Partition& part = *partitions_[p];
  if (positions && !params_.with_position) {
    return Status::Invalid(part.context, ": the index has no positions (build it with with_position=True)");
  }
  // Each posting row's token (the token map walks in key order).
  const size_t num_lists = part.lengths.size();
  std::vector<std::string> token_of(num_lists);
  std::vector<bool> named(num_lists, false);
  auto name = [&](std::string_view token, uint64_t id) -> Status {
    if (id >= num_lists) {
      return Status::Invalid(part.context, ": token id ", id, " past the ", num_lists, " posting lists");
    }
    if (named[id]) return Status::Invalid(part.context, ": token id ", id, " names two tokens");
    named[id] = true;
    token_of[id] = token;
    return Status::OK();
  };
  if (part.fst) {
    LANCE_RETURN_NOT_OK(part.fst->ForEach(name));
  } else {
    for (const auto& [token, id] : part.token_ids) LANCE_RETURN_NOT_OK(name(token, id));
  }
  if (!part.invert) {
    for (uint32_t t = 0; t < num_lists; ++t) {
      if (named[t]) LANCE_RETURN_NOT_OK(fn(t, token_of[t], part.LegacyList(t)));
    }
    return Status::OK();
  }
  // Window by window, each page decoded once (2.0 files: all at once).
  const auto columns = PostingColumns(positions);
  LANCE_ASSIGN_OR_RAISE(auto windows, part.invert->ReadWindows(columns, kPostingWindowRows));
  for (size_t w = 0; w + 1 < windows.size(); ++w) {
    const uint64_t at = windows[w], n = windows[w + 1] - windows[w];
    if (at + n > num_lists) {
      return Status::Invalid(part.context, ": posting rows past the ", num_lists, " posting list lengths");
    }
    LANCE_ASSIGN_OR_RAISE(auto read, part.invert->ReadRange(columns, at, n));
    LANCE_ASSIGN_OR_RAISE(auto rows, PostingRows::From(*read, positions, part.context + " invert"));
    if (static_cast<uint64_t>(rows.length()) != n) {
      return Status::Invalid(part.context, ": ", rows.length(), " posting rows read at ", at, ", expected ", n);
    }
    for (uint64_t r = 0; r < n; ++r) {
      const auto t = static_cast<uint32_t>(at + r);
      if (!named[t]) continue;
      const std::string ctx = part.context + " token " + std::to_string(t);
      LANCE_ASSIGN_OR_RAISE(auto list,
                            rows.Decode(static_cast<int64_t>(r), part.lengths[t], part.row_ids.size(), ctx));
      LANCE_RETURN_NOT_OK(fn(t, token_of[t], std::move(list)));
    }
  }
  return Status::OK();
}

}  // namespace lance::index
