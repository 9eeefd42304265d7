#include "lance/scan/row_gate.h"

#include <algorithm>

#include <arrow/api.h>

#include "lance/scan/matching_rows.h"
#include "lance/scanner.h"

namespace lance::scan {

Result<RowGate> RowGate::Make(const std::shared_ptr<const Dataset>& dataset, const std::string& filter) {
  RowGate gate;
  gate.dataset_ = dataset;
  const auto& fragments = dataset->manifest().fragments;
  for (size_t i = 0; i < fragments.size(); ++i) gate.index_of_[static_cast<uint32_t>(fragments[i].id)] = i;
  gate.deleted_.resize(fragments.size());
  if (!filter.empty()) {
    LANCE_ASSIGN_OR_RAISE(gate.allowed_, MatchingRows(dataset, filter));
    gate.filtered_ = true;
  }
  if (dataset->manifest().UsesStableRowIds()) {
    gate.stable_ = true;
    for (size_t i = 0; i < fragments.size(); ++i) {
      // Live rows only: an updated row's id stays on its deleted old place.
      LANCE_ASSIGN_OR_RAISE(auto ids, dataset->RowIds(fragments[i]));
      LANCE_ASSIGN_OR_RAISE(auto deleted, dataset->DeletedRows(fragments[i]));
      size_t d = 0;
      for (size_t off = 0; off < ids.size(); ++off) {
        if (d < deleted.size() && deleted[d] == off) {
          ++d;
          continue;
        }
        gate.rows_.emplace(ids[off], std::make_pair(i, static_cast<uint32_t>(off)));
      }
    }
  }
  return gate;
}

Result<std::optional<uint32_t>> RowGate::FragmentOf(uint64_t row_id) {
  size_t index;
  uint32_t offset;
  if (stable_) {
    auto it = rows_.find(row_id);
    if (it == rows_.end()) return std::optional<uint32_t>();
    std::tie(index, offset) = it->second;
  } else {
    auto it = index_of_.find(static_cast<uint32_t>(row_id >> 32));
    if (it == index_of_.end()) return std::optional<uint32_t>();
    index = it->second;
    offset = static_cast<uint32_t>(row_id);
    if (!filtered_) {
      auto& deleted = deleted_[index];
      if (!deleted) {
        LANCE_ASSIGN_OR_RAISE(auto rows, dataset_->DeletedRows(dataset_->manifest().fragments[index]));
        deleted = std::move(rows);
      }
      if (std::binary_search(deleted->begin(), deleted->end(), offset)) return std::optional<uint32_t>();
    }
  }
  // The filter's rows are live ones.
  if (filtered_ && !std::binary_search(allowed_[index].begin(), allowed_[index].end(), offset)) {
    return std::optional<uint32_t>();
  }
  return std::optional<uint32_t>(static_cast<uint32_t>(dataset_->manifest().fragments[index].id));
}

Result<bool> RowGate::Allows(uint64_t row_id) {
  LANCE_ASSIGN_OR_RAISE(auto fragment, FragmentOf(row_id));
  return fragment.has_value();
}

Result<std::optional<std::vector<uint64_t>>> RowGate::Admitted(const std::set<uint32_t>& fragments,
                                                               size_t limit) const {
  std::vector<uint64_t> out;
  if (!filtered_) return std::optional<std::vector<uint64_t>>();
  const auto& manifest_fragments = dataset_->manifest().fragments;
  for (size_t i = 0; i < manifest_fragments.size(); ++i) {
    const auto id = static_cast<uint32_t>(manifest_fragments[i].id);
    if (!fragments.count(id)) continue;
    if (out.size() + allowed_[i].size() > limit) return std::optional<std::vector<uint64_t>>();
    std::vector<uint64_t> stable;
    if (stable_) {
      LANCE_ASSIGN_OR_RAISE(stable, dataset_->RowIds(manifest_fragments[i]));
    }
    for (uint32_t offset : allowed_[i]) out.push_back(stable_ ? stable.at(offset) : (uint64_t{id} << 32 | offset));
  }
  return std::optional<std::vector<uint64_t>>(std::move(out));
}

Result<std::shared_ptr<arrow::Table>> TakeScoredRows(const std::shared_ptr<const Dataset>& dataset,
                                                     const std::vector<uint64_t>& row_ids,
                                                     const std::vector<float>& scores,
                                                     const std::vector<std::string>& columns,
                                                     const std::string& score_column, bool with_row_id) {
  LANCE_ASSIGN_OR_RAISE(auto table, TakeRows(dataset, row_ids, columns));
  arrow::FloatBuilder score_builder;
  LANCE_RETURN_NOT_OK(score_builder.AppendValues(scores));
  LANCE_ASSIGN_OR_RAISE(auto score_array, score_builder.Finish());
  LANCE_ASSIGN_OR_RAISE(table, table->AddColumn(table->num_columns(), arrow::field(score_column, arrow::float32()),
                                                std::make_shared<arrow::ChunkedArray>(score_array)));
  if (with_row_id) {
    arrow::UInt64Builder ids;
    LANCE_RETURN_NOT_OK(ids.AppendValues(row_ids));
    LANCE_ASSIGN_OR_RAISE(auto id_array, ids.Finish());
    LANCE_ASSIGN_OR_RAISE(table, table->AddColumn(table->num_columns(), arrow::field("_rowid", arrow::uint64()),
                                                  std::make_shared<arrow::ChunkedArray>(id_array)));
  }
  return table;
}

}  // namespace lance::scan
