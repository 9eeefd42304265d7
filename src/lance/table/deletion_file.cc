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

Result<DeletionVector> ReadDeletionFile(const FileLocator& files, uint64_t fragment_id, const DeletionFile& file) {
  LANCE_ASSIGN_OR_RAISE(auto location, files.Deletion(fragment_id, file));
  LANCE_ASSIGN_OR_RAISE(auto bytes, location.store->ReadAll(location.path));
  if (file.type == DeletionFile::Type::kBitmap) return DeletionVector::FromRoaringPortable(bytes, location.FullPath());
  return DeletionVector::FromArrowIpc(bytes, location.FullPath());
}

}  // namespace lance::table
