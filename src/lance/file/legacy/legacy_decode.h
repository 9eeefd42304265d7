// The page encodings of legacy (0.1) files, decoded from a byte region of the
// file. Every read is checked against the region before it is made, so a
// corrupt position or length gives an error, never a read outside it.
//
//  * plain: fixed-width values back to back; booleans as an LSB bitmap; a
//    fixed-size list as its items (recursively), a fixed-size binary as its
//    bytes. No validity is stored.
//  * var-binary: the page position points at length+1 i64 absolute file
//    positions; value i is the bytes [pos[i], pos[i+1]). In a nullable field an
//    empty value reads as null (the only nulls legacy files have).
//  * dictionary: plain keys; the values are stored once per file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <arrow/array.h>
#include <arrow/io/interfaces.h>
#include <arrow/memory_pool.h>

#include "lance/status.h"

namespace lance::file::legacy {

/// Bytes [begin, end) of a file that pages may occupy.
struct Region {
  arrow::io::RandomAccessFile* file = nullptr;
  const std::string* name = nullptr;  // the file, for errors
  uint64_t begin = 0;
  uint64_t end = 0;
  arrow::MemoryPool* pool = nullptr;
};

/// Whether the legacy writer stores `type` with the plain encoding.
bool IsFixedStride(const arrow::DataType& type);

/// Values [first, last) of a plain page at `position` holding `page_values`
/// values of `type` (fixed stride). `what` describes the page for errors.
Result<std::shared_ptr<arrow::Array>> ReadPlain(const Region& region, const std::shared_ptr<arrow::DataType>& type,
                                                int64_t position, int64_t page_values, int64_t first, int64_t last,
                                                const std::string& what);

/// Values [first, last) of a var-binary page of `page_values` values of `type`
/// (utf8, binary, large_utf8, large_binary).
Result<std::shared_ptr<arrow::Array>> ReadVarBinary(const Region& region,
                                                    const std::shared_ptr<arrow::DataType>& type, bool nullable,
                                                    int64_t position, int64_t page_values, int64_t first,
                                                    int64_t last, const std::string& what);

/// Reads [position, position + length) of the region, failing if it is not
/// wholly inside. The buffer is 8-byte aligned.
Result<std::shared_ptr<arrow::Buffer>> ReadRange(const Region& region, int64_t position, int64_t length,
                                                 const std::string& what);

/// A "corrupt lance file NAME: WHAT: ..." error.
template <typename... Args>
Status Corrupt(const Region& region, const std::string& what, Args&&... args) {
  return Status::Invalid("corrupt lance file ", *region.name, ": ", what, ": ", std::forward<Args>(args)...);
}

}  // namespace lance::file::legacy
