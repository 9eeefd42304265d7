#include "lance/file/legacy/legacy_decode.h"

#include <cstring>
#include <limits>
#include <vector>

#include <arrow/buffer.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/bitmap_ops.h>

namespace lance::file::legacy {
namespace {

bool MulOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
bool AddOk(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

// Checks that a page of `bytes` bytes at `position` lies inside the region.
Status CheckExtent(const Region& region, int64_t position, int64_t bytes, const std::string& what) {
  int64_t end = 0;
  if (position < 0 || bytes < 0 || !AddOk(position, bytes, &end) ||
      static_cast<uint64_t>(position) < region.begin || static_cast<uint64_t>(end) > region.end) {
    return Corrupt(region, what, "page at ", position, " of ", bytes, " bytes lies outside the data region [",
                   region.begin, ", ", region.end, ")");
  }
  return Status::OK();
}

Status CheckRows(const Region& region, int64_t page_values, int64_t first, int64_t last, const std::string& what) {
  if (page_values < 0) return Corrupt(region, what, "negative page length ", page_values);
  if (first < 0 || first > last || last > page_values) {
    return Corrupt(region, what, "values [", first, ", ", last, ") requested from a page of ", page_values,
                   " values");
  }
  return Status::OK();
}

int64_t ReadI64(const uint8_t* p) {
  int64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

bool IsFixedStride(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::BOOL:
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::UINT8:
    case arrow::Type::UINT16:
    case arrow::Type::UINT32:
    case arrow::Type::UINT64:
    case arrow::Type::HALF_FLOAT:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::DECIMAL128:
    case arrow::Type::DECIMAL256:
    case arrow::Type::FIXED_SIZE_BINARY:
    case arrow::Type::DURATION:
    case arrow::Type::TIMESTAMP:
    case arrow::Type::DATE32:
    case arrow::Type::DATE64:
    case arrow::Type::TIME32:
    case arrow::Type::TIME64:
      return true;
    case arrow::Type::FIXED_SIZE_LIST:
      return IsFixedStride(*static_cast<const arrow::FixedSizeListType&>(type).value_type());
    default:
      return false;
  }
}

Result<std::shared_ptr<arrow::Buffer>> ReadRange(const Region& region, int64_t position, int64_t length,
                                                 const std::string& what) {
  LANCE_RETURN_NOT_OK(CheckExtent(region, position, length, what));
  if (length == 0) return arrow::AllocateBuffer(0, region.pool);
  auto read = region.file->ReadAt(position, length);
  if (!read.ok()) {
    return Status::IOError("reading lance file ", *region.name, ": ", what, ": ", read.status().message());
  }
  std::shared_ptr<arrow::Buffer> buf = std::move(read).ValueUnsafe();
  if (buf->size() != length) {
    return Corrupt(region, what, "read ", buf->size(), " of ", length, " bytes at ", position,
                   " (the file is shorter than it says)");
  }
  if (reinterpret_cast<uintptr_t>(buf->data()) % 8 != 0 || !buf->is_cpu()) {
    LANCE_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> copy, arrow::AllocateBuffer(length, region.pool));
    std::memcpy(copy->mutable_data(), buf->data(), static_cast<size_t>(length));
    buf = std::move(copy);
  }
  return buf;
}

Result<std::shared_ptr<arrow::Array>> ReadPlain(const Region& region, const std::shared_ptr<arrow::DataType>& type,
                                                int64_t position, int64_t page_values, int64_t first, int64_t last,
                                                const std::string& what) {
  LANCE_RETURN_NOT_OK(CheckRows(region, page_values, first, last, what));
  const int64_t n = last - first;
  switch (type->id()) {
    case arrow::Type::BOOL: {
      const int64_t page_bytes = arrow::bit_util::BytesForBits(page_values);
      LANCE_RETURN_NOT_OK(CheckExtent(region, position, page_bytes, what));
      const int64_t first_byte = first / 8;
      const int64_t end_byte = arrow::bit_util::BytesForBits(last);
      LANCE_ASSIGN_OR_RAISE(auto bytes, ReadRange(region, position + first_byte, end_byte - first_byte, what));
      LANCE_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> bits,
                            arrow::internal::CopyBitmap(region.pool, bytes->data(), first % 8, n));
      return arrow::MakeArray(arrow::ArrayData::Make(type, n, {nullptr, std::move(bits)}, 0));
    }
    case arrow::Type::FIXED_SIZE_LIST: {
      const auto& fsl = static_cast<const arrow::FixedSizeListType&>(*type);
      const int64_t size = fsl.list_size();
      int64_t items = 0, item_first = 0, item_last = 0;
      if (size < 0 || !MulOk(page_values, size, &items) || !MulOk(first, size, &item_first) ||
          !MulOk(last, size, &item_last)) {
        return Corrupt(region, what, "a page of ", page_values, " lists of ", size, " items is too large");
      }
      LANCE_ASSIGN_OR_RAISE(auto values,
                            ReadPlain(region, fsl.value_type(), position, items, item_first, item_last, what));
      return arrow::MakeArray(arrow::ArrayData::Make(type, n, {nullptr}, {values->data()}, 0));
    }
    default:
      break;
  }
  if (!IsFixedStride(*type)) {
    return Status::NotImplemented("lance file ", *region.name, ": ", what, ": ", type->ToString(),
                                  " is not a fixed-width type");
  }
  const int bit_width = static_cast<const arrow::FixedWidthType&>(*type).bit_width();
  const int64_t width = bit_width / 8;
  int64_t page_bytes = 0, start = 0, bytes = 0;
  if (!MulOk(page_values, width, &page_bytes) || !MulOk(first, width, &start) || !MulOk(n, width, &bytes)) {
    return Corrupt(region, what, "a page of ", page_values, " values of ", width, " bytes is too large");
  }
  LANCE_RETURN_NOT_OK(CheckExtent(region, position, page_bytes, what));
  LANCE_ASSIGN_OR_RAISE(auto data, ReadRange(region, position + start, bytes, what));
  return arrow::MakeArray(arrow::ArrayData::Make(type, n, {nullptr, std::move(data)}, 0));
}

Result<std::shared_ptr<arrow::Array>> ReadVarBinary(const Region& region,
                                                    const std::shared_ptr<arrow::DataType>& type, bool nullable,
                                                    int64_t position, int64_t page_values, int64_t first,
                                                    int64_t last, const std::string& what) {
  const arrow::Type::type id = type->id();
  const bool large = id == arrow::Type::LARGE_STRING || id == arrow::Type::LARGE_BINARY;
  if (!large && id != arrow::Type::STRING && id != arrow::Type::BINARY) {
    return Status::NotImplemented("lance file ", *region.name, ": ", what, ": ", type->ToString(),
                                  " is not a var-binary type");
  }
  LANCE_RETURN_NOT_OK(CheckRows(region, page_values, first, last, what));
  const int64_t n = last - first;
  int64_t page_bytes = 0;
  if (!MulOk(page_values, 8, &page_bytes) || !AddOk(page_bytes, 8, &page_bytes)) {
    return Corrupt(region, what, "a page of ", page_values, " values is too large");
  }
  LANCE_RETURN_NOT_OK(CheckExtent(region, position, page_bytes, what));
  LANCE_ASSIGN_OR_RAISE(auto raw, ReadRange(region, position + first * 8, (n + 1) * 8, what));
  std::vector<int64_t> pos(static_cast<size_t>(n + 1));
  for (int64_t i = 0; i <= n; ++i) pos[i] = ReadI64(raw->data() + i * 8);
  for (int64_t i = 0; i < n; ++i) {
    if (pos[i + 1] < pos[i]) {
      return Corrupt(region, what, "value positions decrease (", pos[i], " then ", pos[i + 1], ")");
    }
  }
  const int64_t total = pos[n] - pos[0];
  if (!large && total > std::numeric_limits<int32_t>::max()) {
    return Corrupt(region, what, total, " bytes of values do not fit 32-bit offsets");
  }
  LANCE_ASSIGN_OR_RAISE(auto data, ReadRange(region, pos[0], total, what));

  const int64_t offset_width = large ? 8 : 4;
  LANCE_ASSIGN_OR_RAISE(std::shared_ptr<arrow::Buffer> offsets,
                        arrow::AllocateBuffer((n + 1) * offset_width, region.pool));
  for (int64_t i = 0; i <= n; ++i) {
    const int64_t rel = pos[i] - pos[0];
    if (large) {
      reinterpret_cast<int64_t*>(offsets->mutable_data())[i] = rel;
    } else {
      reinterpret_cast<int32_t*>(offsets->mutable_data())[i] = static_cast<int32_t>(rel);
    }
  }
  std::shared_ptr<arrow::Buffer> validity;
  int64_t null_count = 0;
  if (nullable) {
    for (int64_t i = 0; i < n; ++i) null_count += pos[i] == pos[i + 1];
    if (null_count > 0) {
      LANCE_ASSIGN_OR_RAISE(validity, arrow::AllocateBitmap(n, region.pool));
      uint8_t* bits = validity->mutable_data();
      for (int64_t i = 0; i < n; ++i) arrow::bit_util::SetBitTo(bits, i, pos[i] != pos[i + 1]);
    }
  }
  return arrow::MakeArray(
      arrow::ArrayData::Make(type, n, {std::move(validity), std::move(offsets), std::move(data)}, null_count));
}

}  // namespace lance::file::legacy
