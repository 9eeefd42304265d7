#include "input_reader.h"

#include <arrow/csv/api.h>
#include <arrow/io/file.h>
#include <arrow/ipc/api.h>
#include <arrow/table.h>

#ifdef LANCE_HAVE_PARQUET
#include <parquet/arrow/reader.h>
#include <parquet/file_reader.h>
#include <parquet/metadata.h>
#endif

namespace lance::cli {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A reader that keeps the file (and whatever owns the batches) alive.
Result<std::shared_ptr<arrow::RecordBatchReader>> FromTable(std::shared_ptr<arrow::Table> table) {
  return std::make_shared<arrow::TableBatchReader>(std::move(table));
}

// The batches of an Arrow IPC file, read one at a time, so a big input is
// never held whole.
class IpcFileBatches : public arrow::RecordBatchReader {
 public:
  explicit IpcFileBatches(std::shared_ptr<arrow::ipc::RecordBatchFileReader> file) : file_(std::move(file)) {}
  std::shared_ptr<arrow::Schema> schema() const override { return file_->schema(); }
  arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* batch) override {
    if (next_ >= file_->num_record_batches()) {
      batch->reset();
      return arrow::Status::OK();
    }
    ARROW_ASSIGN_OR_RAISE(*batch, file_->ReadRecordBatch(next_++));
    return arrow::Status::OK();
  }

 private:
  std::shared_ptr<arrow::ipc::RecordBatchFileReader> file_;
  int next_ = 0;
};

}  // namespace

Result<std::shared_ptr<arrow::RecordBatchReader>> OpenInput(const std::string& path,
                                                            std::optional<uint64_t>* num_rows) {
  std::optional<uint64_t> ignored;
  if (!num_rows) num_rows = &ignored;
  num_rows->reset();
  auto opened = arrow::io::ReadableFile::Open(path);
  if (!opened.ok()) return Status::IOError("cannot open input ", path, ": ", opened.status().message());
  std::shared_ptr<arrow::io::ReadableFile> file = *opened;
  LANCE_ASSIGN_OR_RAISE(int64_t size, file->GetSize());
  std::string head;
  if (size >= 6) {
    LANCE_ASSIGN_OR_RAISE(auto buf, file->ReadAt(0, 6));
    head = buf->ToString();
  }
  // ReadAt leaves the position undefined for the stream readers below.
  LANCE_RETURN_NOT_OK(file->Seek(0));
  auto wrap = [&](const Status& st, const char* what) {
    return Status::Invalid("cannot read input ", path, " as ", what, ": ", st.message());
  };
  if (head == "ARROW1") {
    auto reader = arrow::ipc::RecordBatchFileReader::Open(file);
    if (!reader.ok()) return wrap(reader.status(), "an Arrow IPC file");
    // From the batches' metadata alone.
    auto rows = (*reader)->CountRows();
    if (!rows.ok()) return wrap(rows.status(), "an Arrow IPC file");
    *num_rows = static_cast<uint64_t>(*rows);
    return std::make_shared<IpcFileBatches>(*reader);
  }
  if (head.rfind("PAR1", 0) == 0) {
#ifdef LANCE_HAVE_PARQUET
    auto reader = parquet::arrow::OpenFile(file, arrow::default_memory_pool());
    if (!reader.ok()) return wrap(reader.status(), "Parquet");
    *num_rows = static_cast<uint64_t>((*reader)->parquet_reader()->metadata()->num_rows());
    // Row group by row group; the batches keep the file reader alive.
    auto batches = (*reader)->GetRecordBatchReader();
    if (!batches.ok()) return wrap(batches.status(), "Parquet");
    struct Owning : arrow::RecordBatchReader {
      std::unique_ptr<parquet::arrow::FileReader> file;
      std::unique_ptr<arrow::RecordBatchReader> inner;
      std::shared_ptr<arrow::Schema> schema() const override { return inner->schema(); }
      arrow::Status ReadNext(std::shared_ptr<arrow::RecordBatch>* b) override { return inner->ReadNext(b); }
    };
    auto owning = std::make_shared<Owning>();
    owning->file = std::move(*reader);
    owning->inner = std::move(*batches);
    return std::static_pointer_cast<arrow::RecordBatchReader>(owning);
#else
    return Status::NotImplemented("cannot read input ", path,
                                  ": this build of lance-cpp has no Parquet support; convert it to Arrow IPC");
#endif
  }
  if (EndsWith(path, ".csv")) {
    auto reader = arrow::csv::TableReader::Make(arrow::io::default_io_context(), file,
                                                arrow::csv::ReadOptions::Defaults(),
                                                arrow::csv::ParseOptions::Defaults(),
                                                arrow::csv::ConvertOptions::Defaults());
    if (!reader.ok()) return wrap(reader.status(), "CSV");
    auto table = (*reader)->Read();
    if (!table.ok()) return wrap(table.status(), "CSV");
    *num_rows = static_cast<uint64_t>((*table)->num_rows());
    return FromTable(*table);
  }
  // Otherwise an Arrow IPC stream (the format with no magic at the start).
  auto reader = arrow::ipc::RecordBatchStreamReader::Open(file);
  if (!reader.ok()) {
    return Status::Invalid("cannot read input ", path,
                           ": not an Arrow IPC file or stream, Parquet, or CSV (.csv) file (",
                           reader.status().message(), ")");
  }
  return std::static_pointer_cast<arrow::RecordBatchReader>(*reader);
}

}  // namespace lance::cli
