#include "lance/table/deletion_vector.h"
#include "lance/table/roaring_portable.h"

#include <roaring/roaring.h>

#include <arrow/api.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/api.h>
#include <arrow/util/compression.h>

#include <bit>
#include <cstring>
#include <utility>

namespace lance::table {

namespace {

std::shared_ptr<arrow::Schema> DeletionSchema() {
  return arrow::schema({arrow::field("row_id", arrow::uint32(), /*nullable=*/false)});
}

}  // namespace

struct DeletionVector::Impl {
  Impl() : bitmap(roaring_bitmap_create()) {}
  explicit Impl(roaring_bitmap_t* b) : bitmap(b) {}
  ~Impl() { roaring_bitmap_free(bitmap); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  roaring_bitmap_t* bitmap;
};

DeletionVector::DeletionVector() : impl_(std::make_unique<Impl>()) {}
DeletionVector::~DeletionVector() = default;
DeletionVector::DeletionVector(DeletionVector&&) noexcept = default;
DeletionVector& DeletionVector::operator=(DeletionVector&&) noexcept = default;

DeletionVector::DeletionVector(const DeletionVector& other)
    : impl_(other.impl_ ? std::make_unique<Impl>(roaring_bitmap_copy(other.impl_->bitmap))
                        : std::make_unique<Impl>()) {}

DeletionVector& DeletionVector::operator=(const DeletionVector& other) {
  if (this != &other) *this = DeletionVector(other);
  return *this;
}

// A moved-from vector has no impl_; every reader treats that as empty.

DeletionVector DeletionVector::FromOffsets(const std::vector<uint32_t>& offsets) {
  DeletionVector dv;
  if (!offsets.empty()) roaring_bitmap_add_many(dv.impl_->bitmap, offsets.size(), offsets.data());
  return dv;
}

Result<DeletionVector> DeletionVector::FromArrowIpc(std::string_view bytes,
                                                    const std::string& path) {
  auto context = [&](const Status& st) {
    return Status::Invalid("reading deletion file ", path, ": ", st.message());
  };
  // Copy into an Arrow-allocated (aligned) buffer so buffers read zero-copy
  // from the file are properly aligned.
  auto alloc = arrow::AllocateBuffer(static_cast<int64_t>(bytes.size()));
  if (!alloc.ok()) return context(alloc.status());
  std::shared_ptr<arrow::Buffer> buffer = std::move(alloc).ValueUnsafe();
  if (!bytes.empty()) std::memcpy(buffer->mutable_data(), bytes.data(), bytes.size());

  auto source = std::make_shared<arrow::io::BufferReader>(buffer);
  // One small column: no thread pool, which also makes this safe to call
  // from pool threads (a pool thread must never wait on the pool).
  auto options = arrow::ipc::IpcReadOptions::Defaults();
  options.use_threads = false;
  auto opened = arrow::ipc::RecordBatchFileReader::Open(source, options);
  if (!opened.ok()) return context(opened.status());
  std::shared_ptr<arrow::ipc::RecordBatchFileReader> reader = *opened;

  const auto& schema = reader->schema();
  const bool schema_ok = schema->num_fields() == 1 && schema->field(0)->name() == "row_id" &&
                         schema->field(0)->type()->id() == arrow::Type::UINT32 &&
                         !schema->field(0)->nullable();
  if (!schema_ok) {
    return Status::Invalid("reading deletion file ", path,
                           ": expected one non-nullable UInt32 column \"row_id\", found ",
                           schema->ToString(/*show_metadata=*/false));
  }
  if (reader->num_record_batches() != 1) {
    return Status::Invalid("reading deletion file ", path,
                           ": expected exactly one record batch, found ",
                           reader->num_record_batches());
  }
  auto read = reader->ReadRecordBatch(0);
  if (!read.ok()) return context(read.status());
  std::shared_ptr<arrow::RecordBatch> batch = *read;
  // Hostile offsets or lengths must be caught before any value is touched.
  Status valid = batch->ValidateFull();
  if (!valid.ok()) return context(valid);
  if (batch->num_columns() != 1 || batch->column(0)->type_id() != arrow::Type::UINT32) {
    return Status::Invalid("reading deletion file ", path,
                           ": record batch does not match the file schema");
  }
  const auto& column = static_cast<const arrow::UInt32Array&>(*batch->column(0));
  if (column.null_count() != 0) {
    return Status::Invalid("reading deletion file ", path, ": column \"row_id\" has ",
                           column.null_count(), " nulls");
  }
  DeletionVector dv;
  if (column.length() > 0) {
    roaring_bitmap_add_many(dv.impl_->bitmap, static_cast<size_t>(column.length()),
                            column.raw_values());
  }
  return dv;
}

Result<DeletionVector> DeletionVector::FromRoaringPortable(std::string_view bytes,
                                                           const std::string& path) {
  LANCE_RETURN_NOT_OK(ValidatePortableRoaring(bytes, "reading deletion file " + path));
  roaring_bitmap_t* bitmap = roaring_bitmap_portable_deserialize_safe(bytes.data(), bytes.size());
  if (bitmap == nullptr) {
    return Status::Invalid("reading deletion file ", path,
                           ": invalid Roaring bitmap: rejected by the deserializer");
  }
  DeletionVector dv;
  dv.impl_ = std::make_unique<Impl>(bitmap);
  return dv;
}

Result<std::string> DeletionVector::ToArrowIpc() const {
  const std::vector<uint32_t> values = ToVector();
  arrow::UInt32Builder builder;
  LANCE_RETURN_NOT_OK(builder.AppendValues(values));
  std::shared_ptr<arrow::Array> array;
  LANCE_RETURN_NOT_OK(builder.Finish(&array));
  auto schema = DeletionSchema();
  auto batch = arrow::RecordBatch::Make(schema, array->length(), {array});

  auto options = arrow::ipc::IpcWriteOptions::Defaults();
  LANCE_ASSIGN_OR_RAISE(auto codec, arrow::util::Codec::Create(arrow::Compression::ZSTD));
  options.codec = std::move(codec);

  LANCE_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
  LANCE_ASSIGN_OR_RAISE(auto writer, arrow::ipc::MakeFileWriter(sink, schema, options));
  LANCE_RETURN_NOT_OK(writer->WriteRecordBatch(*batch));
  LANCE_RETURN_NOT_OK(writer->Close());
  LANCE_ASSIGN_OR_RAISE(auto buffer, sink->Finish());
  return buffer->ToString();
}

std::string DeletionVector::ToRoaringPortable() const {
  // Written without run containers, the layout every Roaring reader knows.
  roaring_bitmap_t* copy =
      impl_ ? roaring_bitmap_copy(impl_->bitmap) : roaring_bitmap_create();
  roaring_bitmap_remove_run_compression(copy);
  std::string out(roaring_bitmap_portable_size_in_bytes(copy), '\0');
  const size_t written = roaring_bitmap_portable_serialize(copy, out.data());
  out.resize(written);
  roaring_bitmap_free(copy);
  return out;
}

void DeletionVector::Add(uint32_t offset) {
  if (!impl_) impl_ = std::make_unique<Impl>();
  roaring_bitmap_add(impl_->bitmap, offset);
}

bool DeletionVector::Contains(uint32_t offset) const {
  return impl_ && roaring_bitmap_contains(impl_->bitmap, offset);
}

uint64_t DeletionVector::Cardinality() const {
  return impl_ ? roaring_bitmap_get_cardinality(impl_->bitmap) : 0;
}

bool DeletionVector::Max(uint32_t* out) const {
  if (Empty()) return false;
  *out = roaring_bitmap_maximum(impl_->bitmap);
  return true;
}

std::vector<uint32_t> DeletionVector::ToVector() const {
  std::vector<uint32_t> out(Cardinality());
  if (!out.empty()) roaring_bitmap_to_uint32_array(impl_->bitmap, out.data());
  return out;
}

void DeletionVector::UnionWith(const DeletionVector& other) {
  if (!other.impl_) return;
  if (!impl_) impl_ = std::make_unique<Impl>();
  roaring_bitmap_or_inplace(impl_->bitmap, other.impl_->bitmap);
}

DeletionVector DeletionVector::Intersection(const DeletionVector& other) const {
  if (!impl_ || !other.impl_) return DeletionVector();
  DeletionVector out;
  roaring_bitmap_free(out.impl_->bitmap);
  out.impl_->bitmap = roaring_bitmap_and(impl_->bitmap, other.impl_->bitmap);
  return out;
}

bool DeletionVector::operator==(const DeletionVector& other) const {
  if (!impl_ || !other.impl_) return Cardinality() == other.Cardinality();
  return roaring_bitmap_equals(impl_->bitmap, other.impl_->bitmap);
}

}  // namespace lance::table
