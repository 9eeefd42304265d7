#include "lance/file_writer.h"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <limits>
#include <mutex>

#include <arrow/array.h>
#include <arrow/array/concatenate.h>
#include <arrow/filesystem/filesystem.h>
#include <arrow/type.h>
#include <arrow/util/byte_size.h>
#include <arrow/util/future.h>
#include <arrow/util/thread_pool.h>

#include "lance/file.pb.h"
#include "lance/file/blob_v2.h"
#include "lance/file/container_writer.h"
#include "lance/file/field_encoder.h"
#include "lance/file/schema_proto.h"
#include "lance/file/version.h"
#include "lance/util/parallel.h"

namespace lance {
namespace {

constexpr uint64_t kDefaultCacheBytesPerColumn = 8 * 1024 * 1024;
constexpr uint64_t kDefaultMaxPageBytes = 32 * 1024 * 1024;
constexpr const char* kMaxPageBytesEnv = "LANCE_FILE_WRITER_MAX_PAGE_BYTES";

// The reference falls back to the default when the variable does not parse.
uint64_t MaxPageBytesFromEnv() {
  const char* env = std::getenv(kMaxPageBytesEnv);
  if (env == nullptr || *env == '\0') return kDefaultMaxPageBytes;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(env, &end, 10);
  if (errno != 0 || *end != '\0' || env[0] == '-') return kDefaultMaxPageBytes;
  return static_cast<uint64_t>(v);
}

// Whether `type` is what `field` says, level by level (logical types only:
// names of list items and the like may differ, as the reference allows).
Status CheckType(const Field& field, const arrow::DataType& type, const std::string& path) {
  auto logical = LogicalTypeFromArrow(type);
  if (!logical.ok()) {
    return Status::TypeError("field '", path, "' has Arrow type ", type.ToString(),
                             ", which Lance cannot store: ", logical.status().message());
  }
  if (*logical != field.logical_type) {
    return Status::TypeError("field '", path, "' has type ", type.ToString(), " (", *logical,
                             ") but the file schema says ", field.logical_type);
  }
  // Fixed-size lists of primitives and dictionaries keep their item type in
  // the logical type string and have no child fields.
  if (type.id() == arrow::Type::DICTIONARY || field.children.empty()) return Status::OK();
  if (static_cast<size_t>(type.num_fields()) != field.children.size()) {
    return Status::TypeError("field '", path, "' has ", type.num_fields(), " children but the file schema has ",
                             field.children.size());
  }
  for (size_t i = 0; i < field.children.size(); ++i) {
    LANCE_RETURN_NOT_OK(CheckType(field.children[i], *type.field(static_cast<int>(i))->type(),
                                  path + "." + field.children[i].name));
  }
  return Status::OK();
}

Status CheckNullability(const arrow::ArrayData& data, const Field& field, const std::string& path) {
  if (!field.nullable && data.GetNullCount() > 0) {
    return Status::Invalid("field '", path, "' contains null values but the schema marks it non-nullable");
  }
  const size_t n = std::min(field.children.size(), data.child_data.size());
  for (size_t i = 0; i < n; ++i) {
    LANCE_RETURN_NOT_OK(CheckNullability(*data.child_data[i], field.children[i], path + "." + field.children[i].name));
  }
  return Status::OK();
}

// File version 2.0 keeps no validity for structs; the reference refuses
// them before encoding anything.
Status CheckNoNullStructs(const arrow::ArrayData& data, const std::string& path) {
  if (data.type->id() == arrow::Type::STRUCT && data.GetNullCount() > 0) {
    return Status::Invalid("the struct field '", path, "' contains ", data.GetNullCount(),
                           " null value(s), but Lance file version 2.0 does not encode struct validity; "
                           "use file version 2.1 or later");
  }
  for (int i = 0; i < static_cast<int>(data.child_data.size()); ++i) {
    const std::string child = data.type->num_fields() > i ? data.type->field(i)->name() : std::to_string(i);
    LANCE_RETURN_NOT_OK(CheckNoNullStructs(*data.child_data[i], path + "." + child));
  }
  return Status::OK();
}

void AddIdsTo(const Field& f, std::vector<int32_t>* ids) {
  ids->push_back(f.id);
  for (const auto& c : f.children) AddIdsTo(c, ids);
}

Status ValidateSchema(const Schema& schema, const std::string& name) {
  std::vector<int32_t> ids;
  for (const auto& f : schema.fields) AddIdsTo(f, &ids);
  for (int32_t id : ids) {
    if (id < 0) return Status::Invalid("writing ", name, ": the schema has a field without an id (", id, ")");
  }
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end()) {
    return Status::Invalid("writing ", name, ": the schema has duplicate field ids");
  }
  return Status::OK();
}

// Bytes an array's values take at least (a lower bound of what the
// encoders count against the column cache), or 0 when the array is not a
// plain, compact leaf: not a slice (offset 0, value offsets from 0, children
// exactly as long as the rows need), not nested, not a dictionary.
uint64_t CompactLeafBytes(const arrow::ArrayData& data) {
  if (data.offset != 0) return 0;
  const auto id = data.type->id();
  const int64_t n = data.length;
  if (id == arrow::Type::FIXED_SIZE_LIST) {
    const int64_t dim = static_cast<const arrow::FixedSizeListType&>(*data.type).list_size();
    if (data.child_data.size() != 1 || data.child_data[0]->length != n * dim) return 0;
    return CompactLeafBytes(*data.child_data[0]);
  }
  if (id == arrow::Type::STRING || id == arrow::Type::BINARY) {
    if (data.buffers.size() < 3 || !data.buffers[1] || n < 0) return 0;
    const int32_t* offsets = data.GetValues<int32_t>(1);
    if (offsets[0] != 0) return 0;
    return static_cast<uint64_t>(n + 1) * 4 + static_cast<uint64_t>(offsets[n]);
  }
  if (id == arrow::Type::LARGE_STRING || id == arrow::Type::LARGE_BINARY) {
    if (data.buffers.size() < 3 || !data.buffers[1] || n < 0) return 0;
    const int64_t* offsets = data.GetValues<int64_t>(1);
    if (offsets[0] != 0) return 0;
    return static_cast<uint64_t>(n + 1) * 8 + static_cast<uint64_t>(offsets[n]);
  }
  if (id == arrow::Type::DICTIONARY || id == arrow::Type::NA || !arrow::is_fixed_width(id)) return 0;
  return static_cast<uint64_t>(n) * static_cast<uint64_t>(data.type->bit_width()) / 8;
}

// Whether a buffer of `size` bytes holding `needed` keeps no more memory
// alive than a copy would: its own allocation (not a slice of a parent),
// about as large as what it holds.
bool NoLargerThanNeeded(const std::shared_ptr<arrow::Buffer>& buffer, uint64_t needed) {
  if (!buffer->is_cpu() || buffer->parent() != nullptr) return false;
  const uint64_t slack = needed / 8 + 64;
  return static_cast<uint64_t>(buffer->size()) <= needed + slack &&
         static_cast<uint64_t>(buffer->capacity()) <= needed + slack;
}

// Whether `data` is what a copy of it would be (a freshly decoded or
// filtered array): offset 0, every buffer its own and sized to its rows,
// offsets from 0, children exactly as long as the rows need; plain
// fixed-width, string, binary, list, fixed-size list and struct types only.
// Holding it then costs what holding its copy would, and the encoders'
// size estimates (offsets, lengths and values) come out the same.
bool IsOwnCompactArray(const arrow::ArrayData& data) {
  if (data.offset != 0 || data.length < 0 || data.dictionary) return false;
  const auto n = static_cast<uint64_t>(data.length);
  const auto id = data.type->id();
  auto own = [&](size_t i, uint64_t needed) {
    return i < data.buffers.size() && data.buffers[i] && NoLargerThanNeeded(data.buffers[i], needed);
  };
  // (A bitmap without nulls is kept; the encoders go by the null count.)
  if (!data.buffers.empty() && data.buffers[0] && !own(0, (n + 7) / 8)) return false;
  auto child_exact = [&](uint64_t rows) {
    return data.child_data.size() == 1 && static_cast<uint64_t>(data.child_data[0]->length) == rows &&
           IsOwnCompactArray(*data.child_data[0]);
  };
  switch (id) {
    case arrow::Type::BOOL:
      return data.buffers.size() == 2 && own(1, (n + 7) / 8);
    case arrow::Type::STRING:
    case arrow::Type::BINARY: {
      if (data.buffers.size() != 3 || !own(1, (n + 1) * 4)) return false;
      const int32_t* offsets = data.GetValues<int32_t>(1);
      if (offsets[0] != 0 || offsets[n] < 0) return false;
      const auto bytes = static_cast<uint64_t>(offsets[n]);
      return bytes == 0 ? (!data.buffers[2] || NoLargerThanNeeded(data.buffers[2], 0)) : own(2, bytes);
    }
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY: {
      if (data.buffers.size() != 3 || !own(1, (n + 1) * 8)) return false;
      const int64_t* offsets = data.GetValues<int64_t>(1);
      if (offsets[0] != 0 || offsets[n] < 0) return false;
      const auto bytes = static_cast<uint64_t>(offsets[n]);
      return bytes == 0 ? (!data.buffers[2] || NoLargerThanNeeded(data.buffers[2], 0)) : own(2, bytes);
    }
    case arrow::Type::LIST: {
      if (data.buffers.size() != 2 || !own(1, (n + 1) * 4)) return false;
      const int32_t* offsets = data.GetValues<int32_t>(1);
      return offsets[0] == 0 && offsets[n] >= 0 && child_exact(static_cast<uint64_t>(offsets[n]));
    }
    case arrow::Type::LARGE_LIST: {
      if (data.buffers.size() != 2 || !own(1, (n + 1) * 8)) return false;
      const int64_t* offsets = data.GetValues<int64_t>(1);
      return offsets[0] == 0 && offsets[n] >= 0 && child_exact(static_cast<uint64_t>(offsets[n]));
    }
    case arrow::Type::FIXED_SIZE_LIST:
      return child_exact(n * static_cast<uint64_t>(static_cast<const arrow::FixedSizeListType&>(*data.type).list_size()));
    case arrow::Type::STRUCT:
      for (const auto& child : data.child_data) {
        if (static_cast<uint64_t>(child->length) != n || !IsOwnCompactArray(*child)) return false;
      }
      return true;
    default:
      if (!arrow::is_primitive(id) || id == arrow::Type::NA || data.buffers.size() != 2) return false;
      return own(1, n * static_cast<uint64_t>(data.type->bit_width()) / 8);
  }
}

// The values the writer hands to an encoder. The reference deep-copies an
// array only when it stays buffered (keep_original_array false), so that a
// column waiting in the cache does not keep a whole input batch alive (an
// IPC batch's columns share one allocation, a slice its parent's buffers).
// An array larger than the cache is encoded at once: a compact one goes as
// it is, any other is copied (concatenating one array copies just its rows),
// so the encoders see the same values and sizes either way. An array that
// already is what its copy would be (a scan's or compaction's fresh batch)
// is kept as it is: the copy would cost time and memory and change nothing.
Result<std::shared_ptr<arrow::Array>> ValuesToEncode(const std::shared_ptr<arrow::Array>& array,
                                                     uint64_t cache_bytes_per_column) {
  if (CompactLeafBytes(*array->data()) > cache_bytes_per_column) return array;
  if (IsOwnCompactArray(*array->data())) return array;
  return arrow::Concatenate({array});
}

// Whether the encoders of `field` may store values out of line (blob
// columns, marked in the field metadata of the field or a child).
bool MayWriteOutOfLine(const Field& field) {
  for (const auto& [key, value] : field.metadata) {
    if (key.find("blob") != std::string::npos || value.find("blob") != std::string::npos) return true;
  }
  for (const auto& child : field.children) {
    if (MayWriteOutOfLine(child)) return true;
  }
  return false;
}

struct Output {
  std::shared_ptr<arrow::fs::FileSystem> fs;
  std::string path;  // inside fs
  std::shared_ptr<arrow::io::OutputStream> stream;
};

Result<Output> OpenOutput(const std::string& path) {
  std::string location = path;
  if (path.find("://") == std::string::npos && !path.empty() && path.front() != '/') {
    location = std::filesystem::absolute(path).lexically_normal().string();
  }
  Output out;
  auto fs = arrow::fs::FileSystemFromUriOrPath(location, &out.path);
  if (!fs.ok()) return Status::Invalid("cannot create ", path, ": ", fs.status().message());
  out.fs = *fs;
  auto stream = out.fs->OpenOutputStream(out.path);
  if (!stream.ok()) return stream.status().WithMessage("cannot create ", path, ": ", stream.status().message());
  out.stream = *stream;
  return out;
}

}  // namespace

namespace {

// One Write call (or, without arrays, the final flush) on its way through
// the encoders, until its pages are written.
struct PendingBatch {
  std::vector<std::shared_ptr<arrow::Array>> arrays;  // per field; empty for the flush
  std::vector<std::vector<file::EncodedPage>> pages;  // per field
  std::vector<Status> results;                        // per field
  std::vector<char> encoded;                          // per field: done (under Impl::mu)
  size_t written = 0;                                 // fields whose pages are out (calling thread)
  uint64_t input_bytes = 0;                           // what the arrays reference
};

// A field's queue of batches: one pool task at a time drains it, so the
// field's encoder sees its batches in order and never two at once.
struct FieldStrand {
  std::deque<std::shared_ptr<PendingBatch>> queue;  // under Impl::mu
  bool running = false;                             // under Impl::mu
  Status failed;                                    // by the running task only
};

uint64_t ReferencedBytes(const std::vector<std::shared_ptr<arrow::Array>>& arrays) {
  uint64_t total = 0;
  for (const auto& a : arrays) {
    auto size = arrow::util::ReferencedBufferSize(*a);
    total += static_cast<uint64_t>(size.ok() ? *size : arrow::util::TotalBufferSize(*a));
  }
  return total;
}

}  // namespace

struct FileWriter::Impl {
  std::string name;
  Schema schema;
  file::FileVersion version = file::FileVersion::kV2_2;
  std::vector<std::unique_ptr<file::FieldEncoder>> encoders;
  std::unique_ptr<file::ContainerWriter> container;
  uint64_t rows_written = 0;
  bool finished = false;
  bool failed = false;

  uint64_t cache_bytes_per_column = kDefaultCacheBytesPerColumn;
  // Fields whose encoders may place buffers out of line (blobs), in order.
  std::vector<size_t> out_of_line_fields;
  // One task per other field.
  std::vector<size_t> inline_fields;

  // Runs encode(i) for every field, fields on the CPU pool at once (each
  // encoder is independent). Fields that may write out of line run one
  // after another, in field order, in a single task: the positions their
  // buffers get depend on that order. Returns the first error by field.
  Status EncodeFields(const std::function<Status(size_t)>& encode) {
    const size_t tasks = inline_fields.size() + (out_of_line_fields.empty() ? 0 : 1);
    std::vector<Status> results(encoders.size());
    Status pool = util::ParallelFor(tasks, [&](size_t t) -> Status {
      if (t < inline_fields.size()) {
        results[inline_fields[t]] = encode(inline_fields[t]);
        return Status::OK();
      }
      for (size_t i : out_of_line_fields) {
        results[i] = encode(i);
        if (!results[i].ok()) break;
      }
      return Status::OK();
    });
    LANCE_RETURN_NOT_OK(pool);
    for (const auto& st : results) LANCE_RETURN_NOT_OK(st);
    return Status::OK();
  }
  Status WritePages(const std::vector<file::EncodedPage>& pages) {
    for (const auto& page : pages) LANCE_RETURN_NOT_OK(container->WritePage(page));
    return Status::OK();
  }
  // Encodes every field (encode(i) fills pages[i]) and writes the pages in
  // field order, then the out-of-line buffers ahead of them. Without
  // out-of-line fields the pages of a field are written as soon as it and
  // the fields before it are encoded, while the pool encodes the rest: the
  // bytes are the same, the writing overlaps the encoding.
  Status EncodeAndWrite(const std::function<Status(size_t)>& encode, const file::OutOfLineBuffers& out_of_line,
                        std::vector<std::vector<file::EncodedPage>>* pages) {
    auto* pool = arrow::internal::GetCpuThreadPool();
    if (!out_of_line_fields.empty() || encoders.size() <= 1 || pool->GetCapacity() <= 1 || pool->OwnsThisThread()) {
      LANCE_RETURN_NOT_OK(EncodeFields(encode));
      LANCE_RETURN_NOT_OK(container->WriteOutOfLine(out_of_line));
      for (auto& field_pages : *pages) {
        LANCE_RETURN_NOT_OK(WritePages(field_pages));
        field_pages.clear();
      }
      return Status::OK();
    }
    std::vector<arrow::Future<>> encoded;
    Status first;
    for (size_t i = 0; i < encoders.size() && first.ok(); ++i) {
      auto future = pool->Submit([&encode, i]() { return encode(i); });
      if (future.ok()) {
        encoded.push_back(std::move(*future));
      } else {
        first = future.status();
      }
    }
    // Every task holds references to `encode` and `pages`: wait for all.
    for (size_t i = 0; i < encoded.size(); ++i) {
      const Status& st = encoded[i].status();
      if (first.ok()) first = st;
      if (first.ok()) first = WritePages((*pages)[i]);
      (*pages)[i].clear();
    }
    LANCE_RETURN_NOT_OK(first);
    if (!out_of_line.buffers().empty()) {
      return Status::Invalid("an encoder stored buffers out of line though its field is not marked as a blob");
    }
    return Status::OK();
  }
  // ---- Pipelined encoding (fields without out-of-line buffers). Write
  // queues a batch on every field's strand and returns; the calling thread
  // writes the pages of finished batches in batch order, fields in order
  // within each, which is the order the synchronous path writes them in.
  // Waiting only when the batches in flight reference more than
  // max_in_flight_bytes keeps memory bounded by the column caches, and
  // saves a pool round trip per (small) batch, which under a loaded machine
  // cost a scheduling delay each.
  std::mutex mu;
  std::condition_variable done;  // a batch finished or a strand went idle
  std::vector<FieldStrand> strands;
  std::deque<std::shared_ptr<PendingBatch>> pending;  // calling thread only
  uint64_t in_flight_bytes = 0;                       // calling thread only
  uint64_t max_in_flight_bytes = 0;

  ~Impl() { WaitIdle(); }

  bool CanPipeline() const {
    auto* pool = arrow::internal::GetCpuThreadPool();
    return out_of_line_fields.empty() && pool->GetCapacity() > 1 && !pool->OwnsThisThread();
  }

  // Encodes one batch (or the flush) of field i into batch.pages[i].
  Status EncodeQueued(size_t i, PendingBatch& batch) {
    file::OutOfLineBuffers out_of_line(0);
    encoders[i]->set_out_of_line_buffers(&out_of_line);
    Result<std::vector<file::EncodedPage>> ready;
    if (batch.arrays.empty()) {
      ready = encoders[i]->Flush();
      if (!ready.ok()) {
        ready = ready.status().WithMessage("finishing ", name, ", field '", schema.fields[i].name,
                                           "': ", ready.status().message());
      }
    } else {
      auto values = ValuesToEncode(batch.arrays[i], cache_bytes_per_column);
      if (values.ok()) {
        ready = encoders[i]->AppendCopied(*values, batch.arrays[i]);
      } else {
        ready = values.status();
      }
      batch.arrays[i].reset();
      if (!ready.ok()) {
        ready = ready.status().WithMessage("writing ", name, ", field '", schema.fields[i].name,
                                           "': ", ready.status().message());
      }
    }
    encoders[i]->set_out_of_line_buffers(nullptr);
    LANCE_RETURN_NOT_OK(ready.status());
    if (!out_of_line.buffers().empty()) {
      return Status::Invalid("an encoder stored buffers out of line though its field is not marked as a blob");
    }
    batch.pages[i] = std::move(*ready);
    return Status::OK();
  }

  void RunStrand(size_t i) {
    auto& strand = strands[i];
    std::unique_lock<std::mutex> lock(mu);
    while (!strand.queue.empty()) {
      std::shared_ptr<PendingBatch> batch = std::move(strand.queue.front());
      strand.queue.pop_front();
      lock.unlock();
      // After a failure the encoder's state is unknown: later batches fail too.
      Status st = strand.failed.ok() ? EncodeQueued(i, *batch) : strand.failed;
      if (!st.ok() && strand.failed.ok()) strand.failed = st;
      lock.lock();
      batch->results[i] = std::move(st);
      batch->encoded[i] = 1;
      done.notify_all();
    }
    strand.running = false;
    done.notify_all();
  }

  void Enqueue(std::shared_ptr<PendingBatch> batch) {
    const size_t n = encoders.size();
    batch->pages.resize(n);
    batch->results.resize(n);
    batch->encoded.assign(n, 0);
    in_flight_bytes += batch->input_bytes;
    pending.push_back(batch);
    std::vector<size_t> start;
    {
      std::lock_guard<std::mutex> lock(mu);
      for (size_t i = 0; i < n; ++i) {
        strands[i].queue.push_back(batch);
        if (!strands[i].running) {
          strands[i].running = true;
          start.push_back(i);
        }
      }
    }
    auto* pool = arrow::internal::GetCpuThreadPool();
    for (size_t i : start) {
      if (!pool->Spawn([this, i]() { RunStrand(i); }).ok()) RunStrand(i);
    }
  }

  // Writes the pages of finished batches, oldest first; waits for the
  // oldest while more than the in-flight limit (everything, with `all`) is
  // queued. Returns the first error by batch, then by field.
  // A field's pages go out (and are freed) as soon as it and the fields
  // before it are encoded, not when the whole batch is: at the final flush
  // every column's last pages would otherwise wait for the slowest one.
  Status WriteFinished(bool all) {
    while (!pending.empty()) {
      PendingBatch& front = *pending.front();
      const size_t n = front.pages.size();
      while (front.written < n) {
        const size_t i = front.written;
        {
          std::unique_lock<std::mutex> lock(mu);
          if (!front.encoded[i]) {
            if (!all && in_flight_bytes <= max_in_flight_bytes) return Status::OK();
            done.wait(lock, [&] { return front.encoded[i] != 0; });
          }
        }
        LANCE_RETURN_NOT_OK(front.results[i]);
        LANCE_RETURN_NOT_OK(WritePages(front.pages[i]));
        std::vector<file::EncodedPage>().swap(front.pages[i]);
        ++front.written;
      }
      in_flight_bytes -= front.input_bytes;
      pending.pop_front();
    }
    return Status::OK();
  }

  // Waits until no strand runs (their tasks reference this Impl).
  void WaitIdle() {
    std::unique_lock<std::mutex> lock(mu);
    done.wait(lock, [&] {
      for (const auto& s : strands) {
        if (s.running) return false;
      }
      return true;
    });
  }

  // After a failure the file is not a valid lance file: refuse further calls.
  Status Fail(Status st) {
    failed = true;
    WaitIdle();
    pending.clear();
    container->Abort();
    return st;
  }
  Status CheckUsable(const char* what) const {
    if (finished) return Status::Invalid(what, " on ", name, " after Finish");
    if (failed) return Status::Invalid(what, " on ", name, " after an earlier error");
    return Status::OK();
  }
};

FileWriter::FileWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FileWriter::~FileWriter() {
  if (impl_ && !impl_->finished && impl_->container) impl_->container->Abort();
}

Result<std::unique_ptr<FileWriter>> FileWriter::Open(std::shared_ptr<arrow::io::OutputStream> out, std::string name,
                                                     const Schema& schema, FileWriterOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->name = name;
  auto version = file::FileVersionFromString(options.version);
  if (!version.ok()) {
    return Status::Invalid("writing ", name, ": unsupported file version '", options.version,
                           "' (expected 2.0, 2.1, 2.2 or stable)");
  }
  if (*version == file::FileVersion::kLegacy) {
    return Status::NotImplemented("writing ", name, ": lance-cpp does not write legacy (0.1) files");
  }
  impl->version = *version;
  LANCE_RETURN_NOT_OK(ValidateSchema(schema, name));
  impl->schema = schema;

  file::EncoderOptions enc;
  enc.version = *version;
  if (options.data_cache_bytes) {
    enc.cache_bytes_per_column = schema.fields.empty() ? *options.data_cache_bytes
                                                       : *options.data_cache_bytes / schema.fields.size();
  } else {
    enc.cache_bytes_per_column = kDefaultCacheBytesPerColumn;
  }
  enc.max_page_bytes = options.max_page_bytes ? *options.max_page_bytes : MaxPageBytesFromEnv();
  impl->cache_bytes_per_column = enc.cache_bytes_per_column;

  uint32_t next_column = 0;
  for (const auto& field : schema.fields) {
    auto encoder = *version == file::FileVersion::kV2_0 ? file::MakeFieldEncoderV2_0(field, next_column, enc)
                                                        : file::MakeFieldEncoderV2_1(field, next_column, enc);
    if (!encoder.ok()) {
      return encoder.status().WithMessage("writing ", name, ": ", encoder.status().message());
    }
    next_column += (*encoder)->num_columns();
    (MayWriteOutOfLine(field) ? impl->out_of_line_fields : impl->inline_fields).push_back(impl->encoders.size());
    impl->encoders.push_back(std::move(*encoder));
  }
  impl->strands = std::vector<FieldStrand>(impl->encoders.size());
  // A quarter of the column caches: deeper queues kept pages waiting for
  // the output (peak RSS +50 MiB on the 8-column benchmark) without
  // encoding any faster.
  impl->max_in_flight_bytes = enc.cache_bytes_per_column * std::max<size_t>(impl->encoders.size(), 1) / 4;
  impl->container = std::make_unique<file::ContainerWriter>(std::move(out), std::move(name), next_column, *version);
  return std::unique_ptr<FileWriter>(new FileWriter(std::move(impl)));
}

Result<std::unique_ptr<FileWriter>> FileWriter::Open(const std::string& path, const Schema& schema,
                                                     FileWriterOptions options) {
  // Check everything that does not need the file before creating it.
  auto version = file::FileVersionFromString(options.version);
  if (!version.ok()) {
    return Status::Invalid("writing ", path, ": unsupported file version '", options.version,
                           "' (expected 2.0, 2.1, 2.2 or stable)");
  }
  LANCE_RETURN_NOT_OK(ValidateSchema(schema, path));
  LANCE_ASSIGN_OR_RAISE(auto out, OpenOutput(path));
  auto writer = Open(out.stream, path, schema, std::move(options));
  if (!writer.ok()) {
    // Nothing was written: leave no empty file behind.
    (void)out.stream->Close();
    (void)out.fs->DeleteFile(out.path);
  }
  return writer;
}

Result<std::unique_ptr<FileWriter>> FileWriter::Open(const std::string& path, const arrow::Schema& schema,
                                                     FileWriterOptions options) {
  auto lance_schema = Schema::FromArrow(schema, 0);
  if (!lance_schema.ok()) {
    return lance_schema.status().WithMessage("writing ", path, ": ", lance_schema.status().message());
  }
  return Open(path, *lance_schema, std::move(options));
}

Status FileWriter::Write(const arrow::RecordBatch& batch) {
  LANCE_RETURN_NOT_OK(impl_->CheckUsable("Write"));
  const auto& fields = impl_->schema.fields;
  const auto& batch_schema = *batch.schema();
  if (batch.num_columns() != static_cast<int>(fields.size())) {
    return Status::Invalid("writing ", impl_->name, ": the batch has ", batch.num_columns(),
                           " columns but the file schema has ", fields.size(), " fields");
  }
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  arrays.reserve(fields.size());
  for (const auto& field : fields) {
    auto array = batch.GetColumnByName(field.name);
    if (!array) {
      return Status::Invalid("writing ", impl_->name, ": the batch has no column '", field.name,
                             "' (it has: ", batch_schema.ToString(), ")");
    }
    // A blob v2 field's encoder checks its input (data and uri, whatever
    // other children the manifest's struct has).
    Status st = file::IsBlobV2Field(field) ? Status::OK() : CheckType(field, *array->type(), field.name);
    if (st.ok()) st = CheckNullability(*array->data(), field, field.name);
    if (st.ok() && impl_->version == file::FileVersion::kV2_0) st = CheckNoNullStructs(*array->data(), field.name);
    if (!st.ok()) return st.WithMessage("writing ", impl_->name, ": ", st.message());
    arrays.push_back(std::move(array));
  }
  const uint64_t num_rows = static_cast<uint64_t>(batch.num_rows());
  if (num_rows == 0) return Status::OK();
  if (num_rows > std::numeric_limits<uint32_t>::max()) {
    return Status::Invalid("writing ", impl_->name, ": a batch of ", num_rows,
                           " rows is more than a lance file accepts in one batch (2^32 - 1)");
  }
  if (impl_->CanPipeline()) {
    auto batch = std::make_shared<PendingBatch>();
    batch->input_bytes = ReferencedBytes(arrays);
    batch->arrays = std::move(arrays);
    impl_->Enqueue(std::move(batch));
    Status st = impl_->WriteFinished(false);
    if (!st.ok()) return impl_->Fail(st);
    impl_->rows_written += num_rows;
    return Status::OK();
  }
  if (!impl_->pending.empty()) {
    Status st = impl_->WriteFinished(true);
    if (!st.ok()) return impl_->Fail(st);
  }
  // Pages go out in field order, as the reference drains its encode tasks.
  file::OutOfLineBuffers out_of_line(impl_->container->position());
  std::vector<std::vector<file::EncodedPage>> pages(arrays.size());
  Status st = impl_->EncodeAndWrite([&](size_t i) -> Status {
    auto values = ValuesToEncode(arrays[i], impl_->cache_bytes_per_column);
    if (!values.ok()) {
      return values.status().WithMessage("writing ", impl_->name, ", field '", fields[i].name,
                                         "': ", values.status().message());
    }
    impl_->encoders[i]->set_out_of_line_buffers(&out_of_line);
    // The encoders size pages by the input as given (a slice counts its
    // parent's buffers, as in the reference) but keep the copy.
    auto ready = impl_->encoders[i]->AppendCopied(*values, arrays[i]);
    arrays[i].reset();
    impl_->encoders[i]->set_out_of_line_buffers(nullptr);
    if (!ready.ok()) {
      return ready.status().WithMessage("writing ", impl_->name, ", field '", fields[i].name,
                                        "': ", ready.status().message());
    }
    pages[i] = std::move(*ready);
    return Status::OK();
  }, out_of_line, &pages);
  if (!st.ok()) return impl_->Fail(st);
  impl_->rows_written += num_rows;
  return Status::OK();
}

Status FileWriter::AddSchemaMetadata(const std::string& key, const std::string& value) {
  LANCE_RETURN_NOT_OK(impl_->CheckUsable("AddSchemaMetadata"));
  impl_->schema.metadata[key] = value;
  return Status::OK();
}

Result<uint32_t> FileWriter::AddGlobalBuffer(std::string_view bytes) {
  LANCE_RETURN_NOT_OK(impl_->CheckUsable("AddGlobalBuffer"));
  // Pages still being encoded go out first: the buffer follows them.
  Status st = impl_->WriteFinished(true);
  if (!st.ok()) return impl_->Fail(st);
  auto index = impl_->container->AddGlobalBuffer(bytes.data(), bytes.size());
  if (!index.ok()) return impl_->Fail(index.status());
  return index;
}

Result<uint64_t> FileWriter::Finish() {
  LANCE_RETURN_NOT_OK(impl_->CheckUsable("Finish"));
  auto& impl = *impl_;
  auto fail = [&](const Status& st, const std::string& where) {
    return impl.Fail(st.WithMessage("finishing ", impl.name, where, ": ", st.message()));
  };
  Status st;
  if (impl.CanPipeline()) {
    impl.Enqueue(std::make_shared<PendingBatch>());  // no arrays: the flush
    st = impl.WriteFinished(true);
    if (!st.ok()) return impl.Fail(st);
  } else {
    st = impl.WriteFinished(true);
    if (!st.ok()) return impl.Fail(st);
    file::OutOfLineBuffers out_of_line(impl.container->position());
    std::vector<std::vector<file::EncodedPage>> pages(impl.encoders.size());
    st = impl.EncodeAndWrite([&](size_t i) -> Status {
      impl.encoders[i]->set_out_of_line_buffers(&out_of_line);
      auto flushed = impl.encoders[i]->Flush();
      impl.encoders[i]->set_out_of_line_buffers(nullptr);
      if (!flushed.ok()) {
        return flushed.status().WithMessage("finishing ", impl.name, ", field '", impl.schema.fields[i].name,
                                            "': ", flushed.status().message());
      }
      pages[i] = std::move(*flushed);
      return Status::OK();
    }, out_of_line, &pages);
    if (!st.ok()) return impl.Fail(st);
  }

  uint32_t column = 0;
  for (size_t i = 0; i < impl.encoders.size(); ++i) {
    auto columns = impl.encoders[i]->FinishColumns();
    if (!columns.ok()) return fail(columns.status(), ", field '" + impl.schema.fields[i].name + "'");
    if (columns->size() != impl.encoders[i]->num_columns()) {
      return fail(Status::Invalid("the encoder of field '", impl.schema.fields[i].name, "' finished ",
                                  columns->size(), " columns, expected ", impl.encoders[i]->num_columns()),
                  "");
    }
    for (const auto& c : *columns) {
      st = impl.container->FinishColumn(column++, c);
      if (!st.ok()) return impl.Fail(st);
    }
  }

  // A blob v2 field's file schema entry is its descriptor struct.
  Schema file_schema = impl.schema;
  for (auto& f : file_schema.fields) {
    if (file::IsBlobV2Field(f)) f = file::BlobV2DescriptorField(f);
  }
  pb::file::FileDescriptor descriptor;
  file::SchemaToProtoFields(file_schema, descriptor.mutable_schema()->mutable_fields());
  auto* metadata = descriptor.mutable_schema()->mutable_metadata();
  for (const auto& [k, v] : impl.schema.metadata) (*metadata)[k] = v;
  descriptor.set_length(impl.rows_written);
  st = impl.container->Finish(descriptor);
  if (!st.ok()) return impl.Fail(st);
  impl.finished = true;
  return impl.rows_written;
}

uint64_t FileWriter::num_rows_written() const { return impl_->rows_written; }

std::pair<uint32_t, uint32_t> FileWriter::version_pair() const {
  auto [major, minor] = file::FooterVersionPair(impl_->version);
  return {major, minor};
}

}  // namespace lance
