#include "lance/file/v2_1/packed_struct.h"

#include <cstring>
#include <string>

#include "lance/file/v2_1/bytes.h"
#include "lance/file/v2_1/compressive.h"
#include "lance/file/v2_1/variable.h"

namespace lance::file::v2_1 {

namespace comp = lance::file::compression;


Result<DataBlock> UnpackPackedRows(const DataBlock& rows, const std::vector<uint64_t>& field_bits,
                                   arrow::MemoryPool* pool) {
  if (rows.kind != BlockKind::kFixedWidth) return Corrupt("packed struct rows are not fixed-width");
  uint64_t row_bits = 0;
  for (uint64_t b : field_bits) {
    if (b % 8 != 0 || b == 0) return Status::NotImplemented("packed struct field of ", b, " bits");
    row_bits += b;
  }
  if (row_bits != rows.bits_per_value) {
    return Corrupt("packed struct fields of ", row_bits, " bits in rows of ", rows.bits_per_value);
  }
  LANCE_RETURN_NOT_OK(ValidateBlock(rows));
  const uint64_t n = rows.num_values, row_bytes = row_bits / 8;
  std::vector<DataBlock> children;
  uint64_t field_offset = 0;
  for (uint64_t bits : field_bits) {
    const uint64_t w = bits / 8;
    LANCE_ASSIGN_OR_RAISE(auto out, AllocateZeroed(n * w, pool));
    for (uint64_t i = 0; i < n; ++i) {
      std::memcpy(out->mutable_data() + i * w, rows.data->data() + i * row_bytes + field_offset, w);
    }
    children.push_back(DataBlock::FixedWidth(bits, n, std::move(out)));
    field_offset += w;
  }
  return DataBlock::Struct(n, std::move(children));
}

Result<std::vector<uint64_t>> PackedFieldBits(const pb21::PackedStruct& packed) {
  std::vector<uint64_t> bits(packed.bits_per_value().begin(), packed.bits_per_value().end());
  if (bits.empty()) return Corrupt("packed struct without fields");
  return bits;
}

Result<DataBlock> DecodeVariablePackedStruct(const pb21::VariablePackedStruct& desc, const DataBlock& rows,
                                       arrow::MemoryPool* pool) {
  LANCE_RETURN_NOT_OK(ValidateBlock(rows));
  const uint64_t n = rows.num_values;
  const int num_fields = desc.fields_size();
  if (num_fields == 0) return Corrupt("variable packed struct without fields");
  struct FieldAcc {
    bool fixed;
    uint64_t width;  // bytes per value (fixed) or per length prefix (variable)
    std::string data;
    std::vector<uint64_t> offsets{0};
  };
  std::vector<FieldAcc> acc(num_fields);
  for (int f = 0; f < num_fields; ++f) {
    const auto& fe = desc.fields(f);
    if (fe.layout_case() == pb21::VariablePackedStruct::FieldEncoding::kBitsPerValue) {
      if (fe.bits_per_value() % 8 != 0 || fe.bits_per_value() == 0) {
        return Status::NotImplemented("variable packed struct field of ", fe.bits_per_value(), " bits");
      }
      acc[f] = {true, fe.bits_per_value() / 8, {}, {0}};
    } else if (fe.layout_case() == pb21::VariablePackedStruct::FieldEncoding::kBitsPerLength) {
      if (fe.bits_per_length() != 32 && fe.bits_per_length() != 64) {
        return Corrupt("variable packed struct length prefix of ", fe.bits_per_length(), " bits");
      }
      acc[f] = {false, fe.bits_per_length() / 8, {}, {0}};
    } else {
      return Corrupt("variable packed struct field without a layout");
    }
  }
  const uint8_t* base = rows.data->data();
  for (uint64_t r = 0; r < n; ++r) {
    uint64_t cursor = VariableOffset(rows, r);
    const uint64_t end = VariableOffset(rows, r + 1);
    if (cursor == end) {
      // A null row stores no bytes (full-zip keeps values of def 0 only);
      // every real row holds at least a length or a fixed-width value.
      for (auto& a : acc) {
        if (a.fixed) {
          a.data.append(a.width, '\0');
        } else {
          a.offsets.push_back(a.data.size());
        }
      }
      continue;
    }
    for (auto& a : acc) {
      if (a.fixed) {
        if (end - cursor < a.width) return Corrupt("variable packed struct row ", r, " is truncated");
        a.data.append(reinterpret_cast<const char*>(base + cursor), a.width);
        cursor += a.width;
      } else {
        if (end - cursor < a.width) return Corrupt("variable packed struct row ", r, " is truncated");
        const uint64_t len = LoadUnsigned(base + cursor, static_cast<unsigned>(a.width));
        cursor += a.width;
        if (end - cursor < len) return Corrupt("variable packed struct value in row ", r, " is truncated");
        a.data.append(reinterpret_cast<const char*>(base + cursor), len);
        a.offsets.push_back(a.data.size());
        cursor += len;
      }
    }
    if (cursor != end) return Corrupt("variable packed struct row ", r, " has trailing bytes");
  }
  std::vector<DataBlock> children;
  for (int f = 0; f < num_fields; ++f) {
    auto& a = acc[f];
    const auto& value_encoding = desc.fields(f).value();
    LANCE_ASSIGN_OR_RAISE(auto bytes, AllocateZeroed(a.data.size(), pool));
    if (!a.data.empty()) std::memcpy(bytes->mutable_data(), a.data.data(), a.data.size());
    if (a.fixed) {
      LANCE_ASSIGN_OR_RAISE(auto child, DecompressFixedPerValue(value_encoding, bytes, n, pool));
      children.push_back(std::move(child));
    } else {
      comp::VariableValues values{std::move(a.offsets), std::move(a.data)};
      LANCE_ASSIGN_OR_RAISE(auto raw, VariableFromValues(values, n, pool));
      LANCE_ASSIGN_OR_RAISE(auto child, DecompressVariablePerValue(value_encoding, std::move(raw), pool));
      children.push_back(std::move(child));
    }
  }
  return DataBlock::Struct(n, std::move(children));
}

}  // namespace lance::file::v2_1
