// lance-bench: times lance-cpp on one dataset, for bench/run.py and
// bench/run_write.py to set beside pylance's numbers. Prints one JSON object
// per measurement.
//
//   lance-bench scan URI [--columns a,b] [--repeat N]
//   lance-bench take URI --indices-file F [--columns a,b] [--repeat N]
//       F holds one take per line (row indices separated by blanks); each
//       line is timed once, in order. A file of one line is taken N times.
//       F = "-": takes read from stdin line by line, each reported when done.
//   lance-bench fts URI [--k K] [--phrase 1]
//       Full-text queries read from stdin, one a line, each reported.
//   lance-bench filter URI [--columns a,b] [--no-index 1]
//       Filtered scans read from stdin, one filter a line, each reported when
//       done (rows and seconds), on one opened dataset: for bench/run_index.py.
//   lance-bench vector URI --column C --queries-file F --dim D [--k K]
//                      [--refine-factor R] [--no-index 1]
//       Nearest-neighbour queries through lance::VectorSearch on one opened
//       dataset, for bench/run_vector.py. F holds the query vectors (raw
//       little-endian float32, D per query). Each stdin line `Q NPROBES`
//       (NPROBES 0: pylance's default) runs query Q (projection `id`) and
//       reports its seconds, rows and the `id`s found, nearest first.
//   lance-bench write URI --input F.arrow [--version V]      (input read first, untimed)
//   lance-bench delete URI --where PRED
//   lance-bench update URI --set COL=EXPR --where PRED
//   lance-bench merge-insert URI --input F.arrow --on KEY     (update all + insert all)
// The modifying modes run once: the driver hands each run a fresh copy.
//   lance-bench serve
//       Runs modifying commands read from stdin, one a line, its words
//       separated by tabs (`delete\tURI\t--where\tPRED`), each reported when
//       done: one warm process for many runs, as a pylance driver is one.
//   lance-bench loop URI --op append|delete --ready FILE --go FILE
//                    (--input F.arrow | --ids I,J,...)
//       One concurrent writer of bench/run_concurrency.py, a long-lived
//       process: writes READY, waits for GO to appear, then commits once per
//       record batch of F (appended) or per id (`id = I` deleted), in a loop,
//       each commit on the latest version. Prints one JSON object per commit
//       (ok, error, wall-clock start and end) and continues after a failure.
#include <chrono>
#include <filesystem>
#include <thread>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include <arrow/array.h>
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>
#include <arrow/table.h>

#include "lance/dataset.h"
#include "lance/full_text.h"
#include "lance/operations.h"
#include "lance/row_ops.h"
#include "lance/scanner.h"
#include "lance/vector_search.h"
#include "lance/write.h"

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

lance::Result<std::shared_ptr<arrow::Table>> ReadIpc(const std::string& path) {
  LANCE_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(path));
  LANCE_ASSIGN_OR_RAISE(auto reader, arrow::ipc::RecordBatchFileReader::Open(file));
  return reader->ToTable();
}

void Report(const std::string& mode, int64_t rows, double secs) {
  nlohmann::json j = {{"mode", mode}, {"rows", rows}, {"seconds", secs}, {"peak_rss_kib", PeakRssKiB()}};
  std::cout << j.dump() << std::endl;
}

// The modes that write: one timed run each.
int RunModify(const std::string& mode, const std::string& uri, const std::map<std::string, std::string>& flags) {
  auto get = [&](const std::string& k) {
    auto it = flags.find(k);
    return it == flags.end() ? std::string() : it->second;
  };
  std::shared_ptr<arrow::Table> input;
  if (!get("--input").empty()) {
    auto t = ReadIpc(get("--input"));
    if (!t.ok()) return Fail(t.status());
    input = *t;
  }
  const auto start = std::chrono::steady_clock::now();
  int64_t rows = 0;
  if (mode == "write") {
    lance::WriteParams params;
    params.mode = lance::WriteMode::kCreate;
    if (!get("--version").empty()) params.data_storage_version = get("--version");
    auto reader = std::make_shared<arrow::TableBatchReader>(*input);
    auto ds = lance::WriteDataset(reader, uri, params);
    if (!ds.ok()) return Fail(ds.status());
    rows = input->num_rows();
  } else if (mode == "delete") {
    auto r = lance::DeleteRows(uri, get("--where"));
    if (!r.ok()) return Fail(r.status());
    rows = static_cast<int64_t>(r->num_deleted_rows);
  } else if (mode == "update") {
    const std::string set = get("--set");
    const auto eq = set.find('=');
    if (eq == std::string::npos) return Fail(lance::Status::Invalid("--set needs COL=EXPR"));
    auto r = lance::UpdateRows(uri, {{set.substr(0, eq), set.substr(eq + 1)}}, get("--where"));
    if (!r.ok()) return Fail(r.status());
    rows = static_cast<int64_t>(r->num_rows_updated);
  } else if (mode == "merge-insert") {
    lance::MergeInsertParams params;
    params.on = SplitCommas(get("--on"));
    params.when_matched_update_all = true;
    params.when_not_matched_insert_all = true;
    auto r = lance::MergeInsert(uri, std::make_shared<arrow::TableBatchReader>(*input), params);
    if (!r.ok()) return Fail(r.status());
    rows = static_cast<int64_t>(r->num_updated_rows + r->num_inserted_rows);
  } else {
    std::cerr << "error: unknown mode " << mode << "\n";
    return 2;
  }
  Report(mode, rows, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The concurrent-writer loop (see the top of this file).
int RunLoop(const std::string& uri, const std::map<std::string, std::string>& flags) {
  auto get = [&](const std::string& k) {
    auto it = flags.find(k);
    return it == flags.end() ? std::string() : it->second;
  };
  const std::string op = get("--op");
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  std::vector<std::string> ids;
  if (op == "append") {
    auto t = ReadIpc(get("--input"));
    if (!t.ok()) return Fail(t.status());
    arrow::TableBatchReader reader(**t);
    std::shared_ptr<arrow::RecordBatch> batch;
    while (reader.ReadNext(&batch).ok() && batch) batches.push_back(batch);
  } else if (op == "delete") {
    ids = SplitCommas(get("--ids"));
  } else {
    std::cerr << "error: --op must be append or delete\n";
    return 2;
  }
  { std::ofstream(get("--ready")) << "ready"; }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!std::filesystem::exists(get("--go"))) {
    if (std::chrono::steady_clock::now() > deadline) return Fail(lance::Status::IOError("barrier timed out"));
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  const size_t n = op == "append" ? batches.size() : ids.size();
  for (size_t i = 0; i < n; ++i) {
    const double start = WallSeconds();
    lance::Status st;
    if (op == "append") {
      lance::WriteParams params;
      params.mode = lance::WriteMode::kAppend;
      auto table = arrow::Table::FromRecordBatches({batches[i]});
      if (!table.ok()) return Fail(table.status());
      auto ds = lance::WriteDataset(std::make_shared<arrow::TableBatchReader>(**table), uri, params);
      st = ds.status();
    } else {
      auto r = lance::DeleteRows(uri, "id = " + ids[i]);
      st = r.ok() ? (r->num_deleted_rows == 1 ? lance::Status::OK()
                                              : lance::Status::Invalid("deleted ", r->num_deleted_rows, " rows"))
                  : r.status();
    }
    nlohmann::json j = {{"ok", st.ok()}, {"start", start}, {"end", WallSeconds()}};
    if (!st.ok()) j["error"] = st.message();
    std::cout << j.dump() << std::endl;
  }
  return 0;
}

}  // namespace

// One filtered scan per line of stdin, timed from the scan's start to its
// last batch; the dataset is opened once, as a pylance driver holds one.
int RunFilters(const std::string& uri, int argc, char** argv) {
  std::vector<std::string> columns;
  bool use_index = true;
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--columns") columns = SplitCommas(value);
    else if (flag == "--no-index") use_index = value != "1";
  }
  auto ds = lance::Dataset::Open(uri);
  if (!ds.ok()) return Fail(ds.status());
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto start = std::chrono::steady_clock::now();
    auto reader = lance::ScanBuilder(*ds).Project(columns).Filter(line).UseScalarIndex(use_index).ToReader();
    if (!reader.ok()) return Fail(reader.status());
    int64_t rows = 0;
    std::shared_ptr<arrow::RecordBatch> batch;
    while (true) {
      auto st = (*reader)->ReadNext(&batch);
      if (!st.ok()) return Fail(st);
      if (!batch) break;
      rows += batch->num_rows();
    }
    Report("filter", rows, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return 0;
}

// One full-text query per line of stdin (the best --k rows, projection
// `id`), timed from the search's start to its table; the dataset is opened
// once.
int RunFullText(const std::string& uri, int argc, char** argv) {
  lance::FullTextSearchOptions options;
  options.projection = {"id"};
  bool phrase = false;
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--k") options.limit = std::stoll(value);
    else if (flag == "--phrase") phrase = value == "1";
  }
  auto ds = lance::Dataset::Open(uri);
  if (!ds.ok()) return Fail(ds.status());
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto start = std::chrono::steady_clock::now();
    auto query = phrase ? lance::FullTextQuery::Phrase(line) : lance::FullTextQuery::Match(line);
    auto table = lance::FullTextSearch(*ds, query, options);
    if (!table.ok()) return Fail(table.status());
    Report("fts", (*table)->num_rows(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return 0;
}

// One nearest-neighbour query per line of stdin (`Q NPROBES`), timed from
// the search's start to its table; the dataset is opened and the query file
// read once, untimed.
int RunVector(const std::string& uri, int argc, char** argv) {
  lance::VectorSearchOptions base;
  base.columns = {"id"};
  std::string queries_file;
  int64_t dim = 0;
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--column") base.column = value;
    else if (flag == "--queries-file") queries_file = value;
    else if (flag == "--dim") dim = std::stoll(value);
    else if (flag == "--k") base.k = std::stoll(value);
    else if (flag == "--refine-factor") base.refine_factor = static_cast<uint32_t>(std::stoul(value));
    else if (flag == "--no-index") base.use_index = value != "1";
  }
  if (dim <= 0 || queries_file.empty() || base.column.empty()) {
    return Fail(lance::Status::Invalid("vector: --column, --queries-file and --dim are required"));
  }
  std::ifstream in(queries_file, std::ios::binary);
  std::vector<float> all;
  in.seekg(0, std::ios::end);
  const auto bytes = static_cast<size_t>(in.tellg());
  all.assign(bytes / sizeof(float), 0.0f);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(all.data()), static_cast<std::streamsize>(all.size() * sizeof(float)));
  const size_t count = all.size() / static_cast<size_t>(dim);
  auto ds = lance::Dataset::Open(uri);
  if (!ds.ok()) return Fail(ds.status());
  std::shared_ptr<const lance::Dataset> dataset = *ds;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    size_t q = 0;
    uint32_t nprobes = 0;
    words >> q >> nprobes;
    if (q >= count) return Fail(lance::Status::Invalid("vector: no query ", q, " in ", queries_file));
    lance::VectorSearchOptions options = base;
    options.query.assign(all.begin() + static_cast<std::ptrdiff_t>(q * dim),
                         all.begin() + static_cast<std::ptrdiff_t>((q + 1) * dim));
    if (nprobes > 0) options.nprobes = nprobes;
    const auto start = std::chrono::steady_clock::now();
    auto table = lance::VectorSearch(dataset, options);
    if (!table.ok()) return Fail(table.status());
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<int64_t> ids;
    auto column = (*table)->GetColumnByName("id");
    for (const auto& chunk : column->chunks()) {
      auto values = std::static_pointer_cast<arrow::Int64Array>(chunk);
      for (int64_t i = 0; i < values->length(); ++i) ids.push_back(values->Value(i));
    }
    nlohmann::json j = {{"mode", "vector"}, {"rows", (*table)->num_rows()}, {"seconds", secs}, {"ids", ids}};
    std::cout << j.dump() << std::endl;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3 && !(argc == 2 && std::string(argv[1]) == "serve")) {
    std::cerr << "usage: lance-bench scan|take|filter|fts|vector|write|delete|update|merge-insert|loop URI [flags] | serve\n";
    return 2;
  }
  if (std::string(argv[1]) == "serve") {
    std::string line;
    while (std::getline(std::cin, line)) {
      std::vector<std::string> words;
      std::stringstream ss(line);
      std::string word;
      while (std::getline(ss, word, '\t')) words.push_back(word);
      if (words.size() < 2) return Fail(lance::Status::Invalid("serve: no command in '", line, "'"));
      std::map<std::string, std::string> flags;
      for (size_t i = 2; i + 1 < words.size(); i += 2) flags[words[i]] = words[i + 1];
      if (int rc = RunModify(words[0], words[1], flags); rc != 0) return rc;
    }
    return 0;
  }
  const std::string mode = argv[1], uri = argv[2];
  if (mode == "filter") return RunFilters(uri, argc, argv);
  if (mode == "fts") return RunFullText(uri, argc, argv);
  if (mode == "vector") return RunVector(uri, argc, argv);
  if (mode != "scan" && mode != "take") {
    std::map<std::string, std::string> flags;
    for (int i = 3; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
    if (mode == "loop") return RunLoop(uri, flags);
    return RunModify(mode, uri, flags);
  }
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
  std::vector<std::vector<uint64_t>> takes;
  if (mode == "take" && indices_file == "-") {
    // Interactive: one take per line of stdin, its timing printed as soon as
    // it is done, so a driver can alternate with another implementation.
    std::string line;
    while (std::getline(std::cin, line)) {
      std::istringstream words(line);
      std::vector<uint64_t> indices;
      uint64_t v;
      while (words >> v) indices.push_back(v);
      const auto start = std::chrono::steady_clock::now();
      auto table = lance::Take(*ds, indices, columns);
      if (!table.ok()) return Fail(table.status());
      Report(mode, (*table)->num_rows(),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    return 0;
  }
  if (mode == "take") {
    std::ifstream in(indices_file);
    if (!in) return Fail(lance::Status::IOError("cannot read ", indices_file));
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::vector<uint64_t> indices;
      uint64_t v;
      while (words >> v) indices.push_back(v);
      if (!indices.empty()) takes.push_back(std::move(indices));
    }
    if (takes.empty()) return Fail(lance::Status::Invalid(indices_file, " holds no row indices"));
    if (takes.size() > 1) repeat = static_cast<int>(takes.size());
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
      auto table = lance::Take(*ds, takes[static_cast<size_t>(r) % takes.size()], columns);
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
