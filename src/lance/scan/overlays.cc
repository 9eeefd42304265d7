#include "lance/scan/overlays.h"

#include <algorithm>
#include <set>

#include <arrow/api.h>
#include <arrow/array/concatenate.h>
#include <arrow/compute/api.h>

#include "lance/file/blob_v2.h"
#include "lance/table/roaring_portable.h"

namespace lance::scan {
namespace {

// An overlay names the leaves it stores (as 2.1+ files record fields), so
// it covers a field when it lists one of the field's leaf ids; a parent's id
// (a list's own, say) covers nothing, as the reference resolves it.
void CollectLeafIds(const Field& field, std::set<int32_t>* ids) {
  if (field.children.empty()) ids->insert(field.id);
  for (const auto& child : field.children) CollectLeafIds(child, ids);
}

bool ContainsStruct(const Field& field) {
  if (field.logical_type == "struct") return true;
  return std::any_of(field.children.begin(), field.children.end(), ContainsStruct);
}

bool IsBlobColumn(const Field& field) {
  return field.metadata.count("lance-encoding:blob") > 0 || file::IsBlobV2Field(field);
}

// Columns of a field in a file of this version: one per field in 2.0, one
// per leaf from 2.1 on (structs have none; packed structs and blob v2 are
// one), as the writers number them in DataFile.column_indices.
int32_t ColumnCount(const Field& field, bool every_field) {
  const bool packed = field.logical_type == "struct" &&
                      (field.metadata.count("packed") || field.metadata.count("lance-encoding:packed"));
  if (field.children.empty() || (!every_field && (packed || file::IsBlobV2Field(field)))) return 1;
  int32_t n = every_field ? 1 : 0;
  for (const auto& child : field.children) n += ColumnCount(child, every_field);
  return n;
}

// The top-level field of an overlay file that holds column `column`.
Result<std::string> TopLevelOfColumn(const FileReader& reader, int32_t column, const std::string& location) {
  const bool every_field = reader.layout().major_version == 0 || reader.layout().version == "2.0";
  int32_t first = 0;
  for (const auto& f : reader.schema().fields) {
    const int32_t n = ColumnCount(f, every_field);
    if (column >= first && column < first + n) return f.name;
    first += n;
  }
  return Status::Invalid("data overlay file ", location, " has no column ", column, " (it has ", first, ")");
}

}  // namespace

Result<std::unique_ptr<OverlayResolver>> OverlayResolver::Open(
    const Dataset& dataset, const Fragment& fragment, const std::vector<const Field*>& fields,
    const std::vector<std::shared_ptr<arrow::DataType>>& types, arrow::MemoryPool* pool) {
  auto out = std::unique_ptr<OverlayResolver>(new OverlayResolver());
  out->types_ = types;
  out->pool_ = pool;
  if (fragment.overlays.empty()) return out;
  std::vector<int> file_of_overlay(fragment.overlays.size(), -1);
  for (size_t i = 0; i < fields.size(); ++i) {
    const Field& field = *fields[i];
    std::set<int32_t> ids;
    CollectLeafIds(field, &ids);
    Target target;
    target.output = i;
    // Stored oldest first: walk back so the first layer to cover a row wins.
    for (size_t n = fragment.overlays.size(); n-- > 0;) {
      const DataOverlayFile& overlay = fragment.overlays[n];
      const DataFile& data = overlay.data_file;
      size_t pos = data.fields.size();
      for (size_t j = 0; j < data.fields.size(); ++j) {
        if (data.fields[j] >= 0 && ids.count(data.fields[j])) {
          pos = j;
          break;
        }
      }
      if (pos == data.fields.size()) continue;
      const std::string what = "data overlay file " + data.path + " of fragment " + std::to_string(fragment.id);
      if (ContainsStruct(field)) {
        return Status::NotImplemented(what, " overlays field '", field.name,
                                      "', which holds a struct; lance-cpp resolves overlays on fields "
                                      "without structs only");
      }
      if (IsBlobColumn(field)) {
        return Status::NotImplemented(what, " overlays blob field '", field.name,
                                      "'; lance-cpp does not resolve overlays on blob columns");
      }
      if (data.file_major_version < 2 && !(data.file_major_version == 0 && data.file_minor_version == 3)) {
        return Status::NotImplemented(what, " is a legacy (0.1) file; lance-cpp reads overlays of v2 files only");
      }
      if (file_of_overlay[n] < 0) {
        File file;
        LANCE_ASSIGN_OR_RAISE(file.location, dataset.DataFileLocation(data));
        LANCE_ASSIGN_OR_RAISE(file.reader, dataset.OpenDataFileReader(data, pool));
        file_of_overlay[n] = static_cast<int>(out->files_.size());
        out->files_.push_back(std::move(file));
      }
      Layer layer;
      layer.file = static_cast<size_t>(file_of_overlay[n]);
      const File& file = out->files_[layer.file];
      const int32_t column =
          data.column_indices.size() == data.fields.size() ? data.column_indices[pos] : static_cast<int32_t>(pos);
      LANCE_ASSIGN_OR_RAISE(layer.column, TopLevelOfColumn(*file.reader, column, file.location));
      const std::string* bitmap = nullptr;
      if (overlay.shared_offsets) {
        bitmap = &*overlay.shared_offsets;
      } else if (overlay.field_offsets && pos < overlay.field_offsets->size()) {
        bitmap = &(*overlay.field_offsets)[pos];
      } else {
        return Status::Invalid(what, " has no coverage for field ", data.fields[pos]);
      }
      LANCE_ASSIGN_OR_RAISE(layer.coverage, table::DecodePortableRoaring(*bitmap, what + " coverage"));
      if (layer.coverage.size() > file.reader->num_rows()) {
        return Status::Invalid(what, " covers ", layer.coverage.size(), " rows of field '", field.name,
                               "' but its file ", file.location, " holds ", file.reader->num_rows(), " values");
      }
      target.newest_first.push_back(std::move(layer));
    }
    if (!target.newest_first.empty()) out->targets_.push_back(std::move(target));
  }
  return out;
}

Status OverlayResolver::Apply(uint64_t offset, uint64_t count, const std::vector<uint64_t>* offsets,
                              std::vector<std::shared_ptr<arrow::Array>>* columns) const {
  const size_t rows = offsets ? offsets->size() : static_cast<size_t>(count);
  for (const Target& target : targets_) {
    const size_t layers = target.newest_first.size();
    // Per output row: -1 for the base value, else the position among the
    // concatenated overlay values fetched below.
    std::vector<std::pair<int, uint64_t>> pick(rows, {-1, 0});
    std::vector<std::vector<uint64_t>> ranks(layers);  // ascending, per layer
    bool any = false;
    for (size_t k = 0; k < layers; ++k) {
      const auto& cov = target.newest_first[k].coverage;
      if (!offsets) {
        auto lo = std::lower_bound(cov.begin(), cov.end(), offset);
        auto hi = std::lower_bound(lo, cov.end(), offset + count);
        for (auto it = lo; it != hi; ++it) {
          auto& p = pick[*it - offset];
          if (p.first >= 0) continue;
          p = {static_cast<int>(k), ranks[k].size()};
          ranks[k].push_back(static_cast<uint64_t>(it - cov.begin()));
          any = true;
        }
        continue;
      }
      for (size_t r = 0; r < rows; ++r) {
        if (pick[r].first >= 0) continue;
        const uint64_t o = (*offsets)[r];
        auto it = std::lower_bound(cov.begin(), cov.end(), o);
        if (it == cov.end() || *it != o) continue;
        const uint64_t rank = static_cast<uint64_t>(it - cov.begin());
        // Offsets ascend, so a repeated offset repeats the last rank.
        if (ranks[k].empty() || ranks[k].back() != rank) ranks[k].push_back(rank);
        pick[r] = {static_cast<int>(k), ranks[k].size() - 1};
        any = true;
      }
    }
    if (!any) continue;
    auto& base = (*columns)[target.output];
    const auto& type = types_[target.output];
    arrow::ArrayVector parts{base};
    std::vector<int64_t> starts(layers, 0);
    int64_t next = base->length();
    for (size_t k = 0; k < layers; ++k) {
      starts[k] = next;
      if (ranks[k].empty()) continue;
      const Layer& layer = target.newest_first[k];
      const File& file = files_[layer.file];
      LANCE_ASSIGN_OR_RAISE(auto table, file.reader->Take({layer.column}, ranks[k]));
      LANCE_ASSIGN_OR_RAISE(table, table->CombineChunks(pool_));
      std::shared_ptr<arrow::Array> values;
      if (table->column(0)->num_chunks() == 1) {
        values = table->column(0)->chunk(0);
      } else {
        LANCE_ASSIGN_OR_RAISE(values, arrow::MakeEmptyArray(table->column(0)->type(), pool_));
      }
      if (values->length() != static_cast<int64_t>(ranks[k].size())) {
        return Status::Invalid("data overlay file ", file.location, " gave ", values->length(), " values, expected ",
                               ranks[k].size());
      }
      if (!values->type()->Equals(*type)) {
        auto cast = arrow::compute::Cast(*values, type, arrow::compute::CastOptions::Safe());
        if (!cast.ok()) {
          return Status::Invalid("data overlay file ", file.location, " column '", layer.column, "' has type ",
                                 values->type()->ToString(), ", which does not cast to the field's type ",
                                 type->ToString(), ": ", cast.status().ToString());
        }
        values = *cast;
      }
      next += values->length();
      parts.push_back(std::move(values));
    }
    LANCE_ASSIGN_OR_RAISE(auto all, arrow::Concatenate(parts, pool_));
    arrow::Int64Builder idx(pool_);
    LANCE_RETURN_NOT_OK(idx.Reserve(static_cast<int64_t>(rows)));
    for (size_t r = 0; r < rows; ++r) {
      idx.UnsafeAppend(pick[r].first < 0 ? static_cast<int64_t>(r)
                                         : starts[pick[r].first] + static_cast<int64_t>(pick[r].second));
    }
    std::shared_ptr<arrow::Array> indices;
    LANCE_RETURN_NOT_OK(idx.Finish(&indices));
    LANCE_ASSIGN_OR_RAISE(auto merged, arrow::compute::Take(*all, *indices));
    base = std::move(merged);
  }
  return Status::OK();
}

}  // namespace lance::scan
