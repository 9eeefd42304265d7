// FSST as the reference's own port (rust/compression/fsst) stores it.
//
// Serialized symbol table: exactly 2312 bytes.
//   [0, 8)    u64 LE header: bits 32..63 "FSST" (0x46535354), bit 24 "encoder
//             switch" (1 = values are compressed, 0 = values stored as-is),
//             bits 16..23 suffix limit, bits 8..15 terminator byte,
//             bits 0..7 number of symbols n (at most 255).
//   [8, 8+8n) symbol i as a u64 LE (its bytes, first byte lowest).
//   then n bytes: the length (1..8) of symbol i. The rest is zero.
// Compressed value: a sequence of codes. Code c < 255 stands for symbol c;
// code 255 is an escape, and the next byte is a literal.
//
// Compression follows the reference step for step so that the same training
// sample yields the same symbol table and the same codes: pages whose data
// buffer is under 32 KiB are stored as-is (switch off); otherwise a ~16 KiB
// sample of whole values trains the table over six rounds. The reference
// draws that sample with an OS-seeded RNG; this port uses a fixed-seed
// generator, so its output is deterministic and equals the reference's
// exactly whenever the sample cannot differ (e.g. when all values are equal).
// Quirks of the reference that affect the table are kept on purpose and
// marked "(reference)".

#include "lance/file/compression/fsst.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

namespace lance::file::compression {

namespace {

constexpr size_t kSymbolTableSize = 8 + 256 * 8 + 256;  // 2312
constexpr uint64_t kMagic = uint64_t{0x46535354} << 32;   // "FSST"
constexpr uint8_t kEscape = 255;
constexpr size_t kLeastInputSize = 32 * 1024;
constexpr size_t kSampleTarget = size_t{1} << 14;
constexpr size_t kSampleMax = 2 * kSampleTarget;

constexpr uint16_t kCodeBase = 256;
constexpr uint16_t kCodeMax = 512;
constexpr uint16_t kCodeMask = kCodeMax - 1;
constexpr uint64_t kIclFree = uint64_t{1} << 32;
constexpr unsigned kLenShiftInIcl = 28;
constexpr unsigned kCodeShiftInIcl = 16;
constexpr unsigned kLenShiftInCode = 12;
constexpr size_t kHashTabSize = 1024;
constexpr uint32_t kMaxSymbolLength = 8;
constexpr uint16_t kMaxSymbols = 255;

uint64_t FsstHash(uint64_t w) {
  const uint64_t x = w * uint64_t{2971215073};
  return x ^ (x >> 15);
}

uint64_t LoadLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Up to 8 bytes, zero-padded, first byte lowest.
uint64_t LoadLePadded(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = std::min<size_t>(n, 8); i-- > 0;) v = (v << 8) | p[i];
  return v;
}

void StoreLe64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// ---------------------------------------------------------------------------
// Symbols and the training-time symbol table.

struct Symbol {
  uint64_t val = 0;
  // bits 0..15 ignored bits ((8 - len) * 8), 16..27 code, 28..31 length;
  // kIclFree marks an empty hash slot.
  uint64_t icl = kIclFree;

  static Symbol FromByte(uint8_t c, uint16_t code) {
    Symbol s;
    s.val = c;
    s.icl = (uint64_t{1} << kLenShiftInIcl) | (uint64_t{code} << kCodeShiftInIcl) | 56;
    return s;
  }
  void SetCodeLen(uint16_t code, uint32_t len) {
    const uint64_t ignored = len >= 8 ? 0 : (8 - uint64_t{len}) * 8;
    icl = (uint64_t{len} << kLenShiftInIcl) | (uint64_t{code} << kCodeShiftInIcl) | ignored;
  }
  uint32_t Len() const { return static_cast<uint32_t>(icl >> kLenShiftInIcl); }
  uint16_t Code() const { return static_cast<uint16_t>((icl >> kCodeShiftInIcl) & kCodeMask); }
  uint32_t IgnoredBits() const { return static_cast<uint32_t>(icl & 0xFFFF); }
  uint8_t First() const { return static_cast<uint8_t>(val & 0xFF); }
  uint16_t First2() const { return static_cast<uint16_t>(val & 0xFFFF); }
  uint64_t HashValue() const { return FsstHash(val & 0xFFFFFF); }

  // `right` following `left`, cut to 8 bytes; code 511 until added.
  static Symbol Concat(const Symbol& left, const Symbol& right) {
    Symbol s;
    const uint32_t len = std::min(left.Len() + right.Len(), kMaxSymbolLength);
    s.SetCodeLen(kCodeMask, len);
    const uint32_t shift = 8 * left.Len();
    s.val = (shift >= 64 ? 0 : right.val << shift) | left.val;
    return s;
  }
};

struct SymbolTable {
  std::array<uint16_t, 65536> short_codes;
  std::array<uint16_t, 256> byte_codes;
  std::array<Symbol, kCodeMax> symbols;
  std::array<Symbol, kHashTabSize> hash_tab;
  uint16_t n_symbols = 0;
  uint16_t terminator = 256;
  uint16_t suffix_lim = kCodeMax;
  std::array<uint8_t, 9> len_histo{};

  SymbolTable() { Clear(); }

  // Note: keeps terminator and suffix_lim (reference).
  void Clear() {
    for (int i = 0; i < 256; ++i) symbols[i] = Symbol::FromByte(static_cast<uint8_t>(i), static_cast<uint16_t>(i));
    for (int i = 256; i < kCodeMax; ++i) symbols[i] = Symbol::FromByte(0, kCodeMask);
    for (int i = 0; i < 256; ++i) byte_codes[i] = static_cast<uint16_t>(i);
    for (int i = 0; i < 65536; ++i) short_codes[i] = static_cast<uint16_t>(i & 0xFF);
    hash_tab.fill(Symbol{});
    len_histo.fill(0);
    n_symbols = 0;
  }

  bool HashInsert(const Symbol& s) {
    Symbol& slot = hash_tab[s.HashValue() & (kHashTabSize - 1)];
    if (slot.icl < kIclFree) return false;  // collision
    slot.icl = s.icl;
    slot.val = s.val & (~uint64_t{0} >> s.IgnoredBits());
    return true;
  }

  bool Add(Symbol s) {
    const uint16_t code = static_cast<uint16_t>(kCodeBase + n_symbols);
    const uint32_t len = s.Len();
    s.SetCodeLen(code, len);
    if (len == 1) {
      byte_codes[s.First()] = code;
    } else if (len == 2) {
      short_codes[s.First2()] = code;
    } else if (!HashInsert(s)) {
      return false;
    }
    symbols[code] = s;
    ++n_symbols;
    ++len_histo[len - 1];
    return true;
  }

  // The code of the longest symbol at the start of `in` (non-empty).
  uint16_t FindLongest(const uint8_t* in, size_t size) const {
    const size_t len = std::min<size_t>(size, kMaxSymbolLength);
    if (len < 2) return byte_codes[in[0]] & kCodeMask;
    if (len == 2) {
      const uint16_t sc = short_codes[(size_t{in[1]} << 8) | in[0]];
      return sc >= kCodeBase ? (sc & kCodeMask) : (byte_codes[in[0]] & kCodeMask);
    }
    // (reference) hashes the whole zero-padded word rather than its first
    // three bytes, and never falls back to a two-byte symbol here.
    const uint64_t word = LoadLePadded(in, len);
    const Symbol& s = hash_tab[FsstHash(word) & (kHashTabSize - 1)];
    if (s.icl < kIclFree && s.val == (word & (~uint64_t{0} >> s.IgnoredBits()))) return s.Code();
    return byte_codes[in[0]] & kCodeMask;
  }

  // Renumbers codes to 0..n-1 grouped by length (2, 3, ..., 8, then 1).
  void Finalize() {
    std::array<uint16_t, 256> new_code{};
    std::array<uint8_t, 8> rsum{};
    const uint16_t byte_lim = static_cast<uint16_t>(n_symbols - len_histo[0]);
    rsum[0] = static_cast<uint8_t>(byte_lim);
    for (int i = 1; i < 7; ++i) rsum[i + 1] = static_cast<uint8_t>(rsum[i] + len_histo[i]);

    uint16_t suffix = 0;
    uint8_t j = rsum[2];
    for (uint16_t i = 0; i < n_symbols; ++i) {
      Symbol s1 = symbols[kCodeBase + i];
      const uint32_t len = s1.Len();
      if (len == 2) {
        bool has_suffix = false;
        const uint16_t first2 = s1.First2();
        for (uint16_t k = 0; k < n_symbols; ++k) {
          const Symbol& s2 = symbols[kCodeBase + k];
          if (k != i && s2.Len() > 2 && first2 == s2.First2()) has_suffix = true;
        }
        new_code[i] = has_suffix ? suffix++ : static_cast<uint16_t>(--j);
      } else {
        new_code[i] = rsum[len - 1];
        ++rsum[len - 1];
      }
      s1.SetCodeLen(new_code[i], len);
      symbols[new_code[i]] = s1;
    }
    for (int i = 0; i < 256; ++i) {
      if ((byte_codes[i] & kCodeMask) >= kCodeBase) {
        byte_codes[i] = static_cast<uint16_t>(new_code[byte_codes[i] & 0xFF] | (1 << kLenShiftInCode));
      } else {
        byte_codes[i] = static_cast<uint16_t>(511 | (1 << kLenShiftInCode));
      }
    }
    for (int i = 0; i < 65536; ++i) {
      // (reference) strictly greater: the symbol added first (code 256) is
      // never reached through short_codes.
      if ((short_codes[i] & kCodeMask) > kCodeBase) {
        short_codes[i] = static_cast<uint16_t>(new_code[short_codes[i] & 0xFF] | (2 << kLenShiftInCode));
      } else {
        short_codes[i] = static_cast<uint16_t>(byte_codes[i & 0xFF] | (1 << kLenShiftInCode));
      }
    }
    for (auto& slot : hash_tab) {
      if (slot.icl < kIclFree) slot = symbols[new_code[slot.Code() & 0xFF]];
    }
    suffix_lim = suffix;
  }
};

struct Counters {
  std::vector<uint16_t> count1 = std::vector<uint16_t>(kCodeMax, 0);
  std::vector<uint16_t> count2 = std::vector<uint16_t>(size_t{kCodeMax} * kCodeMax, 0);

  void Inc1(size_t a) {
    if (count1[a] != 0xFFFF) ++count1[a];
  }
  void Inc2(size_t a, size_t b) {
    uint16_t& c = count2[a * kCodeMax + b];
    if (c != 0xFFFF) ++c;
  }
  uint16_t Get2(size_t a, size_t b) const { return count2[a * kCodeMax + b]; }
};

uint64_t SaturatingGain(uint32_t len, uint16_t code) {
  const uint32_t cost = 1 + (code < kCodeBase ? 1 : 0);
  return len > cost ? len - cost : 0;
}

struct Sample {
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> offsets;
};

// Whole values drawn until ~16 KiB; deterministic (the reference's RNG is
// seeded from the OS).
Sample MakeSample(std::span<const uint8_t> data, std::span<const uint64_t> offsets) {
  Sample sample;
  if (data.size() <= kSampleTarget) {
    sample.bytes.assign(data.begin(), data.end());
    sample.offsets.assign(offsets.begin(), offsets.end());
    return sample;
  }
  const size_t n = offsets.size() - 1;
  uint64_t state = 0x243F6A8885A308D3ULL;  // SplitMix64
  auto next = [&state]() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  };
  sample.bytes.reserve(kSampleMax);
  sample.offsets.push_back(0);
  // The reference draws until the target is reached, which takes forever when
  // almost every value is empty; stop after a bounded number of draws.
  constexpr size_t kMaxDraws = size_t{1} << 22;
  for (size_t draws = 0; sample.bytes.size() < kSampleTarget && draws < kMaxDraws; ++draws) {
    const size_t pick = static_cast<size_t>(next() % n);
    sample.bytes.insert(sample.bytes.end(), data.begin() + static_cast<ptrdiff_t>(offsets[pick]),
                        data.begin() + static_cast<ptrdiff_t>(offsets[pick + 1]));
    sample.offsets.push_back(sample.bytes.size());
  }
  sample.offsets.push_back(sample.bytes.size());
  return sample;
}

// One pass over the sample with the current table: the gain, and the symbol
// and symbol-pair frequencies.
int64_t CompressCount(const SymbolTable& st, const Sample& sample, size_t frac, Counters* counters) {
  int64_t gain = 0;
  const uint8_t* base = sample.bytes.data();
  for (size_t i = 1; i < sample.offsets.size(); ++i) {
    if (sample.offsets[i] == sample.offsets[i - 1]) continue;
    const uint8_t* word = base + sample.offsets[i - 1];
    const size_t size = sample.offsets[i] - sample.offsets[i - 1];

    size_t curr = 0;
    uint16_t prev = st.FindLongest(word, size);
    curr += st.symbols[prev].Len();
    gain += static_cast<int64_t>(SaturatingGain(st.symbols[prev].Len(), prev));

    while (curr < size) {
      counters->Inc1(prev);
      if (st.symbols[prev].Len() != 1) counters->Inc1(word[curr]);
      uint16_t code;
      uint32_t len;
      if (size > 7 && curr < size - 7) {
        uint64_t w = LoadLePadded(word + curr, 8);
        const Symbol& s = st.hash_tab[FsstHash(w & 0xFFFFFF) & (kHashTabSize - 1)];
        const uint16_t sc = st.short_codes[w & 0xFFFF] & kCodeMask;
        w &= ~uint64_t{0} >> static_cast<uint8_t>(s.icl);
        if (s.icl < kIclFree && s.val == w) {
          code = s.Code();
          len = s.Len();
        } else if (sc >= kCodeBase) {
          code = sc;
          len = 2;
        } else {
          code = st.byte_codes[w & 0xFF] & kCodeMask;
          len = 1;
        }
      } else {
        code = st.FindLongest(word + curr, size - curr);
        len = st.symbols[code].Len();
      }
      gain += static_cast<int64_t>(SaturatingGain(len, code));
      if (frac < 128) {
        counters->Inc2(prev, code);
        if (len > 1) counters->Inc2(prev, word[curr]);
      }
      curr += len;
      prev = code;
    }
    counters->Inc1(prev);
  }
  return gain;
}

// Rebuilds `st` from the candidates the counters suggest.
void MakeTable(SymbolTable* st, Counters* counters, size_t frac) {
  struct Candidate {
    Symbol symbol;
    uint32_t gain;
  };
  // Keyed like the reference's HashSet<QSymbol>: by value and icl.
  std::map<std::pair<uint64_t, uint64_t>, Candidate> candidates;
  const uint64_t min_count = (5 * frac) / 128;
  auto add_or_inc = [&](const Symbol& s, uint64_t count) {
    if (count < min_count) return;
    const uint32_t gain = static_cast<uint32_t>(count * s.Len());
    auto [it, inserted] = candidates.try_emplace({s.val, s.icl}, Candidate{s, 0});
    it->second.gain += gain;
  };

  counters->count1[st->terminator] = 0xFFFF;
  const uint8_t terminator_byte = static_cast<uint8_t>(st->terminator);
  const size_t limit = kCodeBase + st->n_symbols;
  for (size_t pos1 = 0; pos1 < limit; ++pos1) {
    const uint16_t cnt1 = counters->count1[pos1];
    if (cnt1 == 0) continue;
    const Symbol s1 = st->symbols[pos1];
    add_or_inc(s1, (s1.Len() == 1 ? 8 : 1) * uint64_t{cnt1});
    if (s1.First() == terminator_byte) continue;
    if (frac >= 128 || s1.Len() == kMaxSymbolLength) continue;
    for (size_t pos2 = 0; pos2 < limit; ++pos2) {
      const uint16_t cnt2 = counters->Get2(pos1, pos2);
      if (cnt2 == 0) continue;
      const Symbol& s2 = st->symbols[pos2];
      // Multi-byte symbols never contain the terminator byte.
      if (s2.First() != terminator_byte) add_or_inc(Symbol::Concat(s1, s2), cnt2);
    }
  }

  std::vector<Candidate> queue;
  queue.reserve(candidates.size());
  for (const auto& [key, c] : candidates) queue.push_back(c);
  // The reference pops a max-heap ordered by gain, then by smaller value.
  std::sort(queue.begin(), queue.end(), [](const Candidate& a, const Candidate& b) {
    if (a.gain != b.gain) return a.gain > b.gain;
    if (a.symbol.val != b.symbol.val) return a.symbol.val < b.symbol.val;
    return a.symbol.icl < b.symbol.icl;
  });
  st->Clear();
  for (const Candidate& c : queue) {
    if (st->n_symbols >= kMaxSymbols) break;
    st->Add(c.symbol);
  }
}

Result<std::unique_ptr<SymbolTable>> BuildSymbolTable(const Sample& sample) {
  auto st = std::make_unique<SymbolTable>();
  auto best = std::make_unique<SymbolTable>();
  int64_t best_gain = -static_cast<int64_t>(kSampleMax);

  std::array<size_t, 256> histo{};
  for (uint8_t c : sample.bytes) ++histo[c];
  size_t min_histo = kSampleMax;
  for (int i = 0; i < 256; ++i) {
    if (histo[i] < min_histo) {
      min_histo = histo[i];
      st->terminator = static_cast<uint16_t>(i);
    }
  }

  for (const size_t frac : std::array<size_t, 6>{8, 38, 68, 98, 108, 128}) {
    Counters counters;
    const int64_t gain = CompressCount(*st, sample, frac, &counters);
    if (gain >= best_gain) {
      best_gain = gain;
      *best = *st;
    }
    MakeTable(st.get(), &counters, frac);
  }
  best->Finalize();
  if (best->n_symbols == 0) {
    return Status::Invalid("FSST: failed to build a symbol table from a sample of ",
                           sample.bytes.size(), " bytes");
  }
  return best;
}

// Writes the codes for `in` (one value) at `out` (room for 2 * size bytes)
// and returns the end of what it wrote.
uint8_t* CompressValue(const SymbolTable& st, const uint8_t* in, size_t size, uint8_t* out) {
  // The reference works on 511-byte pieces copied into a zeroed 520-byte
  // buffer (fresh per value) followed by the terminator byte, and loads eight
  // bytes at a time from it. The same words are loaded here: from the value
  // itself while all eight bytes lie inside the piece, else from a copy of
  // the piece's last bytes followed by the terminator and zeros.
  size_t pos = 0;
  while (pos < size) {
    const size_t piece = std::min<size_t>(511, size - pos);
    const uint8_t* src = in + pos;
    const size_t tail_start = piece > 8 ? piece - 8 : 0;
    std::array<uint8_t, 24> tail{};
    std::memcpy(tail.data(), src + tail_start, piece - tail_start);
    tail[piece - tail_start] = static_cast<uint8_t>(st.terminator);
    size_t p = 0;
    while (p < piece) {
      const uint64_t word = p + 8 <= piece ? LoadLe64(src + p) : LoadLe64(tail.data() + (p - tail_start));
      const uint16_t short_code = st.short_codes[word & 0xFFFF];
      const Symbol& s = st.hash_tab[FsstHash(word & 0xFFFFFF) & (kHashTabSize - 1)];
      uint16_t code;
      if (s.icl < kIclFree && s.val == (word & (~uint64_t{0} >> (s.icl & 0xFFFF)))) {
        code = static_cast<uint16_t>(s.icl >> 16);
      } else {
        code = short_code;
      }
      *out++ = static_cast<uint8_t>(code & 0xFF);
      if (code & 256) *out++ = static_cast<uint8_t>(word & 0xFF);  // escaped literal
      p += code >> kLenShiftInCode;
    }
    pos += piece;
  }
  return out;
}

std::string SerializeTable(const SymbolTable* st, bool compressed) {
  std::string out(kSymbolTableSize, '\0');
  auto* p = reinterpret_cast<uint8_t*>(out.data());
  uint64_t header = kMagic;
  if (st == nullptr) {
    // An untrained table: suffix limit 512, terminator 256 and no symbols,
    // all of which the reference truncates to 0.
    StoreLe64(p, header);
    return out;
  }
  header |= (uint64_t{compressed} << 24) | (uint64_t{st->suffix_lim & 255u} << 16) |
            (uint64_t{st->terminator & 255u} << 8) | uint64_t{st->n_symbols & 255u};
  StoreLe64(p, header);
  size_t pos = 8;
  for (uint16_t i = 0; i < st->n_symbols; ++i, pos += 8) StoreLe64(p + pos, st->symbols[i].val);
  for (uint16_t i = 0; i < st->n_symbols; ++i) p[pos++] = static_cast<uint8_t>(st->symbols[i].Len());
  return out;
}

Status CheckOffsets(const char* what, std::span<const uint64_t> offsets, size_t data_size) {
  if (offsets.empty()) return Status::Invalid("FSST ", what, ": offsets must have at least one entry");
  for (size_t i = 1; i < offsets.size(); ++i) {
    if (offsets[i] < offsets[i - 1]) {
      return Status::Invalid("FSST ", what, ": offsets decrease at index ", i, " (", offsets[i - 1],
                             " then ", offsets[i], ")");
    }
  }
  if (offsets.back() > data_size) {
    return Status::Invalid("FSST ", what, ": last offset ", offsets.back(), " is past the ",
                           data_size, "-byte data");
  }
  return Status::OK();
}

// Values as they are: offsets rebased to 0, data cut to what they cover.
VariableValues Verbatim(std::span<const uint64_t> offsets, std::string_view data) {
  VariableValues out;
  const uint64_t base = offsets.front();
  out.offsets.reserve(offsets.size());
  for (uint64_t o : offsets) out.offsets.push_back(o - base);
  out.data.assign(data.substr(base, offsets.back() - base));
  return out;
}

}  // namespace

Result<FsstDecoder> FsstDecoder::Make(std::string_view symbol_table) {
  if (symbol_table.size() < 8) {
    return Status::Invalid("FSST symbol table: ", symbol_table.size(), " bytes, expected ",
                           kSymbolTableSize);
  }
  const auto* table = reinterpret_cast<const uint8_t*>(symbol_table.data());
  const uint64_t header = LoadLe64(table);
  if ((header & kMagic) != kMagic) return Status::Invalid("FSST symbol table: bad magic");
  if (symbol_table.size() != kSymbolTableSize) {
    return Status::Invalid("FSST symbol table: ", symbol_table.size(), " bytes, expected ",
                           kSymbolTableSize);
  }
  FsstDecoder decoder;
  decoder.compressed_ = (header & (uint64_t{1} << 24)) != 0;
  decoder.num_symbols_ = static_cast<uint32_t>(header & 255);
  if (!decoder.compressed_) return decoder;
  const size_t n = decoder.num_symbols_;
  for (size_t i = 0; i < n; ++i) {
    decoder.symbols_[i] = LoadLe64(table + 8 + 8 * i);
    decoder.lens_[i] = table[8 + 8 * n + i];
    if (decoder.lens_[i] < 1 || decoder.lens_[i] > kMaxSymbolLength) {
      return Status::Invalid("FSST symbol table: symbol ", i, " has length ", int{decoder.lens_[i]});
    }
  }
  return decoder;
}

namespace {

// Grows `out` to hold at least `need` bytes, geometrically (Reserve alone
// grows to exactly what is asked). Kept out of line: the hot loop only
// compares against the capacity it caches.
Status Grow(arrow::ResizableBuffer* out, uint64_t need) {
  const uint64_t grown = std::max<uint64_t>(need, 2 * static_cast<uint64_t>(out->capacity()));
  auto st = out->Reserve(static_cast<int64_t>(grown));
  if (!st.ok()) return Status::IOError("FSST: cannot allocate ", grown, " bytes: ", st.message());
  return Status::OK();
}

}  // namespace

template <typename Offset>
Status FsstDecoder::Run(const uint8_t* offsets, uint64_t n, std::string_view data, arrow::ResizableBuffer* out,
                        uint64_t* ends) const {
  static_assert(std::endian::native == std::endian::little, "offsets and symbols are little-endian");
  auto offset_at = [offsets](uint64_t i) {
    Offset o;
    std::memcpy(&o, offsets + i * sizeof(Offset), sizeof(Offset));
    return static_cast<uint64_t>(o);
  };
  const auto* src = reinterpret_cast<const uint8_t*>(data.data());
  const uint64_t size = data.size();
  uint64_t used = static_cast<uint64_t>(out->size());
  uint64_t capacity = static_cast<uint64_t>(out->capacity());
  uint8_t* base = out->mutable_data();
  uint64_t start = offset_at(0);
  Status status;
  for (uint64_t v = 0; v < n; ++v) {
    const uint64_t end = offset_at(v + 1);
    if (end < start || end > size) {
      status = end < start ? Status::Invalid("FSST: offsets decrease at value ", v, " (", start, " then ", end, ")")
                           : Status::Invalid("FSST: value ", v, " ends at ", end, ", past the ", size,
                                             "-byte data");
      break;
    }
    // A code expands to at most 8 bytes, and symbols are copied 8 bytes at a
    // time (only their length counts), so 8 per input byte is always enough.
    const uint64_t need = used + (compressed_ ? 8 * (end - start) : end - start);
    if (need > capacity) [[unlikely]] {
      status = Grow(out, need);
      if (!status.ok()) break;
      capacity = static_cast<uint64_t>(out->capacity());
      base = out->mutable_data();
    }
    uint8_t* dst = base + used;
    if (!compressed_) {
      if (end > start) std::memcpy(dst, src + start, end - start);
      used += end - start;
    } else {
      uint8_t* const value_start = dst;
      uint8_t bad = 0;
      for (uint64_t p = start; p < end;) {
        const uint8_t code = src[p];
        if (code != kEscape) [[likely]] {
          const uint8_t len = lens_[code];
          bad |= static_cast<uint8_t>(len - 1);  // 0x80 set only for a code past the table
          std::memcpy(dst, &symbols_[code], 8);
          dst += len;
          p += 1;
        } else {
          if (p + 1 >= end) {
            status = Status::Invalid("FSST: value ", v, " ends in an escape code with no literal");
            break;
          }
          *dst++ = src[p + 1];
          p += 2;
        }
      }
      if (!status.ok()) break;
      if (bad & 0x80) {
        for (uint64_t p = start; p < end; ++p) {
          if (src[p] == kEscape) {
            ++p;
          } else if (src[p] >= num_symbols_) {
            status = Status::Invalid("FSST: value ", v, " uses code ", int{src[p]}, " but the table has ",
                                     num_symbols_, " symbols");
            break;
          }
        }
        break;
      }
      used += static_cast<uint64_t>(dst - value_start);
    }
    ends[v] = used;
    start = end;
  }
  auto st = out->Resize(static_cast<int64_t>(used), /*shrink_to_fit=*/false);
  if (status.ok() && !st.ok()) status = Status::IOError("FSST: cannot size the output: ", st.message());
  return status;
}

Status FsstDecoder::DecompressAppend(const uint8_t* offsets, unsigned offset_width, uint64_t n, std::string_view data,
                                     arrow::ResizableBuffer* out, uint64_t* ends) const {
  if (offset_width == 4) return Run<uint32_t>(offsets, n, data, out, ends);
  if (offset_width == 8) return Run<uint64_t>(offsets, n, data, out, ends);
  return Status::Invalid("FSST: ", offset_width, "-byte offsets");
}

Result<VariableValues> FsstDecompress(std::string_view symbol_table, std::span<const uint64_t> offsets,
                                      std::string_view data) {
  LANCE_ASSIGN_OR_RAISE(auto decoder, FsstDecoder::Make(symbol_table));
  if (offsets.empty()) return Status::Invalid("FSST decompress: offsets must have at least one entry");
  const uint64_t n = offsets.size() - 1;
  auto made = arrow::AllocateResizableBuffer(0);
  if (!made.ok()) return Status::IOError("FSST: ", made.status().message());
  std::unique_ptr<arrow::ResizableBuffer> buffer = std::move(*made);
  VariableValues out;
  out.offsets.assign(n + 1, 0);
  LANCE_RETURN_NOT_OK(decoder.DecompressAppend(reinterpret_cast<const uint8_t*>(offsets.data()), 8, n, data,
                                               buffer.get(), out.offsets.data() + 1));
  out.data.assign(reinterpret_cast<const char*>(buffer->data()), static_cast<size_t>(buffer->size()));
  return out;
}

Result<std::pair<std::string, VariableValues>> FsstCompress(std::span<const uint64_t> offsets,
                                                            std::string_view data) {
  LANCE_RETURN_NOT_OK(CheckOffsets("compress", offsets, data.size()));
  // Below 32 KiB of data the reference stores values as they are. Values that
  // hold no bytes at all cannot train a table (the reference would not
  // terminate); they are stored as they are too.
  if (data.size() < kLeastInputSize || offsets.size() < 2 || offsets.back() == offsets.front()) {
    return std::make_pair(SerializeTable(nullptr, false), Verbatim(offsets, data));
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  const Sample sample = MakeSample({bytes, data.size()}, offsets);
  LANCE_ASSIGN_OR_RAISE(auto st, BuildSymbolTable(sample));

  VariableValues out;
  out.offsets.reserve(offsets.size());
  out.offsets.push_back(0);
  // A code takes at most two bytes per input byte (an escaped literal), but
  // the output is mostly far smaller: it grows as needed rather than taking
  // (and touching) twice the page up front.
  const uint64_t values_bytes = offsets.back() - offsets.front();
  out.data.resize(static_cast<size_t>(values_bytes / 2 + 64));
  size_t used = 0;
  for (size_t v = 0; v + 1 < offsets.size(); ++v) {
    const uint64_t size = offsets[v + 1] - offsets[v];
    if (out.data.size() - used < 2 * size) {
      out.data.resize(std::max<size_t>(used + 2 * size, out.data.size() + out.data.size() / 2));
    }
    auto* begin = reinterpret_cast<uint8_t*>(out.data.data());
    used = static_cast<size_t>(CompressValue(*st, bytes + offsets[v], size, begin + used) - begin);
    out.offsets.push_back(used);
  }
  out.data.resize(used);
  if (out.data.capacity() > used + used / 4 + 4096) out.data.shrink_to_fit();
  return std::make_pair(SerializeTable(st.get(), true), std::move(out));
}

}  // namespace lance::file::compression
