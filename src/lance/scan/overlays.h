// Data overlay files (feature bit 64) on read: the values an overlay holds
// for some (physical row, field) cells of a fragment replace the base values
// of those cells. The newest overlay covering a cell wins; deletions are
// applied afterwards by the caller, which reads physical rows.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <arrow/array.h>
#include <arrow/memory_pool.h>
#include <arrow/type.h>

#include "lance/dataset.h"
#include "lance/file_reader.h"
#include "lance/status.h"

namespace lance::scan {

/// The overlays of one fragment that touch the fields of one read, with their
/// files open. A read whose fields no overlay covers opens no file.
/// REQUIRES: the dataset outlives the resolver. Not thread-safe.
class OverlayResolver {
 public:
  /// `fields` are the top-level fields of the read, `types` their output
  /// Arrow types (the same order). Refuses overlays lance-cpp cannot resolve
  /// (inside a struct, on a blob column, legacy files), naming the file.
  static Result<std::unique_ptr<OverlayResolver>> Open(const Dataset& dataset, const Fragment& fragment,
                                                       const std::vector<const Field*>& fields,
                                                       const std::vector<std::shared_ptr<arrow::DataType>>& types,
                                                       arrow::MemoryPool* pool);

  /// Whether no overlay covers any field of the read.
  bool empty() const { return targets_.empty(); }

  /// Replaces the covered cells of `columns` (one per field, holding the
  /// physical rows [offset, offset + count), or those at ascending `offsets`
  /// when given) with the newest overlay's values.
  Status Apply(uint64_t offset, uint64_t count, const std::vector<uint64_t>* offsets,
               std::vector<std::shared_ptr<arrow::Array>>* columns) const;

 private:
  struct File {
    std::string location;
    std::shared_ptr<FileReader> reader;
  };
  // One overlay's values for one field: the file's top-level column and the
  // covered physical offsets (sorted; a value sits at its offset's rank).
  struct Layer {
    size_t file = 0;
    std::string column;
    std::vector<uint32_t> coverage;
  };
  struct Target {
    size_t output = 0;
    std::vector<Layer> newest_first;
  };

  std::vector<File> files_;
  std::vector<Target> targets_;
  std::vector<std::shared_ptr<arrow::DataType>> types_;
  arrow::MemoryPool* pool_ = nullptr;
};

}  // namespace lance::scan
