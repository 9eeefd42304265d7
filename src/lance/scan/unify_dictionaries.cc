#include "lance/unify_dictionaries.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <arrow/api.h>
#include <arrow/array/array_dict.h>
#include <arrow/array/concatenate.h>
#include <arrow/compute/api.h>
#include <arrow/extension_type.h>

namespace lance {
namespace {

const arrow::DataType& Storage(const arrow::DataType& type) {
  if (type.id() == arrow::Type::EXTENSION) return *static_cast<const arrow::ExtensionType&>(type).storage_type();
  return type;
}

bool HasDictionary(const arrow::DataType& type) {
  const auto& t = Storage(type);
  if (t.id() == arrow::Type::DICTIONARY) return true;
  for (const auto& f : t.fields()) {
    if (HasDictionary(*f->type())) return true;
  }
  return false;
}

// The kernels used here live in arrow_compute, registered once per process.
Status ComputeReady() {
  static const Status ready = arrow::compute::Initialize();
  return ready;
}

// The largest index an index type can hold.
uint64_t MaxIndex(const arrow::DataType& index_type) {
  switch (index_type.id()) {
    case arrow::Type::INT8: return std::numeric_limits<int8_t>::max();
    case arrow::Type::UINT8: return std::numeric_limits<uint8_t>::max();
    case arrow::Type::INT16: return std::numeric_limits<int16_t>::max();
    case arrow::Type::UINT16: return std::numeric_limits<uint16_t>::max();
    case arrow::Type::INT32: return std::numeric_limits<int32_t>::max();
    case arrow::Type::UINT32: return std::numeric_limits<uint32_t>::max();
    case arrow::Type::INT64: return std::numeric_limits<int64_t>::max();
    default: return std::numeric_limits<uint64_t>::max();
  }
}

// What one dictionary node of the schema has seen so far.
struct DictionaryState {
  std::string name;  // the column path, for errors
  // The dictionary every batch so far is expressed in; it only grows, so
  // each batch's is a prefix of the next (an IPC delta, never a replacement).
  std::shared_ptr<arrow::Array> unified;
  // Knows `unified`'s values; null while the value type cannot be unified
  // (then `unsupported` says why, and only equal dictionaries pass).
  std::unique_ptr<arrow::DictionaryUnifier> unifier;
  Status unsupported;
  // The last input dictionary and its map to `unified` (null map: identity).
  std::shared_ptr<arrow::ArrayData> last_input;
  std::shared_ptr<arrow::Array> last_map;
};

class UnifyingReader : public arrow::RecordBatchReader {
 public:
  UnifyingReader(std::shared_ptr<arrow::RecordBatchReader> input, arrow::MemoryPool* pool)
      : input_(std::move(input)), pool_(pool) {
    for (const auto& f : input_->schema()->fields()) AddStates(*f->type(), f->name());
  }

  std::shared_ptr<arrow::Schema> schema() const override { return input_->schema(); }

  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    LANCE_RETURN_NOT_OK(input_->ReadNext(out));
    if (*out == nullptr || states_.empty()) return Status::OK();
    const auto& batch = **out;
    arrow::ArrayVector columns;
    size_t next = 0;
    for (int c = 0; c < batch.num_columns(); ++c) {
      auto data = batch.column(c)->data();
      LANCE_RETURN_NOT_OK(Rewrite(&data, &next));
      columns.push_back(arrow::MakeArray(data));
    }
    *out = arrow::RecordBatch::Make(batch.schema(), batch.num_rows(), std::move(columns));
    return Status::OK();
  }

  Status Close() override { return input_->Close(); }

 private:
  // One state per dictionary node, in the order Rewrite meets them.
  void AddStates(const arrow::DataType& type, const std::string& name) {
    const auto& t = Storage(type);
    if (t.id() == arrow::Type::DICTIONARY) {
      states_.emplace_back();
      states_.back().name = name;
      return;
    }
    for (const auto& f : t.fields()) AddStates(*f->type(), name + "." + f->name());
  }

  Status Rewrite(std::shared_ptr<arrow::ArrayData>* data, size_t* next) {
    const auto& type = Storage(*(*data)->type);
    if (!HasDictionary(type)) return Status::OK();
    if (type.id() == arrow::Type::DICTIONARY) return RewriteDictionary(data, &states_[(*next)++]);
    auto copy = std::make_shared<arrow::ArrayData>(**data);
    for (auto& child : copy->child_data) LANCE_RETURN_NOT_OK(Rewrite(&child, next));
    *data = std::move(copy);
    return Status::OK();
  }

  Status RewriteDictionary(std::shared_ptr<arrow::ArrayData>* data, DictionaryState* state) {
    const auto& in = **data;
    const auto& dict_type = static_cast<const arrow::DictionaryType&>(Storage(*in.type));
    std::shared_ptr<arrow::Array> map;
    if (state->last_input != nullptr && state->last_input == in.dictionary) {
      map = state->last_map;
    } else {
      LANCE_ASSIGN_OR_RAISE(map, MapInto(state, arrow::MakeArray(in.dictionary), dict_type));
      state->last_input = in.dictionary;
      state->last_map = map;
    }
    auto out = std::make_shared<arrow::ArrayData>(in);
    out->dictionary = state->unified->data();
    if (map != nullptr) {
      LANCE_RETURN_NOT_OK(ComputeReady());
      arrow::compute::ExecContext ctx(pool_);
      auto indices = arrow::MakeArray(arrow::ArrayData::Make(dict_type.index_type(), in.length,
                                                             {in.buffers[0], in.buffers[1]}, in.null_count, in.offset));
      LANCE_ASSIGN_OR_RAISE(auto mapped, arrow::compute::Take(map, indices, arrow::compute::TakeOptions::Defaults(), &ctx));
      LANCE_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(mapped, dict_type.index_type(),
                                                            arrow::compute::CastOptions::Safe(), &ctx));
      const auto& keys = *cast.array();
      out->buffers = keys.buffers;
      out->offset = keys.offset;
      out->length = keys.length;
      out->null_count = keys.null_count.load();
    }
    *data = std::move(out);
    return Status::OK();
  }

  // Brings `dictionary`'s values into the state's unified dictionary; returns
  // the map from its positions to the unified ones (int32, null for a null
  // entry), or null when every position stays where it is.
  Result<std::shared_ptr<arrow::Array>> MapInto(DictionaryState* state, const std::shared_ptr<arrow::Array>& dictionary,
                                                const arrow::DictionaryType& dict_type) {
    const int64_t before = state->unified ? state->unified->length() : 0;
    // Already a prefix of what batches so far use: nothing moves.
    if (state->unified && dictionary->length() <= before &&
        state->unified->RangeEquals(*dictionary, 0, dictionary->length(), 0)) {
      return nullptr;
    }
    if (state->unified == nullptr) {
      auto unifier = arrow::DictionaryUnifier::Make(dict_type.value_type(), pool_);
      if (!unifier.ok()) {
        // Nothing to unify yet; a later, different dictionary fails below.
        state->unsupported = unifier.status();
        state->unified = dictionary;
        return nullptr;
      }
      state->unifier = std::move(*unifier);
    }
    if (state->unifier == nullptr) {
      return Status::NotImplemented("column '", state->name, "' has different dictionaries in different batches and ",
                                    "dictionaries of ", dict_type.value_type()->ToString(),
                                    " cannot be unified: ", state->unsupported.message());
    }
    // The unifier takes no null entries: those map to a null index.
    std::shared_ptr<arrow::Array> valid = dictionary;
    if (dictionary->null_count() > 0) {
      LANCE_RETURN_NOT_OK(ComputeReady());
      arrow::compute::ExecContext ctx(pool_);
      LANCE_ASSIGN_OR_RAISE(auto mask, arrow::compute::IsValid(dictionary, &ctx));
      LANCE_ASSIGN_OR_RAISE(auto kept, arrow::compute::Filter(dictionary, mask,
                                                              arrow::compute::FilterOptions::Defaults(), &ctx));
      valid = kept.make_array();
    }
    std::shared_ptr<arrow::Buffer> transpose;
    LANCE_RETURN_NOT_OK(state->unifier->Unify(*valid, &transpose));
    const auto* to = transpose->data_as<int32_t>();
    // The unifier numbers new values in order of first appearance: the
    // positions (in `valid`) of the values it had not seen, in that order.
    arrow::Int32Builder map_builder(pool_);
    arrow::Int64Builder fresh(pool_);
    LANCE_RETURN_NOT_OK(map_builder.Reserve(dictionary->length()));
    int64_t k = 0, size = before;
    bool identity = true;
    for (int64_t j = 0; j < dictionary->length(); ++j) {
      if (dictionary->IsNull(j)) {
        map_builder.UnsafeAppendNull();
        identity = false;
        continue;
      }
      if (to[k] == size) {
        LANCE_RETURN_NOT_OK(fresh.Append(k));
        ++size;
      }
      identity = identity && to[k] == j;
      map_builder.UnsafeAppend(to[k++]);
    }
    if (size > 0 && static_cast<uint64_t>(size) - 1 > MaxIndex(*dict_type.index_type())) {
      return Status::Invalid("column '", state->name, "': the dictionaries of its batches hold ", size,
                             " distinct values together, more than ", dict_type.index_type()->ToString(),
                             " indices can address");
    }
    if (before == 0 && identity) {
      state->unified = dictionary;  // the first dictionary, already as it should be
    } else if (size > before) {
      std::shared_ptr<arrow::Array> positions;
      LANCE_RETURN_NOT_OK(fresh.Finish(&positions));
      LANCE_RETURN_NOT_OK(ComputeReady());
      arrow::compute::ExecContext ctx(pool_);
      LANCE_ASSIGN_OR_RAISE(auto added, arrow::compute::Take(valid, positions, arrow::compute::TakeOptions::Defaults(), &ctx));
      if (state->unified == nullptr) {
        state->unified = added.make_array();
      } else {
        LANCE_ASSIGN_OR_RAISE(state->unified, arrow::Concatenate({state->unified, added.make_array()}, pool_));
      }
    } else if (state->unified == nullptr) {
      LANCE_ASSIGN_OR_RAISE(state->unified, arrow::MakeEmptyArray(dict_type.value_type(), pool_));
    }
    if (identity) return nullptr;
    std::shared_ptr<arrow::Array> map;
    LANCE_RETURN_NOT_OK(map_builder.Finish(&map));
    return map;
  }

  std::shared_ptr<arrow::RecordBatchReader> input_;
  arrow::MemoryPool* pool_;
  std::vector<DictionaryState> states_;
};

}  // namespace

Result<std::shared_ptr<arrow::RecordBatchReader>> UnifyDictionaries(std::shared_ptr<arrow::RecordBatchReader> reader,
                                                                    arrow::MemoryPool* pool) {
  if (reader == nullptr) return Status::Invalid("UnifyDictionaries: no reader");
  return std::make_shared<UnifyingReader>(std::move(reader), pool);
}

}  // namespace lance
