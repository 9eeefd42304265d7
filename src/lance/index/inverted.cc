#include "lance/index/inverted.h"

#include <algorithm>
#include <charconv>
#include <list>
#include <mutex>
#include <unordered_map>

#include <arrow/api.h>
#include <nlohmann/json.hpp>

#include "lance/file_reader.h"
#include "lance/index/fst.h"
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

}  // namespace

struct InvertedIndex::Partition {
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
  const std::string what = "INVERTED index " + metadata.name + " (" + metadata.UuidString() + ")";
  auto open = [&](const std::string& name) -> Result<std::shared_ptr<FileReader>> {
    LANCE_ASSIGN_OR_RAISE(auto file, OpenIndexFile(dataset, metadata, name));
    if (!file) return Status::NotImplemented(what, ": ", name, " is a legacy (0.1) Lance file, which lance-cpp does not read for INVERTED indices");
    return file;
  };

  if (!metadata.index_version.has_value()) {
    // The legacy layout: one partition, params in tokens.lance.
    auto part = std::make_unique<Partition>();
    part->context = what;
    LANCE_ASSIGN_OR_RAISE(auto tokens, open("tokens.lance"));
    const std::string json = MetaOr(*tokens, "tokenizer");
    if (json.empty()) return Status::Invalid(what, ": tokens.lance has no tokenizer parameters");
    LANCE_ASSIGN_OR_RAISE(auto params, InvertedIndexParams::FromJson(json, what + " tokens.lance"));
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

  if (*metadata.index_version != kFstIndexVersion) {
    return Status::NotImplemented(what, ": index_version ", *metadata.index_version,
                                  " is not supported by lance-cpp (it reads version 2, as pylance 14 writes, and "
                                  "the legacy layout)");
  }
  LANCE_ASSIGN_OR_RAISE(auto meta_file, open("metadata.lance"));
  const std::string mctx = what + " metadata.lance";
  LANCE_ASSIGN_OR_RAISE(auto params, InvertedIndexParams::FromJson(MetaOr(*meta_file, "params"), mctx));
  LANCE_ASSIGN_OR_RAISE(auto tokenizer, FtsTokenizer::Make(params, what));
  const std::string token_format = MetaOr(*meta_file, "token_set_format", "arrow");
  if (token_format != "fst") {
    return Status::NotImplemented(mctx, ": token set format '", token_format, "' is not supported by lance-cpp");
  }
  std::unique_ptr<InvertedIndex> index(new InvertedIndex(metadata, params, std::move(tokenizer)));
  {
    LANCE_ASSIGN_OR_RAISE(auto t, meta_file->ReadAll({"deleted_fragments"}));
    auto col = t->GetColumnByName("deleted_fragments");
    if (!col) return Status::Invalid(mctx, ": no deleted_fragments column");
    for (const auto& chunk : col->chunks()) {
      auto bin = std::dynamic_pointer_cast<arrow::BinaryArray>(chunk);
      if (!bin) return Status::Invalid(mctx, ": deleted_fragments is not binary");
      for (int64_t i = 0; i < bin->length(); ++i) {
        if (bin->IsNull(i)) continue;
        LANCE_ASSIGN_OR_RAISE(auto frags, table::DecodePortableRoaring(bin->GetView(i), mctx));
        index->deleted_fragments_.insert(index->deleted_fragments_.end(), frags.begin(), frags.end());
      }
    }
    std::sort(index->deleted_fragments_.begin(), index->deleted_fragments_.end());
  }
  auto partitions = nlohmann::json::parse(MetaOr(*meta_file, "partitions"), nullptr, false);
  if (!partitions.is_array()) return Status::Invalid(mctx, ": partitions are not a JSON array");
  for (const auto& id_json : partitions) {
    if (!id_json.is_number_unsigned()) return Status::Invalid(mctx, ": partition id ", id_json.dump(), " is not a count");
    const std::string prefix = "part_" + std::to_string(id_json.get<uint64_t>()) + "_";
    auto part = std::make_unique<Partition>();
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
    const std::pair<const char*, const char*> expect[] = {{"format_version", "2"},
                                                          {"posting_block_size", "128"},
                                                          {"posting_tail_codec", "varint_delta_v1"}};
    for (const auto& [key, value] : expect) {
      const std::string got = MetaOr(*part->invert, key, "(none)");
      if (got != value) {
        return Status::NotImplemented(ictx, ": ", key, " '", got, "' is not supported by lance-cpp (", value, ")");
      }
    }
    if (params.with_position) {
      const std::pair<const char*, const char*> pos[] = {{"positions_layout", "shared_stream_v2"},
                                                         {"positions_codec", "packed_delta_v1"}};
      for (const auto& [key, value] : pos) {
        const std::string got = MetaOr(*part->invert, key, "(none)");
        if (got != value) {
          return Status::NotImplemented(ictx, ": ", key, " '", got, "' is not supported by lance-cpp (", value, ")");
        }
      }
    }
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

Result<std::shared_ptr<const InvertedIndex>> InvertedIndex::OpenCached(const Dataset& dataset,
                                                                       const IndexMetadata& metadata) {
  // A handful of indices: each holds its documents' row ids and lengths.
  constexpr size_t kCapacity = 8;
  static std::mutex mu;
  static std::list<std::pair<std::string, std::shared_ptr<const InvertedIndex>>> cache;  // most recent first
  const std::string key = dataset.uri() + "\n" + (metadata.base_id ? std::to_string(*metadata.base_id) : "-") +
                          "\n" + metadata.UuidString();
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = cache.begin(); it != cache.end(); ++it) {
      if (it->first == key) {
        cache.splice(cache.begin(), cache, it);
        return cache.front().second;
      }
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto opened, Open(dataset, metadata));
  std::shared_ptr<const InvertedIndex> index = std::move(opened);
  std::lock_guard<std::mutex> lock(mu);
  cache.emplace_front(key, index);
  if (cache.size() > kCapacity) cache.pop_back();
  return index;
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
  const std::string ctx = part.context + " token " + std::to_string(*id);
  PostingList list;
  if (!part.invert) {
    const size_t b = part.legacy_offsets[*id], e = part.legacy_offsets[*id + 1];
    list.doc_ids.assign(part.legacy_docs.begin() + b, part.legacy_docs.begin() + e);
    list.frequencies.assign(part.legacy_freqs.begin() + b, part.legacy_freqs.begin() + e);
  } else {
    std::vector<std::string> columns = {"_posting"};
    if (positions) {
      columns.push_back("_compressed_position");
      columns.push_back("_position_block_offset");
    }
    LANCE_ASSIGN_OR_RAISE(auto row, part.invert->Take(columns, {*id}));
    LANCE_ASSIGN_OR_RAISE(auto posting, arrow::Concatenate(row->GetColumnByName("_posting")->chunks()));
    auto lists = std::dynamic_pointer_cast<arrow::ListArray>(posting);
    if (!lists || lists->length() != 1 || lists->IsNull(0)) return Status::Invalid(ctx, ": _posting is not a list");
    auto blocks = std::dynamic_pointer_cast<arrow::LargeBinaryArray>(lists->value_slice(0));
    if (!blocks) return Status::Invalid(ctx, ": _posting blocks are not large_binary");
    std::vector<std::string_view> views;
    for (int64_t i = 0; i < blocks->length(); ++i) views.push_back(blocks->GetView(i));
    LANCE_ASSIGN_OR_RAISE(list, DecodePostingList(views, part.lengths[*id], ctx));
    if (positions) {
      LANCE_ASSIGN_OR_RAISE(auto stream_col, arrow::Concatenate(row->GetColumnByName("_compressed_position")->chunks()));
      LANCE_ASSIGN_OR_RAISE(auto offsets_col,
                            arrow::Concatenate(row->GetColumnByName("_position_block_offset")->chunks()));
      auto stream = std::dynamic_pointer_cast<arrow::LargeBinaryArray>(stream_col);
      auto offsets = std::dynamic_pointer_cast<arrow::ListArray>(offsets_col);
      if (!stream || !offsets || stream->IsNull(0) || offsets->IsNull(0)) {
        return Status::Invalid(ctx, ": position columns have unexpected types");
      }
      auto offset_values = std::dynamic_pointer_cast<arrow::UInt32Array>(offsets->value_slice(0));
      if (!offset_values) return Status::Invalid(ctx, ": _position_block_offset is not uint32");
      std::vector<uint32_t> block_offsets(offset_values->raw_values(),
                                          offset_values->raw_values() + offset_values->length());
      LANCE_RETURN_NOT_OK(DecodePositions(stream->GetView(0), block_offsets, &list, ctx));
    }
  }
  for (uint32_t d : list.doc_ids) {
    if (d >= part.row_ids.size()) return Status::Invalid(ctx, ": posting names document ", d, " of ", part.row_ids.size());
  }
  return std::optional<PostingList>(std::move(list));
}

}  // namespace lance::index
