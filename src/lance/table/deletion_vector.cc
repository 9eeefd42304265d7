#include "lance/table/deletion_vector.h"

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

// Portable Roaring format constants (RoaringFormatSpec).
constexpr uint32_t kSerialCookieNoRuns = 12346;
constexpr uint32_t kSerialCookie = 12347;
constexpr uint32_t kNoOffsetThreshold = 4;
constexpr uint32_t kMaxArrayCardinality = 4096;
constexpr size_t kBitsetBytes = 8192;

// Bounds-checked little-endian reader over untrusted bytes.
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : bytes_(bytes) {}
  size_t remaining() const { return bytes_.size() - pos_; }
  bool Skip(size_t n) {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }
  bool ReadU16(uint16_t* v) { return Read(2, v); }
  bool ReadU32(uint32_t* v) { return Read(4, v); }
  const unsigned char* Peek() const {
    return reinterpret_cast<const unsigned char*>(bytes_.data()) + pos_;
  }

 private:
  template <typename T>
  bool Read(size_t width, T* v) {
    if (width > remaining()) return false;
    const unsigned char* p = Peek();
    T out = 0;
    for (size_t i = 0; i < width; ++i) out = static_cast<T>(out | (T{p[i]} << (8 * i)));
    *v = out;
    pos_ += width;
    return true;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
};

// CRoaring 0.2's "safe" deserializer checks lengths but trusts container
// contents (e.g. a bitset's declared cardinality), and an inconsistent bitmap
// can later overrun buffers. So the whole structure is checked here first.
Status ValidatePortableRoaring(std::string_view bytes, const std::string& path) {
  auto invalid = [&](auto&&... args) {
    return Status::Invalid("reading deletion file ", path, ": invalid Roaring bitmap: ", args...);
  };
  ByteReader in(bytes);
  uint32_t cookie = 0;
  if (!in.ReadU32(&cookie)) return invalid("file is ", bytes.size(), " bytes, too short");

  uint32_t size = 0;
  bool has_runs = false;
  std::string_view run_flags;
  if ((cookie & 0xFFFF) == kSerialCookie) {
    has_runs = true;
    size = (cookie >> 16) + 1;
    const size_t flag_bytes = (size + 7) / 8;
    if (flag_bytes > in.remaining()) return invalid("truncated run-container flags");
    run_flags = std::string_view(reinterpret_cast<const char*>(in.Peek()), flag_bytes);
    in.Skip(flag_bytes);
  } else if (cookie == kSerialCookieNoRuns) {
    if (!in.ReadU32(&size)) return invalid("truncated container count");
    if (size > 65536) return invalid(size, " containers, at most 65536 allowed");
  } else {
    return invalid("unknown cookie ", cookie);
  }

  std::vector<uint16_t> keys(size);
  std::vector<uint32_t> cards(size);
  for (uint32_t i = 0; i < size; ++i) {
    uint16_t key = 0, card_minus_one = 0;
    if (!in.ReadU16(&key) || !in.ReadU16(&card_minus_one)) return invalid("truncated header");
    if (i > 0 && key <= keys[i - 1]) return invalid("container keys are not increasing");
    keys[i] = key;
    cards[i] = uint32_t{card_minus_one} + 1;
  }
  if (!has_runs || size >= kNoOffsetThreshold) {
    // Offsets are redundant with the sequential layout; skip them.
    if (!in.Skip(size_t{size} * 4)) return invalid("truncated offset header");
  }

  for (uint32_t i = 0; i < size; ++i) {
    const bool is_run =
        has_runs && ((static_cast<unsigned char>(run_flags[i / 8]) >> (i % 8)) & 1) != 0;
    if (is_run) {
      uint16_t n_runs = 0;
      if (!in.ReadU16(&n_runs)) return invalid("truncated run container");
      // An empty container has no valid header cardinality (stored as card - 1).
      if (n_runs == 0) return invalid("empty run container");
      int64_t prev_end = -1;  // last value covered by the previous run
      for (uint16_t r = 0; r < n_runs; ++r) {
        uint16_t start = 0, length_minus_one = 0;
        if (!in.ReadU16(&start) || !in.ReadU16(&length_minus_one)) {
          return invalid("truncated run container");
        }
        const int64_t end = int64_t{start} + length_minus_one;
        if (end > 0xFFFF) return invalid("run exceeds its container");
        if (int64_t{start} <= prev_end) return invalid("runs overlap or are unsorted");
        prev_end = end;
      }
    } else if (cards[i] > kMaxArrayCardinality) {
      if (in.remaining() < kBitsetBytes) return invalid("truncated bitset container");
      const unsigned char* p = in.Peek();
      uint32_t count = 0;
      for (size_t b = 0; b < kBitsetBytes; ++b) count += std::popcount(p[b]);
      if (count != cards[i]) {
        return invalid("bitset container has ", count, " bits set, header says ", cards[i]);
      }
      in.Skip(kBitsetBytes);
    } else {
      int32_t prev = -1;
      for (uint32_t k = 0; k < cards[i]; ++k) {
        uint16_t v = 0;
        if (!in.ReadU16(&v)) return invalid("truncated array container");
        if (int32_t{v} <= prev) return invalid("array container is not strictly increasing");
        prev = v;
      }
    }
  }
  // Like the reference reader, bytes after the bitmap are ignored.
  return Status::OK();
}

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
  auto opened = arrow::ipc::RecordBatchFileReader::Open(source);
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
  LANCE_RETURN_NOT_OK(ValidatePortableRoaring(bytes, path));
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

bool DeletionVector::operator==(const DeletionVector& other) const {
  if (!impl_ || !other.impl_) return Cardinality() == other.Cardinality();
  return roaring_bitmap_equals(impl_->bitmap, other.impl_->bitmap);
}

}  // namespace lance::table
