// Fuzz target: a whole .lance file (v2 container and every decoder, or the
// legacy reader), read in full.
#include <cstddef>
#include <cstdint>
#include <memory>

#include <arrow/buffer.h>
#include <arrow/io/memory.h>

#include "lance/file/legacy/legacy_reader.h"
#include "lance/file_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto buffer = std::make_shared<arrow::Buffer>(data, static_cast<int64_t>(size));
  {
    auto file = std::make_shared<arrow::io::BufferReader>(buffer);
    auto reader = lance::FileReader::Open(file, "fuzz.lance");
    if (reader.ok()) {
      auto table = (*reader)->ReadAll();
      if (table.ok()) (void)(*table)->ValidateFull();
    }
  }
  {
    auto file = std::make_shared<arrow::io::BufferReader>(buffer);
    auto reader = lance::file::legacy::LegacyFileReader::Open(file, "fuzz.lance", arrow::default_memory_pool());
    if (reader.ok() && (*reader)->embedded_schema()) {
      auto batch = (*reader)->ReadAll(*(*reader)->embedded_schema());
      if (batch.ok()) (void)(*batch)->ValidateFull();
    }
  }
  return 0;
}
