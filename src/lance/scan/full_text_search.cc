// Full-text search over INVERTED indices, scored as pylance 14 scores
// (rust/lance-index/src/scalar/inverted/scorer.rs, index.rs, and the
// observed behaviour tests/interop/test_fts_search.py pins down):
//   BM25 with k1 = 1.2, b = 0.75 in f32:
//     idf(t)  = ln((N - n(t) + 0.5) / (n(t) + 0.5) + 1)
//     w(f, l) = (k1 + 1) f / (f + k1 (1 - b + b l / avgdl))
//   a row's score is the sum over the query's tokens (repeats counted) of
//   idf * w. Rows the index covers are scored with the index's statistics
//   (N its documents, avgdl their mean length, n the documents holding the
//   token, deleted rows included, as the index keeps them); rows of
//   fragments it does not cover are tokenized and scored with the index's
//   statistics plus those of the uncovered rows searched (every live one,
//   or with a prefilter those passing it). A query token repeated at another
//   place counts again, one at the same place (n-grams) once. A prefilter
//   selects rows before ranking; a postfilter (pylance's default) drops rows
//   from the best `limit`. After a compaction with defer_index_remap an
//   index still names the old row addresses: they are mapped through the
//   fragment reuse index (rows deleted before the compaction dropped), its
//   statistics left as they are (pylance 14; test_fts_deferred_remap.py).
// The search is exhaustive: every posting of every query token is scored,
// which gives the ranking block-max WAND gives (WAND only skips documents
// that cannot enter the top k).
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <arrow/api.h>

#include "lance/dataset_internal.h"
#include "lance/full_text.h"
#include "lance/index/frag_reuse.h"
#include "lance/index/inverted.h"
#include "lance/scan/row_gate.h"
#include "lance/scanner.h"
#include "lance/schema.h"
#include "lance/util/utf8.h"

namespace lance {
namespace {

constexpr float kK1 = 1.2f;
constexpr float kB = 0.75f;
constexpr std::string_view kInvertedDetails = "InvertedIndexDetails";

float Idf(uint64_t token_docs, uint64_t num_docs) {
  const float n = static_cast<float>(num_docs);
  const float nq = static_cast<float>(token_docs);
  return std::log((n - nq + 0.5f) / (nq + 0.5f) + 1.0f);
}

float DocWeight(uint32_t freq, uint32_t doc_tokens, float avgdl) {
  const float f = static_cast<float>(freq);
  const float doc_norm = kK1 * (1.0f - kB + kB * static_cast<float>(doc_tokens) / avgdl);
  return (kK1 + 1.0f) * f / (f + doc_norm);
}

// BM25's corpus statistics.
struct Stats {
  uint64_t num_docs = 0;
  uint64_t total_tokens = 0;
  std::unordered_map<std::string, uint64_t> token_docs;
  float AvgDocLength() const { return static_cast<float>(total_tokens) / static_cast<float>(num_docs); }
  float Idf(const std::string& token) const {
    auto it = token_docs.find(token);
    const uint64_t n = it == token_docs.end() ? 0 : it->second;
    return n == 0 ? 0.0f : lance::Idf(n, num_docs);
  }
};

// A row that is not an index's: its tokens counted.
struct FlatDoc {
  uint64_t row_id;
  uint32_t length;
  std::unordered_map<std::string, uint32_t> freqs;
  std::unordered_map<std::string, std::vector<uint32_t>> positions;
};

bool IsInverted(const IndexMetadata& m) {
  const auto& url = m.index_details_type_url;
  return url.size() >= kInvertedDetails.size() &&
         url.compare(url.size() - kInvertedDetails.size(), kInvertedDetails.size(), kInvertedDetails) == 0;
}

using scan::RowGate;

// The query's tokens under a tokenizer, in order: a token repeated at
// another place counts again ("run run" scores twice "run"), one repeated
// at the same place does not (n-grams, all at place 0), as in pylance.
std::vector<index::FtsToken> QueryTokens(const index::FtsTokenizer& tokenizer, const std::string& text) {
  std::vector<index::FtsToken> out;
  for (auto& t : tokenizer.Tokenize(text)) {
    const bool seen = std::any_of(out.begin(), out.end(),
                                  [&](const index::FtsToken& o) { return o.text == t.text && o.position == t.position; });
    if (!seen) out.push_back(std::move(t));
  }
  return out;
}

// Whether the phrase is there: each next token after the previous one by
// its gap in the query plus 0..slop places (pylance's rule, pair by pair;
// never reordered). Lists are sorted positions, one per query token.
bool PhraseFrom(const std::vector<const std::vector<uint32_t>*>& lists, const std::vector<uint32_t>& query_positions,
                uint32_t slop, size_t k, int64_t prev) {
  if (k == lists.size()) return true;
  const int64_t lo = prev + (int64_t{query_positions[k]} - query_positions[k - 1]);
  const auto& l = *lists[k];
  for (auto it = std::lower_bound(l.begin(), l.end(), static_cast<uint32_t>(std::max<int64_t>(0, lo)));
       it != l.end() && static_cast<int64_t>(*it) <= lo + slop; ++it) {
    if (static_cast<int64_t>(*it) >= lo && PhraseFrom(lists, query_positions, slop, k + 1, *it)) return true;
  }
  return false;
}

bool PhraseMatches(const std::vector<const std::vector<uint32_t>*>& lists,
                   const std::vector<uint32_t>& query_positions, uint32_t slop) {
  if (lists.empty()) return false;
  for (uint32_t start : *lists[0]) {
    if (PhraseFrom(lists, query_positions, slop, 1, start)) return true;
  }
  return false;
}

// One column's INVERTED index segments and its uncovered rows.
struct ColumnSearch {
  std::string column;
  std::vector<std::shared_ptr<const index::InvertedIndex>> segments;
  std::set<uint32_t> covered;  // fragment ids
  // Each segment's, from this version's manifest: a cached segment keeps
  // the bitmap of the version it was first opened in.
  std::vector<std::set<uint32_t>> segment_covered;
  Stats index_stats;
  Stats flat_stats;  // index + uncovered rows
  std::vector<FlatDoc> flat_docs;
  // After a compaction with defer_index_remap: the rows' addresses now, from
  // the old ones the segments name (null without a fragment reuse index).
  std::shared_ptr<const index::FragReuseMap> reuse;
  std::set<uint32_t> live;  // fragment ids, with `reuse`
};

Result<ColumnSearch> OpenColumn(const std::shared_ptr<const Dataset>& dataset, const std::string& column) {
  ColumnSearch cs;
  cs.column = column;
  const Schema& schema = dataset->manifest().schema;
  for (const auto& m : dataset->indices()) {
    if (!IsInverted(m) || m.fields.size() != 1 || schema.FieldPath(m.fields[0]) != column) continue;
    if (!m.index_version) {
      // The legacy layout (pylance 0.27): past a deferred compaction pylance
      // 14 counts the documents it keeps in N but the dropped ones in the
      // token counts, and fails (negative weights) or misses live rows.
      LANCE_ASSIGN_OR_RAISE(bool old_rows, index::HoldsOldRowAddresses(*dataset, m));
      if (old_rows) {
        return Status::NotImplemented("full-text search: INVERTED index '", m.name, "' of ", dataset->uri(),
                                      " has the legacy layout and predates a compaction recorded in the fragment ",
                                      "reuse index (", table::kFragReuseIndexName, "); pylance 14 cannot search ",
                                      "it either (re-create the index)");
      }
    }
    LANCE_ASSIGN_OR_RAISE(auto index, index::InvertedIndex::OpenCached(*dataset, m));
    auto& covered = cs.segment_covered.emplace_back();
    if (m.fragment_ids) covered.insert(m.fragment_ids->begin(), m.fragment_ids->end());
    cs.covered.insert(covered.begin(), covered.end());
    cs.segments.push_back(std::move(index));
  }
  // As pylance 14, every segment's rows go through the map (addresses no
  // compaction moved map to themselves) and the statistics stay the
  // index's: documents a compaction dropped (deleted before it) still count
  // in N, the average length and the token counts.
  if (const auto& details = DatasetAccess::FragReuse(*dataset); details && !dataset->manifest().UsesStableRowIds()) {
    LANCE_ASSIGN_OR_RAISE(auto map, index::FragReuseMap::Make(*details));
    if (!map.empty()) cs.reuse = std::make_shared<const index::FragReuseMap>(std::move(map));
    for (const auto& f : dataset->manifest().fragments) cs.live.insert(static_cast<uint32_t>(f.id));
  }
  if (cs.segments.empty()) {
    return Status::Invalid("full-text search: column '", column, "' of ", dataset->uri(),
                           " has no INVERTED index (create one with create-index --type INVERTED)");
  }
  return cs;
}

// Levenshtein distance over code points, or `bound` + 1 once it exceeds it.
uint32_t EditDistance(const std::u32string& a, const std::u32string& b, uint32_t bound) {
  const size_t diff = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (diff > bound) return bound + 1;
  std::vector<uint32_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), 0u);
  for (size_t i = 1; i <= a.size(); ++i) {
    uint32_t diag = row[0];
    row[0] = static_cast<uint32_t>(i);
    uint32_t best = row[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const uint32_t up = row[j];
      row[j] = std::min({up + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      diag = up;
      best = std::min(best, row[j]);
    }
    if (best > bound) return bound + 1;
  }
  return row[b.size()];
}

// The tokens a partition's postings are read for, each with how often the
// query holds it and (fuzzy AND) which query terms it stands for.
struct PartitionTerms {
  std::vector<std::string> tokens;
  std::vector<float> occurrences;
  std::vector<uint64_t> terms_of;  // fuzzy: bit g for query term g
};

// A fuzzy match's expansion in one partition, as pylance expands it: each
// query term in turn, its tokens in key order appended to one list that
// stops growing at max_expansions (no term starts once it is full);
// tokens listed twice count twice.
Result<PartitionTerms> ExpandFuzzy(const index::InvertedIndex& seg, size_t p, const std::vector<std::string>& terms,
                                   const FullTextQuery& q) {
  std::vector<std::pair<std::string, size_t>> expanded;  // (token, query term)
  for (size_t g = 0; g < terms.size() && expanded.size() < q.max_expansions; ++g) {
    const std::u32string term = util::DecodeUtf8(terms[g]);
    const std::string prefix = terms[g].substr(0, std::min<size_t>(q.prefix_length, terms[g].size()));
    bool full = false;
    LANCE_RETURN_NOT_OK(seg.ForEachToken(p, prefix, [&](std::string_view token) -> Status {
      if (full) return Status::OK();
      if (EditDistance(term, util::DecodeUtf8(token), *q.fuzziness) > *q.fuzziness) return Status::OK();
      expanded.emplace_back(std::string(token), g);
      full = expanded.size() >= q.max_expansions;
      return Status::OK();
    }));
  }
  PartitionTerms out;
  for (const auto& [token, g] : expanded) {
    auto it = std::find(out.tokens.begin(), out.tokens.end(), token);
    const size_t k = it - out.tokens.begin();
    if (it == out.tokens.end()) {
      out.tokens.push_back(token);
      out.occurrences.push_back(0.0f);
      out.terms_of.push_back(0);
    }
    out.occurrences[k] += 1.0f;
    out.terms_of[k] |= uint64_t{1} << g;
  }
  return out;
}

struct Hit {
  float score;
  uint64_t row_id;
};

bool Better(const Hit& a, const Hit& b) { return a.score != b.score ? a.score > b.score : a.row_id < b.row_id; }

// A match or phrase on one column: its best `limit` rows among those the
// gate allows (in no order). Rows of uncovered fragments are read with
// `scan_filter` (the prefilter).
Result<std::vector<Hit>> SearchLeaf(const std::shared_ptr<const Dataset>& dataset, RowGate& gate,
                                    const FullTextQuery& query, const std::string& scan_filter, size_t limit) {
  LANCE_ASSIGN_OR_RAISE(auto cs, OpenColumn(dataset, query.column));
  const auto& tokenizer = cs.segments.front()->tokenizer();
  for (const auto& s : cs.segments) {
    if (s->tokenizer().params().ToJson() != tokenizer.params().ToJson()) {
      return Status::NotImplemented("full-text search: the INVERTED segments of column '", cs.column,
                                    "' use different tokenizers");
    }
  }
  const bool phrase = query.kind == FullTextQuery::Kind::kPhrase;
  if (phrase) {
    for (const auto& s : cs.segments) {
      if (!s->has_positions()) {
        return Status::Invalid("full-text search: a phrase query needs positions, but INVERTED index ",
                               s->metadata().name, " on '", cs.column,
                               "' was built without them (with_position=False)");
      }
    }
  }
  // pylance expands terms only for a fuzziness of 1 or more (none: exact).
  const bool fuzzy = !phrase && query.fuzziness.value_or(0) != 0;
  const std::vector<index::FtsToken> tokens = QueryTokens(tokenizer, query.terms);
  std::vector<std::string> distinct;
  for (const auto& t : tokens) {
    if (std::find(distinct.begin(), distinct.end(), t.text) == distinct.end()) distinct.push_back(t.text);
  }
  // How often the query holds each distinct token.
  std::vector<float> occurrences(distinct.size(), 0.0f);
  for (const auto& t : tokens) {
    occurrences[std::find(distinct.begin(), distinct.end(), t.text) - distinct.begin()] += 1.0f;
  }
  const bool need_all = phrase || query.op == FullTextQuery::Operator::kAnd;

  // The tokens each partition reads: the query's, or their fuzzy expansion
  // there (pylance splits a fuzzy query with its simple tokenizer alone).
  std::vector<std::vector<PartitionTerms>> part_terms(cs.segments.size());
  std::set<std::string> stat_tokens(distinct.begin(), distinct.end());
  if (fuzzy) {
    InvertedIndexParams simple;
    simple.lower_case = simple.stem = simple.remove_stop_words = simple.ascii_folding = false;
    simple.max_token_length.reset();
    LANCE_ASSIGN_OR_RAISE(auto splitter, index::FtsTokenizer::Make(simple, "fuzzy full-text query"));
    std::vector<std::string> terms;
    for (auto& t : splitter.Tokenize(query.terms)) terms.push_back(std::move(t.text));
    if (need_all && terms.size() > 64) {
      return Status::NotImplemented("full-text search: a fuzzy AND match of more than 64 terms (", terms.size(),
                                    ") is not supported by lance-cpp");
    }
    for (size_t s = 0; s < cs.segments.size(); ++s) {
      for (size_t p = 0; p < cs.segments[s]->num_partitions(); ++p) {
        LANCE_ASSIGN_OR_RAISE(auto pt, ExpandFuzzy(*cs.segments[s], p, terms, query));
        if (need_all && pt.tokens.size() > 0) {
          // A row must hold a token of every query term.
          uint64_t all = 0;
          for (size_t g = 0; g < terms.size(); ++g) all |= uint64_t{1} << g;
          uint64_t seen = 0;
          for (uint64_t m : pt.terms_of) seen |= m;
          if (seen != all) pt = PartitionTerms{};
        }
        stat_tokens.insert(pt.tokens.begin(), pt.tokens.end());
        part_terms[s].push_back(std::move(pt));
      }
    }
  }

  // The index's statistics.
  for (const auto& s : cs.segments) {
    cs.index_stats.num_docs += s->num_docs();
    cs.index_stats.total_tokens += s->total_tokens();
    for (const auto& t : stat_tokens) cs.index_stats.token_docs[t] += s->DocFreq(t);
  }
  cs.flat_stats = cs.index_stats;

  // Rows of fragments no segment covers, tokenized: the live ones, or those
  // passing a prefilter (which then also shape the statistics, as in pylance).
  std::vector<uint64_t> uncovered;
  for (const auto& f : dataset->manifest().fragments) {
    if (!cs.covered.count(f.id)) uncovered.push_back(f.id);
  }
  if (!uncovered.empty()) {
    ScanOptions scan;
    scan.columns = {cs.column};
    scan.with_row_id = true;
    scan.fragment_ids = uncovered;
    scan.filter = scan_filter;
    LANCE_ASSIGN_OR_RAISE(auto table, ScanBuilder(dataset).Options(scan).ToTable());
    // A prefilter may pass none of them (Concatenate needs a chunk).
    if (table->num_rows() > 0) {
      LANCE_ASSIGN_OR_RAISE(auto text, arrow::Concatenate(table->column(0)->chunks()));
      LANCE_ASSIGN_OR_RAISE(auto ids_array, arrow::Concatenate(table->GetColumnByName("_rowid")->chunks()));
      auto ids = std::static_pointer_cast<arrow::UInt64Array>(ids_array);
      std::vector<index::FtsToken> doc_tokens;
      for (int64_t i = 0; i < text->length(); ++i) {
        if (text->IsNull(i)) continue;
        std::string_view value;
        if (text->type_id() == arrow::Type::STRING) {
          value = std::static_pointer_cast<arrow::StringArray>(text)->GetView(i);
        } else if (text->type_id() == arrow::Type::LARGE_STRING) {
          value = std::static_pointer_cast<arrow::LargeStringArray>(text)->GetView(i);
        } else {
          return Status::NotImplemented("full-text search: column '", cs.column, "' of type ",
                                        text->type()->ToString(), " is not supported by lance-cpp (strings)");
        }
        doc_tokens.clear();
        tokenizer.Tokenize(value, &doc_tokens);
        if (doc_tokens.empty()) continue;
        FlatDoc doc;
        doc.row_id = ids->Value(i);
        doc.length = static_cast<uint32_t>(doc_tokens.size());
        for (const auto& t : doc_tokens) {
          ++doc.freqs[t.text];
          if (phrase) doc.positions[t.text].push_back(t.position);
        }
        cs.flat_stats.num_docs += 1;
        cs.flat_stats.total_tokens += doc.length;
        for (const auto& t : distinct) {
          if (doc.freqs.count(t)) cs.flat_stats.token_docs[t] += 1;
        }
        cs.flat_docs.push_back(std::move(doc));
      }
    }
  }

  std::vector<uint32_t> query_positions;
  std::vector<size_t> query_token_index;  // each query token's distinct token
  for (const auto& t : tokens) {
    query_positions.push_back(t.position);
    query_token_index.push_back(std::find(distinct.begin(), distinct.end(), t.text) - distinct.begin());
  }

  // Scored rows holding the query's tokens go through a bounded heap of
  // the best `limit` (best first; equal scores by row id). Whether a row is
  // returned (live, passing a prefilter, from where its index saw it, its
  // phrase present) is decided only for rows that would enter it: the score
  // does not depend on it.
  auto worse_first = [](const Hit& a, const Hit& b) { return Better(a, b); };  // heap front: the worst kept
  std::vector<Hit> best;
  auto would_enter = [&](const Hit& h) { return best.size() < limit || Better(h, best.front()); };
  auto enter = [&](const Hit& h) {
    if (best.size() == limit) {
      std::pop_heap(best.begin(), best.end(), worse_first);
      best.pop_back();
    }
    best.push_back(h);
    std::push_heap(best.begin(), best.end(), worse_first);
  };

  std::vector<std::vector<uint32_t>> pos_lists(tokens.size());
  std::vector<const std::vector<uint32_t>*> ptrs(tokens.size());

  // Indexed rows, partition by partition, scores accumulated densely.
  {
    const float avgdl = cs.index_stats.AvgDocLength();
    PartitionTerms exact{distinct, occurrences, {}};
    // Per-document scratch, kept across queries of a thread: a partition's
    // worth of floats is paged in once, not per query.
    thread_local std::vector<float> score;
    thread_local std::vector<uint16_t> matched;
    thread_local std::vector<uint64_t> terms_hit;
    std::vector<uint32_t> touched;
    for (size_t s = 0; s < cs.segments.size(); ++s) {
      const auto& seg = cs.segments[s];
      const std::set<uint32_t>& covered = cs.segment_covered[s];
      const std::set<uint32_t> deleted(seg->deleted_fragments().begin(), seg->deleted_fragments().end());
      for (size_t p = 0; p < seg->num_partitions() && limit > 0; ++p) {
        const PartitionTerms& pt = fuzzy ? part_terms[s][p] : exact;
        const size_t n = pt.tokens.size();
        std::vector<std::optional<index::PostingList>> lists(n);
        bool complete = true, any = false;
        for (size_t k = 0; k < n; ++k) {
          LANCE_ASSIGN_OR_RAISE(lists[k], seg->Postings(p, pt.tokens[k], phrase));
          complete = complete && lists[k].has_value();
          any = any || lists[k].has_value();
        }
        // Fuzzy expansions are tokens of the partition: AND is by query term.
        if (!any || (need_all && !fuzzy && !complete)) continue;
        const size_t num_docs = seg->PartitionDocs(p);
        if (score.size() < num_docs) {
          score.resize(num_docs, 0.0f);
          matched.resize(num_docs, 0);
        }
        const bool by_term = fuzzy && need_all;
        if (by_term && terms_hit.size() < num_docs) terms_hit.resize(num_docs, 0);
        uint64_t all_terms = 0;
        for (uint64_t m : pt.terms_of) all_terms |= m;
        touched.clear();
        for (size_t k = 0; k < n; ++k) {
          if (!lists[k]) continue;
          const auto& l = *lists[k];
          const float weight = pt.occurrences[k] * cs.index_stats.Idf(pt.tokens[k]);
          for (size_t i = 0; i < l.doc_ids.size(); ++i) {
            const uint32_t d = l.doc_ids[i];
            if (matched[d]++ == 0) touched.push_back(d);
            if (by_term) terms_hit[d] |= pt.terms_of[k];
            score[d] += weight * DocWeight(l.frequencies[i], seg->DocLength(p, d), avgdl);
          }
        }
        // Where each posting's positions start, for phrases.
        std::vector<std::vector<uint32_t>> starts;
        if (phrase) {
          starts.resize(n);
          for (size_t k = 0; k < n; ++k) {
            const auto& l = *lists[k];
            starts[k].resize(l.doc_ids.size() + 1, 0);
            for (size_t i = 0; i < l.doc_ids.size(); ++i) starts[k][i + 1] = starts[k][i] + l.frequencies[i];
          }
        }
        Status failed;
        for (uint32_t d : touched) {
          const float doc_score = score[d] * query.boost;
          const bool held = !need_all || (by_term ? terms_hit[d] == all_terms : matched[d] == n);
          score[d] = 0.0f;  // the scratch left clean for the next partition
          matched[d] = 0;
          if (by_term) terms_hit[d] = 0;
          if (!held || !failed.ok()) continue;
          const uint64_t old_row = seg->RowId(p, d);
          const std::optional<uint64_t> row = cs.reuse ? (*cs.reuse)(old_row) : old_row;
          if (!row) continue;  // deleted before a deferred compaction dropped it
          if (*row != old_row) {
            const auto to = static_cast<uint32_t>(*row >> 32);
            // Mapped into a fragment that is gone yet out of the bitmap (one
            // deleted whole stays in it): a later compaction without
            // defer_index_remap rewrote it and moved the bitmap but not the
            // index's old addresses. pylance 14 loses such rows silently.
            if (!cs.live.count(to) && !covered.count(to)) {
              failed = Status::NotImplemented(
                  "full-text search: INVERTED index '", seg->metadata().name, "' on '", cs.column,
                  "' predates a compaction recorded in the fragment reuse index (", table::kFragReuseIndexName,
                  ") and a later compaction without defer_index_remap moved its fragments but not its row ",
                  "addresses (pylance 14 then finds none of those rows); re-create the index");
              continue;
            }
          }
          const Hit h{doc_score, *row};
          if (!would_enter(h)) continue;
          // A row the index holds answers only from where the index saw it:
          // a stable row id an update moved to a fragment the index does not
          // cover is that fragment's row now (searched unindexed).
          auto fragment = gate.FragmentOf(h.row_id);
          if (!fragment.ok()) {
            failed = fragment.status();
            continue;
          }
          if (!*fragment || !covered.count(**fragment) || deleted.count(**fragment)) continue;
          if (phrase) {
            for (size_t q = 0; q < tokens.size(); ++q) {
              const size_t k = query_token_index[q];
              const auto& l = *lists[k];
              const size_t i = std::lower_bound(l.doc_ids.begin(), l.doc_ids.end(), d) - l.doc_ids.begin();
              pos_lists[q].assign(l.positions.begin() + starts[k][i], l.positions.begin() + starts[k][i + 1]);
              ptrs[q] = &pos_lists[q];
            }
            if (!PhraseMatches(ptrs, query_positions, query.slop)) continue;
          }
          enter(h);
        }
        LANCE_RETURN_NOT_OK(failed);
      }
    }
  }
  // Uncovered rows: matched exactly, fuzzy or not (as pylance's flat search).
  {
    const float avgdl = cs.flat_stats.AvgDocLength();
    for (size_t i = 0; i < cs.flat_docs.size() && limit > 0; ++i) {
      const auto& doc = cs.flat_docs[i];
      float score = 0.0f;
      size_t held = 0;
      for (size_t k = 0; k < distinct.size(); ++k) {
        auto it = doc.freqs.find(distinct[k]);
        if (it == doc.freqs.end()) continue;
        ++held;
        score += occurrences[k] * cs.flat_stats.Idf(distinct[k]) * DocWeight(it->second, doc.length, avgdl);
      }
      if (held == 0 || (need_all && held != distinct.size())) continue;
      const Hit h{score * query.boost, doc.row_id};
      if (!would_enter(h)) continue;
      LANCE_ASSIGN_OR_RAISE(const auto fragment, gate.FragmentOf(doc.row_id));
      if (!fragment) continue;
      if (phrase) {
        for (size_t q = 0; q < tokens.size(); ++q) ptrs[q] = &doc.positions.at(tokens[q].text);
        if (!PhraseMatches(ptrs, query_positions, query.slop)) continue;
      }
      enter(h);
    }
  }
  return best;
}

// Every row a query matches, with its score.
using Scores = std::unordered_map<uint64_t, float>;

struct Evaluator {
  const std::shared_ptr<const Dataset>& dataset;
  RowGate& gate;
  const std::string& scan_filter;

  Result<Scores> Leaf(const FullTextQuery& q) {
    LANCE_ASSIGN_OR_RAISE(auto hits, SearchLeaf(dataset, gate, q, scan_filter, std::numeric_limits<size_t>::max()));
    Scores out;
    for (const auto& h : hits) out.emplace(h.row_id, h.score);
    return out;
  }

  Result<Scores> Eval(const FullTextQuery& q) {
    switch (q.kind) {
      case FullTextQuery::Kind::kMatch:
      case FullTextQuery::Kind::kPhrase:
        return Leaf(q);
      case FullTextQuery::Kind::kMultiMatch: {
        // pylance: each column's match, a row scored by its best column.
        Scores out;
        for (size_t c = 0; c < q.columns.size(); ++c) {
          LANCE_ASSIGN_OR_RAISE(auto s, Leaf(ColumnMatch(q, c)));
          for (const auto& [row, score] : s) {
            auto [it, inserted] = out.emplace(row, score);
            if (!inserted) it->second = std::max(it->second, score);
          }
        }
        return out;
      }
      case FullTextQuery::Kind::kBoolean: {
        Scores out;
        bool has_must = false;
        for (const auto& [occur, clause] : q.clauses) {
          if (occur != FullTextQuery::Occur::kMust) continue;
          LANCE_ASSIGN_OR_RAISE(auto s, Eval(clause));
          if (!has_must) {
            out = std::move(s);
          } else {
            for (auto it = out.begin(); it != out.end();) {
              auto m = s.find(it->first);
              if (m == s.end()) {
                it = out.erase(it);
              } else {
                it->second += m->second;
                ++it;
              }
            }
          }
          has_must = true;
        }
        for (const auto& [occur, clause] : q.clauses) {
          if (occur != FullTextQuery::Occur::kShould) continue;
          LANCE_ASSIGN_OR_RAISE(auto s, Eval(clause));
          for (const auto& [row, score] : s) {
            auto it = out.find(row);
            if (it != out.end()) {
              it->second += score;
            } else if (!has_must) {
              out.emplace(row, score);
            }
          }
        }
        for (const auto& [occur, clause] : q.clauses) {
          if (occur != FullTextQuery::Occur::kMustNot) continue;
          LANCE_ASSIGN_OR_RAISE(auto s, Eval(clause));
          for (const auto& entry : s) out.erase(entry.first);
        }
        return out;
      }
      case FullTextQuery::Kind::kBoost: {
        LANCE_ASSIGN_OR_RAISE(auto out, Eval(*q.positive));
        LANCE_ASSIGN_OR_RAISE(auto neg, Eval(*q.negative));
        for (const auto& [row, score] : neg) {
          auto it = out.find(row);
          if (it != out.end()) it->second -= q.negative_boost * score;
        }
        return out;
      }
    }
    return Status::Invalid("full-text search: unknown query kind");
  }

  static FullTextQuery ColumnMatch(const FullTextQuery& q, size_t c) {
    FullTextQuery m = q;
    m.kind = FullTextQuery::Kind::kMatch;
    m.column = q.columns[c];
    m.columns.clear();
    m.boost = q.boosts.empty() ? 1.0f : q.boosts[c];
    m.boosts.clear();
    return m;
  }
};

// The query with every leaf's column set (pylance's fill_fts_query_column):
// a match without one searches `defaults` (several: a multi-match), a
// phrase needs exactly one. Also checks each node's shape.
Result<FullTextQuery> FillColumns(const FullTextQuery& q, const std::function<Result<std::vector<std::string>>()>& defaults) {
  FullTextQuery out = q;
  switch (q.kind) {
    case FullTextQuery::Kind::kMatch:
    case FullTextQuery::Kind::kPhrase: {
      if (!q.column.empty()) return out;
      LANCE_ASSIGN_OR_RAISE(auto columns, defaults());
      if (columns.size() == 1) {
        out.column = columns[0];
      } else if (q.kind == FullTextQuery::Kind::kPhrase) {
        return Status::Invalid("full-text search: a phrase query over ", columns.size(),
                               " columns: the column must be specified in the query");
      } else {
        out.kind = FullTextQuery::Kind::kMultiMatch;
        out.columns = std::move(columns);
      }
      return out;
    }
    case FullTextQuery::Kind::kMultiMatch:
      if (q.columns.empty()) return Status::Invalid("full-text search: a multi-match query needs columns");
      if (!q.boosts.empty() && q.boosts.size() != q.columns.size()) {
        return Status::Invalid("full-text search: a multi-match query has ", q.boosts.size(), " boosts for ",
                               q.columns.size(), " columns");
      }
      return out;
    case FullTextQuery::Kind::kBoolean: {
      bool positive = false;
      for (auto& [occur, clause] : out.clauses) {
        positive = positive || occur != FullTextQuery::Occur::kMustNot;
        LANCE_ASSIGN_OR_RAISE(clause, FillColumns(clause, defaults));
      }
      if (!positive) {
        return Status::Invalid("full-text search: a boolean query must have at least one should/must query");
      }
      return out;
    }
    case FullTextQuery::Kind::kBoost:
      if (!q.positive || !q.negative) {
        return Status::Invalid("full-text search: a boost query needs a positive and a negative query");
      }
      LANCE_ASSIGN_OR_RAISE(auto pos, FillColumns(*q.positive, defaults));
      LANCE_ASSIGN_OR_RAISE(auto neg, FillColumns(*q.negative, defaults));
      out.positive = std::make_shared<const FullTextQuery>(std::move(pos));
      out.negative = std::make_shared<const FullTextQuery>(std::move(neg));
      return out;
  }
  return Status::Invalid("full-text search: unknown query kind");
}

// The columns a leaf without one searches: `options`' columns, or every
// INVERTED-indexed one.
Result<std::vector<std::string>> DefaultColumns(const Dataset& dataset, const FullTextSearchOptions& options) {
  if (!options.columns.empty()) return options.columns;
  std::vector<std::string> columns;
  std::set<std::string> seen;
  for (const auto& m : dataset.indices()) {
    if (IsInverted(m) && m.fields.size() == 1) {
      const std::string path = dataset.manifest().schema.FieldPath(m.fields[0]);
      if (seen.insert(path).second) columns.push_back(path);
    }
  }
  if (columns.empty()) return Status::Invalid("full-text search: ", dataset.uri(), " has no INVERTED index");
  return columns;
}

std::string JoinIds(const std::vector<uint64_t>& ids) {
  std::string out;
  for (uint64_t id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

// The plan of one node of a filled query, indented by `depth`: each leaf's
// INVERTED indices (from the manifest; nothing is read) and the fragments
// none of them covers, which the search tokenizes (flat).
Status ExplainNode(const Dataset& dataset, const FullTextQuery& q, const std::string& filter, int depth,
                   std::string* out) {
  const std::string pad(2 * depth, ' ');
  auto leaf = [&](const std::string& kind, const std::string& column, const std::string& extra) -> Status {
    *out += pad + kind + ": column=" + column + ", terms=" + q.terms + extra + "\n";
    const Schema& schema = dataset.manifest().schema;
    std::set<uint64_t> covered;
    bool any = false;
    for (const auto& m : dataset.indices()) {
      if (!IsInverted(m) || m.fields.size() != 1 || schema.FieldPath(m.fields[0]) != column) continue;
      std::vector<uint64_t> ids;
      if (m.fragment_ids) ids.assign(m.fragment_ids->begin(), m.fragment_ids->end());
      covered.insert(ids.begin(), ids.end());
      *out += pad + "  InvertedIndexSearch: " + m.name + " (INVERTED), fragments=[" + JoinIds(ids) + "]\n";
      any = true;
    }
    if (!any) {
      return Status::Invalid("full-text search: column '", column, "' of ", dataset.uri(),
                             " has no INVERTED index (create one with create-index --type INVERTED)");
    }
    std::vector<uint64_t> flat;
    for (const auto& f : dataset.manifest().fragments) {
      if (!covered.count(f.id)) flat.push_back(f.id);
    }
    if (!flat.empty()) {
      *out += pad + "  FlatSearch: unindexed fragments=[" + JoinIds(flat) + "]" +
              (filter.empty() ? "" : ", prefilter=" + filter) + "\n";
    }
    return Status::OK();
  };
  switch (q.kind) {
    case FullTextQuery::Kind::kMatch:
      return leaf("MatchQuery", q.column,
                  std::string(", operator=") + (q.op == FullTextQuery::Operator::kAnd ? "AND" : "OR") +
                      (q.fuzziness.value_or(0) ? ", fuzziness=" + std::to_string(*q.fuzziness) : ""));
    case FullTextQuery::Kind::kPhrase:
      return leaf("PhraseQuery", q.column, ", slop=" + std::to_string(q.slop));
    case FullTextQuery::Kind::kMultiMatch:
      *out += pad + "MultiMatchQuery: best column of\n";
      for (size_t c = 0; c < q.columns.size(); ++c) {
        LANCE_RETURN_NOT_OK(ExplainNode(dataset, Evaluator::ColumnMatch(q, c), filter, depth + 1, out));
      }
      return Status::OK();
    case FullTextQuery::Kind::kBoolean: {
      *out += pad + "BooleanQuery:\n";
      for (const auto& [occur, clause] : q.clauses) {
        const char* name = occur == FullTextQuery::Occur::kMust     ? "must"
                           : occur == FullTextQuery::Occur::kShould ? "should"
                                                                    : "must_not";
        *out += pad + "  " + name + ":\n";
        LANCE_RETURN_NOT_OK(ExplainNode(dataset, clause, filter, depth + 2, out));
      }
      return Status::OK();
    }
    case FullTextQuery::Kind::kBoost:
      *out += pad + "BoostQuery: negative_boost=" + std::to_string(q.negative_boost) + "\n" + pad + "  positive:\n";
      LANCE_RETURN_NOT_OK(ExplainNode(dataset, *q.positive, filter, depth + 2, out));
      *out += pad + "  negative:\n";
      return ExplainNode(dataset, *q.negative, filter, depth + 2, out);
  }
  return Status::Invalid("full-text search: unknown query kind");
}

}  // namespace

Result<std::string> ExplainFullTextSearch(const std::shared_ptr<const Dataset>& dataset, const FullTextQuery& query,
                                          const FullTextSearchOptions& options) {
  if (options.limit && *options.limit < 0) return Status::Invalid("full-text search: negative limit");
  LANCE_ASSIGN_OR_RAISE(const FullTextQuery filled,
                        FillColumns(query, [&] { return DefaultColumns(*dataset, options); }));
  const bool postfilter = !options.filter.empty() && !options.prefilter;
  std::string out = "FullTextSearch: uri=" + dataset->uri() + ", version=" + std::to_string(dataset->version()) +
                    ", k=" + (options.limit ? std::to_string(*options.limit) : std::string("--")) + "\n";
  LANCE_RETURN_NOT_OK(ExplainNode(*dataset, filled, postfilter ? "" : options.filter, 1, &out));
  if (!options.filter.empty()) {
    // The filter's rows come from a scan with it: that scan's plan names
    // the scalar indices answering it.
    ScanOptions scan;
    scan.filter = options.filter;
    LANCE_ASSIGN_OR_RAISE(auto filter_plan, ScanBuilder(dataset).Options(scan).ExplainPlan());
    out += std::string("  ") + (postfilter ? "Postfilter (on the best k)" : "Prefilter (before ranking)") + ":\n";
    size_t start = 0;
    while (start < filter_plan.size()) {
      size_t end = filter_plan.find('\n', start);
      if (end == std::string::npos) end = filter_plan.size();
      out += "    " + filter_plan.substr(start, end - start) + "\n";
      start = end + 1;
    }
  }
  return out;
}

Result<std::shared_ptr<arrow::Table>> FullTextSearch(const std::shared_ptr<const Dataset>& dataset,
                                                     const FullTextQuery& query,
                                                     const FullTextSearchOptions& options) {
  if (options.limit && *options.limit < 0) return Status::Invalid("full-text search: negative limit");
  // A leaf without a column: the options' columns, or every INVERTED-indexed one.
  LANCE_ASSIGN_OR_RAISE(const FullTextQuery filled,
                        FillColumns(query, [&] { return DefaultColumns(*dataset, options); }));

  // Rows ranked: live ones, passing the filter when it comes first.
  const bool postfilter = !options.filter.empty() && !options.prefilter;
  const std::string scan_filter = postfilter ? "" : options.filter;
  LANCE_ASSIGN_OR_RAISE(auto gate, RowGate::Make(dataset, scan_filter));
  const size_t limit = options.limit ? static_cast<size_t>(*options.limit) : std::numeric_limits<size_t>::max();

  std::vector<Hit> best;
  if (filled.kind == FullTextQuery::Kind::kMatch || filled.kind == FullTextQuery::Kind::kPhrase) {
    LANCE_ASSIGN_OR_RAISE(best, SearchLeaf(dataset, gate, filled, scan_filter, limit));
  } else {
    Evaluator eval{dataset, gate, scan_filter};
    LANCE_ASSIGN_OR_RAISE(auto scores, eval.Eval(filled));
    for (const auto& [row, score] : scores) best.push_back(Hit{score, row});
  }
  std::sort(best.begin(), best.end(), Better);
  if (best.size() > limit) best.resize(limit);
  std::vector<std::pair<float, uint64_t>> hits;  // (score, row id)
  for (const auto& h : best) hits.emplace_back(h.score, h.row_id);
  if (postfilter) {
    LANCE_ASSIGN_OR_RAISE(auto passing, RowGate::Make(dataset, options.filter));
    std::vector<std::pair<float, uint64_t>> kept;
    for (const auto& h : hits) {
      LANCE_ASSIGN_OR_RAISE(const auto fragment, passing.FragmentOf(h.second));
      if (fragment) kept.push_back(h);
    }
    hits = std::move(kept);
  }

  std::vector<uint64_t> row_ids;
  std::vector<float> scores;
  for (const auto& [score, id] : hits) {
    row_ids.push_back(id);
    scores.push_back(static_cast<float>(score));
  }
  return scan::TakeScoredRows(dataset, row_ids, scores, options.projection, "_score", options.with_row_id);
}

}  // namespace lance
