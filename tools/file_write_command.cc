// `lance-cpp file write IN.arrow OUT.lance [--version V] [--max-page-bytes N] [--data-cache-bytes N]
//  [--embedded self-described|mini]`
// Each record batch of IN is one FileWriter::Write call, in order, as the
// same batches given to pylance's LanceFileWriter.write_batch.
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include <arrow/filesystem/filesystem.h>
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>
#include <arrow/record_batch.h>

#include "cli.h"
#include "lance/file_writer.h"

namespace lance::cli {
namespace {

constexpr const char* kWriteUsage =
    "lance-cpp file write IN.arrow OUT.lance [--version 2.0|2.1|2.2] [--max-page-bytes N] [--data-cache-bytes N] "
    "[--embedded self-described|mini]";

std::optional<uint64_t> ParseCount(const std::string& s) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return static_cast<uint64_t>(v);
}

std::string AbsoluteIfLocal(const std::string& path) {
  if (path.find("://") != std::string::npos || path.empty() || path.front() == '/') return path;
  return std::filesystem::absolute(path).lexically_normal().string();
}

/// The batches of an IPC file, in order.
class IpcFileBatches : public arrow::RecordBatchReader {
 public:
  explicit IpcFileBatches(std::shared_ptr<arrow::ipc::RecordBatchFileReader> file) : file_(std::move(file)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return file_->schema(); }
  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    if (next_ >= file_->num_record_batches()) {
      batch->reset();
      return Status::OK();
    }
    LANCE_ASSIGN_OR_RAISE(*batch, file_->ReadRecordBatch(next_++));
    return Status::OK();
  }

 private:
  std::shared_ptr<arrow::ipc::RecordBatchFileReader> file_;
  int next_ = 0;
};

/// Batches of an Arrow IPC file, or else of an IPC stream.
Result<std::shared_ptr<arrow::RecordBatchReader>> OpenIpc(const std::string& path) {
  std::string inner;
  auto fs = arrow::fs::FileSystemFromUriOrPath(AbsoluteIfLocal(path), &inner);
  if (!fs.ok()) return Status::Invalid("cannot open ", path, ": ", fs.status().message());
  auto file = (*fs)->OpenInputFile(inner);
  if (!file.ok()) return file.status().WithMessage("cannot open ", path, ": ", file.status().message());
  auto file_reader = arrow::ipc::RecordBatchFileReader::Open(*file);
  if (file_reader.ok()) return std::make_shared<IpcFileBatches>(*file_reader);
  auto stream = (*fs)->OpenInputStream(inner);
  if (!stream.ok()) return stream.status().WithMessage("cannot open ", path, ": ", stream.status().message());
  auto stream_reader = arrow::ipc::RecordBatchStreamReader::Open(*stream);
  if (!stream_reader.ok()) {
    return Status::Invalid("reading ", path, ": not an Arrow IPC file or stream (", stream_reader.status().message(),
                           ")");
  }
  return std::shared_ptr<arrow::RecordBatchReader>(*stream_reader);
}

Result<uint64_t> WriteAll(arrow::RecordBatchReader& input, const std::string& in_path,
                          std::shared_ptr<arrow::io::OutputStream> out, const std::string& out_path,
                          const FileWriterOptions& options) {
  auto schema = Schema::FromArrow(*input.schema(), 0);
  if (!schema.ok()) return schema.status().WithMessage("writing ", out_path, ": ", schema.status().message());
  LANCE_ASSIGN_OR_RAISE(auto writer, FileWriter::Open(std::move(out), out_path, *schema, options));
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    Status st = input.ReadNext(&batch);
    if (!st.ok()) return st.WithMessage("reading ", in_path, ": ", st.message());
    if (!batch) break;
    LANCE_RETURN_NOT_OK(writer->Write(*batch));
  }
  return writer->Finish();
}

}  // namespace

int RunFileWrite(const std::vector<std::string>& argv) {
  Args args;
  if (auto err = ParseArgs(argv, {"--version", "--max-page-bytes", "--data-cache-bytes", "--embedded"}, {}, &args)) {
    return ReportUsage(err->message, kWriteUsage);
  }
  if (args.positional.size() != 2) return ReportUsage("file write takes IN.arrow and OUT.lance", kWriteUsage);
  FileWriterOptions options;
  options.version = args.Get("--version", "2.2");
  if (options.version != "2.0" && options.version != "2.1" && options.version != "2.2" &&
      options.version != "stable") {
    return ReportUsage("unsupported --version '" + options.version + "' (expected 2.0, 2.1 or 2.2)", kWriteUsage);
  }
  for (const char* flag : {"--max-page-bytes", "--data-cache-bytes"}) {
    if (!args.Has(flag)) continue;
    auto v = ParseCount(args.Get(flag));
    if (!v || *v == 0) {
      return ReportUsage(std::string("bad ") + flag + " '" + args.Get(flag) + "' (expected a positive integer)",
                         kWriteUsage);
    }
    (std::string(flag) == "--max-page-bytes" ? options.max_page_bytes : options.data_cache_bytes) = *v;
  }
  if (args.Has("--embedded")) {
    const std::string form = args.Get("--embedded");
    if (form != "self-described" && form != "mini") {
      return ReportUsage("unsupported --embedded '" + form + "' (expected self-described or mini)", kWriteUsage);
    }
    // The reference's encode_batch forms (one batch, unpadded buffers, a
    // (2,0) footer) need their own layout of the 2.0 encoder's output.
    return ReportError(Status::NotImplemented("file write --embedded ", form, ": the embedded 2.0 ", form,
                                              " form is not implemented in lance-cpp; nothing was written to ",
                                              args.positional[1]));
  }
  const std::string& in_path = args.positional[0];
  const std::string& out_path = args.positional[1];

  auto input = OpenIpc(in_path);
  if (!input.ok()) return ReportError(input.status());

  // Write next to OUT and rename at the end, so a failure leaves no partial
  // file (and an existing OUT untouched).
  std::string inner;
  auto fs = arrow::fs::FileSystemFromUriOrPath(AbsoluteIfLocal(out_path), &inner);
  if (!fs.ok()) return ReportError(Status::Invalid("cannot create ", out_path, ": ", fs.status().message()));
  const std::string temp = inner + ".tmp-" + std::to_string(::getpid());
  auto out = (*fs)->OpenOutputStream(temp);
  if (!out.ok()) {
    return ReportError(out.status().WithMessage("cannot create ", out_path, ": ", out.status().message()));
  }
  auto rows = WriteAll(**input, in_path, *out, out_path, options);
  Status st = rows.status();
  if (st.ok()) {
    st = (*fs)->Move(temp, inner);
    if (!st.ok()) st = st.WithMessage("cannot create ", out_path, ": ", st.message());
  }
  if (!st.ok()) {
    if (!(*out)->closed()) (void)(*out)->Close();
    (void)(*fs)->DeleteFile(temp);
    return ReportError(st);
  }
  return kExitOk;
}

}  // namespace lance::cli
