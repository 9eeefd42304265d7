// NGRAM indices as pylance 14 writes them (rust/lance-index/src/scalar/ngram.rs),
// index_version 0:
//   ngram_postings.lance  tokens (uint32, ascending; see ngram.h), posting_list
//                         (binary): each a serialized RoaringTreemap of the
//                         row ids (the dataset's: stable ids when it has them)
//                         of the rows holding that token; token 0 lists the
//                         null rows. An empty or too short value has no token.
// RoaringTreemap (the roaring crate): u64 count, then per entry u32 high 32
// bits and a portable 32-bit Roaring bitmap of the low bits.
//
// The index is inexact: it finds the rows holding every trigram of a needle,
// a superset of the matches, which the scan rechecks. pylance asks it for
// contains(col, s) with s of 3+ characters and for LIKE patterns (and
// starts_with, which it plans as LIKE 's%') with a literal run yielding a
// trigram; the same here. A needle of 3+ characters without a trigram
// ("a b") narrows nothing: every row of the segment is a candidate.
#include "lance/index/ngram.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <roaring/roaring.h>

#include "lance/file_reader.h"
#include "lance/index/scalar_index.h"
#include "lance/table/roaring_portable.h"

namespace lance::index {
namespace ngram {

namespace {
constexpr uint32_t kSpan = 37;  // 36 letters and digits, and 0 for "none"

// The code of an ASCII byte: 1..36 for letters and digits (any case), 0 for
// the rest.
uint32_t Code(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0' + 1;
  if (c >= 'a' && c <= 'z') return c - 'a' + 11;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 11;
  return 0;
}

// U+0080..U+017F lowercased and ASCII-folded as pylance does, found by
// indexing "qq" + c + "qq" for each of them with pylance 14 (the interop test
// test_fold_table_matches_pylance does that again). '-' stands for any
// character that is not a letter or digit: a window over it is no token,
// whatever the character. Code points of the range not listed fold to one.
struct FoldRange {
  uint32_t first, last;
  const char* folded;
};
constexpr FoldRange kFolds[] = {
    {0xAA, 0xAA, "a"},    {0xB2, 0xB2, "2"},    {0xB3, 0xB3, "3"},    {0xB9, 0xB9, "1"},    {0xBA, 0xBA, "o"},
    {0xBC, 0xBC, "14"},   {0xBD, 0xBD, "12"},   {0xBE, 0xBE, "34"},   {0xC0, 0xC5, "a"},    {0xC6, 0xC6, "ae"},
    {0xC7, 0xC7, "c"},    {0xC8, 0xCB, "e"},    {0xCC, 0xCF, "i"},    {0xD0, 0xD0, "d"},    {0xD1, 0xD1, "n"},
    {0xD2, 0xD6, "o"},    {0xD8, 0xD8, "o"},    {0xD9, 0xDC, "u"},    {0xDD, 0xDD, "y"},    {0xDE, 0xDE, "th"},
    {0xDF, 0xDF, "ss"},   {0xE0, 0xE5, "a"},    {0xE6, 0xE6, "ae"},   {0xE7, 0xE7, "c"},    {0xE8, 0xEB, "e"},
    {0xEC, 0xEF, "i"},    {0xF0, 0xF0, "d"},    {0xF1, 0xF1, "n"},    {0xF2, 0xF6, "o"},    {0xF8, 0xF8, "o"},
    {0xF9, 0xFC, "u"},    {0xFD, 0xFD, "y"},    {0xFE, 0xFE, "th"},   {0xFF, 0xFF, "y"},    {0x100, 0x105, "a"},
    {0x106, 0x10D, "c"},  {0x10E, 0x111, "d"},  {0x112, 0x11B, "e"},  {0x11C, 0x123, "g"},  {0x124, 0x127, "h"},
    {0x128, 0x12F, "i"},  {0x130, 0x130, "i-"},  // lowercased to i and a combining dot
    {0x131, 0x131, "i"},  {0x132, 0x133, "ij"}, {0x134, 0x135, "j"},  {0x136, 0x138, "k"},  {0x139, 0x142, "l"},
    {0x143, 0x14B, "n"},  {0x14C, 0x151, "o"},  {0x152, 0x153, "oe"}, {0x154, 0x159, "r"},  {0x15A, 0x161, "s"},
    {0x162, 0x167, "t"},  {0x168, 0x173, "u"},  {0x174, 0x175, "w"},  {0x176, 0x178, "y"},  {0x179, 0x17E, "z"},
    {0x17F, 0x17F, "s"},
};
constexpr uint32_t kLastFolded = 0x17F;

// The folded text of code point `cp` (<= kLastFolded, not ASCII).
const char* Folded(uint32_t cp) {
  for (const auto& r : kFolds) {
    if (cp >= r.first && cp <= r.last) return r.folded;
  }
  return "-";
}

constexpr uint32_t kUnknown = 0xFFFFFFFFu;  // a character lance-cpp does not fold
}  // namespace

void Tokenize(std::string_view text, std::vector<uint32_t>* out, bool* unknown) {
  // The codes of the last three characters; a window is a token when all
  // three are letters or digits.
  uint32_t window[kLength] = {0, 0, 0};
  size_t seen = 0;
  auto push = [&](uint32_t code) {
    window[0] = window[1];
    window[1] = window[2];
    window[2] = code;
    if (++seen < kLength) return;
    for (uint32_t w : window) {
      if (w == 0 || w == kUnknown) return;
    }
    out->push_back(window[0] * kSpan * kSpan + window[1] * kSpan + window[2]);
  };
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      push(Code(c));
      ++i;
      continue;
    }
    // One character: the lead byte and its continuation bytes.
    const size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    uint32_t cp = len == 1 ? kUnknown : c & (0x7F >> len);
    size_t j = 1;
    for (; j < len && i + j < text.size(); ++j) {
      const auto cc = static_cast<unsigned char>(text[i + j]);
      if ((cc & 0xC0) != 0x80) break;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (j < len) cp = kUnknown;  // invalid UTF-8
    i += j;
    if (cp == kUnknown || cp < 0x80 || cp > kLastFolded) {
      *unknown = true;
      push(kUnknown);
      continue;
    }
    for (const char* f = Folded(cp); *f; ++f) push(Code(static_cast<unsigned char>(*f)));
  }
}

size_t CharCount(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string TokenText(uint32_t token) {
  static const char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string out;
  for (uint32_t mult : {kSpan * kSpan, kSpan, 1u}) {
    const uint32_t d = token / mult;
    token %= mult;
    if (d > 0 && d <= 36) out.push_back(kAlphabet[d - 1]);
  }
  return out;
}

}  // namespace ngram

Result<RowIds> DecodeRoaringTreemap(std::string_view bytes, const std::string& context) {
  if (bytes.size() < 8) return Status::Invalid(context, ": truncated roaring treemap");
  uint64_t count;
  std::memcpy(&count, bytes.data(), 8);  // little-endian hosts only, as the rest of the readers
  size_t pos = 8;
  if (count > (bytes.size() - pos) / 4) return Status::Invalid(context, ": roaring treemap of ", count, " bitmaps is truncated");
  RowIds out;
  uint64_t last_high = 0;
  for (uint64_t e = 0; e < count; ++e) {
    if (bytes.size() - pos < 4) return Status::Invalid(context, ": truncated roaring treemap entry ", e);
    uint32_t high;
    std::memcpy(&high, bytes.data() + pos, 4);
    pos += 4;
    if (e > 0 && high <= last_high) return Status::Invalid(context, ": roaring treemap keys out of order");
    last_high = high;
    const size_t size = roaring_bitmap_portable_deserialize_size(bytes.data() + pos, bytes.size() - pos);
    if (size == 0) return Status::Invalid(context, ": bad roaring bitmap in treemap entry ", e);
    LANCE_ASSIGN_OR_RAISE(auto low, table::DecodePortableRoaring(bytes.substr(pos, size), context));
    pos += size;
    for (uint32_t v : low) out.push_back((uint64_t{high} << 32) | v);
  }
  if (pos != bytes.size()) return Status::Invalid(context, ": ", bytes.size() - pos, " bytes after the roaring treemap");
  return out;
}

std::string SerializeRoaringTreemap(const std::map<uint32_t, roaring_bitmap_t*>& parts) {
  const uint64_t count = parts.size();
  std::string out(reinterpret_cast<const char*>(&count), 8);  // little-endian hosts only
  for (const auto& [high, rb] : parts) {
    out.append(reinterpret_cast<const char*>(&high), 4);
    std::string bytes(roaring_bitmap_portable_size_in_bytes(rb), '\0');
    roaring_bitmap_portable_serialize(rb, bytes.data());
    out += bytes;
  }
  return out;
}

std::string EncodeRoaringTreemap(const RowIds& sorted_ids, bool run_optimize) {
  std::map<uint32_t, roaring_bitmap_t*> parts;
  std::vector<uint32_t> low;
  for (size_t i = 0; i < sorted_ids.size();) {
    const auto high = static_cast<uint32_t>(sorted_ids[i] >> 32);
    low.clear();
    for (; i < sorted_ids.size() && static_cast<uint32_t>(sorted_ids[i] >> 32) == high; ++i) {
      low.push_back(static_cast<uint32_t>(sorted_ids[i]));
    }
    parts[high] = roaring_bitmap_of_ptr(low.size(), low.data());
    if (run_optimize) roaring_bitmap_run_optimize(parts[high]);
  }
  std::string out = SerializeRoaringTreemap(parts);
  for (auto& [high, rb] : parts) roaring_bitmap_free(rb);
  return out;
}

namespace {
namespace cp = arrow::compute;

constexpr const char* kPostingsFile = "ngram_postings.lance";

// The tokens every match of a text predicate holds, when the index answers
// it (pylance's rules, see the top of the file); nullopt otherwise. No
// tokens: a needle the index cannot narrow.
struct Needle {
  std::vector<uint32_t> tokens;  // sorted, unique
};

std::optional<Needle> NeedleOf(const cp::Expression::Call& call, const std::string& column) {
  const std::string& f = call.function_name;
  if (f != "match_substring" && f != "starts_with" && f != "match_like") return std::nullopt;
  if (call.arguments.size() != 1 || !call.options) return std::nullopt;
  const auto* ref = call.arguments[0].field_ref();
  if (ref == nullptr || !ref->IsName() || *ref->name() != column) return std::nullopt;
  const auto& opts = static_cast<const cp::MatchSubstringOptions&>(*call.options);
  if (opts.ignore_case) return std::nullopt;  // ILIKE: pylance does not ask the index
  Needle out;
  bool unknown = false;
  if (f == "match_like") {
    // Arrow's pattern: '%' and '_' wildcards, '\' escapes the next character.
    // Each literal run must appear in a match: its trigrams are necessary.
    std::string run;
    bool wildcard = false;
    auto flush = [&] {
      ngram::Tokenize(run, &out.tokens, &unknown);
      run.clear();
    };
    const std::string& p = opts.pattern;
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] == '\\' && i + 1 < p.size()) {
        run.push_back(p[++i]);
      } else if (p[i] == '%' || p[i] == '_') {
        wildcard = true;
        flush();
      } else {
        run.push_back(p[i]);
      }
    }
    flush();
    // Without a wildcard pylance plans the LIKE as an equality, which it
    // does not ask an ngram index.
    if (!wildcard || out.tokens.empty()) return std::nullopt;
  } else {
    ngram::Tokenize(opts.pattern, &out.tokens, &unknown);
    if (f == "match_substring" ? ngram::CharCount(opts.pattern) < ngram::kLength : out.tokens.empty()) {
      return std::nullopt;
    }
  }
  std::sort(out.tokens.begin(), out.tokens.end());
  out.tokens.erase(std::unique(out.tokens.begin(), out.tokens.end()), out.tokens.end());
  return out;
}

class NGramIndex : public ScalarIndex {
 public:
  NGramIndex(const Dataset& dataset, std::vector<uint32_t> fragments, std::shared_ptr<FileReader> postings,
             std::shared_ptr<arrow::DataType> type, std::string name)
      : dataset_(dataset), fragments_(std::move(fragments)), postings_(std::move(postings)),
        type_(std::move(type)), name_(std::move(name)) {}

  const char* type_name() const override { return "NGram"; }
  const std::shared_ptr<arrow::DataType>& value_type() const override { return type_; }
  bool stores_addresses() const override { return false; }
  bool IsExact(const cp::Expression& /*predicate*/) const override { return false; }
  bool CanSearch(const cp::Expression& predicate, const std::string& column) const override {
    return Answerable(predicate, column);
  }

  Result<RowIds> Search(const cp::Expression& predicate, const std::string& column) override {
    if (!Answerable(predicate, column)) return Status::Invalid(name_, ": cannot answer ", predicate.ToString());
    LANCE_RETURN_NOT_OK(Load());
    return Eval(predicate, column);
  }

 private:
  // Text predicates on the column, and AND/OR of them (no NOT: a superset
  // cannot be negated).
  static bool Answerable(const cp::Expression& e, const std::string& column) {
    const auto* call = e.call();
    if (call == nullptr) return false;
    if (IsAnd(call->function_name) || IsOr(call->function_name)) {
      return std::all_of(call->arguments.begin(), call->arguments.end(),
                         [&](const cp::Expression& a) { return Answerable(a, column); });
    }
    return NeedleOf(*call, column).has_value();
  }

  Result<RowIds> Eval(const cp::Expression& e, const std::string& column) {
    const auto* call = e.call();
    const std::string& f = call->function_name;
    if (IsAnd(f) || IsOr(f)) {
      return CombineAndOr(*call, [&](const cp::Expression& a) { return Eval(a, column); });
    }
    const Needle needle = *NeedleOf(*call, column);
    if (needle.tokens.empty()) return AllRowIds(dataset_, fragments_);
    // A trigram no row holds: no row matches.
    std::vector<uint64_t> rows;
    for (uint32_t t : needle.tokens) {
      auto it = row_of_.find(t);
      if (it == row_of_.end()) return RowIds{};
      rows.push_back(it->second);
    }
    std::sort(rows.begin(), rows.end());
    LANCE_ASSIGN_OR_RAISE(auto table, postings_->Take({"posting_list"}, rows));
    LANCE_ASSIGN_OR_RAISE(auto lists, table->CombineChunks());
    const auto& column_data = *lists->column(0)->chunk(0);
    std::optional<RowIds> acc;
    for (int64_t i = 0; i < column_data.length(); ++i) {
      if (column_data.IsNull(i)) return Status::Invalid(name_, ": null posting list");
      std::string_view bytes = column_data.type_id() == arrow::Type::LARGE_BINARY
                                   ? static_cast<const arrow::LargeBinaryArray&>(column_data).GetView(i)
                                   : static_cast<const arrow::BinaryArray&>(column_data).GetView(i);
      LANCE_ASSIGN_OR_RAISE(auto ids, DecodeRoaringTreemap(bytes, name_));
      acc = acc ? Intersect(*acc, ids) : std::move(ids);
      if (acc->empty()) break;
    }
    return std::move(*acc);
  }

  // The token -> row map of the postings file (at most 37^3 rows).
  Status Load() {
    if (loaded_) return Status::OK();
    LANCE_ASSIGN_OR_RAISE(auto table, postings_->ReadAll({"tokens"}));
    LANCE_ASSIGN_OR_RAISE(auto combined, table->CombineChunks());
    uint64_t row = 0;
    for (const auto& chunk : combined->column(0)->chunks()) {
      const auto& tokens = static_cast<const arrow::UInt32Array&>(*chunk);
      for (int64_t i = 0; i < tokens.length(); ++i, ++row) {
        if (tokens.IsValid(i)) row_of_.emplace(tokens.Value(i), row);
      }
    }
    loaded_ = true;
    return Status::OK();
  }

  // The dataset the index was opened on; it outlives the index.
  const Dataset& dataset_;
  std::vector<uint32_t> fragments_;  // sorted
  std::shared_ptr<FileReader> postings_;
  std::shared_ptr<arrow::DataType> type_;
  std::string name_;
  bool loaded_ = false;
  std::unordered_map<uint32_t, uint64_t> row_of_;
};

}  // namespace

Result<std::unique_ptr<ScalarIndex>> OpenNGramIndex(const Dataset& dataset, const IndexMetadata& metadata) {
  // Version 1 (row addresses in the postings) is a later pylance's: not read.
  if (metadata.index_version.value_or(-1) != 0) return std::unique_ptr<ScalarIndex>();
  if (metadata.fields.empty() || !metadata.fragment_ids) return std::unique_ptr<ScalarIndex>();
  const Schema& schema = dataset.manifest().schema;
  const Field* field = schema.FieldById(metadata.fields[0]);
  if (field == nullptr || field->parent_id >= 0) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto arrow_schema, dataset.ArrowSchema());
  auto column = arrow_schema->GetFieldByName(field->name);
  if (column == nullptr ||
      (column->type()->id() != arrow::Type::STRING && column->type()->id() != arrow::Type::LARGE_STRING)) {
    return std::unique_ptr<ScalarIndex>();
  }
  LANCE_ASSIGN_OR_RAISE(auto postings, OpenIndexFile(dataset, metadata, kPostingsFile));
  if (postings == nullptr) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto file_schema, postings->ArrowSchema());
  auto tokens = file_schema->GetFieldByName("tokens");
  auto lists = file_schema->GetFieldByName("posting_list");
  if (tokens == nullptr || lists == nullptr || !tokens->type()->Equals(*arrow::uint32()) ||
      (lists->type()->id() != arrow::Type::BINARY && lists->type()->id() != arrow::Type::LARGE_BINARY)) {
    return std::unique_ptr<ScalarIndex>();
  }
  std::vector<uint32_t> fragments = *metadata.fragment_ids;
  std::sort(fragments.begin(), fragments.end());
  std::string name = "ngram index '" + metadata.name + "' (" + metadata.UuidString() + ")";
  return std::unique_ptr<ScalarIndex>(
      new NGramIndex(dataset, std::move(fragments), std::move(postings), column->type(), std::move(name)));
}

}  // namespace lance::index
