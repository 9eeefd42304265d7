// BITMAP indices as pylance 14 writes them (rust/lance-index/src/scalar/bitmap.rs):
//   bitmap_page_lookup.lance  keys (value type, the null key first when any
//                             row is null), bitmaps (binary): each a
//                             serialized RowIdTreeMap
// RowIdTreeMap (rust/lance-core/src/utils/mask.rs): u32 count, then per entry
// u32 high 32 bits, u32 size, and `size` bytes of a portable 32-bit Roaring
// bitmap of the low bits; size 0 means "every row of that high part", which
// the bitmap builder never writes and this reader refuses.
#include <algorithm>
#include <cstring>

#include <arrow/api.h>

#include "lance/file_reader.h"
#include "lance/index/scalar_index.h"
#include "lance/table/roaring_portable.h"

namespace lance::index {
namespace {

constexpr const char* kLookupFile = "bitmap_page_lookup.lance";

uint32_t LoadU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // little-endian hosts only, as the rest of the readers
}

}  // namespace

/// Decodes a serialized RowIdTreeMap into sorted row ids.
Result<RowIds> DecodeRowIdTreeMap(std::string_view bytes, const std::string& context) {
  if (bytes.size() < 4) return Status::Invalid(context, ": truncated row id map");
  const uint32_t count = LoadU32(bytes.data());
  size_t pos = 4;
  RowIds out;
  for (uint32_t e = 0; e < count; ++e) {
    if (bytes.size() - pos < 8) return Status::Invalid(context, ": truncated row id map entry ", e);
    const uint64_t high = LoadU32(bytes.data() + pos);
    const uint32_t size = LoadU32(bytes.data() + pos + 4);
    pos += 8;
    if (size == 0) {
      return Status::NotImplemented(context, ": row id map entry ", e,
                                    " selects a whole fragment, which lance-cpp does not read");
    }
    if (bytes.size() - pos < size) return Status::Invalid(context, ": truncated row id map entry ", e);
    LANCE_ASSIGN_OR_RAISE(auto low, table::DecodePortableRoaring(bytes.substr(pos, size), context));
    pos += size;
    for (uint32_t v : low) out.push_back((high << 32) | v);
  }
  if (pos != bytes.size()) return Status::Invalid(context, ": ", bytes.size() - pos, " bytes after the row id map");
  // Entries are written in ascending order of their high part, but do not trust it.
  if (!std::is_sorted(out.begin(), out.end())) {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return out;
}

namespace {

class BitmapIndex : public ScalarIndex {
 public:
  BitmapIndex(std::shared_ptr<FileReader> lookup, std::shared_ptr<arrow::DataType> type, std::string name)
      : lookup_(std::move(lookup)), type_(std::move(type)), name_(std::move(name)) {}
  const char* type_name() const override { return "Bitmap"; }
  const std::shared_ptr<arrow::DataType>& value_type() const override { return type_; }
  bool stores_addresses() const override { return false; }

  Result<RowIds> Search(const arrow::compute::Expression& predicate, const std::string& column) override {
    LANCE_RETURN_NOT_OK(Load());
    LANCE_ASSIGN_OR_RAISE(auto hits, EvaluateOn(predicate, column, keys_));
    RowIds out;
    for (size_t i = 0; i < hits.size(); ++i) {
      if (!hits[i]) continue;
      const auto k = static_cast<int64_t>(i);
      if (bitmaps_->IsNull(k)) continue;  // no rows
      std::string_view bytes = bitmaps_->type_id() == arrow::Type::LARGE_BINARY
                                   ? static_cast<const arrow::LargeBinaryArray&>(*bitmaps_).GetView(k)
                                   : static_cast<const arrow::BinaryArray&>(*bitmaps_).GetView(k);
      LANCE_ASSIGN_OR_RAISE(auto ids, DecodeRowIdTreeMap(bytes, name_));
      out = Union(out, ids);
    }
    return out;
  }

 private:
  Status Load() {
    if (keys_) return Status::OK();
    LANCE_ASSIGN_OR_RAISE(auto table, lookup_->ReadAll({"keys", "bitmaps"}));
    LANCE_ASSIGN_OR_RAISE(auto combined, table->CombineChunks());
    auto keys = combined->GetColumnByName("keys");
    auto bitmaps = combined->GetColumnByName("bitmaps");
    if (keys->num_chunks() == 0) {
      LANCE_ASSIGN_OR_RAISE(keys_, arrow::MakeEmptyArray(type_));
      LANCE_ASSIGN_OR_RAISE(bitmaps_, arrow::MakeEmptyArray(arrow::binary()));
    } else {
      keys_ = keys->chunk(0);
      bitmaps_ = bitmaps->chunk(0);
    }
    return Status::OK();
  }

  std::shared_ptr<FileReader> lookup_;
  std::shared_ptr<arrow::DataType> type_;
  std::string name_;
  std::shared_ptr<arrow::Array> keys_, bitmaps_;
};

}  // namespace

Result<std::unique_ptr<ScalarIndex>> OpenBitmapIndex(const Dataset& dataset, const IndexMetadata& metadata) {
  if (metadata.index_version.value_or(0) != 0) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto lookup, OpenIndexFile(dataset, metadata, kLookupFile));
  if (lookup == nullptr) return std::unique_ptr<ScalarIndex>();
  LANCE_ASSIGN_OR_RAISE(auto schema, lookup->ArrowSchema());
  auto keys = schema->GetFieldByName("keys");
  auto bitmaps = schema->GetFieldByName("bitmaps");
  if (keys == nullptr || bitmaps == nullptr ||
      (bitmaps->type()->id() != arrow::Type::BINARY && bitmaps->type()->id() != arrow::Type::LARGE_BINARY)) {
    return std::unique_ptr<ScalarIndex>();
  }
  std::string name = "bitmap index '" + metadata.name + "' (" + metadata.UuidString() + ")";
  return std::unique_ptr<ScalarIndex>(new BitmapIndex(std::move(lookup), keys->type(), std::move(name)));
}

}  // namespace lance::index
