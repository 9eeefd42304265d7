#include "lance/file/v2_1/full_zip.h"

#include <cstring>
#include <vector>

#include <arrow/buffer_builder.h>

#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/compressive.h"

namespace lance::file::v2_1 {

namespace {

// A control word holds (rep << bits_def) | def in 0, 1, 2 or 4 bytes.
class ControlWords {
 public:
  static Result<ControlWords> Make(uint32_t bits_rep, uint32_t bits_def) {
    if (bits_rep > 16 || bits_def > 16) {
      return Corrupt("full-zip control words of ", bits_rep, " repetition and ", bits_def, " definition bits");
    }
    ControlWords cw;
    cw.bits_rep_ = bits_rep;
    cw.bits_def_ = bits_def;
    const uint32_t total = bits_rep + bits_def;
    cw.bytes_ = total == 0 ? 0 : total <= 8 ? 1 : total <= 16 ? 2 : 4;
    return cw;
  }
  uint64_t bytes() const { return bytes_; }
  bool has_rep() const { return bits_rep_ > 0; }
  bool has_def() const { return bits_def_ > 0; }
  // Reads the word at `p` (bytes() bytes available).
  void Parse(const uint8_t* p, uint16_t* rep, uint16_t* def) const {
    const uint64_t word = bytes_ == 0 ? 0 : LoadUnsigned(p, static_cast<unsigned>(bytes_));
    *def = bits_def_ == 0 ? 0 : static_cast<uint16_t>(word & ((uint64_t{1} << bits_def_) - 1));
    *rep = bits_rep_ == 0 ? 0 : static_cast<uint16_t>(word >> bits_def_);
  }

 private:
  uint32_t bits_rep_ = 0, bits_def_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace

Result<DecodedPage> DecodeFullZipPage(const pb21::FullZipLayout& layout, const PageData& page,
                                      const PageContext& ctx) {
  arrow::MemoryPool* pool = ctx.pool;
  DecodedPage out;
  LANCE_ASSIGN_OR_RAISE(out.levels.layers, LayersFromProto(layout.layers().data(), layout.layers_size()));
  if (page.buffers.empty() || page.buffers.size() > 2 || !page.buffers[0]) {
    return Corrupt("full-zip page has ", page.buffers.size(), " buffers, expected 1 or 2");
  }
  if (!layout.has_value_compression()) return Corrupt("full-zip layout without a value compression");
  LANCE_ASSIGN_OR_RAISE(auto cw, ControlWords::Make(layout.bits_rep(), layout.bits_def()));
  const uint16_t max_visible = MaxVisibleDef(out.levels.layers);
  const uint64_t rows = page.length;
  const BufferPtr& data = page.buffers[0];
  ByteSpan bytes = AsSpan(data);
  std::vector<uint16_t> rep, def;

  if (layout.details_case() == pb21::FullZipLayout::kBitsPerValue) {
    LANCE_ASSIGN_OR_RAISE(uint64_t bits, FixedPerValueBits(layout.value_compression()));
    if (bits % 8 != 0) return Status::NotImplemented("full-zip values of ", bits, " bits (not byte aligned)");
    const uint64_t width = bits / 8;
    if (cw.bytes() == 0) {
      uint64_t need;
      if (MulOverflows(rows, width, &need) || need > bytes.size()) {
        return Corrupt("full-zip page of ", bytes.size(), " bytes for ", rows, " values of ", width, " bytes");
      }
      LANCE_ASSIGN_OR_RAISE(out.values, DecompressFixedPerValue(layout.value_compression(),
                                                                arrow::SliceBuffer(data, 0,
                                                                    static_cast<int64_t>(need)),
                                                                rows, pool));
    } else {
      arrow::BufferBuilder values(pool);
      uint64_t pos = 0, visible = 0;
      while (pos < bytes.size()) {
        if (bytes.size() - pos < cw.bytes()) return Corrupt("full-zip page ends inside a control word");
        uint16_t r, d;
        cw.Parse(bytes.data() + pos, &r, &d);
        pos += cw.bytes();
        if (cw.has_rep()) rep.push_back(r);
        if (cw.has_def()) def.push_back(d);
        if (d <= max_visible) {
          if (bytes.size() - pos < width) return Corrupt("full-zip page ends inside a value");
          LANCE_RETURN_NOT_OK(values.Append(bytes.data() + pos, static_cast<int64_t>(width)));
          pos += width;
          ++visible;
        }
      }
      std::shared_ptr<arrow::Buffer> buffer;
      LANCE_RETURN_NOT_OK(values.Finish(&buffer));
      LANCE_ASSIGN_OR_RAISE(out.values, DecompressFixedPerValue(layout.value_compression(), buffer, visible, pool));
    }
  } else if (layout.details_case() == pb21::FullZipLayout::kBitsPerOffset) {
    const uint64_t length_bits = layout.bits_per_offset();
    if (length_bits != 8 && length_bits != 16 && length_bits != 32 && length_bits != 64) {
      return Corrupt("full-zip lengths of ", length_bits, " bits");
    }
    const unsigned length_width = static_cast<unsigned>(length_bits / 8);
    arrow::BufferBuilder values(pool);
    arrow::TypedBufferBuilder<uint64_t> offsets(pool);
    LANCE_RETURN_NOT_OK(offsets.Append(0));
    uint64_t pos = 0, visible = 0, total = 0;
    while (pos < bytes.size()) {
      if (bytes.size() - pos < cw.bytes()) return Corrupt("full-zip page ends inside a control word");
      uint16_t r, d;
      cw.Parse(bytes.data() + pos, &r, &d);
      pos += cw.bytes();
      if (cw.has_rep()) rep.push_back(r);
      if (cw.has_def()) def.push_back(d);
      if (d > max_visible) continue;
      ++visible;
      if (d == 0) {
        if (bytes.size() - pos < length_width) return Corrupt("full-zip page ends inside a value length");
        const uint64_t len = LoadUnsigned(bytes.data() + pos, length_width);
        pos += length_width;
        if (bytes.size() - pos < len) {
          return Corrupt("full-zip value of ", len, " bytes at offset ", pos, " exceeds the ", bytes.size(),
                         "-byte page");
        }
        LANCE_RETURN_NOT_OK(values.Append(bytes.data() + pos, static_cast<int64_t>(len)));
        pos += len;
        total += len;
      }
      LANCE_RETURN_NOT_OK(offsets.Append(total));
    }
    std::shared_ptr<arrow::Buffer> values_buffer, offsets_buffer;
    LANCE_RETURN_NOT_OK(values.Finish(&values_buffer));
    LANCE_RETURN_NOT_OK(offsets.Finish(&offsets_buffer));
    DataBlock stored = DataBlock::Variable(64, visible, offsets_buffer, values_buffer);
    LANCE_ASSIGN_OR_RAISE(out.values, DecompressVariablePerValue(layout.value_compression(), std::move(stored),
                                                                 pool));
  } else {
    return Corrupt("full-zip layout without bits_per_value or bits_per_offset");
  }

  if (cw.has_rep()) out.levels.rep = std::move(rep);
  if (cw.has_def()) out.levels.def = std::move(def);
  out.levels.num_items = out.values.num_values;
  if (layout.num_visible_items() != 0 && layout.num_visible_items() != out.values.num_values) {
    return Corrupt("full-zip page decoded ", out.values.num_values, " values but declares ",
                   layout.num_visible_items());
  }
  // With repetition, every row must start exactly once. (Without it a page
  // may hold rows times the dimensions of enclosing fixed-size lists.)
  if (out.levels.rep) {
    const uint16_t max_rep = MaxRep(out.levels.layers);
    uint64_t decoded_rows = 0;
    for (uint16_t r : *out.levels.rep) decoded_rows += r == max_rep ? 1 : 0;
    if (decoded_rows != rows) return Corrupt("full-zip page holds ", decoded_rows, " rows, expected ", rows);
  }
  LANCE_RETURN_NOT_OK(ValidatePageLevels(out.levels));
  return out;
}

}  // namespace lance::file::v2_1
