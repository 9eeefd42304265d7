#include "lance/index/english_stemmer.h"

#include <array>
#include <utility>

#include "lance/util/utf8.h"

namespace lance::index {
namespace {

using Word = std::u32string;

bool IsVowel(char32_t c) {
  return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' || c == 'y';
}

// Snowball's v_WXY: the vowels and w, x, Y (which end no short syllable).
bool IsVowelWXY(char32_t c) { return IsVowel(c) || c == 'w' || c == 'x' || c == 'Y'; }

bool EndsWith(const Word& w, size_t end, std::u32string_view suffix) {
  return end >= suffix.size() && std::u32string_view(w).substr(end - suffix.size(), suffix.size()) == suffix;
}
bool EndsWith(const Word& w, std::u32string_view suffix) { return EndsWith(w, w.size(), suffix); }

bool HasVowel(const Word& w, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    if (IsVowel(w[i])) return true;
  }
  return false;
}

// The word before `end` ends in a short syllable (Snowball's shortv).
bool EndsShort(const Word& w, size_t end) {
  if (end >= 3 && !IsVowelWXY(w[end - 1]) && IsVowel(w[end - 2]) && !IsVowel(w[end - 3])) return true;
  if (end == 2 && !IsVowel(w[1]) && IsVowel(w[0])) return true;
  return EndsWith(w, end, U"past");  // pasted, pasting
}

void Replace(Word* w, size_t suffix_len, std::u32string_view with) {
  w->resize(w->size() - suffix_len);
  w->append(with);
}

// The longest of `suffixes` the word ends with (Snowball's among picks the
// longest and never falls back to a shorter one whose condition holds).
template <size_t N>
int LongestSuffix(const Word& w, const std::array<std::u32string_view, N>& suffixes) {
  int best = -1;
  for (size_t k = 0; k < N; ++k) {
    if (EndsWith(w, suffixes[k]) && (best < 0 || suffixes[k].size() > suffixes[best].size())) {
      best = static_cast<int>(k);
    }
  }
  return best;
}

struct Regions {
  size_t p1, p2;
};

Regions MarkRegions(const Word& w) {
  const size_t n = w.size();
  // After the first non-vowel that follows a vowel, from `from`.
  auto after_vc = [&](size_t from) -> size_t {
    size_t i = from;
    while (i < n && !IsVowel(w[i])) ++i;
    while (i < n && IsVowel(w[i])) ++i;
    return i < n ? i + 1 : n;
  };
  static constexpr std::u32string_view kPrefixes[] = {U"gener", U"commun", U"arsen", U"past",
                                                      U"univers", U"later", U"emerg", U"organ", U"inter"};
  size_t p1 = n;
  bool found = false;
  for (auto prefix : kPrefixes) {
    if (std::u32string_view(w).substr(0, prefix.size()) == prefix) {
      p1 = prefix.size();
      found = true;
      break;
    }
  }
  if (!found) {
    // gopast v gopast non-v; without both, neither region exists.
    size_t i = 0;
    while (i < n && !IsVowel(w[i])) ++i;
    if (i == n) return {n, n};
    while (i < n && IsVowel(w[i])) ++i;
    if (i == n) return {n, n};
    p1 = i + 1;
  }
  return {p1, p1 < n ? after_vc(p1) : n};
}

void Step1a(Word* w) {
  if (EndsWith(*w, U"'s'")) {
    w->resize(w->size() - 3);
  } else if (EndsWith(*w, U"'s")) {
    w->resize(w->size() - 2);
  } else if (EndsWith(*w, U"'")) {
    w->resize(w->size() - 1);
  }
  if (EndsWith(*w, U"sses")) {
    Replace(w, 4, U"ss");
  } else if (EndsWith(*w, U"ied") || EndsWith(*w, U"ies")) {
    Replace(w, 3, w->size() > 4 ? U"i" : U"ie");
  } else if (EndsWith(*w, U"ss") || EndsWith(*w, U"us")) {
  } else if (EndsWith(*w, U"s")) {
    // A vowel somewhere before the letter preceding the s.
    if (w->size() >= 3 && HasVowel(*w, 0, w->size() - 2)) w->pop_back();
  }
}

void Step1b(Word* w, const Regions& r) {
  static constexpr std::array<std::u32string_view, 6> kSuffixes = {U"eed", U"eedly", U"ed", U"edly", U"ing", U"ingly"};
  const int k = LongestSuffix(*w, kSuffixes);
  if (k < 0) return;
  const std::u32string_view suffix = kSuffixes[k];
  const size_t start = w->size() - suffix.size();
  const std::u32string_view stem = std::u32string_view(*w).substr(0, start);
  if (suffix == U"eed" || suffix == U"eedly") {
    if (stem == U"proc" || stem == U"exc" || stem == U"succ") return;
    if (start >= r.p1) Replace(w, suffix.size(), U"ee");
    return;
  }
  if (suffix == U"ing") {
    // dying -> die, lying -> lie, tying -> tie, vying -> vie.
    if (stem.size() == 2 && stem[1] == 'y' && !IsVowel(stem[0])) {
      Replace(w, 4, U"ie");
      return;
    }
    if (stem == U"inn" || stem == U"out" || stem == U"cann" || stem == U"herr" || stem == U"earr" ||
        stem == U"even") {
      return;
    }
  }
  if (!HasVowel(*w, 0, start)) return;
  w->resize(start);
  if (EndsWith(*w, U"at") || EndsWith(*w, U"bl") || EndsWith(*w, U"iz")) {
    w->push_back('e');
    return;
  }
  const size_t n = w->size();
  if (n >= 2 && (*w)[n - 1] == (*w)[n - 2]) {
    const char32_t c = (*w)[n - 1];
    if (c == 'b' || c == 'd' || c == 'f' || c == 'g' || c == 'm' || c == 'n' || c == 'p' || c == 'r' || c == 't') {
      // add, ebb, odd... keep their double.
      const bool aeo_word = n == 3 && ((*w)[0] == 'a' || (*w)[0] == 'e' || (*w)[0] == 'o');
      if (!aeo_word) w->pop_back();
      return;
    }
  }
  if (n == r.p1 && EndsShort(*w, n)) w->push_back('e');
}

void Step1c(Word* w) {
  const size_t n = w->size();
  if (n >= 3 && ((*w)[n - 1] == 'y' || (*w)[n - 1] == 'Y') && !IsVowel((*w)[n - 2])) (*w)[n - 1] = 'i';
}

void Step2(Word* w, const Regions& r) {
  static constexpr std::array<std::u32string_view, 25> kSuffixes = {
      U"tional", U"enci",  U"anci",  U"abli",  U"entli",   U"izer", U"ization", U"ational", U"ation",
      U"ator",   U"alism", U"aliti", U"alli",  U"fulness", U"ousli", U"ousness", U"iveness", U"iviti",
      U"biliti", U"bli",   U"ogist", U"ogi",   U"fulli",   U"lessli", U"li"};
  static constexpr std::array<std::u32string_view, 25> kReplacements = {
      U"tion", U"ence", U"ance", U"able", U"ent", U"ize", U"ize", U"ate", U"ate", U"ate", U"al", U"al", U"al",
      U"ful",  U"ous",  U"ous",  U"ive",  U"ive", U"ble", U"ble", U"og",  U"og",  U"ful", U"less", U""};
  const int k = LongestSuffix(*w, kSuffixes);
  if (k < 0) return;
  const size_t start = w->size() - kSuffixes[k].size();
  if (start < r.p1) return;
  if (kSuffixes[k] == U"ogi" && (start == 0 || (*w)[start - 1] != 'l')) return;
  if (kSuffixes[k] == U"li") {
    static constexpr std::u32string_view kValidLi = U"cdeghkmnrt";
    if (start == 0 || kValidLi.find((*w)[start - 1]) == std::u32string_view::npos) return;
  }
  Replace(w, kSuffixes[k].size(), kReplacements[k]);
}

void Step3(Word* w, const Regions& r) {
  static constexpr std::array<std::u32string_view, 9> kSuffixes = {U"tional", U"ational", U"alize", U"icate", U"iciti",
                                                                    U"ical",   U"ful",     U"ness",  U"ative"};
  static constexpr std::array<std::u32string_view, 9> kReplacements = {U"tion", U"ate", U"al", U"ic", U"ic",
                                                                       U"ic",   U"",    U"",   U""};
  const int k = LongestSuffix(*w, kSuffixes);
  if (k < 0) return;
  const size_t start = w->size() - kSuffixes[k].size();
  if (start < r.p1) return;
  if (kSuffixes[k] == U"ative" && start < r.p2) return;
  Replace(w, kSuffixes[k].size(), kReplacements[k]);
}

void Step4(Word* w, const Regions& r) {
  static constexpr std::array<std::u32string_view, 18> kSuffixes = {
      U"al",  U"ance", U"ence", U"er",  U"ic",  U"able", U"ible", U"ant", U"ement",
      U"ment", U"ent", U"ism",  U"ate", U"iti", U"ous",  U"ive",  U"ize", U"ion"};
  const int k = LongestSuffix(*w, kSuffixes);
  if (k < 0) return;
  const size_t start = w->size() - kSuffixes[k].size();
  if (start < r.p2) return;
  if (kSuffixes[k] == U"ion" && (start == 0 || ((*w)[start - 1] != 's' && (*w)[start - 1] != 't'))) return;
  w->resize(start);
}

void Step5(Word* w, const Regions& r) {
  const size_t n = w->size();
  if (n == 0) return;
  const size_t start = n - 1;
  if ((*w)[start] == 'e') {
    if (start >= r.p2 || (start >= r.p1 && !EndsShort(*w, start))) w->pop_back();
  } else if ((*w)[start] == 'l') {
    if (start >= r.p2 && start >= 1 && (*w)[start - 1] == 'l') w->pop_back();
  }
}

}  // namespace

std::string StemEnglish(std::string_view utf8) {
  static constexpr std::pair<std::u32string_view, std::u32string_view> kExceptions[] = {
      {U"skis", U"ski"},     {U"skies", U"sky"}, {U"idly", U"idl"},   {U"gently", U"gentl"}, {U"ugly", U"ugli"},
      {U"early", U"earli"},  {U"only", U"onli"}, {U"singly", U"singl"}, {U"sky", U"sky"},    {U"news", U"news"},
      {U"howe", U"howe"},    {U"atlas", U"atlas"}, {U"cosmos", U"cosmos"}, {U"bias", U"bias"}, {U"andes", U"andes"}};
  Word w = util::DecodeUtf8(utf8);
  for (const auto& [word, stem] : kExceptions) {
    if (w == word) return util::EncodeUtf8(stem);
  }
  if (w.size() < 3) return std::string(utf8);

  // Prelude: a leading apostrophe goes; y as a consonant becomes Y.
  if (w[0] == '\'') w.erase(0, 1);
  bool y_found = false;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] == 'y' && (i == 0 || IsVowel(w[i - 1]))) {
      w[i] = 'Y';
      y_found = true;
    }
  }
  const Regions r = MarkRegions(w);
  Step1a(&w);
  Step1b(&w, r);
  Step1c(&w);
  Step2(&w, r);
  Step3(&w, r);
  Step4(&w, r);
  Step5(&w, r);
  if (y_found) {
    for (auto& c : w) {
      if (c == 'Y') c = 'y';
    }
  }
  return util::EncodeUtf8(w);
}

}  // namespace lance::index
