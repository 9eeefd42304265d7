#include "lance/ops/vector_index_build.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

#include <arrow/api.h>

#include "lance/file_writer.h"
#include "lance/index/index_writer.h"
#include "lance/index/vector/distance.h"
#include "lance/index/vector/ivf_writer.h"
#include "lance/index/vector/kmeans.h"
#include "lance/scanner.h"
#include "lance/schema.h"
#include "lance/vector_index.pb.h"

namespace lance::ops {
namespace {

using index::vector::Metric;

constexpr uint32_t kNoPartition = UINT32_MAX;

// Calls `fn(vector, row_id)` for each non-null vector of the column, in
// scan order.
template <typename Fn>
Status ForEachVector(const std::shared_ptr<const Dataset>& dataset, const std::string& column, bool row_ids,
                     uint32_t dim, Fn&& fn) {
  ScanBuilder scan(dataset);
  scan.Project({column}).UseScalarIndex(false);
  if (row_ids) scan.WithRowId(); else scan.WithRowAddress();
  LANCE_ASSIGN_OR_RAISE(auto reader, scan.ToReader());
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    const auto& list = static_cast<const arrow::FixedSizeListArray&>(*batch->column(0));
    const auto& ids = static_cast<const arrow::UInt64Array&>(*batch->column(1));
    const auto& values = static_cast<const arrow::FloatArray&>(*list.values());
    for (int64_t i = 0; i < list.length(); ++i) {
      const float* v = list.IsNull(i) ? nullptr : values.raw_values() + list.value_offset(i);
      LANCE_RETURN_NOT_OK(fn(v, ids.Value(i)));
    }
  }
  (void)dim;
  return Status::OK();
}

// The vector as the index stores it: normalized for cosine.
void Prepare(Metric metric, const float* v, uint32_t dim, float* out) {
  std::copy_n(v, dim, out);
  if (metric == Metric::kCosine) {
    // A sequential float32 sum of squares, then a division: pylance's
    // normalization, bit for bit (checked on its stored unit vectors; a
    // lane-wise sum differs in the last bit of a quarter of the values).
    float sum = 0;
    for (uint32_t j = 0; j < dim; ++j) sum += out[j] * out[j];
    const float n = std::sqrt(sum);
    for (uint32_t j = 0; j < dim; ++j) out[j] /= n;
  }
}

uint64_t WindowBytes() {
  if (const char* e = std::getenv("LANCE_CPP_IVF_WRITE_MB")) {
    const long long mb = std::atoll(e);
    if (mb > 0) return static_cast<uint64_t>(mb) << 20;
  }
  return uint64_t{256} << 20;
}

}  // namespace

Result<std::vector<IndexFile>> BuildIvfIndex(const std::shared_ptr<const Dataset>& dataset, const std::string& type,
                                                 const std::string& column, bool row_ids,
                                                 const VectorIndexParams& params, const io::ObjectStore& store,
                                                 const std::string& dir, const std::string& file_version,
                                                 std::string* details) {
  const std::string where = type + " index on " + column;
  if (type != "IVF_FLAT" && type != "IVF_SQ") return Status::NotImplemented("index type ", type, " is not built by lance-cpp");
  const bool sq = type == "IVF_SQ";
  auto metric_or = index::vector::ParseMetric(params.metric);
  if (!metric_or) {
    return Status::Invalid(where, ": metric '", params.metric, "' is not l2, cosine or dot");
  }
  const Metric metric = *metric_or;
  LANCE_ASSIGN_OR_RAISE(auto schema, dataset->ArrowSchema());
  auto field = schema->GetFieldByName(column);
  if (!field) return Status::Invalid(where, ": column '", column, "' not found in schema");
  if (field->type()->id() != arrow::Type::FIXED_SIZE_LIST ||
      static_cast<const arrow::FixedSizeListType&>(*field->type()).value_type()->id() != arrow::Type::FLOAT) {
    return Status::NotImplemented(where, ": lance-cpp builds vector indices on fixed_size_list<float32> columns only ",
                                  "(the column is ", field->type()->ToString(), ")");
  }
  const uint32_t dim = static_cast<uint32_t>(static_cast<const arrow::FixedSizeListType&>(*field->type()).list_size());
  if (dim == 0) return Status::Invalid(where, ": the vectors have no dimensions");
  if (params.sample_rate == 0) return Status::Invalid(where, ": sample_rate must be at least 1");
  if (params.max_iterations == 0) return Status::Invalid(where, ": max_iterations must be at least 1");

  uint64_t num_rows = 0;
  for (const auto& f : dataset->manifest().fragments) {
    LANCE_ASSIGN_OR_RAISE(uint64_t physical, dataset->PhysicalRows(f));
    LANCE_ASSIGN_OR_RAISE(uint64_t deleted, dataset->NumDeletedRows(f));
    num_rows += physical - deleted;
  }

  // The IVF model: given or trained.
  std::vector<float> centroids;
  double training_loss = 0;
  uint32_t partitions = 0;
  if (!params.centroids.empty()) {
    if (params.centroids.size() % dim != 0) {
      return Status::Invalid(where, ": ", params.centroids.size(), " centroid values are not a multiple of dim ", dim);
    }
    partitions = static_cast<uint32_t>(params.centroids.size() / dim);
    if (params.num_partitions && *params.num_partitions != partitions) {
      return Status::Invalid(where, ": num_partitions ", *params.num_partitions, " but ", partitions,
                             " centroids given");
    }
    centroids = params.centroids;
  } else {
    partitions = params.num_partitions.value_or(
        static_cast<uint32_t>(std::clamp<uint64_t>(num_rows / (sq ? 8192 : 4096), 1, 4096)));
    if (partitions == 0) return Status::Invalid(where, ": num_partitions must be at least 1");
    // A seeded reservoir sample of num_partitions x sample_rate vectors.
    const uint64_t want = static_cast<uint64_t>(partitions) * params.sample_rate;
    std::vector<float> sample;
    uint64_t seen = 0;
    std::mt19937_64 rng(params.seed);
    std::vector<float> tmp(dim);
    LANCE_RETURN_NOT_OK(ForEachVector(dataset, column, row_ids, dim, [&](const float* v, uint64_t) -> Status {
      if (v == nullptr) return Status::OK();
      Prepare(metric, v, dim, tmp.data());
      if (seen < want) {
        sample.insert(sample.end(), tmp.begin(), tmp.end());
      } else {
        std::uniform_int_distribution<uint64_t> pick(0, seen);
        const uint64_t j = pick(rng);
        if (j < want) std::copy(tmp.begin(), tmp.end(), sample.begin() + static_cast<ptrdiff_t>(j * dim));
      }
      ++seen;
      return Status::OK();
    }));
    if (seen == 0) return Status::Invalid(where, ": the column holds no vectors to train on");
    if (seen < partitions) {
      return Status::Invalid(where, ": ", partitions, " partitions requested but the column holds ", seen,
                             " vectors");
    }
    index::vector::KMeansOptions km;
    km.k = partitions;
    km.max_iterations = params.max_iterations;
    km.metric = metric;
    km.seed = params.seed;
    // Three runs from seeds seed, seed+1, seed+2; the lowest loss kept.
    for (uint64_t run = 0; run < 3; ++run) {
      km.seed = params.seed + run;
      LANCE_ASSIGN_OR_RAISE(auto trained, index::vector::TrainKMeans(sample.data(), sample.size() / dim, dim, km));
      if (run == 0 || trained.loss < training_loss) {
        centroids = std::move(trained.centroids);
        training_loss = trained.loss;
      }
    }
  }
  (void)training_loss;

  // Assignment: one partition number per row, in scan order.
  std::vector<uint32_t> assign;
  std::vector<uint64_t> lengths(partitions, 0);
  double loss = 0;
  // IVF_SQ's bounds: the least and greatest value of every vector (pylance
  // takes them over its SQ training sample, 65,536 vectors: all of them up
  // to that many rows).
  float lo = std::numeric_limits<float>::infinity(), hi = -std::numeric_limits<float>::infinity();
  {
    std::vector<float> tmp(dim);
    LANCE_RETURN_NOT_OK(ForEachVector(dataset, column, row_ids, dim, [&](const float* v, uint64_t) -> Status {
      if (v == nullptr) {
        assign.push_back(kNoPartition);
        return Status::OK();
      }
      Prepare(metric, v, dim, tmp.data());
      auto [p, d] = index::vector::NearestCentroid(tmp.data(), centroids.data(), partitions, dim, metric);
      assign.push_back(p);
      if (sq) {
        for (uint32_t j = 0; j < dim; ++j) {
          lo = std::min(lo, tmp[j]);
          hi = std::max(hi, tmp[j]);
        }
      }
      ++lengths[p];
      loss += d;
      return Status::OK();
    }));
  }

  // auxiliary.idx: the vectors, partition by partition, row ids ascending.
  auto item = arrow::field("item", arrow::float32());
  auto flat_type = arrow::fixed_size_list(item, static_cast<int32_t>(dim));
  auto code_type = arrow::fixed_size_list(arrow::field("item", arrow::uint8()), static_cast<int32_t>(dim));
  auto aux_schema = sq ? arrow::schema({arrow::field("_rowid", arrow::uint64()), arrow::field("__sq_code", code_type)})
                       : arrow::schema({arrow::field("_rowid", arrow::uint64()), arrow::field("flat", flat_type, false)});
  const uint64_t row_bytes = uint64_t{dim} * 4 + 8;
  const uint64_t window_rows = std::max<uint64_t>(1, WindowBytes() / row_bytes);
  auto write_aux = [&](FileWriter& writer) -> Status {
    uint32_t p0 = 0;
    while (p0 < partitions) {
      uint32_t p1 = p0;
      uint64_t rows = 0;
      while (p1 < partitions && (p1 == p0 || rows + lengths[p1] <= window_rows)) rows += lengths[p1++];
      if (rows == 0) {
        p0 = p1;
        continue;
      }
      std::vector<std::vector<uint64_t>> ids(p1 - p0);
      std::vector<std::vector<float>> vecs(p1 - p0);
      for (uint32_t p = p0; p < p1; ++p) {
        ids[p - p0].reserve(lengths[p]);
        vecs[p - p0].reserve(lengths[p] * dim);
      }
      size_t i = 0;
      std::vector<float> tmp(dim);
      LANCE_RETURN_NOT_OK(ForEachVector(dataset, column, row_ids, dim, [&](const float* v, uint64_t id) -> Status {
        if (i >= assign.size()) return Status::Invalid(where, ": the column changed while the index was built");
        const uint32_t p = assign[i++];
        if (p == kNoPartition || p < p0 || p >= p1) return Status::OK();
        Prepare(metric, v, dim, tmp.data());
        ids[p - p0].push_back(id);
        vecs[p - p0].insert(vecs[p - p0].end(), tmp.begin(), tmp.end());
        return Status::OK();
      }));
      for (uint32_t p = p0; p < p1; ++p) {
        auto& pid = ids[p - p0];
        auto& pv = vecs[p - p0];
        if (pid.empty()) continue;
        std::vector<size_t> order(pid.size());
        std::iota(order.begin(), order.end(), size_t{0});
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pid[a] < pid[b]; });
        arrow::UInt64Builder ib;
        arrow::FloatBuilder vb;
        LANCE_RETURN_NOT_OK(ib.Reserve(static_cast<int64_t>(pid.size())));
        LANCE_RETURN_NOT_OK(vb.Reserve(static_cast<int64_t>(pv.size())));
        for (size_t r : order) {
          ib.UnsafeAppend(pid[r]);
          for (uint32_t j = 0; j < dim; ++j) vb.UnsafeAppend(pv[r * dim + j]);
        }
        LANCE_ASSIGN_OR_RAISE(auto id_array, ib.Finish());
        LANCE_ASSIGN_OR_RAISE(auto values, vb.Finish());
        std::shared_ptr<arrow::Array> list =
            std::make_shared<arrow::FixedSizeListArray>(flat_type, values->length() / dim, values);
        if (sq) {
          // code = floor((x - lo) / (hi - lo) * 255) in float32, clipped.
          arrow::UInt8Builder cb;
          LANCE_RETURN_NOT_OK(cb.Reserve(values->length()));
          const float* xs = static_cast<const arrow::FloatArray&>(*values).raw_values();
          const float range = hi - lo;
          for (int64_t j = 0; j < values->length(); ++j) {
            const float c = std::floor((xs[j] - lo) / range * 255.0f);
            cb.UnsafeAppend(static_cast<uint8_t>(std::clamp(c, 0.0f, 255.0f)));
          }
          LANCE_ASSIGN_OR_RAISE(auto codes, cb.Finish());
          list = std::make_shared<arrow::FixedSizeListArray>(code_type, codes->length() / dim, codes);
        }
        auto batch = arrow::RecordBatch::Make(aux_schema, list->length(), {id_array, list});
        LANCE_RETURN_NOT_OK(writer.Write(*batch));
        pid = {};
        pv = {};
      }
      p0 = p1;
    }
    return Status::OK();
  };

  index::vector::IvfFiles files;
  files.type = type;
  files.metric_name = index::vector::MetricName(metric);
  files.aux_schema = aux_schema;
  files.lengths = lengths;
  index::pb::IVF index_ivf;
  for (uint32_t p = 0; p < partitions; ++p) {
    index_ivf.add_offsets(0);
    index_ivf.add_lengths(0);
  }
  auto* tensor = index_ivf.mutable_centroids_tensor();
  tensor->set_data_type(index::pb::Tensor::FLOAT32);
  tensor->add_shape(partitions);
  tensor->add_shape(dim);
  tensor->set_data(std::string(reinterpret_cast<const char*>(centroids.data()), centroids.size() * sizeof(float)));
  index_ivf.set_loss(loss);
  files.index_ivf = index_ivf.SerializeAsString();
  if (sq) {
    if (!(lo <= hi)) lo = hi = 0;
    files.storage_metadata = index::vector::SqStorageMetadata(dim, lo, hi);
  } else {
    files.storage_metadata = "[\"{\\\"dim\\\":" + std::to_string(dim) + "}\"]";
  }
  LANCE_ASSIGN_OR_RAISE(auto written, index::vector::WriteIvfFiles(store, dir, files, write_aux, file_version));

  index::pb::VectorIndexDetails d;
  d.set_metric_type(metric == Metric::kL2       ? index::pb::L2
                    : metric == Metric::kCosine ? index::pb::Cosine
                                                : index::pb::Dot);
  if (sq) {
    d.mutable_sq()->set_num_bits(8);
  } else {
    d.mutable_flat();
  }
  auto& hints = *d.mutable_runtime_hints();
  hints["lance.ivf.sample_rate"] = std::to_string(params.sample_rate);
  hints["lance.ivf.max_iters"] = std::to_string(params.max_iterations);
  hints["lance.ivf.shuffle_partition_batches"] = "10240";
  hints["lance.ivf.shuffle_partition_concurrency"] = "2";
  hints["lance.skip_transpose"] = "false";
  if (sq) hints["lance.sq.sample_rate"] = "256";
  *details = d.SerializeAsString();
  return written;
}

}  // namespace lance::ops
