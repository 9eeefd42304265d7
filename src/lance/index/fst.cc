#include "lance/index/fst.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <vector>

namespace lance::index {
namespace {

constexpr uint64_t kMaxVersion = 3;
constexpr size_t kHeaderSize = 16;    // version, type
constexpr size_t kEmptyAddress = 0;   // the final node with no transitions and no output
constexpr size_t kNoneAddress = 1;    // the builder's "no node" (inside the header, so never a node)
constexpr size_t kBadAddress = SIZE_MAX;  // a transition whose delta points before byte 0
// A node with more transitions than this also stores a 256-byte table from
// input byte to transition (versions 2 and up).
constexpr size_t kIndexThreshold = 32;

// The 63 bytes a one-transition node can name in its state byte, most
// common first (common_inputs.rs): index i + 1 names kCommonInputs[i].
constexpr std::string_view kCommonInputs = "te/oasripcnw.hlm-du012g=:bf3y5&_4v9678k%?xCDASFIBEjPTzRNM+LOqHG";

constexpr std::array<uint8_t, 256> MakeCommonIndex() {
  std::array<uint8_t, 256> idx{};
  for (size_t i = 0; i < kCommonInputs.size(); ++i) {
    idx[static_cast<uint8_t>(kCommonInputs[i])] = static_cast<uint8_t>(i + 1);
  }
  return idx;
}
constexpr std::array<uint8_t, 256> kCommonIndex = MakeCommonIndex();

// CRC-32C (Castagnoli, reflected), masked as Snappy's framing masks it.
constexpr std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr std::array<uint32_t, 256> kCrcTable = MakeCrcTable();

uint32_t MaskedCrc32c(const uint8_t* p, size_t n) {
  uint32_t c = ~0u;
  for (size_t i = 0; i < n; ++i) c = kCrcTable[(c ^ p[i]) & 0xFF] ^ (c >> 8);
  c = ~c;
  return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

uint64_t ReadLe(const uint8_t* p, size_t nbytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < nbytes; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

// The fewest bytes (1 to 8) that hold n.
uint8_t PackSize(uint64_t n) {
  uint8_t s = 1;
  while (s < 8 && (n >> (8 * s)) != 0) ++s;
  return s;
}

void PutLe(std::string* out, uint64_t n, size_t nbytes) {
  for (size_t i = 0; i < nbytes; ++i) {
    out->push_back(static_cast<char>(n & 0xFF));
    n >>= 8;
  }
}

// ---- reading -------------------------------------------------------------

enum class Kind : uint8_t { kEmptyFinal, kOneTransNext, kOneTrans, kAnyTrans };

// A decoded node header; every byte it names lies in [end, addr], which
// Decode checked is inside the nodes' region.
struct Node {
  Kind kind = Kind::kEmptyFinal;
  size_t addr = kEmptyAddress;  // the state byte (the node's last)
  size_t end = kEmptyAddress;   // the node's first byte
  bool is_final = true;
  uint64_t final_output = 0;
  size_t ntrans = 0;
  size_t tsize = 0;  // bytes of each transition's address delta
  size_t osize = 0;  // bytes of each output (0: all outputs zero)
  uint8_t input = 0;         // one-transition nodes
  size_t index_start = 0;    // any-trans: the index table, or where the inputs end
  bool has_index = false;
};

struct Trans {
  uint8_t input;
  uint64_t output;
  size_t target;
};

class NodeReader {
 public:
  NodeReader(const std::string& bytes, uint64_t version, size_t limit)
      : data_(reinterpret_cast<const uint8_t*>(bytes.data())), version_(version), limit_(limit) {}

  // nullptr on success, else why the node at `addr` is not one.
  const char* Decode(size_t addr, Node* n) const {
    *n = Node{};
    if (addr == kEmptyAddress) return nullptr;
    if (addr < kHeaderSize || addr >= limit_) return "node address out of range";
    n->addr = addr;
    n->is_final = false;
    const uint8_t state = data_[addr];
    const size_t room = addr - kHeaderSize;  // bytes of the node below its state byte, at most
    switch (state >> 6) {
      case 0b11: {  // one transition to the node just before, output zero
        n->kind = Kind::kOneTransNext;
        n->ntrans = 1;
        const uint8_t idx = state & 0x3F;
        const size_t input_len = idx == 0 ? 1 : 0;
        if (room < input_len) return "node runs into the header";
        n->input = idx == 0 ? data_[addr - 1] : static_cast<uint8_t>(kCommonInputs[idx - 1]);
        n->end = addr - input_len;
        return nullptr;
      }
      case 0b10: {  // one transition: [output][delta][sizes][input?][state]
        n->kind = Kind::kOneTrans;
        n->ntrans = 1;
        const uint8_t idx = state & 0x3F;
        const size_t input_len = idx == 0 ? 1 : 0;
        if (room < input_len + 1) return "node runs into the header";
        n->input = idx == 0 ? data_[addr - 1] : static_cast<uint8_t>(kCommonInputs[idx - 1]);
        const uint8_t sizes = data_[addr - input_len - 1];
        n->tsize = sizes >> 4;
        n->osize = sizes & 0x0F;
        if (n->tsize < 1 || n->tsize > 8 || n->osize > 8) return "bad pack sizes";
        const size_t total = input_len + 1 + n->tsize + n->osize;
        if (room < total) return "node runs into the header";
        n->end = addr - total;
        return nullptr;
      }
      default: {  // [final output?][outputs][deltas][inputs][index?][sizes][ntrans?][state]
        n->kind = Kind::kAnyTrans;
        n->is_final = (state & 0x40) != 0;
        size_t ntrans = state & 0x3F;
        size_t ntrans_len = 0;
        if (ntrans == 0) {
          ntrans_len = 1;
          if (room < 1) return "node runs into the header";
          ntrans = data_[addr - 1];
          if (ntrans == 1) ntrans = 256;  // 1 is always in the state byte, so 1 here stands for 256
        }
        if (room < ntrans_len + 1) return "node runs into the header";
        const uint8_t sizes = data_[addr - ntrans_len - 1];
        n->ntrans = ntrans;
        n->tsize = sizes >> 4;
        n->osize = sizes & 0x0F;
        if (n->tsize > 8 || n->osize > 8 || (ntrans > 0 && n->tsize == 0)) return "bad pack sizes";
        n->has_index = version_ >= 2 && ntrans > kIndexThreshold;
        const size_t index_size = n->has_index ? 256 : 0;
        const size_t total = ntrans_len + 1 + index_size + ntrans * (1 + n->tsize + n->osize) +
                             (n->is_final ? n->osize : 0);
        if (room < total) return "node runs into the header";
        n->index_start = addr - ntrans_len - 1 - index_size;
        n->end = addr - total;
        if (n->is_final && n->osize > 0) {
          n->final_output = ReadLe(data_ + n->end, n->osize);
        }
        return nullptr;
      }
    }
  }

  Trans Transition(const Node& n, size_t i) const {
    Trans t{n.input, 0, kBadAddress};
    size_t delta_at = 0;
    switch (n.kind) {
      case Kind::kEmptyFinal: return t;  // no transitions; callers never ask
      case Kind::kOneTransNext: t.target = n.end - 1; return t;
      case Kind::kOneTrans:
        t.output = ReadLe(data_ + n.end, n.osize);
        delta_at = n.end + n.osize;
        break;
      case Kind::kAnyTrans: {
        // Each array holds transition 0 last (highest address).
        const size_t inputs_at = n.index_start - n.ntrans;
        const size_t deltas_at = inputs_at - n.ntrans * n.tsize;
        t.input = data_[n.index_start - 1 - i];
        delta_at = inputs_at - (i + 1) * n.tsize;
        if (n.osize > 0) t.output = ReadLe(data_ + deltas_at - (i + 1) * n.osize, n.osize);
        break;
      }
    }
    // Deltas count back from the node's first byte; 0 is the empty final node.
    const uint64_t delta = ReadLe(data_ + delta_at, n.tsize);
    if (delta == 0) {
      t.target = kEmptyAddress;
    } else if (delta <= n.end) {
      t.target = n.end - static_cast<size_t>(delta);
    }
    return t;
  }

  std::optional<size_t> Find(const Node& n, uint8_t b) const {
    if (n.kind == Kind::kEmptyFinal) return std::nullopt;
    if (n.kind != Kind::kAnyTrans) {
      if (n.input == b) return 0;
      return std::nullopt;
    }
    if (n.has_index) {
      const size_t i = data_[n.index_start + b];
      if (i < n.ntrans) return i;
      return std::nullopt;
    }
    for (size_t i = 0; i < n.ntrans; ++i) {
      if (data_[n.index_start - 1 - i] == b) return i;
    }
    return std::nullopt;
  }

  const uint8_t* index_table(const Node& n) const { return data_ + n.index_start; }

 private:
  const uint8_t* data_;
  uint64_t version_;
  size_t limit_;
};

Status Corrupt(const std::string& context, size_t addr, const char* why) {
  return Status::Invalid(context, ": corrupt FST: node at ", addr, ": ", why);
}

}  // namespace

Result<FstMap> FstMap::Open(std::string bytes, const std::string& context) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  const size_t n = bytes.size();
  if (n < kHeaderSize) {
    return Status::Invalid(context, ": an FST of ", n, " bytes (too short for its header)");
  }
  FstMap m;
  m.version_ = ReadLe(p, 8);
  m.type_ = ReadLe(p + 8, 8);
  if (m.version_ == 0 || m.version_ > kMaxVersion) {
    return Status::Invalid(context, ": FST format version ", m.version_, " (known: 1 to ", kMaxVersion, ")");
  }
  // Key count and root address, then from version 3 a checksum.
  const size_t footer = m.version_ >= 3 ? 20 : 16;
  if (n < kHeaderSize + footer) {
    return Status::Invalid(context, ": an FST of ", n, " bytes (too short for its header and footer)");
  }
  if (m.version_ >= 3) {
    const auto expected = static_cast<uint32_t>(ReadLe(p + n - 4, 4));
    const uint32_t got = MaskedCrc32c(p, n - 4);
    if (expected != got) {
      return Status::Invalid(context, ": FST checksum mismatch (stored ", expected, ", computed ", got, ")");
    }
  }
  m.limit_ = n - footer;
  m.len_ = ReadLe(p + m.limit_, 8);
  const uint64_t root = ReadLe(p + m.limit_ + 8, 8);
  // The root is the last node written, so its state byte ends the nodes;
  // only the empty final root (address 0) leaves no node bytes at all.
  const bool root_ok = root == kEmptyAddress ? m.limit_ == kHeaderSize : root + 1 == m.limit_;
  if (!root_ok) {
    return Status::Invalid(context, ": FST root address ", root, " does not end the nodes (", m.limit_,
                           " bytes before the footer)");
  }
  m.root_ = static_cast<size_t>(root);
  m.bytes_ = std::move(bytes);
  LANCE_RETURN_NOT_OK(m.Validate(context));
  return m;
}

// Walks every node reachable from the root once. Transitions must point
// strictly below their node's first byte, so the graph is acyclic and a
// lookup or walk ends; counting keys per node (children first, as they sit
// at lower addresses) checks the footer's count and that every node leads
// to a key, which bounds a walk by the keys it yields.
Status FstMap::Validate(const std::string& context) const {
  const NodeReader r(bytes_, version_, limit_);
  std::vector<bool> seen(limit_, false);
  std::vector<size_t> reachable;
  std::vector<size_t> todo{root_};
  Node node;
  while (!todo.empty()) {
    const size_t addr = todo.back();
    todo.pop_back();
    if (addr == kEmptyAddress || seen[addr]) continue;
    seen[addr] = true;
    if (const char* why = r.Decode(addr, &node)) return Corrupt(context, addr, why);
    reachable.push_back(addr);
    for (size_t i = 0; i < node.ntrans; ++i) {
      const Trans t = r.Transition(node, i);
      if (t.target != kEmptyAddress && (t.target < kHeaderSize || t.target >= node.end)) {
        return Corrupt(context, addr, "transition to an address not below the node");
      }
      if (i > 0 && r.Transition(node, i - 1).input >= t.input) {
        return Corrupt(context, addr, "transitions not in increasing input order");
      }
      if (node.has_index && r.index_table(node)[t.input] != i) {
        return Corrupt(context, addr, "transition index disagrees with the inputs");
      }
      todo.push_back(t.target);
    }
    if (node.has_index) {
      // Bytes with no transition must map past the last one.
      size_t listed = 0;
      for (int b = 0; b < 256; ++b) listed += r.index_table(node)[b] < node.ntrans;
      if (listed != node.ntrans) return Corrupt(context, addr, "transition index lists absent inputs");
    }
  }
  // Per reachable node: keys below it (saturating) and the largest value
  // its suffixes add.
  std::sort(reachable.begin(), reachable.end());
  std::vector<uint64_t> keys(reachable.size()), top(reachable.size());
  auto lookup = [&](size_t addr) -> std::pair<uint64_t, uint64_t> {
    if (addr == kEmptyAddress) return {1, 0};
    const size_t k = std::lower_bound(reachable.begin(), reachable.end(), addr) - reachable.begin();
    return {keys[k], top[k]};
  };
  for (size_t k = 0; k < reachable.size(); ++k) {
    const size_t addr = reachable[k];
    r.Decode(addr, &node);  // decoded above
    uint64_t count = node.is_final ? 1 : 0;
    uint64_t best = node.is_final ? node.final_output : 0;
    for (size_t i = 0; i < node.ntrans; ++i) {
      const Trans t = r.Transition(node, i);
      const auto [child_keys, child_top] = lookup(t.target);
      uint64_t sum;
      if (__builtin_add_overflow(t.output, child_top, &sum)) {
        return Corrupt(context, addr, "a key's value does not fit in 64 bits");
      }
      best = std::max(best, sum);
      if (__builtin_add_overflow(count, child_keys, &count)) count = UINT64_MAX;
    }
    if (count == 0 && !(addr == root_ && len_ == 0)) return Corrupt(context, addr, "leads to no key");
    keys[k] = count;
    top[k] = best;
  }
  const uint64_t total = lookup(root_).first;
  if (total != len_) {
    return Status::Invalid(context, ": corrupt FST: footer says ", len_, " keys, the nodes hold ", total);
  }
  return Status::OK();
}

std::optional<uint64_t> FstMap::Get(std::string_view key) const {
  const NodeReader r(bytes_, version_, limit_);
  Node node;
  if (r.Decode(root_, &node)) return std::nullopt;
  uint64_t out = 0;
  for (const char c : key) {
    const auto i = r.Find(node, static_cast<uint8_t>(c));
    if (!i) return std::nullopt;
    const Trans t = r.Transition(node, *i);
    out += t.output;
    if (r.Decode(t.target, &node)) return std::nullopt;
  }
  if (!node.is_final) return std::nullopt;
  return out + node.final_output;
}

Status FstMap::ForEachWithPrefix(std::string_view prefix, const Visitor& fn) const {
  const NodeReader r(bytes_, version_, limit_);
  auto corrupt = [&](size_t addr, const char* why) { return Corrupt("FST", addr, why); };
  Node node;
  if (const char* why = r.Decode(root_, &node)) return corrupt(root_, why);
  uint64_t out = 0;
  for (const char c : prefix) {
    const auto i = r.Find(node, static_cast<uint8_t>(c));
    if (!i) return Status::OK();
    const Trans t = r.Transition(node, *i);
    out += t.output;
    if (const char* why = r.Decode(t.target, &node)) return corrupt(t.target, why);
  }
  std::string key(prefix);
  if (node.is_final) LANCE_RETURN_NOT_OK(fn(key, out + node.final_output));
  // Depth-first, transitions in input order: keys come out sorted. Every
  // frame past the first added one byte to `key`.
  struct Frame {
    Node node;
    size_t next;
    uint64_t out;
  };
  std::vector<Frame> stack{{node, 0, out}};
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next >= f.node.ntrans) {
      stack.pop_back();
      if (!stack.empty()) key.pop_back();
      continue;
    }
    const Trans t = r.Transition(f.node, f.next++);
    const uint64_t child_out = f.out + t.output;
    Node child;
    if (const char* why = r.Decode(t.target, &child)) return corrupt(t.target, why);
    key.push_back(static_cast<char>(t.input));
    if (child.is_final) LANCE_RETURN_NOT_OK(fn(key, child_out + child.final_output));
    stack.push_back({child, 0, child_out});
  }
  return Status::OK();
}

// ---- building --------------------------------------------------------------

namespace {

struct BuilderTrans {
  uint8_t input = 0;
  uint64_t output = 0;
  uint64_t target = kNoneAddress;
  bool operator==(const BuilderTrans&) const = default;
};

struct BuilderNode {
  bool is_final = false;
  uint64_t final_output = 0;
  std::vector<BuilderTrans> trans;
  bool operator==(const BuilderNode&) const = default;
};

// A node on the path of the last key; `last` is its transition along that
// path, whose target is not compiled yet.
struct UnfinishedNode {
  BuilderNode node;
  bool has_last = false;
  uint8_t last_input = 0;
  uint64_t last_output = 0;
};

struct RegistryCell {
  uint64_t addr = kNoneAddress;  // kNoneAddress: empty
  BuilderNode node;
};

// The crate's registry shape: this many buckets of two cells, most
// recently used first. Equal nodes that fall out of it are written again,
// so the shape decides the bytes.
constexpr size_t kRegistryBuckets = 10000;
constexpr size_t kRegistryWays = 2;

uint64_t DeltaTo(uint64_t node_start, uint64_t target) {
  return target == kEmptyAddress ? 0 : node_start - target;
}

}  // namespace

struct FstMapBuilder::Impl {
  std::string out;
  std::vector<UnfinishedNode> unfinished;
  std::vector<RegistryCell> registry;
  std::string last_key;
  bool has_last_key = false;
  bool finished = false;
  uint64_t last_addr = kNoneAddress;  // the node compiled last
  uint64_t len = 0;

  explicit Impl(uint64_t fst_type) : registry(kRegistryBuckets * kRegistryWays) {
    PutLe(&out, kMaxVersion, 8);
    PutLe(&out, fst_type, 8);
    unfinished.emplace_back();
  }

  static uint64_t Hash(const BuilderNode& n) {
    constexpr uint64_t kPrime = 1099511628211ull;
    uint64_t h = 14695981039346656037ull;
    auto mix = [&](uint64_t v) { h = (h ^ v) * kPrime; };
    mix(n.is_final ? 1 : 0);
    mix(n.final_output);
    for (const auto& t : n.trans) {
      mix(t.input);
      mix(t.output);
      mix(t.target);
    }
    return h;
  }

  // The address of an equal node already written, or nullopt and the cell
  // (now holding `n`) to give the address it is written at.
  std::optional<uint64_t> Lookup(const BuilderNode& n, size_t* cell) {
    const size_t first = static_cast<size_t>(Hash(n) % kRegistryBuckets) * kRegistryWays;
    RegistryCell& a = registry[first];
    RegistryCell& b = registry[first + 1];
    if (a.addr != kNoneAddress && a.node == n) return a.addr;
    if (b.addr != kNoneAddress && b.node == n) {
      std::swap(a, b);
      return a.addr;
    }
    // Evict the least recently used: the new node goes first.
    b.node = n;
    std::swap(a, b);
    *cell = first;
    return std::nullopt;
  }

  uint64_t Compile(const BuilderNode& n) {
    if (n.is_final && n.trans.empty() && n.final_output == 0) return kEmptyAddress;
    size_t cell = 0;
    if (const auto found = Lookup(n, &cell)) return *found;
    Write(n, out.size());
    last_addr = out.size() - 1;
    registry[cell].addr = last_addr;
    return last_addr;
  }

  void Write(const BuilderNode& n, uint64_t start) {
    if (n.trans.size() != 1 || n.is_final) return WriteAnyTrans(n, start);
    const BuilderTrans& t = n.trans[0];
    const uint8_t idx = kCommonIndex[t.input];
    if (t.target == last_addr && t.output == 0) {
      if (idx == 0) out.push_back(static_cast<char>(t.input));
      out.push_back(static_cast<char>(0xC0 | idx));
      return;
    }
    const uint8_t osize = t.output == 0 ? 0 : PackSize(t.output);
    PutLe(&out, t.output, osize);
    const uint64_t delta = DeltaTo(start, t.target);
    const uint8_t tsize = PackSize(delta);
    PutLe(&out, delta, tsize);
    out.push_back(static_cast<char>(tsize << 4 | osize));
    if (idx == 0) out.push_back(static_cast<char>(t.input));
    out.push_back(static_cast<char>(0x80 | idx));
  }

  void WriteAnyTrans(const BuilderNode& n, uint64_t start) {
    uint8_t tsize = 0;
    uint8_t osize = PackSize(n.final_output);
    bool any_outputs = n.final_output != 0;
    for (const auto& t : n.trans) {
      tsize = std::max(tsize, PackSize(DeltaTo(start, t.target)));
      osize = std::max(osize, PackSize(t.output));
      any_outputs = any_outputs || t.output != 0;
    }
    if (!any_outputs) osize = 0;
    const size_t ntrans = n.trans.size();
    if (osize > 0) {
      if (n.is_final) PutLe(&out, n.final_output, osize);
      for (size_t i = ntrans; i-- > 0;) PutLe(&out, n.trans[i].output, osize);
    }
    for (size_t i = ntrans; i-- > 0;) PutLe(&out, DeltaTo(start, n.trans[i].target), tsize);
    for (size_t i = ntrans; i-- > 0;) out.push_back(static_cast<char>(n.trans[i].input));
    if (ntrans > kIndexThreshold) {
      std::array<char, 256> index;
      index.fill(static_cast<char>(0xFF));
      for (size_t i = 0; i < ntrans; ++i) index[n.trans[i].input] = static_cast<char>(i);
      out.append(index.data(), index.size());
    }
    out.push_back(static_cast<char>(tsize << 4 | osize));
    uint8_t state = n.is_final ? 0x40 : 0x00;
    if (ntrans >= 1 && ntrans <= 0x3F) {
      state |= static_cast<uint8_t>(ntrans);
    } else {
      out.push_back(static_cast<char>(ntrans == 256 ? 1 : ntrans));
    }
    out.push_back(static_cast<char>(state));
  }

  // Moves `prefix` of output from a node's incoming transition onto all
  // that leaves it.
  static void PushOutputDown(UnfinishedNode* u, uint64_t prefix) {
    if (u->node.is_final) u->node.final_output += prefix;
    for (auto& t : u->node.trans) t.output += prefix;
    if (u->has_last) u->last_output += prefix;
  }

  // The length of the longest prefix of `key` on the last key's path; along
  // it each transition keeps only what both keys' values share, the rest
  // pushed down, and `*value` becomes what the new suffix must carry.
  size_t CommonPrefix(std::string_view key, uint64_t* value) {
    size_t i = 0;
    while (i < key.size()) {
      UnfinishedNode& u = unfinished[i];
      if (!u.has_last || u.last_input != static_cast<uint8_t>(key[i])) break;
      ++i;
      const uint64_t common = std::min(u.last_output, *value);
      const uint64_t rest = u.last_output - common;
      *value -= common;
      u.last_output = common;
      if (rest != 0) PushOutputDown(&unfinished[i], rest);
    }
    return i;
  }

  static void Freeze(UnfinishedNode* u, uint64_t addr) {
    if (!u->has_last) return;
    u->node.trans.push_back({u->last_input, u->last_output, addr});
    u->has_last = false;
  }

  // Compiles the path's nodes deeper than `depth`, deepest first.
  void CompileFrom(size_t depth) {
    uint64_t addr = kNoneAddress;
    while (depth + 1 < unfinished.size()) {
      UnfinishedNode u = std::move(unfinished.back());
      unfinished.pop_back();
      if (addr != kNoneAddress) Freeze(&u, addr);
      addr = Compile(u.node);
    }
    Freeze(&unfinished.back(), addr);
  }

  void AddSuffix(std::string_view suffix, uint64_t value) {
    if (suffix.empty()) return;
    UnfinishedNode& top = unfinished.back();
    top.has_last = true;
    top.last_input = static_cast<uint8_t>(suffix[0]);
    top.last_output = value;
    for (size_t i = 1; i < suffix.size(); ++i) {
      UnfinishedNode u;
      u.has_last = true;
      u.last_input = static_cast<uint8_t>(suffix[i]);
      unfinished.push_back(std::move(u));
    }
    UnfinishedNode leaf;
    leaf.node.is_final = true;
    unfinished.push_back(std::move(leaf));
  }
};

FstMapBuilder::FstMapBuilder(uint64_t fst_type) : impl_(std::make_unique<Impl>(fst_type)) {}
FstMapBuilder::~FstMapBuilder() = default;
FstMapBuilder::FstMapBuilder(FstMapBuilder&&) noexcept = default;
FstMapBuilder& FstMapBuilder::operator=(FstMapBuilder&&) noexcept = default;

uint64_t FstMapBuilder::size() const { return impl_ ? impl_->len : 0; }

Status FstMapBuilder::Insert(std::string_view key, uint64_t value) {
  if (!impl_ || impl_->finished) return Status::Invalid("FST builder: Insert after Finish");
  Impl& b = *impl_;
  if (b.has_last_key) {
    // Unsigned byte order, as the crate compares keys.
    const size_t n = std::min(key.size(), b.last_key.size());
    int c = n == 0 ? 0 : std::memcmp(key.data(), b.last_key.data(), n);
    if (c == 0) c = key.size() < b.last_key.size() ? -1 : (key.size() > b.last_key.size() ? 1 : 0);
    if (c == 0) return Status::Invalid("FST builder: duplicate key of ", key.size(), " bytes");
    if (c < 0) return Status::Invalid("FST builder: key of ", key.size(), " bytes out of order");
  }
  b.last_key.assign(key);
  b.has_last_key = true;
  if (key.empty()) {  // the least key, so the first: the root's own output
    b.len = 1;
    b.unfinished[0].node.is_final = true;
    b.unfinished[0].node.final_output = value;
    return Status::OK();
  }
  const size_t common = b.CommonPrefix(key, &value);
  // A key past the last one cannot be a prefix of it.
  if (common == key.size()) return Status::Invalid("FST builder: key is a prefix of the previous key");
  ++b.len;
  b.CompileFrom(common);
  b.AddSuffix(key.substr(common), value);
  return Status::OK();
}

Result<std::string> FstMapBuilder::Finish() {
  if (!impl_ || impl_->finished) return Status::Invalid("FST builder: Finish called twice");
  Impl& b = *impl_;
  b.finished = true;
  b.CompileFrom(0);
  const BuilderNode root = std::move(b.unfinished.back().node);
  b.unfinished.clear();
  const uint64_t root_addr = b.Compile(root);
  PutLe(&b.out, b.len, 8);
  PutLe(&b.out, root_addr, 8);
  PutLe(&b.out, MaskedCrc32c(reinterpret_cast<const uint8_t*>(b.out.data()), b.out.size()), 4);
  std::string out = std::move(b.out);
  b.registry = {};
  return out;
}

}  // namespace lance::index
