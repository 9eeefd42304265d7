#include "lance/index/vector/ivf_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <arrow/api.h>

#include "lance/file_writer.h"
#include "lance/index/index_writer.h"
#include "lance/vector_index.pb.h"

namespace lance::index::vector {

std::string SerdeJsonFloat(double v) {
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string out;
  if (sci[0] == '-') {
    out = "-";
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exp = std::stoi(sci.substr(e + 1));
  const int n = static_cast<int>(digits.size());
  const int kk = exp + 1;  // position of the decimal point after the first digit
  if (kk >= n && kk <= 16) {
    out += digits + std::string(static_cast<size_t>(kk - n), '0') + ".0";
  } else if (kk > 0 && kk <= 16) {
    out += digits.substr(0, static_cast<size_t>(kk)) + "." + digits.substr(static_cast<size_t>(kk));
  } else if (kk > -5 && kk <= 0) {
    out += "0." + std::string(static_cast<size_t>(-kk), '0') + digits;
  } else if (n == 1) {
    out += digits + "e" + std::to_string(kk - 1);
  } else {
    out += digits.substr(0, 1) + "." + digits.substr(1) + "e" + std::to_string(kk - 1);
  }
  return out;
}

std::string SqStorageMetadata(uint32_t dim, double lo, double hi) {
  return "[\"{\\\"dim\\\":" + std::to_string(dim) + ",\\\"num_bits\\\":8,\\\"bounds\\\":{\\\"start\\\":" +
         SerdeJsonFloat(lo) + ",\\\"end\\\":" + SerdeJsonFloat(hi) + "}}\"]";
}

Result<std::vector<IndexFile>> WriteIvfFiles(const io::ObjectStore& store, const std::string& dir,
                                             const IvfFiles& files,
                                             const std::function<Status(FileWriter&)>& write_rows,
                                             const std::string& file_version) {
  // auxiliary.idx's IVF message: where each partition's rows are.
  pb::IVF aux_ivf;
  uint64_t offset = 0;
  for (uint64_t length : files.lengths) {
    if (length > UINT32_MAX) return Status::NotImplemented("an IVF partition of ", length, " rows (at most 2^32 - 1)");
    aux_ivf.add_offsets(offset);
    aux_ivf.add_lengths(static_cast<uint32_t>(length));
    offset += length;
  }
  // Its global buffers: the IVF message (1, under `lance:ivf`), then the
  // storage's own (2, ...: named by the storage metadata).
  std::vector<std::pair<std::string, std::string>> buffers = {{"lance:ivf", aux_ivf.SerializeAsString()}};
  for (const auto& b : files.aux_buffers) buffers.emplace_back("", b);
  std::vector<IndexFile> out;
  LANCE_ASSIGN_OR_RAISE(
      auto aux, WriteIndexFile(store, dir, "auxiliary.idx", files.aux_schema, write_rows,
                               {{"distance_type", files.metric_name}, {"storage_metadata", files.storage_metadata}},
                               file_version, buffers));
  out.push_back(aux);
  // index.idx: the FLAT sub-index has no rows, one empty entry a partition.
  std::string flat = "[";
  for (size_t p = 0; p < files.lengths.size(); ++p) flat += p ? ",\"\"" : "\"\"";
  flat += "]";
  auto index_schema = arrow::schema({arrow::field("__flat_marker", arrow::uint64(), false)});
  LANCE_ASSIGN_OR_RAISE(
      auto idx, WriteIndexFile(store, dir, "index.idx", index_schema, [](FileWriter&) { return Status::OK(); },
                               {{"lance:index", "{\"type\":\"" + files.type + "\",\"distance_type\":\"" +
                                                    files.metric_name + "\"}"},
                                {"lance:flat", flat}},
                               file_version, {{"lance:ivf", files.index_ivf}}));
  out.push_back(idx);
  return out;
}

}  // namespace lance::index::vector
