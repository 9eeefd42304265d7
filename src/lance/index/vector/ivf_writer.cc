#include "lance/index/vector/ivf_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <nlohmann/json.hpp>

#include "lance/dataset.h"
#include "lance/file_reader.h"
#include "lance/file_writer.h"
#include "lance/index/index_writer.h"
#include "lance/index/vector/ivf_index.h"
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

Result<double> SerdeJsonParseFloat(std::string_view text) {
  auto invalid = [&] { return Status::Invalid("'", std::string(text), "' is not a JSON number"); };
  size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  auto digit = [&](size_t at) { return at < text.size() && text[at] >= '0' && text[at] <= '9'; };
  if (!digit(i)) return invalid();
  constexpr uint64_t kMax = UINT64_MAX;
  uint64_t significand = 0;
  int64_t exponent = 0;
  bool overflowed = false;
  // Integer digits: past u64, each one more power of ten.
  for (; digit(i); ++i) {
    const uint64_t d = static_cast<uint64_t>(text[i] - '0');
    if (overflowed || (significand >= kMax / 10 && (significand > kMax / 10 || d > kMax % 10))) {
      overflowed = true;
      ++exponent;
    } else {
      significand = significand * 10 + d;
    }
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digit(i)) return invalid();
    // Fraction digits: past u64, dropped.
    for (; digit(i); ++i) {
      const uint64_t d = static_cast<uint64_t>(text[i] - '0');
      if (overflowed || (significand >= kMax / 10 && (significand > kMax / 10 || d > kMax % 10))) {
        overflowed = true;
        continue;
      }
      significand = significand * 10 + d;
      --exponent;
    }
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool negative_exponent = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative_exponent = text[i++] == '-';
    if (!digit(i)) return invalid();
    int64_t e = 0;
    for (; digit(i); ++i) e = std::min<int64_t>(e * 10 + (text[i] - '0'), int64_t{1} << 40);
    exponent += negative_exponent ? -e : e;
  }
  if (i != text.size()) return invalid();
  double f = static_cast<double>(significand);
  while (true) {
    const int64_t magnitude = exponent < 0 ? -exponent : exponent;
    if (magnitude <= 308) {
      // serde_json's table of 1e0..1e308: the nearest f64 of each.
      static const std::vector<double> kPow10 = [] {
        std::vector<double> t(309);
        for (int k = 0; k <= 308; ++k) t[k] = std::strtod(("1e" + std::to_string(k)).c_str(), nullptr);
        return t;
      }();
      const double pow = kPow10[static_cast<size_t>(magnitude)];
      if (exponent >= 0) {
        f *= pow;
        if (std::isinf(f)) return Status::Invalid("'", std::string(text), "' is out of range of an f64");
      } else {
        f /= pow;
      }
      break;
    }
    if (f == 0) break;
    if (exponent >= 0) return Status::Invalid("'", std::string(text), "' is out of range of an f64");
    f /= 1e308;
    exponent += 308;
  }
  return negative ? -f : f;
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

namespace {

// The global buffer schema metadata `key` of `file` names.
Result<std::string> NamedBuffer(const FileReader& file, const std::string& key, const std::string& where) {
  const auto& meta = file.schema().metadata;
  auto it = meta.find(key);
  if (it == meta.end()) return Status::Invalid(where, ": schema metadata has no '", key, "'");
  size_t index = 0;
  try {
    index = std::stoul(it->second);
  } catch (...) {
    return Status::Invalid(where, ": ", key, " '", it->second, "' is not a global buffer number");
  }
  if (index == 0 || index >= file.layout().global_buffers.size()) {
    return Status::Invalid(where, ": ", key, " names global buffer ", index, ", which the file does not have");
  }
  LANCE_ASSIGN_OR_RAISE(auto buffer, file.ReadGlobalBuffer(index));
  return buffer->ToString();
}

Result<std::shared_ptr<arrow::Array>> OneArray(const std::shared_ptr<arrow::ChunkedArray>& column) {
  if (column->num_chunks() == 1) return column->chunk(0);
  ARROW_ASSIGN_OR_RAISE(auto out, arrow::Concatenate(column->chunks()));
  return out;
}

}  // namespace

Result<std::vector<IndexFile>> RemapIvfIndex(const Dataset& dataset, const io::ObjectStore& store,
                                             const std::string& dir, const IndexMetadata& metadata,
                                             const RowIdMap& map, const std::string& file_version) {
  LANCE_ASSIGN_OR_RAISE(auto seg, IvfSegment::Open(dataset, metadata));
  const std::string where = "vector index '" + metadata.name + "' (" + metadata.UuidString() + ")";
  const FileReader& aux_file = *seg->auxiliary();
  IvfFiles files;
  files.type = seg->type_name();
  files.metric_name = MetricName(seg->metric());
  LANCE_ASSIGN_OR_RAISE(auto index_file, OpenIndexFile(dataset, metadata, "index.idx"));
  if (!index_file) return Status::NotImplemented(where, ": index.idx is in a file format lance-cpp does not read");
  // The model stays as it is: centroids, loss.
  LANCE_ASSIGN_OR_RAISE(files.index_ivf, NamedBuffer(*index_file, "lance:ivf", where + ", index.idx"));
  const auto& aux_meta = aux_file.schema().metadata;
  files.storage_metadata = aux_meta.at("storage_metadata");  // IvfSegment::Open checked it is there
  if (auto it = aux_meta.find("distance_type"); it != aux_meta.end()) files.metric_name = it->second;
  LANCE_ASSIGN_OR_RAISE(auto old_schema, aux_file.ArrowSchema());
  const std::string& code_column = seg->code_column();
  files.aux_schema = arrow::schema({old_schema->GetFieldByName("_rowid"), old_schema->GetFieldByName(code_column)});
  const bool pq = seg->storage() == IvfSegment::Storage::kPq;
  if (seg->storage() == IvfSegment::Storage::kSq) {
    // pylance reads the bounds back (serde_json, not round-trip exact) and
    // writes them again. IvfSegment::Open checked they are numbers.
    const auto outer = nlohmann::json::parse(files.storage_metadata);
    const std::string inner = outer[0].get<std::string>();
    auto bound = [&](const std::string& key) -> Result<double> {
      const size_t at = inner.find("\"" + key + "\":");
      if (at == std::string::npos) return Status::Invalid(where, ": SQ bounds without '", key, "': ", inner);
      const size_t from = at + key.size() + 3;
      const size_t to = inner.find_first_of(",}", from);
      auto v = SerdeJsonParseFloat(std::string_view(inner).substr(from, to - from));
      if (!v.ok()) return v.status().WithMessage(where, ": SQ bound '", key, "': ", v.status().message());
      return v;
    };
    LANCE_ASSIGN_OR_RAISE(double lo, bound("start"));
    LANCE_ASSIGN_OR_RAISE(double hi, bound("end"));
    files.storage_metadata = SqStorageMetadata(seg->dim(), lo, hi);
  }
  if (pq) {
    // The codebook, where the storage metadata says (IvfSegment::Open
    // checked it names a global buffer); written back at that position.
    const auto outer = nlohmann::json::parse(files.storage_metadata);
    const auto storage = nlohmann::json::parse(outer[0].get<std::string>());
    const uint64_t position = storage["codebook_position"].get<uint64_t>();
    if (position != 2) {
      return Status::NotImplemented(where, ": a PQ codebook in global buffer ", position,
                                    " of auxiliary.idx (lance-cpp remaps it in buffer 2, as pylance 14 writes it)");
    }
    LANCE_ASSIGN_OR_RAISE(auto codebook, aux_file.ReadGlobalBuffer(position));
    files.aux_buffers.push_back(codebook->ToString());
  }

  // Each partition's surviving rows: counted first (row ids only), then
  // written partition by partition.
  const size_t partitions = seg->num_partitions();
  files.lengths.assign(partitions, 0);
  for (size_t p = 0; p < partitions; ++p) {
    if (seg->partition_rows(p) == 0) continue;
    LANCE_ASSIGN_OR_RAISE(auto table, aux_file.ReadRange({"_rowid"}, seg->partition_offset(p), seg->partition_rows(p)));
    for (const auto& chunk : table->column(0)->chunks()) {
      const auto& ids = static_cast<const arrow::UInt64Array&>(*chunk);
      for (int64_t i = 0; i < ids.length(); ++i) files.lengths[p] += map(ids.Value(i)).has_value();
    }
  }
  // IVF_FLAT and IVF_SQ rows are written in windows of a partition; PQ
  // codes, transposed over the whole partition, a partition at a time.
  constexpr uint64_t kWindowRows = 65536;
  auto write_rows = [&](FileWriter& writer) -> Status {
    for (size_t p = 0; p < partitions; ++p) {
      const uint64_t rows = seg->partition_rows(p);
      if (rows == 0 || files.lengths[p] == 0) continue;
      const std::string part = where + ", partition " + std::to_string(p);
      uint64_t written = 0;
      const uint64_t window = pq ? rows : kWindowRows;
      for (uint64_t start = 0; start < rows; start += window) {
        const uint64_t n = std::min(window, rows - start);
        LANCE_ASSIGN_OR_RAISE(auto table,
                              aux_file.ReadRange({"_rowid", code_column}, seg->partition_offset(p) + start, n));
        LANCE_ASSIGN_OR_RAISE(auto id_array, OneArray(table->column(0)));
        LANCE_ASSIGN_OR_RAISE(auto code_array, OneArray(table->column(1)));
        const auto& ids = static_cast<const arrow::UInt64Array&>(*id_array);
        arrow::Int64Builder keep;
        arrow::UInt64Builder mapped;
        for (int64_t i = 0; i < ids.length(); ++i) {
          if (auto to = map(ids.Value(i))) {
            LANCE_RETURN_NOT_OK(keep.Append(i));
            LANCE_RETURN_NOT_OK(mapped.Append(*to));
          }
        }
        LANCE_ASSIGN_OR_RAISE(auto keep_array, keep.Finish());
        LANCE_ASSIGN_OR_RAISE(auto new_ids, mapped.Finish());
        const int64_t kept = keep_array->length();
        written += static_cast<uint64_t>(kept);
        if (kept == 0) continue;
        std::shared_ptr<arrow::Array> codes;
        if (pq) {
          // A partition's PQ codes are transposed: code byte j of row i at
          // j * rows + i of the partition's values. Kept rows stay so.
          const auto& list = static_cast<const arrow::FixedSizeListArray&>(*code_array);
          const int64_t m = list.value_length();
          const int64_t all = static_cast<int64_t>(n);
          const auto& values = static_cast<const arrow::UInt8Array&>(*list.values());
          if (values.length() - list.value_offset(0) < m * all) {
            return Status::Invalid(part, ": fewer PQ code bytes than ", n, " rows of ", m);
          }
          const uint8_t* in = values.raw_values() + list.value_offset(0);
          const int64_t* take = static_cast<const arrow::Int64Array&>(*keep_array).raw_values();
          arrow::UInt8Builder out;
          LANCE_RETURN_NOT_OK(out.Reserve(m * kept));
          for (int64_t j = 0; j < m; ++j) {
            for (int64_t k = 0; k < kept; ++k) out.UnsafeAppend(in[j * all + take[k]]);
          }
          LANCE_ASSIGN_OR_RAISE(auto bytes, out.Finish());
          codes = std::make_shared<arrow::FixedSizeListArray>(list.type(), kept, bytes);
        } else {
          LANCE_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(code_array, keep_array));
          codes = taken.make_array();
        }
        auto batch = arrow::RecordBatch::Make(files.aux_schema, kept, {new_ids, codes});
        LANCE_RETURN_NOT_OK(writer.Write(*batch));
      }
      if (written != files.lengths[p]) {
        return Status::Invalid(part, ": the row id map changed between its two passes");
      }
    }
    return Status::OK();
  };
  return WriteIvfFiles(store, dir, files, write_rows, file_version);
}

}  // namespace lance::index::vector
