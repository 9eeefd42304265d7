#include "lance/table/roaring_portable.h"

#include <bit>

#include <roaring/roaring.h>

namespace lance::table {
namespace {

// Portable Roaring format constants (RoaringFormatSpec).
constexpr uint32_t kSerialCookieNoRuns = 12346;
constexpr uint32_t kSerialCookie = 12347;
constexpr uint32_t kNoOffsetThreshold = 4;
constexpr uint32_t kMaxArrayCardinality = 4096;
constexpr size_t kBitsetBytes = 8192;

// Bounds-checked little-endian reader over untrusted bytes.
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  size_t remaining() const { return bytes_.size() - pos_; }
  bool Skip(size_t n) {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }
  bool ReadU16(uint16_t* v) { return Read(2, v); }
  bool ReadU32(uint32_t* v) { return Read(4, v); }
  const unsigned char* Peek() const {
    return reinterpret_cast<const unsigned char*>(bytes_.data()) + pos_;
  }

 private:
  template <typename T>
  bool Read(size_t width, T* v) {
    if (width > remaining()) return false;
    const unsigned char* p = Peek();
    T out = 0;
    for (size_t i = 0; i < width; ++i) out = static_cast<T>(out | (T{p[i]} << (8 * i)));
    *v = out;
    pos_ += width;
    return true;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace

Status ValidatePortableRoaring(std::string_view bytes, const std::string& context) {
  auto invalid = [&](auto&&... args) {
    return Status::Invalid(context, ": invalid Roaring bitmap: ", args...);
  };
  ByteReader in(bytes);
  uint32_t cookie = 0;
  if (!in.ReadU32(&cookie)) return invalid("file is ", bytes.size(), " bytes, too short");

  uint32_t size = 0;
  bool has_runs = false;
  std::string_view run_flags;
  if ((cookie & 0xFFFF) == kSerialCookie) {
    has_runs = true;
    size = (cookie >> 16) + 1;
    const size_t flag_bytes = (size + 7) / 8;
    if (flag_bytes > in.remaining()) return invalid("truncated run-container flags");
    run_flags = std::string_view(reinterpret_cast<const char*>(in.Peek()), flag_bytes);
    in.Skip(flag_bytes);
  } else if (cookie == kSerialCookieNoRuns) {
    if (!in.ReadU32(&size)) return invalid("truncated container count");
    if (size > 65536) return invalid(size, " containers, at most 65536 allowed");
  } else {
    return invalid("unknown cookie ", cookie);
  }

  std::vector<uint16_t> keys(size);
  std::vector<uint32_t> cards(size);
  for (uint32_t i = 0; i < size; ++i) {
    uint16_t key = 0, card_minus_one = 0;
    if (!in.ReadU16(&key) || !in.ReadU16(&card_minus_one)) return invalid("truncated header");
    if (i > 0 && key <= keys[i - 1]) return invalid("container keys are not increasing");
    keys[i] = key;
    cards[i] = uint32_t{card_minus_one} + 1;
  }
  if (!has_runs || size >= kNoOffsetThreshold) {
    // Offsets are redundant with the sequential layout; skip them.
    if (!in.Skip(size_t{size} * 4)) return invalid("truncated offset header");
  }

  for (uint32_t i = 0; i < size; ++i) {
    const bool is_run =
        has_runs && ((static_cast<unsigned char>(run_flags[i / 8]) >> (i % 8)) & 1) != 0;
    if (is_run) {
      uint16_t n_runs = 0;
      if (!in.ReadU16(&n_runs)) return invalid("truncated run container");
      // An empty container has no valid header cardinality (stored as card - 1).
      if (n_runs == 0) return invalid("empty run container");
      int64_t prev_end = -1;  // last value covered by the previous run
      for (uint16_t r = 0; r < n_runs; ++r) {
        uint16_t start = 0, length_minus_one = 0;
        if (!in.ReadU16(&start) || !in.ReadU16(&length_minus_one)) {
          return invalid("truncated run container");
        }
        const int64_t end = int64_t{start} + length_minus_one;
        if (end > 0xFFFF) return invalid("run exceeds its container");
        if (int64_t{start} <= prev_end) return invalid("runs overlap or are unsorted");
        prev_end = end;
      }
    } else if (cards[i] > kMaxArrayCardinality) {
      if (in.remaining() < kBitsetBytes) return invalid("truncated bitset container");
      const unsigned char* p = in.Peek();
      uint32_t count = 0;
      for (size_t b = 0; b < kBitsetBytes; ++b) count += std::popcount(p[b]);
      if (count != cards[i]) {
        return invalid("bitset container has ", count, " bits set, header says ", cards[i]);
      }
      in.Skip(kBitsetBytes);
    } else {
      int32_t prev = -1;
      for (uint32_t k = 0; k < cards[i]; ++k) {
        uint16_t v = 0;
        if (!in.ReadU16(&v)) return invalid("truncated array container");
        if (int32_t{v} <= prev) return invalid("array container is not strictly increasing");
        prev = v;
      }
    }
  }
  // Like the reference reader, bytes after the bitmap are ignored.
  return Status::OK();
}

Result<std::vector<uint32_t>> DecodePortableRoaring(std::string_view bytes, const std::string& context) {
  LANCE_RETURN_NOT_OK(ValidatePortableRoaring(bytes, context));
  roaring_bitmap_t* bitmap = roaring_bitmap_portable_deserialize_safe(bytes.data(), bytes.size());
  if (bitmap == nullptr) {
    return Status::Invalid(context, ": invalid Roaring bitmap: rejected by the deserializer");
  }
  std::vector<uint32_t> values(roaring_bitmap_get_cardinality(bitmap));
  roaring_bitmap_to_uint32_array(bitmap, values.data());
  roaring_bitmap_free(bitmap);
  return values;
}

}  // namespace lance::table
