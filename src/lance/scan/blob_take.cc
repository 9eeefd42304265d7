// take_blobs: the descriptors of a blob column at some rows, resolved to byte
// ranges of the data file (inline and legacy values), of the `.blob` files
// beside it (packed, dedicated) or of external files, then read.
#include "lance/blob.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <unordered_map>

#include <arrow/api.h>

#include "lance/dataset_internal.h"
#include "lance/file/blob_v2.h"
#include "lance/io/object_store.h"
#include "lance/scan/fragment_reader.h"
#include "lance/scan/row_selection.h"
#include "lance/table/file_locations.h"

namespace lance {
namespace {

constexpr const char* kLegacyBlobKey = "lance-encoding:blob";

// One blob value resolved to a byte range of a file.
struct ResolvedBlob {
  std::shared_ptr<const io::ObjectStore> store;
  std::string relative;  // inside `store`; "" when the store is the file itself
  std::string location;  // for messages
  uint64_t position = 0;
  uint64_t size = 0;
  // The value itself when the file reader already read it (legacy blob
  // columns, whose reader resolves descriptors to values row by row).
  std::shared_ptr<arrow::Buffer> bytes;
};

// The scheme of a URI, lower case; "" for a plain path.
std::string SchemeOf(const std::string& uri) {
  const size_t colon = uri.find(':');
  // One letter before the colon would be a drive, not a scheme.
  if (colon == std::string::npos || colon < 2 || !std::isalpha(static_cast<unsigned char>(uri[0]))) return "";
  std::string scheme;
  for (size_t i = 0; i < colon; ++i) {
    const unsigned char c = static_cast<unsigned char>(uri[i]);
    if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') return "";
    scheme.push_back(static_cast<char>(std::tolower(c)));
  }
  return scheme;
}

// The stores blob values live in (the dataset's, its base paths', external
// files'), each opened once per call. External blob URIs name files outside
// the dataset and are opened by their own URIs, as the reference does.
class Stores {
 public:
  explicit Stores(const Dataset& dataset) : dataset_(dataset) {}

  Result<std::shared_ptr<io::ObjectStore>> Open(const std::string& uri) {
    auto it = by_uri_.find(uri);
    if (it != by_uri_.end()) return it->second;
    LANCE_ASSIGN_OR_RAISE(auto store, io::ObjectStore::Open(uri, DatasetAccess::Store(dataset_)->storage_options()));
    by_uri_.emplace(uri, store);
    return store;
  }
  // The dataset's files, found through their base ids.
  Result<const table::FileLocator*> Files() {
    if (!files_) {
      // The dataset's own store (its filesystem), not one reopened by uri.
      files_ = std::make_unique<table::FileLocator>(DatasetAccess::Store(dataset_), dataset_.manifest());
    }
    return files_.get();
  }

 private:
  const Dataset& dataset_;
  std::map<std::string, std::shared_ptr<io::ObjectStore>> by_uri_;
  std::unique_ptr<table::FileLocator> files_;
};

// A file of the data directory `file` lives in (the file itself, or a
// sidecar beside it), through the file's base id.
Result<ResolvedBlob> InDataDirOf(Stores& stores, const DataFile& file, const std::string& name) {
  LANCE_ASSIGN_OR_RAISE(const table::FileLocator* files, stores.Files());
  LANCE_ASSIGN_OR_RAISE(auto location,
                        files->Locate(table::FileKind::kData, file.base_id, name, "data file " + file.path));
  ResolvedBlob blob;
  blob.location = location.FullPath();
  blob.store = std::move(location.store);
  blob.relative = std::move(location.path);
  return blob;
}

void CollectIds(const Field& field, std::vector<int32_t>* ids) {
  ids->push_back(field.id);
  for (const auto& child : field.children) CollectIds(child, ids);
}

// The data file of `fragment` holding `field` (by its id or a child's).
const DataFile* FileHolding(const Fragment& fragment, const Field& field) {
  std::vector<int32_t> ids;
  CollectIds(field, &ids);
  for (const auto& file : fragment.files) {
    for (int32_t id : ids) {
      if (std::find(file.fields.begin(), file.fields.end(), id) != file.fields.end()) return &file;
    }
  }
  return nullptr;
}

template <typename ArrayType>
Result<std::shared_ptr<ArrayType>> ChildOf(const arrow::StructArray& descriptors, const char* name,
                                           arrow::Type::type type, const std::string& what) {
  auto child = descriptors.GetFieldByName(name);
  if (child == nullptr || child->type_id() != type) {
    return Status::Invalid(what, ": blob descriptors ", descriptors.type()->ToString(), " lack a '", name,
                           "' child of the expected type");
  }
  return std::static_pointer_cast<ArrayType>(child);
}

// Resolves the blob v2 descriptors of one fragment's rows (row i of
// `descriptors`) into byte ranges; nullopt for null values.
class FragmentResolver {
 public:
  FragmentResolver(Stores& stores, const Fragment& fragment, const Field& field, std::string what)
      : stores_(stores), fragment_(fragment), field_(field), what_(std::move(what)) {}

  Result<std::vector<std::optional<ResolvedBlob>>> Resolve(const arrow::StructArray& descriptors) {
    std::vector<std::optional<ResolvedBlob>> out(descriptors.length());
    LANCE_ASSIGN_OR_RAISE(auto kinds, ChildOf<arrow::UInt8Array>(descriptors, "kind", arrow::Type::UINT8, what_));
    LANCE_ASSIGN_OR_RAISE(auto positions, ChildOf<arrow::UInt64Array>(descriptors, "position", arrow::Type::UINT64, what_));
    LANCE_ASSIGN_OR_RAISE(auto sizes, ChildOf<arrow::UInt64Array>(descriptors, "size", arrow::Type::UINT64, what_));
    LANCE_ASSIGN_OR_RAISE(auto ids, ChildOf<arrow::UInt32Array>(descriptors, "blob_id", arrow::Type::UINT32, what_));
    LANCE_ASSIGN_OR_RAISE(auto uris, ChildOf<arrow::StringArray>(descriptors, "blob_uri", arrow::Type::STRING, what_));
    for (int64_t i = 0; i < descriptors.length(); ++i) {
      if (descriptors.IsNull(i) || kinds->IsNull(i)) continue;
      const uint64_t position = positions->IsNull(i) ? 0 : positions->Value(i);
      const uint64_t size = sizes->IsNull(i) ? 0 : sizes->Value(i);
      const uint32_t blob_id = ids->IsNull(i) ? 0 : ids->Value(i);
      switch (static_cast<file::BlobV2Kind>(kinds->Value(i))) {
        case file::BlobV2Kind::kInline: {
          LANCE_ASSIGN_OR_RAISE(out[i], InDataFile(position, size));
          break;
        }
        case file::BlobV2Kind::kPacked: {
          LANCE_ASSIGN_OR_RAISE(out[i], InSidecar(blob_id, position, size));
          break;
        }
        case file::BlobV2Kind::kDedicated: {
          LANCE_ASSIGN_OR_RAISE(out[i], InSidecar(blob_id, 0, size));
          break;
        }
        case file::BlobV2Kind::kExternal: {
          LANCE_ASSIGN_OR_RAISE(out[i], External(uris->IsNull(i) ? "" : uris->GetString(i), blob_id, position, size));
          break;
        }
        default:
          return Status::Invalid(what_, ": corrupt blob descriptor of kind ", static_cast<int>(kinds->Value(i)),
                                 " (known: 0 inline, 1 packed, 2 dedicated, 3 external)");
      }
    }
    return out;
  }

 private:
  Result<const DataFile*> DataFileOf() const {
    const DataFile* file = FileHolding(fragment_, field_);
    if (file == nullptr) {
      return Status::Invalid(what_, ": fragment ", fragment_.id, " has no data file for the blob column");
    }
    return file;
  }

  Result<ResolvedBlob> InDataFile(uint64_t position, uint64_t size) {
    LANCE_ASSIGN_OR_RAISE(const DataFile* file, DataFileOf());
    LANCE_ASSIGN_OR_RAISE(auto blob, InDataDirOf(stores_, *file, file->path));
    blob.position = position;
    blob.size = size;
    return blob;
  }

  // A .blob file in the directory named by the data file's stem.
  Result<ResolvedBlob> InSidecar(uint32_t blob_id, uint64_t position, uint64_t size) {
    if (blob_id == 0) return Status::Invalid(what_, ": corrupt blob descriptor: a .blob file with id 0");
    LANCE_ASSIGN_OR_RAISE(const DataFile* file, DataFileOf());
    std::string stem = file->path.substr(file->path.rfind('/') + 1);  // npos + 1 == 0
    if (stem.size() > 6 && stem.compare(stem.size() - 6, 6, ".lance") == 0) stem.resize(stem.size() - 6);
    LANCE_ASSIGN_OR_RAISE(auto blob, InDataDirOf(stores_, *file, stem + "/" + file::BlobV2SidecarFileName(blob_id)));
    blob.position = position;
    blob.size = size;
    return blob;
  }

  // An external value: an absolute URI (base 0), else a path relative to
  // one of the manifest's base paths. Size 0 means the whole object.
  Result<ResolvedBlob> External(const std::string& uri, uint32_t base_id, uint64_t position, uint64_t size) {
    if (uri.empty()) return Status::Invalid(what_, ": corrupt blob descriptor: external with an empty URI");
    ResolvedBlob blob;
    blob.position = position;
    blob.size = size;
    if (base_id != 0) {
      if (uri.front() == '/' || ("/" + uri + "/").find("/../") != std::string::npos) {
        return Status::Invalid(what_, ": external blob path '", uri, "' under base path ", base_id,
                               " is not a relative path inside it");
      }
      LANCE_ASSIGN_OR_RAISE(const table::FileLocator* files, stores_.Files());
      LANCE_ASSIGN_OR_RAISE(blob.store, files->BaseStore(base_id, what_ + ": external blob '" + uri + "'"));
      blob.relative = uri;
    } else {
      const std::string scheme = SchemeOf(uri);
      if (!scheme.empty() && scheme != "file") {
        return Status::NotImplemented(what_, ": external blob URI '", uri, "' has unsupported scheme '", scheme,
                                      "' (lance-cpp reads local paths and file:// URIs)");
      }
      LANCE_ASSIGN_OR_RAISE(blob.store, stores_.Open(uri));
    }
    blob.location = blob.store->FullPath(blob.relative);
    if (size == 0) {
      auto object_size = blob.store->Size(blob.relative);
      if (!object_size.ok()) return object_size.status().WithMessage(what_, ": ", object_size.status().message());
      if (static_cast<uint64_t>(*object_size) < position) {
        return Status::Invalid(what_, ": external blob starts at byte ", position, " of ", blob.location,
                               ", which has only ", *object_size);
      }
      blob.size = static_cast<uint64_t>(*object_size) - position;
    }
    return blob;
  }

  Stores& stores_;
  const Fragment& fragment_;
  const Field& field_;
  std::string what_;
};

// Values the file reader read itself (legacy blob columns): each value
// located in its data file without a position.
Result<std::vector<std::optional<ResolvedBlob>>> AlreadyRead(const arrow::LargeBinaryArray& values,
                                                             const Fragment& fragment, const Field& field,
                                                             Stores& stores, const std::string& what) {
  std::vector<std::optional<ResolvedBlob>> out(values.length());
  const DataFile* file = FileHolding(fragment, field);
  if (file == nullptr) return out;  // a column the fragment predates: all null
  LANCE_ASSIGN_OR_RAISE(auto in_file, InDataDirOf(stores, *file, file->path));
  const std::string location = in_file.location;
  for (int64_t i = 0; i < values.length(); ++i) {
    if (values.IsNull(i)) continue;
    ResolvedBlob blob;
    blob.location = location;
    blob.size = static_cast<uint64_t>(values.value_length(i));
    blob.bytes = arrow::SliceBuffer(values.value_data(), values.value_offset(i), values.value_length(i));
    out[i] = std::move(blob);
  }
  return out;
}

const char* RowsName(BlobRows by) {
  switch (by) {
    case BlobRows::kIndices: return "index";
    case BlobRows::kRowIds: return "row id";
    case BlobRows::kRowAddresses: return "row address";
  }
  return "row";
}

// The blob values asked for, each distinct physical row resolved once.
struct Resolution {
  std::vector<std::optional<ResolvedBlob>> distinct;
  std::vector<std::string> what;  // per distinct value, for messages
  std::vector<size_t> value_of;   // per asked row: its index in `distinct`
};

Result<Resolution> Resolve(const std::shared_ptr<const Dataset>& dataset, const std::string& column,
                           const std::vector<uint64_t>& rows, BlobRows by) {
  const Schema& schema = dataset->manifest().schema;
  auto field = std::find_if(schema.fields.begin(), schema.fields.end(), [&](const Field& f) { return f.name == column; });
  if (field == schema.fields.end()) return Status::KeyError("dataset ", dataset->uri(), " has no column '", column, "'");
  if (!file::IsBlobV2Field(*field) && field->metadata.count(kLegacyBlobKey) == 0) {
    return Status::Invalid("column '", column, "' of dataset ", dataset->uri(), " is not a blob column");
  }
  auto selected = by == BlobRows::kIndices  ? scan::RowsAtIndices(*dataset, rows)
                  : by == BlobRows::kRowIds ? scan::RowsWithIds(*dataset, rows)
                                            : scan::RowsAtAddresses(*dataset, rows);
  LANCE_ASSIGN_OR_RAISE(std::vector<scan::PhysicalRow> physical, std::move(selected));
  // Asked rows by fragment; each fragment's distinct offsets ascending.
  std::map<size_t, std::vector<uint64_t>> offsets_of;
  for (const auto& row : physical) offsets_of[row.fragment_index].push_back(row.offset);
  Resolution out;
  std::map<size_t, size_t> first_distinct;  // fragment index -> its first entry in out.distinct
  Stores stores(*dataset);
  const auto& fragments = dataset->manifest().fragments;
  for (auto& [frag_index, offsets] : offsets_of) {
    std::sort(offsets.begin(), offsets.end());
    offsets.erase(std::unique(offsets.begin(), offsets.end()), offsets.end());
    const Fragment& fragment = fragments[frag_index];
    const std::string what = "blob column '" + column + "' of " + dataset->uri() + ", fragment " +
                             std::to_string(fragment.id);
    LANCE_ASSIGN_OR_RAISE(auto reader, scan::FragmentReader::Open(*dataset, fragment, {&*field},
                                                                  arrow::default_memory_pool()));
    LANCE_ASSIGN_OR_RAISE(auto batch, reader->Take(offsets));
    std::vector<std::optional<ResolvedBlob>> resolved;
    if (batch->column(0)->type_id() == arrow::Type::LARGE_BINARY) {
      LANCE_ASSIGN_OR_RAISE(resolved, AlreadyRead(static_cast<const arrow::LargeBinaryArray&>(*batch->column(0)),
                                                  fragment, *field, stores, what));
    } else if (batch->column(0)->type_id() == arrow::Type::STRUCT) {
      FragmentResolver resolver(stores, fragment, *field, what);
      LANCE_ASSIGN_OR_RAISE(resolved, resolver.Resolve(static_cast<const arrow::StructArray&>(*batch->column(0))));
    } else {
      return Status::Invalid(what, ": blob descriptors read as ", batch->column(0)->type()->ToString(),
                             ", not a struct");
    }
    first_distinct[frag_index] = out.distinct.size();
    for (size_t i = 0; i < resolved.size(); ++i) {
      out.distinct.push_back(std::move(resolved[i]));
      out.what.push_back(what + " row " + std::to_string(offsets[i]));
    }
  }
  out.value_of.reserve(physical.size());
  for (size_t i = 0; i < physical.size(); ++i) {
    const auto& offsets = offsets_of[physical[i].fragment_index];
    const size_t k = std::lower_bound(offsets.begin(), offsets.end(), physical[i].offset) - offsets.begin();
    out.value_of.push_back(first_distinct[physical[i].fragment_index] + k);
    if (out.what[out.value_of.back()].find(RowsName(by)) == std::string::npos) {
      out.what[out.value_of.back()] += " (" + std::string(RowsName(by)) + " " + std::to_string(rows[i]) + ")";
    }
  }
  return out;
}

}  // namespace

Result<std::vector<std::optional<BlobLocation>>> LocateBlobs(const std::shared_ptr<const Dataset>& dataset,
                                                             const std::string& column,
                                                             const std::vector<uint64_t>& rows, BlobRows by) {
  LANCE_ASSIGN_OR_RAISE(auto resolution, Resolve(dataset, column, rows, by));
  std::vector<std::optional<BlobLocation>> out;
  out.reserve(rows.size());
  for (size_t v : resolution.value_of) {
    const auto& blob = resolution.distinct[v];
    if (!blob) {
      out.emplace_back();
    } else if (blob->bytes) {
      return Status::NotImplemented("locating the values of legacy blob column '", column, "' of ", dataset->uri(),
                                    ": its reader returns values, not positions; use TakeBlobs");
    } else {
      out.push_back(BlobLocation{blob->location, blob->position, blob->size});
    }
  }
  return out;
}

Result<std::shared_ptr<arrow::LargeBinaryArray>> TakeBlobs(const std::shared_ptr<const Dataset>& dataset,
                                                           const std::string& column,
                                                           const std::vector<uint64_t>& rows, BlobRows by,
                                                           arrow::MemoryPool* pool) {
  LANCE_ASSIGN_OR_RAISE(auto resolution, Resolve(dataset, column, rows, by));
  // The values to read, by file, in file order: one ReadAt each.
  std::map<std::pair<const io::ObjectStore*, std::string>, std::vector<size_t>> by_file;
  std::vector<std::shared_ptr<arrow::Buffer>> bytes(resolution.distinct.size());
  for (size_t v = 0; v < resolution.distinct.size(); ++v) {
    const auto& blob = resolution.distinct[v];
    if (blob && blob->bytes) bytes[v] = blob->bytes;
    if (!blob || blob->size == 0 || blob->bytes) continue;
    by_file[{blob->store.get(), blob->relative}].push_back(v);
  }
  for (auto& [key, values] : by_file) {
    std::sort(values.begin(), values.end(), [&](size_t a, size_t b) {
      return resolution.distinct[a]->position < resolution.distinct[b]->position;
    });
    const ResolvedBlob& first = *resolution.distinct[values.front()];
    auto file = first.store->OpenInputFile(first.relative);
    if (!file.ok()) return file.status().WithMessage(resolution.what[values.front()], ": ", file.status().message());
    for (size_t v : values) {
      const ResolvedBlob& blob = *resolution.distinct[v];
      constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      if (blob.position > kMax || blob.size > kMax - blob.position) {
        return Status::Invalid(resolution.what[v], ": corrupt blob descriptor: ", blob.size, " bytes at ",
                               blob.position, " of ", blob.location);
      }
      auto read = (*file)->ReadAt(static_cast<int64_t>(blob.position), static_cast<int64_t>(blob.size));
      if (!read.ok()) return read.status().WithMessage(resolution.what[v], ": reading ", blob.location, ": ",
                                                       read.status().message());
      if (static_cast<uint64_t>((*read)->size()) != blob.size) {
        auto file_size = (*file)->GetSize();
        return Status::Invalid(resolution.what[v], ": blob bytes [", blob.position, ", ", blob.position + blob.size,
                               ") run past the end of ", blob.location, " (",
                               file_size.ok() ? std::to_string(*file_size) : std::string("unknown"), " bytes)");
      }
      bytes[v] = *read;
    }
  }
  arrow::LargeBinaryBuilder builder(pool);
  LANCE_RETURN_NOT_OK(builder.Reserve(static_cast<int64_t>(rows.size())));
  for (size_t v : resolution.value_of) {
    if (!resolution.distinct[v]) {
      LANCE_RETURN_NOT_OK(builder.AppendNull());
    } else if (bytes[v] == nullptr) {
      LANCE_RETURN_NOT_OK(builder.AppendEmptyValue());
    } else {
      LANCE_RETURN_NOT_OK(builder.Append(bytes[v]->data(), bytes[v]->size()));
    }
  }
  std::shared_ptr<arrow::LargeBinaryArray> out;
  LANCE_RETURN_NOT_OK(builder.Finish(&out));
  return out;
}

}  // namespace lance
