// The finite state transducer map of the Rust `fst` crate (BurntSushi/fst
// 0.4.7, format version 3), in which pylance 14 keeps an INVERTED index's
// token dictionary (`_token_fst_bytes` of part_*_tokens.lance): byte-string
// keys in order, each with a u64 (the token id). Facts from the crate's
// src/raw/mod.rs (header, footer, reading), src/raw/node.rs (node
// encodings), src/raw/build.rs and src/raw/registry.rs (construction),
// src/raw/common_inputs.rs, src/raw/crc32.rs and src/bytes.rs.
//
// Layout: u64 version, u64 type, then the nodes, each addressed by its last
// byte and pointing only at nodes written before it, then u64 key count,
// u64 root address and (version 3) the masked CRC-32C of all before it;
// integers little-endian. A key's value is the sum of the outputs along its
// path plus its final node's output.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "lance/status.h"

namespace lance::index {

class FstMap {
 public:
  /// Called with each (key, value) in key order; a failed Status stops the
  /// walk and is returned.
  using Visitor = std::function<Status(std::string_view key, uint64_t value)>;

  /// Checks `bytes` whole: version (1 to 3), checksum, footer, and every
  /// node reachable from the root (in bounds, transitions sorted and
  /// pointing backwards, as many keys as the footer says, no value past
  /// u64), so that lookups and walks never fail later. `context` names
  /// the bytes in errors.
  static Result<FstMap> Open(std::string bytes, const std::string& context);

  std::optional<uint64_t> Get(std::string_view key) const;
  bool Contains(std::string_view key) const { return Get(key).has_value(); }
  /// The number of keys.
  uint64_t size() const { return len_; }
  bool empty() const { return len_ == 0; }
  uint64_t version() const { return version_; }
  /// The crate's FST type field (0 for what fst::MapBuilder writes; not
  /// checked, as the crate does not).
  uint64_t fst_type() const { return type_; }
  const std::string& bytes() const { return bytes_; }

  Status ForEach(const Visitor& fn) const { return ForEachWithPrefix({}, fn); }
  /// The keys that start with `prefix`, in order.
  Status ForEachWithPrefix(std::string_view prefix, const Visitor& fn) const;

 private:
  FstMap() = default;
  Status Validate(const std::string& context) const;

  std::string bytes_;
  uint64_t version_ = 0;
  uint64_t type_ = 0;
  uint64_t len_ = 0;
  size_t root_ = 0;
  size_t limit_ = 0;  // where the footer begins: no node byte at or past it
};

/// Builds what fst::MapBuilder::memory() builds from the same keys, byte
/// for byte: the crate's node encodings and its bounded registry of
/// compiled nodes (10000 buckets of 2, FNV-1a), which decides which equal
/// suffixes are shared.
class FstMapBuilder {
 public:
  explicit FstMapBuilder(uint64_t fst_type = 0);
  ~FstMapBuilder();
  FstMapBuilder(FstMapBuilder&&) noexcept;
  FstMapBuilder& operator=(FstMapBuilder&&) noexcept;

  /// Keys must be strictly increasing (bytes compared unsigned).
  Status Insert(std::string_view key, uint64_t value);
  /// The number of keys inserted.
  uint64_t size() const;
  /// The serialized map; the builder takes no more keys after it.
  Result<std::string> Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lance::index
