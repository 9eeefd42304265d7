// lance-bench: times lance-cpp's read path on one dataset, for bench/run.py
// to set beside pylance's numbers. Prints one JSON object per measurement.
//
//   lance-bench scan URI [--columns a,b] [--repeat N]
//   lance-bench take URI --indices-file F [--columns a,b] [--repeat N]
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include "lance/dataset.h"
#include "lance/scanner.h"

namespace {

std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Peak resident memory of this process image. VmHWM, not ru_maxrss: the
// latter survives exec, so a child of a big Python process would report
// its parent's peak.
int64_t PeakRssKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

int Fail(const lance::Status& st) {
  std::cerr << "error: " << st.message() << std::endl;
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: lance-bench scan|take URI [--columns a,b] [--indices-file F] [--repeat N]\n";
    return 2;
  }
  const std::string mode = argv[1], uri = argv[2];
  std::vector<std::string> columns;
  std::string indices_file;
  int repeat = 3;
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--columns") columns = SplitCommas(value);
    else if (flag == "--indices-file") indices_file = value;
    else if (flag == "--repeat") repeat = std::stoi(value);
  }
  auto ds = lance::Dataset::Open(uri);
  if (!ds.ok()) return Fail(ds.status());
  std::vector<uint64_t> indices;
  if (mode == "take") {
    std::ifstream in(indices_file);
    uint64_t v;
    while (in >> v) indices.push_back(v);
  }
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    int64_t rows = 0;
    if (mode == "scan") {
      auto reader = lance::ScanBuilder(*ds).Project(columns).ToReader();
      if (!reader.ok()) return Fail(reader.status());
      std::shared_ptr<arrow::RecordBatch> batch;
      while (true) {
        auto st = (*reader)->ReadNext(&batch);
        if (!st.ok()) return Fail(st);
        if (!batch) break;
        rows += batch->num_rows();
      }
    } else if (mode == "take") {
      auto table = lance::Take(*ds, indices, columns);
      if (!table.ok()) return Fail(table.status());
      rows = (*table)->num_rows();
    } else {
      std::cerr << "error: unknown mode " << mode << "\n";
      return 2;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nlohmann::json j = {{"mode", mode}, {"rows", rows}, {"seconds", secs}, {"peak_rss_kib", PeakRssKiB()}};
    std::cout << j.dump() << std::endl;
  }
  return 0;
}
