#include "lance/table/deletion_file.h"

#include <random>

namespace lance::table {

DeletionFile::Type DeletionFileTypeFor(const std::optional<DeletionFile>& previous, uint64_t previous_rows,
                                       uint64_t rows) {
  if (previous && previous->type == DeletionFile::Type::kBitmap) return DeletionFile::Type::kBitmap;
  const bool bitmap = previous_rows == 0 ? rows >= kDeletionBitmapThreshold : rows > kDeletionBitmapThreshold;
  return bitmap ? DeletionFile::Type::kBitmap : DeletionFile::Type::kArrowArray;
}

Result<DeletionFile> WriteDeletionFile(const io::ObjectStore& store, uint64_t fragment_id,
                                       uint64_t read_version, const DeletionVector& deleted,
                                       DeletionFile::Type type) {
  if (deleted.Empty()) {
    return Status::Invalid("no deletion file is written for fragment ", fragment_id, " without deleted rows");
  }
  thread_local std::mt19937_64 rng{std::random_device{}()};
  DeletionFile file;
  file.type = type;
  file.read_version = read_version;
  file.id = rng();  // only for uniqueness, as the reference's
  file.num_deleted_rows = deleted.Cardinality();
  std::string bytes;
  if (type == DeletionFile::Type::kBitmap) {
    bytes = deleted.ToRoaringPortable();
  } else {
    LANCE_ASSIGN_OR_RAISE(bytes, deleted.ToArrowIpc());
  }
  LANCE_RETURN_NOT_OK(store.Write(file.RelativePath(fragment_id), bytes));
  return file;
}

Result<DeletionVector> ReadDeletionFile(const io::ObjectStore& store, uint64_t fragment_id,
                                        const DeletionFile& file) {
  if (file.base_id) {
    return Status::NotImplemented("deletion file of fragment ", fragment_id, " lives under base path ",
                                  *file.base_id, ", which lance-cpp does not read yet");
  }
  const std::string rel = file.RelativePath(fragment_id);
  LANCE_ASSIGN_OR_RAISE(auto bytes, store.ReadAll(rel));
  if (file.type == DeletionFile::Type::kBitmap) return DeletionVector::FromRoaringPortable(bytes, store.FullPath(rel));
  return DeletionVector::FromArrowIpc(bytes, store.FullPath(rel));
}

}  // namespace lance::table
