// `lance-cpp create-index`, `drop-index`, `indices`, `optimize-indices`:
// scalar index management through lance/index_ops.h.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <cstdlib>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "lance/dataset.h"
#include "lance/index_ops.h"

namespace lance::cli {
namespace {

using Json = nlohmann::ordered_json;

// Vector-index options of the contract: accepted by the parser so the
// refusal names the index type, not the flag.
const std::vector<std::string> kVectorFlags = {"--num-partitions", "--num-sub-vectors", "--num-bits", "--metric",
                                               "--sample-rate", "--max-iterations"};

int RunCreateIndex(const std::vector<std::string>& argv) {
  constexpr const char* kUsage =
      "lance-cpp create-index URI COLUMN --type BTREE|BITMAP|LABEL_LIST|ZONEMAP|NGRAM|BLOOMFILTER|INVERTED|IVF_FLAT|IVF_SQ "
      "[--name N] [--replace] [--rows-per-zone N] [--number-of-items N] [--probability P]\n"
      "    IVF_FLAT, IVF_SQ: [--num-partitions N] [--metric l2|cosine|dot] [--sample-rate N] [--max-iterations N]\n"
      "    [--ivf-centroids FILE (raw little-endian float32, num_partitions x dim: no training)]\n"
      "    INVERTED: [--with-position] [--base-tokenizer simple|whitespace|raw|ngram] [--language L]\n"
      "    [--max-token-length N|none] [--no-lower-case] [--no-stem] [--no-remove-stop-words] [--no-ascii-folding]\n"
      "    [--custom-stop-words a,b] [--min-ngram-length N] [--max-ngram-length N] [--prefix-only]";
  Args args;
  std::vector<std::string> value_flags = {"--type", "--name", "--rows-per-zone", "--number-of-items",
                                          "--probability", "--ivf-centroids"};
  value_flags.insert(value_flags.end(), kVectorFlags.begin(), kVectorFlags.end());
  value_flags.insert(value_flags.end(), kTokenizerValueFlags.begin(), kTokenizerValueFlags.end());
  std::vector<std::string> switch_flags = {"--replace"};
  switch_flags.insert(switch_flags.end(), kTokenizerSwitchFlags.begin(), kTokenizerSwitchFlags.end());
  if (auto err = ParseArgs(argv, value_flags, switch_flags, &args)) {
    return ReportUsage(err->message, kUsage);
  }
  if (args.positional.size() != 2) return ReportUsage("create-index takes a URI and a COLUMN", kUsage);
  if (!args.Has("--type")) return ReportUsage("create-index needs --type", kUsage);
  std::string type = args.Get("--type");
  for (auto& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (type == "FTS") type = "INVERTED";
  if (type != "IVF_FLAT" && type != "IVF_SQ" && args.Has("--ivf-centroids")) {
    return ReportUsage("--ivf-centroids does not apply to a " + type + " index", kUsage);
  }
  if (type == "BTREE" || type == "BITMAP" || type == "LABEL_LIST" || type == "ZONEMAP" || type == "NGRAM" ||
      type == "BLOOMFILTER" || type == "INVERTED") {
    std::vector<std::string> flags = kVectorFlags;
    if (type != "INVERTED") {
      // --with-position is among the switches.
      flags.insert(flags.end(), kTokenizerValueFlags.begin(), kTokenizerValueFlags.end());
      flags.insert(flags.end(), kTokenizerSwitchFlags.begin(), kTokenizerSwitchFlags.end());
    }
    if (type != "ZONEMAP") flags.push_back("--rows-per-zone");
    if (type != "BLOOMFILTER") {
      flags.push_back("--number-of-items");
      flags.push_back("--probability");
    }
    for (const auto& f : flags) {
      if (args.Has(f)) return ReportUsage(f + " does not apply to a " + type + " index", kUsage);
    }
  }
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) return ReportError(ds.status());
  CreateIndexBuilder builder(*ds, args.positional[1], args.Get("--type"));
  if (args.Has("--name")) builder.Name(args.Get("--name"));
  if (args.Has("--rows-per-zone")) {
    const std::string& v = args.Get("--rows-per-zone");
    if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos || std::stoull(v) == 0) {
      return ReportUsage("--rows-per-zone takes a positive integer (got '" + v + "')", kUsage);
    }
    builder.RowsPerZone(std::stoull(v));
  }
  if (args.Has("--number-of-items")) {
    const std::string& v = args.Get("--number-of-items");
    if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos || std::stoull(v) == 0) {
      return ReportUsage("--number-of-items takes a positive integer (got '" + v + "')", kUsage);
    }
    builder.NumberOfItems(std::stoull(v));
  }
  if (args.Has("--probability")) {
    const std::string& v = args.Get("--probability");
    char* end = nullptr;
    const double p = v.empty() ? -1 : std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || !(p >= 0.0 && p < 1.0)) {
      return ReportUsage("--probability takes a number in [0, 1) (got '" + v + "')", kUsage);
    }
    builder.Probability(p);
  }
  if (type == "IVF_FLAT" || type == "IVF_SQ") {
    if (args.Has("--num-sub-vectors") || (type == "IVF_FLAT" && args.Has("--num-bits"))) {
      return ReportUsage(std::string(args.Has("--num-sub-vectors") ? "--num-sub-vectors" : "--num-bits") +
                             " does not apply to a " + type + " index", kUsage);
    }
    if (type == "IVF_SQ" && args.Has("--num-bits") && args.Get("--num-bits") != "8") {
      return ReportUsage("--num-bits: IVF_SQ has 8 bits only (got '" + args.Get("--num-bits") + "')", kUsage);
    }
    VectorIndexParams params;
    for (const char* flag : {"--num-partitions", "--sample-rate", "--max-iterations"}) {
      if (!args.Has(flag)) continue;
      const std::string& v = args.Get(flag);
      if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos || std::stoull(v) == 0) {
        return ReportUsage(std::string(flag) + " takes a positive integer (got '" + v + "')", kUsage);
      }
      const auto n = static_cast<uint32_t>(std::stoull(v));
      if (std::string(flag) == "--num-partitions") params.num_partitions = n;
      else if (std::string(flag) == "--sample-rate") params.sample_rate = n;
      else params.max_iterations = n;
    }
    if (args.Has("--metric")) params.metric = args.Get("--metric");
    if (args.Has("--ivf-centroids")) {
      std::ifstream in(args.Get("--ivf-centroids"), std::ios::binary);
      if (!in) return ReportUsage("--ivf-centroids: cannot read " + args.Get("--ivf-centroids"), kUsage);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (bytes.empty() || bytes.size() % 4 != 0) {
        return ReportUsage("--ivf-centroids: the file is not float32 values", kUsage);
      }
      params.centroids.resize(bytes.size() / 4);
      std::memcpy(params.centroids.data(), bytes.data(), bytes.size());
    }
    builder.VectorParams(std::move(params));
  }
  if (type == "INVERTED") {
    InvertedIndexParams params;
    if (auto err = ParseTokenizerFlags(args, &params)) return ReportUsage(err->message, kUsage);
    builder.InvertedParams(std::move(params));
  }
  builder.Replace(args.Has("--replace"));
  auto v = builder.Commit();
  if (!v.ok()) return ReportError(v.status());
  PrintChange("created index " + builder.result().name + " on " + args.positional[1], (*v)->version(), true);
  return kExitOk;
}

int RunDropIndex(const std::vector<std::string>& argv) {
  constexpr const char* kUsage = "lance-cpp drop-index URI NAME";
  Args args;
  if (auto err = ParseArgs(argv, {}, {}, &args)) return ReportUsage(err->message, kUsage);
  if (args.positional.size() != 2) return ReportUsage("drop-index takes a URI and a NAME", kUsage);
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) return ReportError(ds.status());
  auto v = DropIndexBuilder(*ds, args.positional[1]).Commit();
  if (!v.ok()) return ReportError(v.status());
  PrintChange("dropped index " + args.positional[1], (*v)->version(), true);
  return kExitOk;
}

int RunIndices(const std::vector<std::string>& argv) {
  constexpr const char* kUsage = "lance-cpp indices URI [--version V] [--json]";
  Args args;
  if (auto err = ParseArgs(argv, {"--version"}, {"--json"}, &args)) return ReportUsage(err->message, kUsage);
  if (args.positional.size() != 1) return ReportUsage("indices takes a URI", kUsage);
  OpenOptions options;
  options.version = args.Get("--version");
  auto ds = OpenDataset(args.positional[0], options);
  if (!ds.ok()) return ReportError(ds.status());
  auto indices = DescribeIndices(**ds);
  if (!indices.ok()) return ReportError(indices.status());
  if (args.Has("--json")) {
    Json out = Json::array();
    for (const auto& d : *indices) {
      out.push_back(Json{{"name", d.name},
                         {"type", d.type},
                         {"type_url", d.type_url},
                         {"uuids", d.uuids},
                         {"fields", d.field_names},
                         {"fragment_ids", d.fragment_ids},
                         {"num_indexed_rows", d.num_indexed_rows},
                         {"num_unindexed_rows", d.num_unindexed_rows},
                         {"num_unindexed_fragments", d.num_unindexed_fragments}});
    }
    std::cout << out.dump() << "\n";
    return kExitOk;
  }
  for (const auto& d : *indices) {
    std::string fields, frags;
    for (const auto& f : d.field_names) fields += (fields.empty() ? "" : ",") + f;
    for (uint32_t f : d.fragment_ids) frags += (frags.empty() ? "" : ",") + std::to_string(f);
    std::cout << d.name << " " << d.type << " " << fields << " uuid=" << d.uuids.front()
              << " fragments=[" << frags << "] unindexed_rows=" << d.num_unindexed_rows << "\n";
  }
  return kExitOk;
}

int RunOptimizeIndices(const std::vector<std::string>& argv) {
  constexpr const char* kUsage = "lance-cpp optimize-indices URI [--index NAME[,NAME...]]...";
  Args args;
  if (auto err = ParseArgs(argv, {"--index"}, {}, &args)) return ReportUsage(err->message, kUsage);
  if (args.positional.size() != 1) return ReportUsage("optimize-indices takes a URI", kUsage);
  OptimizeIndicesOptions options;
  // --index may repeat; each takes one name or a comma-separated list.
  for (size_t i = 0; i + 1 < argv.size(); ++i) {
    if (argv[i] != "--index") continue;
    std::string list = argv[i + 1];
    for (size_t start = 0; start <= list.size();) {
      const size_t comma = std::min(list.find(',', start), list.size());
      if (comma == start) return ReportUsage("--index takes index names (got '" + list + "')", kUsage);
      options.index_names.push_back(list.substr(start, comma - start));
      start = comma + 1;
    }
  }
  auto ds = OpenDataset(args.positional[0]);
  if (!ds.ok()) return ReportError(ds.status());
  OptimizeIndicesBuilder builder(*ds);
  builder.Options(options);
  auto v = builder.Commit();
  if (!v.ok()) return ReportError(v.status());
  if (builder.added().empty()) {
    std::cout << "indices up to date (version " << (*v)->version() << ")\n";
    return kExitOk;
  }
  std::string names;
  for (const auto& i : builder.added()) names += (names.empty() ? "" : ", ") + i.name;
  PrintChange("optimized indices " + names, (*v)->version(), true);
  return kExitOk;
}

}  // namespace

int RunIndexCommand(const std::string& cmd, const std::vector<std::string>& argv) {
  if (cmd == "create-index") return RunCreateIndex(argv);
  if (cmd == "drop-index") return RunDropIndex(argv);
  if (cmd == "optimize-indices") return RunOptimizeIndices(argv);
  return RunIndices(argv);
}

}  // namespace lance::cli
