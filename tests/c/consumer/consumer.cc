// Writes a dataset through the installed C++ API.
#include <iostream>

#include <arrow/api.h>
#include <lance/scanner.h>
#include <lance/write.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  arrow::Int64Builder ids;
  for (int64_t i = 0; i < 10; ++i) {
    if (!ids.Append(i).ok()) return 1;
  }
  auto array = ids.Finish().ValueOrDie();
  auto schema = arrow::schema({arrow::field("id", arrow::int64())});
  auto batch = arrow::RecordBatch::Make(schema, 10, {array});
  auto reader = arrow::RecordBatchReader::Make({batch}, schema).ValueOrDie();
  auto dataset = lance::WriteDataset(reader, argv[1]);
  if (!dataset.ok()) {
    std::cerr << dataset.status().ToString() << "\n";
    return 1;
  }
  auto rows = lance::ScanBuilder(*dataset).CountRows();
  if (!rows.ok()) return 1;
  std::cout << "cpp: wrote " << *rows << " rows, version " << (*dataset)->version() << "\n";
  return 0;
}
