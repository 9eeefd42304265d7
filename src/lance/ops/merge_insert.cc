// Merge-insert: the source is joined with the table on key columns (a hash
// join over the serialized key values, or over 64-bit keys for one integer
// key column); only the key columns of the table are read. Matched rows are
// rewritten with the source's values, unmatched source rows inserted (both
// into the same new fragments, rewritten rows first), unmatched target rows
// optionally deleted. One Update transaction (rewrite rows), as the
// reference commits. Blob v2 columns are rewritten from their bytes, as
// pylance 14 does.
#include <arrow/array.h>
#include <arrow/array/concatenate.h>
#include <arrow/array/util.h>
#include <arrow/builder.h>
#include <arrow/datum.h>
#include <arrow/scalar.h>
#include <arrow/compute/api_vector.h>
#include <arrow/table.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "lance/dataset_internal.h"
#include "lance/ops/blob_v2_input.h"
#include "lance/ops/dataset_ops_internal.h"
#include "lance/ops/blob_v2_values.h"
#include "lance/ops/fragment_writer.h"
#include "lance/ops/row_rewrite.h"
#include "lance/row_ops.h"
#include "lance/scanner.h"
#include "lance/txn/commit.h"
#include "lance/util/progress_reporter.h"

namespace lance {
namespace {

// Key values of one row as a byte string; false when any key is null (a
// null key matches nothing, as in a SQL join). Integers and temporal values
// go by their bytes, strings and binaries length-prefixed, anything else
// (floats, decimals, nested) by its text. Both sides' key columns have the
// same types, so equal keys encode alike.
class KeyEncoder {
 public:
  KeyEncoder(const arrow::RecordBatch& batch, const std::vector<std::string>& on) {
    for (const auto& name : on) {
      Column c;
      c.array = batch.GetColumnByName(name);
      c.nullable = c.array->null_count() > 0;
      const auto id = c.array->type_id();
      if (arrow::is_integer(id) || id == arrow::Type::DATE32 || id == arrow::Type::DATE64 ||
          id == arrow::Type::TIME32 || id == arrow::Type::TIME64 || id == arrow::Type::TIMESTAMP ||
          id == arrow::Type::DURATION) {
        c.kind = Kind::kFixed;
        c.width = c.array->type()->byte_width();
        c.values = c.array->data()->buffers[1]->data() + c.array->offset() * c.width;
      } else if (id == arrow::Type::STRING || id == arrow::Type::BINARY) {
        c.kind = Kind::kBinary;
      } else if (id == arrow::Type::LARGE_STRING || id == arrow::Type::LARGE_BINARY) {
        c.kind = Kind::kLargeBinary;
      }
      columns_.push_back(std::move(c));
    }
  }

  /// Sets `*key` to the key of `row`.
  bool Encode(int64_t row, std::string* key) const {
    key->clear();
    for (const auto& c : columns_) {
      if (c.nullable && c.array->IsNull(row)) return false;
      switch (c.kind) {
        case Kind::kFixed:
          key->append(reinterpret_cast<const char*>(c.values + row * c.width), static_cast<size_t>(c.width));
          break;
        case Kind::kBinary:
          AppendBytes(static_cast<const arrow::BinaryArray&>(*c.array).GetView(row), key);
          break;
        case Kind::kLargeBinary:
          AppendBytes(static_cast<const arrow::LargeBinaryArray&>(*c.array).GetView(row), key);
          break;
        case Kind::kText: {
          auto scalar = c.array->GetScalar(row);
          AppendBytes(scalar.ok() ? (*scalar)->ToString() : std::string(), key);
          break;
        }
      }
    }
    return true;
  }

 private:
  enum class Kind { kFixed, kBinary, kLargeBinary, kText };
  struct Column {
    std::shared_ptr<arrow::Array> array;
    bool nullable = false;
    Kind kind = Kind::kText;
    int64_t width = 0;
    const uint8_t* values = nullptr;  // kFixed: from the array's first row
  };

  static void AppendBytes(std::string_view bytes, std::string* key) {
    const uint64_t size = bytes.size();
    key->append(reinterpret_cast<const char*>(&size), sizeof size);
    key->append(bytes.data(), bytes.size());
  }

  std::vector<Column> columns_;
};

// The source rows by key: open addressing over the key bytes, which live
// in one arena. Probing a million target keys against it is what a
// merge-insert mostly does, so no node-based map.
class KeyIndex {
 public:
  explicit KeyIndex(size_t expected) {
    size_t slots = 16;
    while (slots < expected * 2) slots <<= 1;
    mask_ = slots - 1;
    slots_.assign(slots, Slot{});
    tags_.assign(slots, 0);
  }

  /// Adds `key` for source row `row`; false (and the key marked duplicated)
  /// when another row has it already.
  bool Insert(std::string_view key, int64_t row) {
    const uint64_t hash = Hash(key);
    const size_t at = Probe(key, hash);
    Slot& slot = slots_[at];
    if (slot.row >= 0) {
      slot.duplicated = true;
      return false;
    }
    slot.hash = hash;
    slot.offset = arena_.size();
    slot.size = key.size();
    slot.row = row;
    tags_[at] = Tag(hash);
    arena_.append(key.data(), key.size());
    return true;
  }

  /// The source row with `key` (-1 if none) and whether several have it.
  std::pair<int64_t, bool> Find(std::string_view key) const {
    const Slot& slot = slots_[Probe(key, Hash(key))];
    return {slot.row, slot.duplicated};
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    size_t offset = 0;
    size_t size = 0;
    int64_t row = -1;  // -1: empty
    bool duplicated = false;
  };

  static uint64_t Hash(std::string_view key) {
    if (key.size() == 8) {  // one 64-bit key: splitmix64's finalizer
      uint64_t x;
      std::memcpy(&x, key.data(), 8);
      x ^= x >> 30;
      x *= 0xbf58476d1ce4e5b9ULL;
      x ^= x >> 27;
      x *= 0x94d049bb133111ebULL;
      return x ^ (x >> 31);
    }
    return std::hash<std::string_view>{}(key);
  }

  // A few bits of the hash per slot (never 0, which marks an empty slot):
  // most target keys are in no slot, and these small tags are all a probe
  // for them reads.
  static uint16_t Tag(uint64_t hash) { return static_cast<uint16_t>(hash >> 48) | 1; }

  // The slot holding `key`, or the empty one where it would go.
  size_t Probe(std::string_view key, uint64_t hash) const {
    const uint16_t tag = Tag(hash);
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      if (tags_[i] == 0) return i;
      if (tags_[i] != tag) continue;
      const Slot& slot = slots_[i];
      if (slot.hash == hash && slot.size == key.size() &&
          std::memcmp(arena_.data() + slot.offset, key.data(), key.size()) == 0) {
        return i;
      }
    }
  }

  std::string arena_;
  std::vector<Slot> slots_;
  std::vector<uint16_t> tags_;
  size_t mask_ = 0;
};

// One integer (or date, time, timestamp, duration) key column's values as
// 64-bit keys: the common merge-insert, probed without building key bytes.
class IntKeyColumn {
 public:
  static bool Supports(const arrow::DataType& type) {
    const auto id = type.id();
    return (arrow::is_integer(id) || id == arrow::Type::DATE32 || id == arrow::Type::DATE64 ||
            id == arrow::Type::TIME32 || id == arrow::Type::TIME64 || id == arrow::Type::TIMESTAMP ||
            id == arrow::Type::DURATION) &&
           type.byte_width() <= 8;
  }

  // REQUIRES: Supports(array.type()).
  explicit IntKeyColumn(const arrow::Array& array)
      : array_(array),
        nullable_(array.null_count() > 0),
        width_(array.type()->byte_width()),
        values_(array.length() == 0 ? nullptr : array.data()->buffers[1]->data() + array.offset() * width_) {}

  /// The key of `row`; false when it is null (matches nothing).
  bool Get(int64_t row, uint64_t* key) const {
    if (nullable_ && array_.IsNull(row)) return false;
    uint64_t k = 0;
    std::memcpy(&k, values_ + row * width_, static_cast<size_t>(width_));
    *key = k;
    return true;
  }

 private:
  const arrow::Array& array_;
  bool nullable_;
  int64_t width_;
  const uint8_t* values_;
};

// The source rows by one 64-bit key, open addressing. Most target keys
// match no source row: a bit per hash, 8 to 16 per key (small enough to stay in
// the L1 cache), turns most of them away before the slots are read.
class IntKeyIndex {
 public:
  explicit IntKeyIndex(size_t expected) {
    size_t slots = 16;
    while (slots < expected * 2) slots <<= 1;
    mask_ = slots - 1;
    keys_.assign(slots, 0);
    rows_.assign(slots, -1);
    duplicated_.assign(slots, 0);
    size_t bits = 64;
    while (bits < expected * 8) bits <<= 1;
    filter_mask_ = bits - 1;
    filter_.assign(bits / 64, 0);
  }

  void Insert(uint64_t key, int64_t row) {
    const uint64_t hash = Hash(key);
    const uint64_t bit = (hash >> 40) & filter_mask_;
    filter_[bit >> 6] |= uint64_t{1} << (bit & 63);
    const size_t at = Probe(key, hash);
    if (rows_[at] >= 0) {
      duplicated_[at] = 1;
      return;
    }
    keys_[at] = key;
    rows_[at] = row;
  }

  /// The source row with `key` (-1 if none) and whether several have it.
  std::pair<int64_t, bool> Find(uint64_t key) const {
    const uint64_t hash = Hash(key);
    const uint64_t bit = (hash >> 40) & filter_mask_;
    if ((filter_[bit >> 6] & (uint64_t{1} << (bit & 63))) == 0) return {-1, false};
    const size_t at = Probe(key, hash);
    return {rows_[at], duplicated_[at] != 0};
  }

 private:
  static uint64_t Hash(uint64_t x) {  // splitmix64's finalizer
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

  // The slot holding `key`, or the empty one where it would go.
  size_t Probe(uint64_t key, uint64_t hash) const {
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      if (rows_[i] < 0 || keys_[i] == key) return i;
    }
  }

  std::vector<uint64_t> keys_;
  std::vector<int64_t> rows_;  // -1: empty
  std::vector<uint8_t> duplicated_;
  size_t mask_ = 0;
  std::vector<uint64_t> filter_;
  uint64_t filter_mask_ = 0;
};

// "id = 5, name = \"x\"", as the reference shows key values in its error.
std::string ShowKeys(const arrow::RecordBatch& batch, int64_t row, const std::vector<std::string>& on) {
  std::string out;
  for (const auto& name : on) {
    if (!out.empty()) out += ", ";
    auto column = batch.GetColumnByName(name);
    std::string value = "NULL";
    if (!column->IsNull(row)) {
      auto scalar = column->GetScalar(row);
      value = scalar.ok() ? (*scalar)->ToString() : "?";
      const auto id = column->type_id();
      if (id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING) value = "\"" + value + "\"";
    }
    out += name + " = " + value;
  }
  return out;
}

// The dataset's columns the source has, in dataset order: every column, or
// (a partial source, as pylance 14 accepts) the keys and some others. A
// column the dataset lacks is refused.
Result<std::shared_ptr<arrow::Schema>> SourceColumns(const arrow::Schema& source, const arrow::Schema& dataset,
                                                     const std::vector<std::string>& on, const std::string& uri) {
  for (const auto& field : source.fields()) {
    if (dataset.GetFieldIndex(field->name()) < 0) {
      return Status::Invalid("merge-insert into ", uri, ": the source has a column '", field->name(),
                             "' the dataset does not have (", dataset.ToString(), ")");
    }
  }
  for (const auto& key : on) {
    if (source.GetFieldIndex(key) < 0) {
      return Status::Invalid("merge-insert into ", uri, ": the source has no key column '", key, "' (it has: ",
                             source.ToString(), ")");
    }
  }
  arrow::FieldVector fields;
  for (const auto& field : dataset.fields()) {
    if (source.GetFieldIndex(field->name()) >= 0) fields.push_back(field);
  }
  return arrow::schema(std::move(fields));
}

Result<std::shared_ptr<arrow::RecordBatch>> TakeRows(const std::shared_ptr<arrow::RecordBatch>& batch,
                                                     const std::vector<int64_t>& rows) {
  arrow::Int64Builder builder;
  LANCE_RETURN_NOT_OK(builder.AppendValues(rows));
  LANCE_ASSIGN_OR_RAISE(auto indices, builder.Finish());
  LANCE_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(arrow::Datum(batch), arrow::Datum(indices)));
  return taken.record_batch();
}

// The source's rows, numbered across its batches, kept as they came: no
// copy of the whole source, since only the rows written are gathered.
class SourceRows {
 public:
  SourceRows(std::shared_ptr<arrow::Schema> schema, std::vector<std::shared_ptr<arrow::RecordBatch>> batches)
      : schema_(std::move(schema)), batches_(std::move(batches)) {
    for (const auto& b : batches_) {
      starts_.push_back(num_rows_);
      num_rows_ += b->num_rows();
    }
  }

  int64_t num_rows() const { return num_rows_; }
  const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches() const { return batches_; }
  const std::vector<int64_t>& starts() const { return starts_; }

  /// Rows `rows` (source row numbers), in that order, as batches. Runs of
  /// consecutive rows go out as slices of the source, without a copy,
  /// when the runs are long; scattered rows are taken.
  Result<std::vector<std::shared_ptr<arrow::RecordBatch>>> Gather(const std::vector<int64_t>& rows) {
    struct Run {
      size_t batch;
      int64_t offset;
      int64_t length;
    };
    std::vector<Run> runs;
    for (int64_t row : rows) {
      if (!runs.empty()) {
        Run& last = runs.back();
        const int64_t next = starts_[last.batch] + last.offset + last.length;
        if (row == next && last.offset + last.length < batches_[last.batch]->num_rows()) {
          ++last.length;
          continue;
        }
      }
      const size_t b = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), row) - starts_.begin()) - 1;
      runs.push_back({b, row - starts_[b], 1});
    }
    std::vector<std::shared_ptr<arrow::RecordBatch>> out;
    if (runs.size() * kMinRunRows <= rows.size()) {
      for (const auto& run : runs) out.push_back(batches_[run.batch]->Slice(run.offset, run.length));
      return out;
    }
    LANCE_ASSIGN_OR_RAISE(auto all, Combined());
    LANCE_ASSIGN_OR_RAISE(auto taken, TakeRows(all, rows));
    out.push_back(std::move(taken));
    return out;
  }

 private:
  // Rows per run, on average, from which slices beat a take.
  static constexpr size_t kMinRunRows = 16;

  Result<std::shared_ptr<arrow::RecordBatch>> Combined() {
    if (!combined_) {
      if (batches_.size() == 1) {
        combined_ = batches_.front();
      } else {
        LANCE_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(schema_, batches_));
        LANCE_ASSIGN_OR_RAISE(combined_, table->CombineChunksToBatch());
      }
    }
    return combined_;
  }

  std::shared_ptr<arrow::Schema> schema_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches_;
  std::vector<int64_t> starts_;  // first row number of each batch
  int64_t num_rows_ = 0;
  std::shared_ptr<arrow::RecordBatch> combined_;
};

// The whole source, conformed to `columns`; blob v2 columns (binary or
// pylance's blob array) as the logical struct the writer takes.
Result<SourceRows> ReadSource(arrow::RecordBatchReader& source, const std::shared_ptr<arrow::Schema>& columns,
                              const Schema& dataset_schema, const std::string& uri) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  const std::string what = "merge-insert into " + uri + ": the source";
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(source.ReadNext(&batch));
    if (!batch) break;
    if (batch->num_rows() == 0) continue;
    LANCE_ASSIGN_OR_RAISE(batch, ops::ToBlobV2Input(batch, dataset_schema, uri));
    LANCE_ASSIGN_OR_RAISE(auto conformed, ops::ConformBatch(batch, columns, what));
    batches.push_back(std::move(conformed));
  }
  return SourceRows(columns, std::move(batches));
}

// Inserting source rows that lack a non-nullable column fails, as in the
// reference (which says so in these words).
Status CheckInsertable(const Schema& schema, const arrow::Schema& source_columns) {
  std::string missing;
  for (const auto& field : schema.fields) {
    if (field.nullable || source_columns.GetFieldIndex(field.name) >= 0) continue;
    missing += (missing.empty() ? "\"" : ", \"") + field.name + "\"";
  }
  if (missing.empty()) return Status::OK();
  return Status::Invalid("Cannot insert rows with a partial-schema source: target column(s) [", missing,
                         "] are non-nullable and not provided by the source. Either add them to the source or "
                         "set when_not_matched to DoNothing.");
}

// Full rows of the dataset from rows of a partial source: the source's
// columns, the others from `kept` (the target's values of the same rows,
// for updates) or null (for inserts, when `kept` is null).
Result<std::shared_ptr<arrow::RecordBatch>> CompleteRows(const std::shared_ptr<arrow::RecordBatch>& partial,
                                                         const std::shared_ptr<arrow::RecordBatch>& kept,
                                                         const std::shared_ptr<arrow::Schema>& target) {
  std::vector<std::shared_ptr<arrow::Array>> columns;
  for (const auto& field : target->fields()) {
    if (auto column = partial->GetColumnByName(field->name())) {
      columns.push_back(std::move(column));
    } else if (kept) {
      auto one = kept->GetColumnByName(field->name());
      if (!one) return Status::Invalid("the target rows lack column '", field->name(), "'");
      columns.push_back(std::move(one));
    } else {
      LANCE_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(field->type(), partial->num_rows()));
      columns.push_back(std::move(nulls));
    }
  }
  return arrow::RecordBatch::Make(target, partial->num_rows(), std::move(columns));
}

// Addresses of the target rows where `predicate` holds.
Result<std::unordered_set<uint64_t>> AddressesWhere(const std::shared_ptr<const Dataset>& dataset,
                                                    const std::string& key, const std::string& predicate) {
  ScanOptions scan;
  scan.columns = {key};
  scan.filter = predicate;
  scan.with_row_address = true;
  LANCE_ASSIGN_OR_RAISE(auto table, ScanBuilder(dataset).Options(scan).ToTable());
  std::unordered_set<uint64_t> out;
  for (const auto& chunk : table->GetColumnByName("_rowaddr")->chunks()) {
    const auto& a = static_cast<const arrow::UInt64Array&>(*chunk);
    for (int64_t i = 0; i < a.length(); ++i) out.insert(a.Value(i));
  }
  return out;
}

struct Plan {
  std::vector<int64_t> update_source_rows;  // source row per updated target row
  std::vector<uint64_t> update_row_ids;  // stable row ids only
  std::vector<uint64_t> update_row_addrs;
  std::vector<int64_t> insert_source_rows;
  std::vector<uint64_t> delete_row_addrs;
};

Result<Plan> MakePlan(const std::shared_ptr<const Dataset>& dataset, const SourceRows& source,
                      const MergeInsertParams& params) {
  Plan plan;
  const size_t expected = static_cast<size_t>(source.num_rows());
  // One integer key: 64-bit keys; else the keys' bytes.
  const bool int_key = params.on.size() == 1 && !source.batches().empty() &&
                       IntKeyColumn::Supports(*source.batches().front()->GetColumnByName(params.on[0])->type());
  std::optional<IntKeyIndex> by_int(int_key ? std::optional<IntKeyIndex>(expected) : std::nullopt);
  std::optional<KeyIndex> by_key(int_key ? std::nullopt : std::optional<KeyIndex>(expected));
  std::string key;
  for (size_t b = 0; b < source.batches().size(); ++b) {
    const auto& batch = *source.batches()[b];
    const int64_t start = source.starts()[b];
    if (int_key) {
      const IntKeyColumn source_keys(*batch.GetColumnByName(params.on[0]));
      uint64_t k;
      for (int64_t i = 0; i < batch.num_rows(); ++i) {
        if (source_keys.Get(i, &k)) by_int->Insert(k, start + i);
      }
      continue;
    }
    const KeyEncoder source_keys(batch, params.on);
    for (int64_t i = 0; i < batch.num_rows(); ++i) {
      if (source_keys.Encode(i, &key)) by_key->Insert(key, start + i);
    }
  }
  // Stable row ids are carried over to rewritten rows; without them a row
  // id is its address, and nothing needs it.
  const bool stable = ops::UsesStableRowIds(*dataset);

  std::unordered_set<uint64_t> deletable;
  const bool delete_if = params.when_not_matched_by_source_delete &&
                         !params.when_not_matched_by_source_predicate.empty();
  if (delete_if) {
    LANCE_ASSIGN_OR_RAISE(deletable,
                          AddressesWhere(dataset, params.on.front(), params.when_not_matched_by_source_predicate));
  }

  std::vector<bool> matched(static_cast<size_t>(source.num_rows()), false);
  ScanOptions scan;
  scan.columns = params.on;
  scan.with_row_id = stable;
  scan.with_row_address = true;
  LANCE_ASSIGN_OR_RAISE(auto reader, ScanBuilder(dataset).Options(scan).ToReader());
  std::optional<uint64_t> target_rows;
  if (params.progress) {
    LANCE_ASSIGN_OR_RAISE(int64_t live, ScanBuilder(dataset).CountRows());
    target_rows = static_cast<uint64_t>(live);
  }
  util::ProgressStage matching(params.progress, "matching", "rows", target_rows);
  // Matches the rows of one target batch; `find(i)` gives row i's source
  // row (-1 if none) and whether several source rows have its key.
  auto match = [&](const arrow::RecordBatch& batch, auto&& find) -> Status {
    const auto& ids = static_cast<const arrow::UInt64Array&>(*batch.GetColumnByName(stable ? "_rowid" : "_rowaddr"));
    const auto& addrs = static_cast<const arrow::UInt64Array&>(*batch.GetColumnByName("_rowaddr"));
    for (int64_t i = 0; i < batch.num_rows(); ++i) {
      const auto [hit, duplicated] = find(i);
      if (hit >= 0) {
        if (duplicated) {
          return Status::Invalid(
              "Ambiguous merge inserts are prohibited: multiple source rows match the same target row on (",
              ShowKeys(batch, i, params.on),
              "). Please ensure each target row is matched by at most one source row.");
        }
        matched[hit] = true;
        if (params.when_matched_update_all) {
          plan.update_source_rows.push_back(hit);
          if (stable) plan.update_row_ids.push_back(ids.Value(i));
          plan.update_row_addrs.push_back(addrs.Value(i));
        }
      } else if (params.when_not_matched_by_source_delete &&
                 (!delete_if || deletable.count(addrs.Value(i)))) {
        plan.delete_row_addrs.push_back(addrs.Value(i));
      }
    }
    return Status::OK();
  };
  constexpr std::pair<int64_t, bool> kNoMatch{-1, false};
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    LANCE_RETURN_NOT_OK(reader->ReadNext(&batch));
    if (!batch) break;
    if (int_key) {
      const IntKeyColumn target_keys(*batch->GetColumnByName(params.on[0]));
      LANCE_RETURN_NOT_OK(match(*batch, [&](int64_t i) {
        uint64_t k;
        return target_keys.Get(i, &k) ? by_int->Find(k) : kNoMatch;
      }));
    } else {
      const KeyEncoder target_keys(*batch, params.on);
      LANCE_RETURN_NOT_OK(match(*batch, [&](int64_t i) {
        return target_keys.Encode(i, &key) ? by_key->Find(key) : kNoMatch;
      }));
    }
    matching.Add(static_cast<uint64_t>(batch->num_rows()));
  }
  if (params.when_not_matched_insert_all) {
    for (int64_t i = 0; i < source.num_rows(); ++i) {
      if (!matched[static_cast<size_t>(i)]) plan.insert_source_rows.push_back(i);
    }
  }
  return plan;
}

// Whether some index of `dataset` is on exactly the one key column.
bool KeyIsIndexed(const Dataset& dataset, const std::vector<std::string>& on) {
  if (on.size() != 1) return false;
  for (const auto& field : dataset.manifest().schema.fields) {
    if (field.name != on[0]) continue;
    return std::any_of(dataset.indices().begin(), dataset.indices().end(), [&](const IndexMetadata& idx) {
      return idx.fields == std::vector<int32_t>{field.id};
    });
  }
  return false;
}

}  // namespace

// One attempt on the dataset's version; `source` may be read again.
Result<MergeInsertResult> ops::MergeInsertOnce(const std::shared_ptr<const Dataset>& dataset,
                                               arrow::RecordBatchReader& source, const MergeInsertParams& params,
                                               ops::Committed* committed_out) {
  const std::string& uri = dataset->uri();
  const auto& store = DatasetAccess::Store(*dataset);
  LANCE_RETURN_NOT_OK(ops::CheckWritable(*dataset));
  LANCE_ASSIGN_OR_RAISE(auto schema, dataset->ArrowSchema());
  for (const auto& key : params.on) {
    if (schema->GetFieldIndex(key) < 0) {
      return Status::Invalid("merge-insert into ", uri, ": key column '", key, "' is not in the dataset (",
                             schema->ToString(), ")");
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto storage_version, dataset->DataStorageVersion());
  // Blob v2 columns are written from their values, not the descriptors a
  // scan gives.
  const bool blob_v2 = ops::HasBlobV2Columns(*dataset);
  if (blob_v2) schema = ops::BlobV2WritableSchema(*dataset, *schema);
  LANCE_ASSIGN_OR_RAISE(auto source_columns, SourceColumns(*source.schema(), *schema, params.on, uri));
  const bool partial = source_columns->num_fields() < schema->num_fields();
  LANCE_ASSIGN_OR_RAISE(auto rows, ReadSource(source, source_columns, dataset->manifest().schema, uri));
  if (partial && params.when_not_matched_insert_all && rows.num_rows() > 0) {
    Status st = CheckInsertable(dataset->manifest().schema, *source_columns);
    if (!st.ok()) return st.WithMessage("merge-insert into ", uri, ": ", st.message());
  }
  LANCE_ASSIGN_OR_RAISE(auto plan, MakePlan(dataset, rows, params));

  MergeInsertResult result;
  result.num_updated_rows = plan.update_source_rows.size();
  result.num_inserted_rows = plan.insert_source_rows.size();
  result.num_deleted_rows = plan.delete_row_addrs.size();

  // Updated rows (in target order) and then inserted rows (in source
  // order) go into the same new fragments, as pylance writes them; the
  // updated ones carry their old row ids, the inserted ones get new ids at
  // commit. pylance's merge-insert writes with the default limits.
  ops::FragmentWriterOptions writer_options;
  writer_options.storage_version = storage_version;
  ops::FragmentWriter writer(*store, dataset->manifest().schema, std::move(writer_options));
  // Columns a partial source lacks: matched rows keep the target's values.
  std::vector<std::string> kept_columns;
  for (const auto& field : schema->fields()) {
    if (source_columns->GetFieldIndex(field->name()) < 0) kept_columns.push_back(field->name());
  }
  util::ProgressStage writing(params.progress, "writing", "rows",
                              plan.update_source_rows.size() + plan.insert_source_rows.size());
  auto write = [&](const std::vector<int64_t>& source_rows, const std::vector<uint64_t>* target_row_addrs) -> Status {
    if (source_rows.empty()) return Status::OK();
    LANCE_ASSIGN_OR_RAISE(auto batches, rows.Gather(source_rows));
    if (!partial) {
      for (auto& batch : batches) {
        const auto n = static_cast<uint64_t>(batch->num_rows());
        LANCE_RETURN_NOT_OK(writer.Write(std::move(batch)));
        writing.Add(n);
      }
      return Status::OK();
    }
    // One batch, to line up with the target rows' kept values.
    std::shared_ptr<arrow::RecordBatch> batch = batches.front();
    if (batches.size() > 1) {
      LANCE_ASSIGN_OR_RAISE(auto table, arrow::Table::FromRecordBatches(batches));
      LANCE_ASSIGN_OR_RAISE(batch, table->CombineChunksToBatch());
    }
    std::shared_ptr<arrow::RecordBatch> kept;
    if (target_row_addrs) {
      LANCE_ASSIGN_OR_RAISE(auto taken, ops::TakeByAddress(dataset, *target_row_addrs, kept_columns));
      LANCE_ASSIGN_OR_RAISE(kept, taken->CombineChunksToBatch());
      if (blob_v2) {
        LANCE_ASSIGN_OR_RAISE(kept, ops::ReadBlobV2Values(*store, *dataset, kept, *target_row_addrs));
      }
    }
    LANCE_ASSIGN_OR_RAISE(batch, CompleteRows(batch, kept, schema));
    const auto n = static_cast<uint64_t>(batch->num_rows());
    LANCE_RETURN_NOT_OK(writer.Write(std::move(batch)));
    writing.Add(n);
    return Status::OK();
  };
  auto written = [&]() -> Result<std::vector<Fragment>> {
    LANCE_RETURN_NOT_OK(write(plan.update_source_rows, &plan.update_row_addrs));
    LANCE_RETURN_NOT_OK(write(plan.insert_source_rows, nullptr));
    return writer.Finish();
  }();
  if (!written.ok()) {
    writer.RemoveFiles();
    return written.status();
  }
  ops::RowRewrite rewrite;
  rewrite.new_fragments = std::move(*written);
  rewrite.rewritten_row_ids = std::move(plan.update_row_ids);
  // pylance's join reads the target a fragment at a time and the updated
  // rows' id sequences keep those batches (its cuts inside fragments of
  // more than kReferenceScanBatchRows live rows are not reproduced). With a
  // scalar index on the single key and no by-source delete it joins through
  // the index instead, and the matched rows come as one batch.
  const bool indexed_join = !params.when_not_matched_by_source_delete && KeyIsIndexed(*dataset, params.on);
  if (ops::UsesStableRowIds(*dataset) && !indexed_join) {
    rewrite.row_id_batch_ends = ops::ScanBatchEnds(plan.update_row_addrs, 0);
  }
  rewrite.rewritten_row_addrs = std::move(plan.update_row_addrs);
  rewrite.deleted_row_addrs = std::move(plan.delete_row_addrs);
  // Every field id, nested ones included, as pylance 14 records it.
  for (const auto& field : dataset->manifest().schema.FieldsPreOrder()) {
    rewrite.fields_for_preserving_frag_bitmap.push_back(static_cast<uint32_t>(field.id));
  }
  auto committed = ops::CommitRowRewrite(*store, *dataset, std::move(rewrite), params.retry,
                                          params.disable_transaction_file, committed_out);
  if (!committed.ok()) {
    writer.RemoveFiles();
    return committed.status();
  }
  result.version = *committed;
  return result;
}

}  // namespace lance
