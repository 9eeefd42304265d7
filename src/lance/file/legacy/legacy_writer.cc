#include "lance/file/legacy/legacy_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string_view>

#include <arrow/array.h>
#include <arrow/array/concatenate.h>
#include <arrow/builder.h>
#include <arrow/io/memory.h>
#include <arrow/type.h>
#include <arrow/util/bit_util.h>
#include <arrow/util/bitmap_ops.h>
#include <arrow/util/decimal.h>
#include <arrow/util/utf8.h>

#include "lance/file.pb.h"
#include "lance/file/legacy/legacy_decode.h"
#include "lance/file/schema_proto.h"
#include "lance/table.pb.h"

namespace lance::file::legacy {
namespace {

// Statistics keep at most this many leading bytes of a string or binary
// value (the reference's BINARY_PREFIX_LENGTH).
constexpr size_t kStatsPrefix = 64;

struct PageInfo {
  int64_t position = 0;
  int64_t length = 0;
};

// Pages by field id, then row group.
using PageTable = std::map<int32_t, std::map<int32_t, PageInfo>>;

// What the file holds per field; refused types name the field.
Status CheckWritableType(const Field& field, const arrow::DataType& type, const std::string& path,
                         bool top_level) {
  const std::string where = "field '" + path + "' (id " + std::to_string(field.id) + ")";
  if (type.id() == arrow::Type::NA || IsFixedStride(type)) return Status::OK();
  switch (type.id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      return Status::OK();
    case arrow::Type::DICTIONARY: {
      if (!top_level) {
        return Status::NotImplemented("writing legacy (0.1) data files: ", where,
                                      ": a dictionary inside a struct or list is not implemented in lance-cpp");
      }
      // Keys are plain pages; the values are stored once per file (string,
      // binary or integer values, as the reader reads them).
      const auto& dict = static_cast<const arrow::DictionaryType&>(type);
      const auto& values = *dict.value_type();
      const bool binary = values.id() == arrow::Type::STRING || values.id() == arrow::Type::BINARY ||
                          values.id() == arrow::Type::LARGE_STRING || values.id() == arrow::Type::LARGE_BINARY;
      if (binary || arrow::is_integer(values.id())) return Status::OK();
      return Status::NotImplemented("writing legacy (0.1) data files: ", where, " of type ", type.ToString(),
                                    " is not implemented in lance-cpp (dictionary values of that type)");
    }
    case arrow::Type::STRUCT:
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST: {
      if (type.num_fields() != static_cast<int>(field.children.size())) {
        return Status::Invalid("legacy file: ", where, " has ", field.children.size(), " child fields, its type ",
                               type.num_fields());
      }
      for (int i = 0; i < type.num_fields(); ++i) {
        LANCE_RETURN_NOT_OK(CheckWritableType(field.children[i], *type.field(i)->type(),
                                              path + "." + field.children[i].name, false));
      }
      return Status::OK();
    }
    default:
      return Status::NotImplemented("writing legacy (0.1) data files: ", where, " of type ", type.ToString(),
                                    " is not implemented in lance-cpp");
  }
}

// Appends to the output, keeping the position.
class Sink {
 public:
  explicit Sink(std::shared_ptr<arrow::io::OutputStream> out) : out_(std::move(out)) {}
  int64_t position() const { return position_; }
  Status Write(const void* data, int64_t n) {
    if (n == 0) return Status::OK();
    LANCE_RETURN_NOT_OK(out_->Write(data, n));
    position_ += n;
    return Status::OK();
  }
  template <typename T>
  Status WriteValue(T v) {
    return Write(&v, sizeof v);
  }
  // A u32 length, then the message; returns where the length is.
  Result<int64_t> WriteMessage(const std::string& bytes) {
    const int64_t at = position_;
    LANCE_RETURN_NOT_OK(WriteValue<uint32_t>(static_cast<uint32_t>(bytes.size())));
    LANCE_RETURN_NOT_OK(Write(bytes.data(), static_cast<int64_t>(bytes.size())));
    return at;
  }
  Status Close() { return out_->Close(); }
  // Positions count from `base` (a region written into a larger file).
  void Skip(int64_t base) { position_ += base; }

 private:
  std::shared_ptr<arrow::io::OutputStream> out_;
  int64_t position_ = 0;
};

// Bytes per value of a fixed-stride type that is not bool or a list.
int64_t ByteWidth(const arrow::DataType& type) {
  return static_cast<const arrow::FixedWidthType&>(type).bit_width() / 8;
}

// Fixed-stride values as they are in memory, `length` of them from `offset`.
Status WritePlainValues(Sink* sink, const arrow::ArrayData& data, int64_t offset, int64_t length) {
  const arrow::DataType& type = *data.type;
  if (type.id() == arrow::Type::FIXED_SIZE_LIST) {
    const int64_t size = static_cast<const arrow::FixedSizeListType&>(type).list_size();
    const auto& child = *data.child_data[0];
    return WritePlainValues(sink, child, child.offset + (data.offset + offset) * size, length * size);
  }
  if (type.id() == arrow::Type::BOOL) {
    // Bits past the last value are zero, as in the reference's copy.
    const int64_t bytes = arrow::bit_util::BytesForBits(length);
    std::vector<uint8_t> packed(static_cast<size_t>(bytes), 0);
    if (length > 0) {
      arrow::internal::CopyBitmap(data.buffers[1]->data(), data.offset + offset, length, packed.data(), 0);
    }
    return sink->Write(packed.data(), bytes);
  }
  const int64_t width = ByteWidth(type);
  return sink->Write(data.buffers[1]->data() + (data.offset + offset) * width, length * width);
}

// The offsets of a string, binary or list array, its own offset applied.
template <typename Offset>
const Offset* Offsets(const arrow::ArrayData& data) {
  return data.GetValues<Offset>(1);
}

// The value bytes, then n + 1 absolute file positions of where each value
// starts (and the last ends); returns where the positions are.
template <typename Offset>
Result<int64_t> WriteBinaryValues(Sink* sink, const arrow::ArrayData& data) {
  const int64_t n = data.length;
  if (n == 0) {
    const int64_t zero = sink->position();
    LANCE_RETURN_NOT_OK(sink->WriteValue<int64_t>(zero));
    return zero;
  }
  const Offset* off = Offsets<Offset>(data);
  const int64_t values_at = sink->position();
  if (data.buffers[2] != nullptr) {
    LANCE_RETURN_NOT_OK(sink->Write(data.buffers[2]->data() + off[0], static_cast<int64_t>(off[n] - off[0])));
  }
  std::vector<int64_t> positions(static_cast<size_t>(n + 1));
  for (int64_t i = 0; i <= n; ++i) positions[i] = values_at + static_cast<int64_t>(off[i] - off[0]);
  const int64_t at = sink->position();
  LANCE_RETURN_NOT_OK(sink->Write(positions.data(), static_cast<int64_t>(positions.size() * 8)));
  return at;
}

// Dictionary values by field id: one per file, as the dataset's schema has it.
using Dictionaries = std::map<int32_t, std::shared_ptr<arrow::Array>>;

class GroupWriter {
 public:
  GroupWriter(Sink* sink, PageTable* table, int32_t batch, Dictionaries* dictionaries = nullptr)
      : sink_(sink), table_(table), batch_(batch), dictionaries_(dictionaries) {}

  Status Write(const Field& field, const arrow::ArrayData& data) {
    const arrow::DataType& type = *data.type;
    const int64_t n = data.length;
    if (type.id() == arrow::Type::NA) return SetPage(field, sink_->position(), n);
    if (IsFixedStride(type)) {
      const int64_t at = sink_->position();
      LANCE_RETURN_NOT_OK(WritePlainValues(sink_, data, 0, n));
      return SetPage(field, at, n);
    }
    switch (type.id()) {
      case arrow::Type::STRING:
      case arrow::Type::BINARY:
        return WriteBinary<int32_t>(field, data);
      case arrow::Type::LARGE_STRING:
      case arrow::Type::LARGE_BINARY:
        return WriteBinary<int64_t>(field, data);
      case arrow::Type::STRUCT:
        for (size_t i = 0; i < field.children.size(); ++i) {
          // The child as the struct sees it (its own validity only).
          auto child = data.child_data[i]->Slice(data.offset, n);
          LANCE_RETURN_NOT_OK(Write(field.children[i], *child));
        }
        return Status::OK();
      case arrow::Type::LIST:
        return WriteList<int32_t>(field, data);
      case arrow::Type::LARGE_LIST:
        return WriteList<int64_t>(field, data);
      case arrow::Type::DICTIONARY:
        return WriteDictionaryKeys(field, data);
      default:
        return Status::NotImplemented("writing legacy (0.1) data files: field '", field.name, "' (id ", field.id,
                                      ") of type ", type.ToString(), " is not implemented in lance-cpp");
    }
  }

 private:
  Status SetPage(const Field& field, int64_t position, int64_t length) {
    (*table_)[field.id][batch_] = PageInfo{position, length};
    return Status::OK();
  }

  // The page is the positions after the values.
  template <typename Offset>
  Status WriteBinary(const Field& field, const arrow::ArrayData& data) {
    LANCE_ASSIGN_OR_RAISE(int64_t at, WriteBinaryValues<Offset>(sink_, data));
    return SetPage(field, at, data.length);
  }

  // The keys as a plain page. Every row group of the file must have the one
  // dictionary (the dataset's, or else the first group's): the keys of a
  // legacy file index the values stored once per file, and pylance 14 reads
  // them through the dataset manifest's dictionary.
  Status WriteDictionaryKeys(const Field& field, const arrow::ArrayData& data) {
    if (dictionaries_ == nullptr) {
      return Status::NotImplemented("legacy statistics of a dictionary field '", field.name, "'");
    }
    auto values = arrow::MakeArray(data.dictionary);
    auto [it, inserted] = dictionaries_->emplace(field.id, values);
    if (!inserted && !it->second->Equals(*values)) {
      return Status::NotImplemented("field '", field.name, "' (id ", field.id,
                                    "): a dictionary other than the dataset's (legacy files store one per column, "
                                    "pylance 14 refuses it too: dictionary did not match expected dictionary)");
    }
    auto keys = data.Copy();
    keys->type = static_cast<const arrow::DictionaryType&>(*data.type).index_type();
    keys->dictionary = nullptr;
    const int64_t at = sink_->position();
    LANCE_RETURN_NOT_OK(WritePlainValues(sink_, *keys, 0, data.length));
    return SetPage(field, at, data.length);
  }

  // Offsets rebased to 0 (n + 1 of them, in the list's offset width), then
  // the items they cover, in the item field's pages.
  template <typename Offset>
  Status WriteList(const Field& field, const arrow::ArrayData& data) {
    const int64_t n = data.length;
    if (n == 0) {
      const int64_t at = sink_->position();
      LANCE_RETURN_NOT_OK(sink_->WriteValue<Offset>(0));
      return SetPage(field, at, 1);
    }
    const Offset* off = Offsets<Offset>(data);
    std::vector<Offset> positions(static_cast<size_t>(n + 1));
    for (int64_t i = 0; i <= n; ++i) positions[i] = off[i] - off[0];
    const int64_t at = sink_->position();
    LANCE_RETURN_NOT_OK(
        sink_->Write(positions.data(), static_cast<int64_t>(positions.size() * sizeof(Offset))));
    LANCE_RETURN_NOT_OK(SetPage(field, at, n + 1));
    auto items = data.child_data[0]->Slice(static_cast<int64_t>(off[0]), static_cast<int64_t>(off[n] - off[0]));
    return Write(field.children[0], *items);
  }

  Sink* sink_;
  PageTable* table_;
  int32_t batch_;
  Dictionaries* dictionaries_;
};

// i64 (position, length) for every field id from `first_id` to the largest
// with a page, times every row group up to the largest with one; zeros where
// there is none. Returns where it starts.
Result<int64_t> WritePageTable(Sink* sink, const PageTable& table, int32_t first_id) {
  const int64_t at = sink->position();
  if (table.empty()) return at;
  const int32_t last_id = table.rbegin()->first;
  int32_t batches = 0;
  for (const auto& [id, pages] : table) {
    if (!pages.empty()) batches = std::max(batches, pages.rbegin()->first + 1);
  }
  for (int32_t id = first_id; id <= last_id; ++id) {
    auto it = table.find(id);
    for (int32_t b = 0; b < batches; ++b) {
      PageInfo page;
      if (it != table.end()) {
        auto p = it->second.find(b);
        if (p != it->second.end()) page = p->second;
      }
      LANCE_RETURN_NOT_OK(sink->WriteValue<int64_t>(page.position));
      LANCE_RETURN_NOT_OK(sink->WriteValue<int64_t>(page.length));
    }
  }
  return at;
}

// ---- Statistics: per row group, null count, min and max of each field of a
// type the reference collects them for (structs' children included, list
// items not). ----

bool CollectsStatistics(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::BOOL:
    case arrow::Type::INT8:
    case arrow::Type::UINT8:
    case arrow::Type::INT16:
    case arrow::Type::UINT16:
    case arrow::Type::INT32:
    case arrow::Type::UINT32:
    case arrow::Type::INT64:
    case arrow::Type::UINT64:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::DATE32:
    case arrow::Type::DATE64:
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::DECIMAL128:
      return true;
    default:
      return false;
  }
}

struct StatsColumn {
  const Field* field = nullptr;
  std::shared_ptr<arrow::DataType> type;
  arrow::Int64Builder null_count;
  std::unique_ptr<arrow::ArrayBuilder> min;
  std::unique_ptr<arrow::ArrayBuilder> max;
};

template <typename ArrowType>
Status AppendNumericStats(const arrow::ArrayData& data, StatsColumn* col) {
  using T = typename ArrowType::c_type;
  const T* v = data.GetValues<T>(1);
  const int64_t nulls = data.GetNullCount();
  bool any = false;
  T lo{}, hi{};
  if constexpr (std::is_floating_point_v<T>) {
    lo = std::numeric_limits<T>::infinity();
    hi = -std::numeric_limits<T>::infinity();
  } else {
    lo = std::numeric_limits<T>::max();
    hi = std::numeric_limits<T>::lowest();
  }
  if (nulls < data.length) {
    any = true;
    for (int64_t i = 0; i < data.length; ++i) {
      if (!data.IsValid(i)) continue;
      // NaN compares false both ways: never a bound.
      if (v[i] > hi) hi = v[i];
      if (v[i] < lo) lo = v[i];
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (lo == std::numeric_limits<T>::infinity() && hi == -std::numeric_limits<T>::infinity()) {
      lo = -std::numeric_limits<T>::infinity();
      hi = std::numeric_limits<T>::infinity();
    }
    if (lo == 0) lo = -T(0);
    if (hi == 0) hi = T(0);
  } else if (!any) {
    lo = std::numeric_limits<T>::lowest();
    hi = std::numeric_limits<T>::max();
  }
  using Builder = typename arrow::TypeTraits<ArrowType>::BuilderType;
  LANCE_RETURN_NOT_OK(col->null_count.Append(nulls));
  LANCE_RETURN_NOT_OK(static_cast<Builder*>(col->min.get())->Append(lo));
  return static_cast<Builder*>(col->max.get())->Append(hi);
}

Status AppendDecimalStats(const arrow::ArrayData& data, StatsColumn* col) {
  const arrow::Decimal128Array array(data.Copy());
  const int64_t nulls = data.GetNullCount();
  // The bounds of i128, as the reference starts from (and keeps when every
  // value is null).
  const arrow::Decimal128 kMax(std::numeric_limits<int64_t>::max(), std::numeric_limits<uint64_t>::max());
  const arrow::Decimal128 kMin(std::numeric_limits<int64_t>::min(), 0);
  arrow::Decimal128 lo = kMax, hi = kMin;
  bool any = false;
  if (nulls < data.length) {
    any = true;
    for (int64_t i = 0; i < data.length; ++i) {
      if (!array.IsValid(i)) continue;
      const arrow::Decimal128 v(array.GetValue(i));
      if (v > hi) hi = v;
      if (v < lo) lo = v;
    }
  }
  if (!any) {
    lo = kMin;
    hi = kMax;
  }
  LANCE_RETURN_NOT_OK(col->null_count.Append(nulls));
  LANCE_RETURN_NOT_OK(static_cast<arrow::Decimal128Builder*>(col->min.get())->Append(lo));
  return static_cast<arrow::Decimal128Builder*>(col->max.get())->Append(hi);
}

Status AppendBoolStats(const arrow::ArrayData& data, StatsColumn* col) {
  const arrow::BooleanArray array(data.Copy());
  bool has_true = false, has_false = false;
  for (int64_t i = 0; i < data.length && !(has_true && has_false); ++i) {
    if (!array.IsValid(i)) continue;
    (array.Value(i) ? has_true : has_false) = true;
  }
  LANCE_RETURN_NOT_OK(col->null_count.Append(data.GetNullCount()));
  LANCE_RETURN_NOT_OK(static_cast<arrow::BooleanBuilder*>(col->min.get())->Append(has_true && !has_false));
  return static_cast<arrow::BooleanBuilder*>(col->max.get())->Append(has_true || !has_false);
}

bool ValidUtf8(const std::string& s) {
  arrow::util::InitializeUTF8();  // the validator's tables; idempotent
  return arrow::util::ValidateUTF8(reinterpret_cast<const uint8_t*>(s.data()), static_cast<int64_t>(s.size()));
}

// The longest prefix of at most `length` bytes ending on a character.
std::string_view TruncateUtf8(std::string_view s, size_t length) {
  size_t end = length;
  while (end > 0 && (static_cast<uint8_t>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end);
}

// The smallest change of the last bytes that still is valid UTF-8 and sorts
// after `s`, as the reference increments a truncated bound.
std::optional<std::string> IncrementUtf8(std::string s) {
  for (size_t i = s.size(); i-- > 0;) {
    const char original = s[i];
    uint8_t byte = static_cast<uint8_t>(s[i]);
    while (byte != 0xFF) {
      ++byte;
      s[i] = static_cast<char>(byte);
      if (ValidUtf8(s)) return s;
    }
    s[i] = original;
  }
  return std::nullopt;
}

std::optional<std::string> IncrementBytes(std::string s) {
  for (size_t i = s.size(); i-- > 0;) {
    const uint8_t byte = static_cast<uint8_t>(s[i]);
    s[i] = static_cast<char>(byte + 1);
    if (byte != 0xFF) return s;
  }
  return std::nullopt;
}

template <typename Offset>
Status AppendBinaryStats(const arrow::ArrayData& data, bool utf8, StatsColumn* col) {
  const Offset* off = data.GetValues<Offset>(1);
  const char* bytes = data.buffers[2] ? reinterpret_cast<const char*>(data.buffers[2]->data()) : "";
  std::optional<std::string_view> lo, hi;
  bool truncated = false;
  const int64_t nulls = data.GetNullCount();
  if (nulls < data.length) {
    for (int64_t i = 0; i < data.length; ++i) {
      if (!data.IsValid(i)) continue;
      std::string_view v(bytes + off[i], static_cast<size_t>(off[i + 1] - off[i]));
      if (v.size() > kStatsPrefix) {
        v = utf8 ? TruncateUtf8(v, kStatsPrefix) : v.substr(0, kStatsPrefix);
        truncated = true;
      }
      if (!lo || v < *lo) lo = v;
      if (!hi || v > *hi) hi = v;
    }
  }
  std::optional<std::string> max;
  if (hi) {
    max = std::string(*hi);
    if (truncated) max = utf8 ? IncrementUtf8(*max) : IncrementBytes(*max);
  }
  using Builder = std::conditional_t<sizeof(Offset) == 4, arrow::BinaryBuilder, arrow::LargeBinaryBuilder>;
  auto* min_builder = static_cast<Builder*>(col->min.get());
  auto* max_builder = static_cast<Builder*>(col->max.get());
  LANCE_RETURN_NOT_OK(col->null_count.Append(nulls));
  LANCE_RETURN_NOT_OK(lo ? min_builder->Append(*lo) : min_builder->AppendNull());
  return max ? max_builder->Append(*max) : max_builder->AppendNull();
}

Status AppendStats(const arrow::ArrayData& data, StatsColumn* col) {
  switch (data.type->id()) {
    case arrow::Type::BOOL: return AppendBoolStats(data, col);
    case arrow::Type::INT8: return AppendNumericStats<arrow::Int8Type>(data, col);
    case arrow::Type::UINT8: return AppendNumericStats<arrow::UInt8Type>(data, col);
    case arrow::Type::INT16: return AppendNumericStats<arrow::Int16Type>(data, col);
    case arrow::Type::UINT16: return AppendNumericStats<arrow::UInt16Type>(data, col);
    case arrow::Type::INT32: return AppendNumericStats<arrow::Int32Type>(data, col);
    case arrow::Type::UINT32: return AppendNumericStats<arrow::UInt32Type>(data, col);
    case arrow::Type::INT64: return AppendNumericStats<arrow::Int64Type>(data, col);
    case arrow::Type::UINT64: return AppendNumericStats<arrow::UInt64Type>(data, col);
    case arrow::Type::FLOAT: return AppendNumericStats<arrow::FloatType>(data, col);
    case arrow::Type::DOUBLE: return AppendNumericStats<arrow::DoubleType>(data, col);
    case arrow::Type::DATE32: return AppendNumericStats<arrow::Date32Type>(data, col);
    case arrow::Type::DATE64: return AppendNumericStats<arrow::Date64Type>(data, col);
    case arrow::Type::DECIMAL128: return AppendDecimalStats(data, col);
    case arrow::Type::STRING: return AppendBinaryStats<int32_t>(data, true, col);
    case arrow::Type::BINARY: return AppendBinaryStats<int32_t>(data, false, col);
    case arrow::Type::LARGE_STRING: return AppendBinaryStats<int64_t>(data, true, col);
    case arrow::Type::LARGE_BINARY: return AppendBinaryStats<int64_t>(data, false, col);
    default:
      return Status::Invalid("legacy statistics: unexpected type ", data.type->ToString());
  }
}

// Statistics builders of binary-like types are plain binary builders of the
// right width (the values are appended as bytes), finished with the real type.
Result<std::unique_ptr<arrow::ArrayBuilder>> MakeStatsBuilder(const std::shared_ptr<arrow::DataType>& type) {
  std::unique_ptr<arrow::ArrayBuilder> out;
  switch (type->id()) {
    case arrow::Type::STRING: return std::unique_ptr<arrow::ArrayBuilder>(new arrow::BinaryBuilder());
    case arrow::Type::LARGE_STRING:
      return std::unique_ptr<arrow::ArrayBuilder>(new arrow::LargeBinaryBuilder());
    default:
      LANCE_RETURN_NOT_OK(arrow::MakeBuilder(arrow::default_memory_pool(), type, &out));
      return out;
  }
}

Result<std::shared_ptr<arrow::Array>> FinishStats(arrow::ArrayBuilder* builder,
                                                  const std::shared_ptr<arrow::DataType>& type) {
  std::shared_ptr<arrow::Array> out;
  LANCE_RETURN_NOT_OK(builder->Finish(&out));
  if (out->type()->Equals(*type)) return out;
  auto data = out->data()->Copy();
  data->type = type;
  return arrow::MakeArray(data);
}

void CollectStatsFields(const Field& field, const arrow::DataType& type, std::map<int32_t, StatsColumn>* out,
                        const std::shared_ptr<arrow::DataType>& type_ptr) {
  if (type.id() == arrow::Type::STRUCT) {
    for (size_t i = 0; i < field.children.size(); ++i) {
      CollectStatsFields(field.children[i], *type.field(static_cast<int>(i))->type(), out,
                         type.field(static_cast<int>(i))->type());
    }
    return;
  }
  if (!CollectsStatistics(type)) return;
  StatsColumn& col = (*out)[field.id];
  col.field = &field;
  col.type = type_ptr;
}

Result<int64_t> WriteLegacyDictionary(Sink* sink, const arrow::Array& values) {
  const auto& data = *values.data();
  switch (values.type_id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
      return WriteBinaryValues<int32_t>(sink, data);
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
      return WriteBinaryValues<int64_t>(sink, data);
    default:
      if (!arrow::is_integer(values.type_id())) {
        return Status::NotImplemented("legacy dictionary values of type ", values.type()->ToString(),
                                      " are not implemented in lance-cpp");
      }
      const int64_t at = sink->position();
      LANCE_RETURN_NOT_OK(WritePlainValues(sink, data, 0, data.length));
      return at;
  }
}

}  // namespace

Result<int64_t> AppendLegacyDictionary(const arrow::Array& values, int64_t base, std::string* out) {
  auto stream = arrow::io::BufferOutputStream::Create();
  if (!stream.ok()) return Status::IOError("legacy dictionary: ", stream.status().message());
  Sink sink(*stream);
  sink.Skip(base);
  LANCE_ASSIGN_OR_RAISE(int64_t at, WriteLegacyDictionary(&sink, values));
  auto buffer = (*stream)->Finish();
  if (!buffer.ok()) return Status::IOError("legacy dictionary: ", buffer.status().message());
  out->append(reinterpret_cast<const char*>((*buffer)->data()), static_cast<size_t>((*buffer)->size()));
  return at;
}

Status CheckLegacyWritable(const Schema& schema) {
  for (const auto& f : schema.fields) {
    auto type = ArrowTypeFromField(f);
    if (!type.ok()) return type.status();
    LANCE_RETURN_NOT_OK(CheckWritableType(f, **type, f.name, true));
  }
  return Status::OK();
}

class LegacyFileWriter::Impl {
 public:
  Impl(std::shared_ptr<arrow::io::OutputStream> out, std::string name, Schema schema, uint64_t group)
      : sink_(std::move(out)), name_(std::move(name)), schema_(std::move(schema)),
        group_rows_(std::max<uint64_t>(group, 1)) {}

  Status Init() {
    LANCE_RETURN_NOT_OK(CheckLegacyWritable(schema_));
    LANCE_ASSIGN_OR_RAISE(arrow_schema_, schema_.ToArrow());
    for (const auto& f : schema_.FieldsPreOrder()) {
      if (f.dictionary_values) dictionaries_[f.id] = f.dictionary_values;
    }
    for (size_t i = 0; i < schema_.fields.size(); ++i) {
      CollectStatsFields(schema_.fields[i], *arrow_schema_->field(static_cast<int>(i))->type(), &stats_,
                         arrow_schema_->field(static_cast<int>(i))->type());
    }
    for (auto& [id, col] : stats_) {
      LANCE_ASSIGN_OR_RAISE(col.min, MakeStatsBuilder(col.type));
      LANCE_ASSIGN_OR_RAISE(col.max, MakeStatsBuilder(col.type));
    }
    return Status::OK();
  }

  Status Write(const std::shared_ptr<arrow::RecordBatch>& batch) {
    if (batch->num_columns() != static_cast<int>(schema_.fields.size())) {
      return Status::Invalid("legacy file ", name_, ": batch has ", batch->num_columns(), " columns, schema ",
                             schema_.fields.size());
    }
    if (batch->num_rows() == 0) return Status::OK();
    pending_.push_back(batch);
    pending_rows_ += static_cast<uint64_t>(batch->num_rows());
    while (pending_rows_ >= group_rows_) LANCE_RETURN_NOT_OK(FlushGroup(group_rows_));
    return Status::OK();
  }

  Result<uint64_t> Finish() {
    if (pending_rows_ > 0) LANCE_RETURN_NOT_OK(FlushGroup(pending_rows_));
    pb::file::Metadata metadata;
    // Step 1: the page table of the data, from the smallest field id.
    int32_t first_id = std::numeric_limits<int32_t>::max();
    for (const auto& f : schema_.FieldsPreOrder()) first_id = std::min(first_id, f.id);
    LANCE_ASSIGN_OR_RAISE(int64_t table_at, WritePageTable(&sink_, pages_, first_id));
    metadata.set_page_table_position(static_cast<uint64_t>(table_at));
    // Step 2: statistics.
    if (!stats_.empty() && groups_ > 0) LANCE_RETURN_NOT_OK(WriteStatistics(metadata.mutable_statistics()));
    // Step 2b: dictionary values, located by the fields of the schema below.
    LANCE_RETURN_NOT_OK(WriteDictionaries());
    // Step 3: the schema, as a manifest holding nothing else.
    pb::table::Manifest manifest;
    SchemaToProtoFields(schema_, manifest.mutable_fields());
    for (const auto& [k, v] : schema_.metadata) (*manifest.mutable_schema_metadata())[k] = v;
    manifest.set_version(1);  // a new manifest's, as the reference's
    // The layout is pylance 14's, and readers take only the schema from
    // here: the writer version is the one whose files these are byte for byte.
    manifest.mutable_writer_version()->set_library("lance");
    manifest.mutable_writer_version()->set_version("14.0.2");
    manifest.mutable_data_format()->set_file_format("lance");
    manifest.mutable_data_format()->set_version("0.1");
    LANCE_ASSIGN_OR_RAISE(int64_t manifest_at, sink_.WriteMessage(manifest.SerializeAsString()));
    metadata.set_manifest_position(static_cast<uint64_t>(manifest_at));
    // Step 4: metadata and footer.
    for (int32_t offset : batch_offsets_) metadata.add_batch_offsets(offset);
    LANCE_ASSIGN_OR_RAISE(int64_t metadata_at, sink_.WriteMessage(metadata.SerializeAsString()));
    LANCE_RETURN_NOT_OK(sink_.WriteValue<int64_t>(metadata_at));
    LANCE_RETURN_NOT_OK(sink_.WriteValue<uint16_t>(static_cast<uint16_t>(kVersionPair.first)));
    LANCE_RETURN_NOT_OK(sink_.WriteValue<uint16_t>(static_cast<uint16_t>(kVersionPair.second)));
    LANCE_RETURN_NOT_OK(sink_.Write("LANC", 4));
    LANCE_RETURN_NOT_OK(sink_.Close());
    return static_cast<uint64_t>(batch_offsets_.back());
  }

 private:
  // Writes the first `rows` pending rows as one row group.
  Status FlushGroup(uint64_t rows) {
    std::vector<std::shared_ptr<arrow::RecordBatch>> parts;
    uint64_t taken = 0;
    while (taken < rows) {
      auto& head = pending_.front();
      const uint64_t want = rows - taken;
      if (static_cast<uint64_t>(head->num_rows()) <= want) {
        taken += static_cast<uint64_t>(head->num_rows());
        parts.push_back(head);
        pending_.erase(pending_.begin());
      } else {
        parts.push_back(head->Slice(0, static_cast<int64_t>(want)));
        head = head->Slice(static_cast<int64_t>(want));
        taken = rows;
      }
    }
    pending_rows_ -= rows;
    if (batch_offsets_.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max()) ||
        batch_offsets_.back() + rows > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
      return Status::Invalid("legacy file ", name_, ": more than 2^31 rows");
    }
    GroupWriter writer(&sink_, &pages_, groups_, &dictionaries_);
    for (size_t c = 0; c < schema_.fields.size(); ++c) {
      std::shared_ptr<arrow::Array> column;
      if (parts.size() == 1) {
        column = parts[0]->column(static_cast<int>(c));
      } else {
        arrow::ArrayVector pieces;
        for (const auto& p : parts) pieces.push_back(p->column(static_cast<int>(c)));
        LANCE_ASSIGN_OR_RAISE(column, arrow::Concatenate(pieces));
      }
      const Field& field = schema_.fields[c];
      LANCE_RETURN_NOT_OK(AppendGroupStats(field, *column->data()));
      auto st = writer.Write(field, *column->data());
      if (!st.ok()) return st.WithMessage("legacy file ", name_, ": ", st.message());
    }
    ++groups_;
    batch_offsets_.push_back(batch_offsets_.back() + static_cast<int32_t>(rows));
    return Status::OK();
  }

  Status WriteDictionaries() {
    for (auto& field : schema_.fields) LANCE_RETURN_NOT_OK(WriteDictionaries(&field));
    return Status::OK();
  }
  Status WriteDictionaries(Field* field) {
    if (auto it = dictionaries_.find(field->id); it != dictionaries_.end()) {
      LANCE_ASSIGN_OR_RAISE(int64_t at, WriteLegacyDictionary(&sink_, *it->second));
      field->dictionary_offset = at;
      field->dictionary_length = it->second->length();
      field->dictionary_values = it->second;
    }
    for (auto& child : field->children) LANCE_RETURN_NOT_OK(WriteDictionaries(&child));
    return Status::OK();
  }

 public:
  const Dictionaries& dictionaries() const { return dictionaries_; }

 private:
  Status AppendGroupStats(const Field& field, const arrow::ArrayData& data) {
    if (data.type->id() == arrow::Type::STRUCT) {
      for (size_t i = 0; i < field.children.size(); ++i) {
        auto child = data.child_data[i]->Slice(data.offset, data.length);
        LANCE_RETURN_NOT_OK(AppendGroupStats(field.children[i], *child));
      }
      return Status::OK();
    }
    auto it = stats_.find(field.id);
    if (it == stats_.end()) return Status::OK();
    return AppendStats(data, &it->second);
  }

  // One row per row group: a non-null struct "<field id>" of null_count,
  // min_value and max_value per field, in field id order, written as a
  // one-group legacy file of its own (own ids from 0) inside this one.
  Status WriteStatistics(pb::file::Metadata::StatisticsMetadata* out) {
    arrow::FieldVector fields;
    arrow::ArrayVector columns;
    for (auto& [id, col] : stats_) {
      std::shared_ptr<arrow::Array> null_count, min, max;
      LANCE_RETURN_NOT_OK(col.null_count.Finish(&null_count));
      LANCE_ASSIGN_OR_RAISE(min, FinishStats(col.min.get(), col.type));
      LANCE_ASSIGN_OR_RAISE(max, FinishStats(col.max.get(), col.type));
      // The bounds are nullable whatever the field is (pylance 14 writes so).
      arrow::FieldVector children = {arrow::field("null_count", arrow::int64(), false),
                                     arrow::field("min_value", col.type, true),
                                     arrow::field("max_value", col.type, true)};
      LANCE_ASSIGN_OR_RAISE(auto st, arrow::StructArray::Make({null_count, min, max}, children));
      fields.push_back(arrow::field(std::to_string(id), st->type(), false));
      columns.push_back(st);
    }
    LANCE_ASSIGN_OR_RAISE(Schema stats_schema, Schema::FromArrow(arrow::Schema(fields), 0));
    PageTable table;
    GroupWriter writer(&sink_, &table, 0);
    for (size_t i = 0; i < columns.size(); ++i) {
      LANCE_RETURN_NOT_OK(writer.Write(stats_schema.fields[i], *columns[i]->data()));
    }
    LANCE_ASSIGN_OR_RAISE(int64_t table_at, WritePageTable(&sink_, table, 0));
    SchemaToProtoFields(stats_schema, out->mutable_schema());
    for (const auto& f : stats_schema.FieldsPreOrder()) out->add_fields(f.id);
    out->set_page_table_position(static_cast<uint64_t>(table_at));
    return Status::OK();
  }

  Sink sink_;
  std::string name_;
  Schema schema_;
  std::shared_ptr<arrow::Schema> arrow_schema_;
  uint64_t group_rows_;
  std::vector<std::shared_ptr<arrow::RecordBatch>> pending_;
  uint64_t pending_rows_ = 0;
  int32_t groups_ = 0;
  std::vector<int32_t> batch_offsets_{0};
  PageTable pages_;
  std::map<int32_t, StatsColumn> stats_;
  Dictionaries dictionaries_;
};

LegacyFileWriter::LegacyFileWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LegacyFileWriter::~LegacyFileWriter() = default;

Result<std::unique_ptr<LegacyFileWriter>> LegacyFileWriter::Open(std::shared_ptr<arrow::io::OutputStream> out,
                                                                 std::string name, const Schema& schema,
                                                                 uint64_t max_rows_per_group) {
  if (out == nullptr) return Status::Invalid("legacy file ", name, ": no output");
  auto impl = std::make_unique<Impl>(std::move(out), std::move(name), schema, max_rows_per_group);
  LANCE_RETURN_NOT_OK(impl->Init());
  return std::unique_ptr<LegacyFileWriter>(new LegacyFileWriter(std::move(impl)));
}

Status LegacyFileWriter::Write(const std::shared_ptr<arrow::RecordBatch>& batch) { return impl_->Write(batch); }

Result<uint64_t> LegacyFileWriter::Finish() { return impl_->Finish(); }

const std::map<int32_t, std::shared_ptr<arrow::Array>>& LegacyFileWriter::dictionaries() const {
  return impl_->dictionaries();
}

}  // namespace lance::file::legacy
