// Fuzz target: deletion files, both forms (`.arrow`: an Arrow IPC file of
// one UInt32 "row_id" column; `.bin`: a portable Roaring bitmap), and the
// portable Roaring decoder on its own (also used by index files).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lance/table/deletion_vector.h"
#include "lance/table/roaring_portable.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto arrow = lance::table::DeletionVector::FromArrowIpc(bytes, "fuzz.arrow");
  if (arrow.ok()) (void)arrow->ToRoaringPortable();
  auto roaring = lance::table::DeletionVector::FromRoaringPortable(bytes, "fuzz.bin");
  if (roaring.ok()) (void)roaring->ToArrowIpc();
  (void)lance::table::DecodePortableRoaring(bytes, "fuzz");
  return 0;
}
