// Lance logical type strings <-> Arrow types, and the Lance schema tree.
#include "lance/schema.h"

#include "lance/file/blob_v2.h"

#include <charconv>
#include <functional>
#include <string_view>

#include <arrow/extension_type.h>
#include <arrow/type.h>
#include <arrow/type_traits.h>
#include <arrow/util/key_value_metadata.h>

namespace lance {
namespace {

constexpr std::string_view kArrowExtensionNameKey = "ARROW:extension:name";
constexpr std::string_view kBfloat16ExtensionName = "lance.bfloat16";

const char* TimeUnitString(arrow::TimeUnit::type unit) {
  switch (unit) {
    case arrow::TimeUnit::SECOND: return "s";
    case arrow::TimeUnit::MILLI: return "ms";
    case arrow::TimeUnit::MICRO: return "us";
    case arrow::TimeUnit::NANO: return "ns";
  }
  return "?";
}

Result<arrow::TimeUnit::type> ParseTimeUnit(std::string_view s, std::string_view whole) {
  if (s == "s") return arrow::TimeUnit::SECOND;
  if (s == "ms") return arrow::TimeUnit::MILLI;
  if (s == "us") return arrow::TimeUnit::MICRO;
  if (s == "ns") return arrow::TimeUnit::NANO;
  return Status::Invalid("unsupported time unit '", s, "' in logical type '", whole, "'");
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

template <typename Int>
Result<Int> ParseInt(std::string_view s, std::string_view whole) {
  Int value{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return Status::Invalid("bad number '", s, "' in logical type '", whole, "'");
  }
  return value;
}

bool IsBfloat16Field(const arrow::Field& field) {
  if (field.type()->id() == arrow::Type::EXTENSION) {
    const auto& ext = static_cast<const arrow::ExtensionType&>(*field.type());
    if (ext.extension_name() == kBfloat16ExtensionName) return true;
  }
  if (field.metadata()) {
    auto name = field.metadata()->Get(std::string(kArrowExtensionNameKey));
    if (name.ok() && *name == kBfloat16ExtensionName) return true;
  }
  return false;
}

// The types a logical type string names on its own (no children needed).
Result<std::shared_ptr<arrow::DataType>> ParseLeafLogicalType(std::string_view lt) {
  static const std::map<std::string_view, std::function<std::shared_ptr<arrow::DataType>()>>
      kSimple = {
          {"null", arrow::null},          {"bool", arrow::boolean},
          {"int8", arrow::int8},          {"uint8", arrow::uint8},
          {"int16", arrow::int16},        {"uint16", arrow::uint16},
          {"int32", arrow::int32},        {"uint32", arrow::uint32},
          {"int64", arrow::int64},        {"uint64", arrow::uint64},
          {"halffloat", arrow::float16},  {"float", arrow::float32},
          {"double", arrow::float64},     {"string", arrow::utf8},
          {"binary", arrow::binary},      {"large_string", arrow::large_utf8},
          {"large_binary", arrow::large_binary},
          {"json", arrow::large_binary},  {"blob", arrow::large_binary},
          {"date32:day", arrow::date32},  {"date64:ms", arrow::date64},
      };
  if (auto it = kSimple.find(lt); it != kSimple.end()) return it->second();

  auto parts = Split(lt, ':');
  const std::string_view head = parts[0];
  if ((head == "time32" || head == "time64" || head == "duration") && parts.size() == 2) {
    LANCE_ASSIGN_OR_RAISE(auto unit, ParseTimeUnit(parts[1], lt));
    if (head == "duration") return arrow::duration(unit);
    if (head == "time32" && (unit == arrow::TimeUnit::SECOND || unit == arrow::TimeUnit::MILLI))
      return arrow::time32(unit);
    if (head == "time64" && (unit == arrow::TimeUnit::MICRO || unit == arrow::TimeUnit::NANO))
      return arrow::time64(unit);
    return Status::Invalid("unsupported logical type '", lt, "'");
  }
  if (head == "timestamp" && parts.size() >= 3) {
    LANCE_ASSIGN_OR_RAISE(auto unit, ParseTimeUnit(parts[1], lt));
    // A time zone may itself contain ':' (e.g. "+05:30"): rejoin the rest.
    std::string_view tz = lt.substr(parts[0].size() + parts[1].size() + 2);
    if (tz == "-") return arrow::timestamp(unit);
    return arrow::timestamp(unit, std::string(tz));
  }
  if (head == "fixed_size_binary" && parts.size() == 2) {
    LANCE_ASSIGN_OR_RAISE(auto width, ParseInt<int32_t>(parts[1], lt));
    if (width < 0) return Status::Invalid("negative width in logical type '", lt, "'");
    return arrow::fixed_size_binary(width);
  }
  if (head == "decimal" && parts.size() == 4) {
    LANCE_ASSIGN_OR_RAISE(auto bits, ParseInt<int32_t>(parts[1], lt));
    LANCE_ASSIGN_OR_RAISE(auto precision, ParseInt<int32_t>(parts[2], lt));
    LANCE_ASSIGN_OR_RAISE(auto scale, ParseInt<int32_t>(parts[3], lt));
    if (bits == 128) return arrow::Decimal128Type::Make(precision, scale);
    if (bits == 256) return arrow::Decimal256Type::Make(precision, scale);
    return Status::Invalid("only 128- and 256-bit decimals exist, got logical type '", lt, "'");
  }
  if (head == "dict" && parts.size() == 4) {
    LANCE_ASSIGN_OR_RAISE(auto value_type, ParseLeafLogicalType(parts[1]));
    LANCE_ASSIGN_OR_RAISE(auto index_type, ParseLeafLogicalType(parts[2]));
    if (!arrow::is_integer(*index_type)) {
      return Status::Invalid("dictionary index type must be an integer in '", lt, "'");
    }
    return arrow::dictionary(index_type, value_type, parts[3] == "true");
  }
  if (head == "fixed_size_list" && parts.size() >= 3) {
    LANCE_ASSIGN_OR_RAISE(auto size, ParseInt<int32_t>(parts.back(), lt));
    if (size < 0) return Status::Invalid("negative size in logical type '", lt, "'");
    std::string_view inner = lt.substr(head.size() + 1, lt.size() - head.size() - 2 - parts.back().size());
    if (inner == kBfloat16ExtensionName) {
      auto md = arrow::key_value_metadata({std::string(kArrowExtensionNameKey), "ARROW:extension:metadata"},
                                          {std::string(kBfloat16ExtensionName), ""});
      return arrow::fixed_size_list(arrow::field("item", arrow::fixed_size_binary(2), true, md), size);
    }
    LANCE_ASSIGN_OR_RAISE(auto inner_type, ParseLeafLogicalType(inner));
    return arrow::fixed_size_list(arrow::field("item", inner_type, true), size);
  }
  return Status::Invalid("unsupported logical type '", lt, "'");
}

std::shared_ptr<const arrow::KeyValueMetadata> FieldMetadataToArrow(const Field& field) {
  if (field.metadata.empty() && field.extension_name.empty()) return nullptr;
  auto md = std::make_shared<arrow::KeyValueMetadata>();
  for (const auto& [k, v] : field.metadata) md->Append(k, v);
  if (!field.extension_name.empty() && !md->Contains(std::string(kArrowExtensionNameKey))) {
    md->Append(std::string(kArrowExtensionNameKey), field.extension_name);
  }
  return md;
}

Result<std::shared_ptr<arrow::Field>> FieldToArrow(const Field& field) {
  // Reads of a blob v2 column yield its descriptors, as the reference's.
  if (file::IsBlobV2Field(field)) return FieldToArrow(file::BlobV2DescriptorField(field));
  LANCE_ASSIGN_OR_RAISE(auto type, ArrowTypeFromField(field));
  return arrow::field(field.name, type, field.nullable, FieldMetadataToArrow(field));
}

void CollectPreOrder(const Field& field, std::vector<Field>* out) {
  Field copy = field;
  copy.children.clear();
  out->push_back(std::move(copy));
  for (const auto& child : field.children) CollectPreOrder(child, out);
}

const Field* FindById(const std::vector<Field>& fields, int32_t id) {
  for (const auto& f : fields) {
    if (f.id == id) return &f;
    if (const Field* found = FindById(f.children, id)) return found;
  }
  return nullptr;
}

// The legacy column encoding the reference records for every field it
// builds from Arrow (files of every version carry it): plain for fixed-stride
// types and list offsets, var-binary for strings and binaries, dictionary.
int32_t LegacyEncodingOf(const arrow::DataType& type) {
  constexpr int32_t kPlain = 1, kVarBinary = 2, kDictionary = 3;
  switch (type.id()) {
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_BINARY:
      return kVarBinary;
    case arrow::Type::DICTIONARY:
      return kDictionary;
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::FIXED_SIZE_LIST:
    case arrow::Type::FIXED_SIZE_BINARY:
      return kPlain;
    case arrow::Type::NA:
    case arrow::Type::INTERVAL_MONTHS:
    case arrow::Type::INTERVAL_DAY_TIME:
    case arrow::Type::INTERVAL_MONTH_DAY_NANO:
      return 0;
    default:
      return arrow::is_fixed_width(type.id()) ? kPlain : 0;
  }
}

Result<Field> FieldFromArrow(const arrow::Field& af, int32_t parent_id, int32_t* next_id) {
  Field field;
  field.name = af.name();
  field.id = (*next_id)++;
  field.parent_id = parent_id;
  field.nullable = af.nullable();
  if (af.metadata()) {
    for (int64_t i = 0; i < af.metadata()->size(); ++i) {
      field.metadata[af.metadata()->key(i)] = af.metadata()->value(i);
    }
  }
  std::shared_ptr<arrow::DataType> type = af.type();
  if (type->id() == arrow::Type::EXTENSION) {
    const auto& ext = static_cast<const arrow::ExtensionType&>(*type);
    field.extension_name = ext.extension_name();
    type = ext.storage_type();
  } else if (auto it = field.metadata.find(std::string(kArrowExtensionNameKey));
             it != field.metadata.end()) {
    field.extension_name = it->second;
  }
  if (field.extension_name == "arrow.json" || field.extension_name == "lance.json") {
    field.logical_type = "json";
  } else {
    LANCE_ASSIGN_OR_RAISE(field.logical_type, LogicalTypeFromArrow(*type));
  }
  field.encoding = LegacyEncodingOf(*type);
  std::vector<std::shared_ptr<arrow::Field>> children;
  switch (type->id()) {
    case arrow::Type::STRUCT:
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::MAP:
      children = type->fields();
      break;
    case arrow::Type::FIXED_SIZE_LIST:
      if (type->field(0)->type()->id() == arrow::Type::STRUCT) children = type->fields();
      break;
    default:
      break;
  }
  for (const auto& child : children) {
    LANCE_ASSIGN_OR_RAISE(auto c, FieldFromArrow(*child, field.id, next_id));
    field.children.push_back(std::move(c));
  }
  return field;
}

}  // namespace

Result<std::string> LogicalTypeFromArrow(const arrow::DataType& type) {
  using arrow::Type;
  switch (type.id()) {
    case Type::NA: return "null";
    case Type::BOOL: return "bool";
    case Type::INT8: return "int8";
    case Type::UINT8: return "uint8";
    case Type::INT16: return "int16";
    case Type::UINT16: return "uint16";
    case Type::INT32: return "int32";
    case Type::UINT32: return "uint32";
    case Type::INT64: return "int64";
    case Type::UINT64: return "uint64";
    case Type::HALF_FLOAT: return "halffloat";
    case Type::FLOAT: return "float";
    case Type::DOUBLE: return "double";
    case Type::STRING:
    case Type::STRING_VIEW: return "string";
    case Type::BINARY:
    case Type::BINARY_VIEW: return "binary";
    case Type::LARGE_STRING: return "large_string";
    case Type::LARGE_BINARY: return "large_binary";
    case Type::DATE32: return "date32:day";
    case Type::DATE64: return "date64:ms";
    case Type::TIME32:
      return std::string("time32:") + TimeUnitString(static_cast<const arrow::Time32Type&>(type).unit());
    case Type::TIME64:
      return std::string("time64:") + TimeUnitString(static_cast<const arrow::Time64Type&>(type).unit());
    case Type::DURATION:
      return std::string("duration:") + TimeUnitString(static_cast<const arrow::DurationType&>(type).unit());
    case Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampType&>(type);
      return std::string("timestamp:") + TimeUnitString(ts.unit()) + ":" +
             (ts.timezone().empty() ? std::string("-") : ts.timezone());
    }
    case Type::DECIMAL128:
    case Type::DECIMAL256: {
      const auto& dec = static_cast<const arrow::DecimalType&>(type);
      return "decimal:" + std::to_string(type.id() == Type::DECIMAL128 ? 128 : 256) + ":" +
             std::to_string(dec.precision()) + ":" + std::to_string(dec.scale());
    }
    case Type::STRUCT: return "struct";
    case Type::LIST:
      return type.field(0)->type()->id() == Type::STRUCT ? "list.struct" : "list";
    case Type::LARGE_LIST:
      return type.field(0)->type()->id() == Type::STRUCT ? "large_list.struct" : "large_list";
    case Type::MAP:
      if (static_cast<const arrow::MapType&>(type).keys_sorted()) {
        return Status::NotImplemented("map with keys_sorted=true is not supported by Lance");
      }
      return "map";
    case Type::FIXED_SIZE_LIST: {
      const auto& fsl = static_cast<const arrow::FixedSizeListType&>(type);
      const std::string size = std::to_string(fsl.list_size());
      if (IsBfloat16Field(*fsl.value_field())) {
        return "fixed_size_list:" + std::string(kBfloat16ExtensionName) + ":" + size;
      }
      auto child_id = fsl.value_type()->id();
      if (child_id == Type::LIST || child_id == Type::LARGE_LIST || child_id == Type::MAP) {
        return Status::NotImplemented("Lance does not support ", type.ToString());
      }
      LANCE_ASSIGN_OR_RAISE(auto inner, LogicalTypeFromArrow(*fsl.value_type()));
      return "fixed_size_list:" + inner + ":" + size;
    }
    case Type::FIXED_SIZE_BINARY:
      return "fixed_size_binary:" +
             std::to_string(static_cast<const arrow::FixedSizeBinaryType&>(type).byte_width());
    case Type::DICTIONARY: {
      const auto& dict = static_cast<const arrow::DictionaryType&>(type);
      LANCE_ASSIGN_OR_RAISE(auto value, LogicalTypeFromArrow(*dict.value_type()));
      LANCE_ASSIGN_OR_RAISE(auto index, LogicalTypeFromArrow(*dict.index_type()));
      // The reference always writes "false": arrow-rs has no ordered flag.
      return "dict:" + value + ":" + index + ":false";
    }
    case Type::EXTENSION:
      return LogicalTypeFromArrow(*static_cast<const arrow::ExtensionType&>(type).storage_type());
    default:
      return Status::NotImplemented("Lance does not support the Arrow type ", type.ToString());
  }
}

Result<std::shared_ptr<arrow::DataType>> ArrowTypeFromField(const Field& field) {
  const std::string& lt = field.logical_type;
  auto child_field = [&](size_t i) -> Result<std::shared_ptr<arrow::Field>> {
    if (field.children.size() <= i) {
      return Status::Invalid("field '", field.name, "' (id ", field.id, ") of type '", lt,
                             "' has ", field.children.size(), " children");
    }
    return FieldToArrow(field.children[i]);
  };
  if (lt == "struct") {
    arrow::FieldVector children;
    for (const auto& c : field.children) {
      LANCE_ASSIGN_OR_RAISE(auto f, FieldToArrow(c));
      children.push_back(std::move(f));
    }
    return arrow::struct_(children);
  }
  if (lt == "list" || lt == "list.struct") {
    LANCE_ASSIGN_OR_RAISE(auto item, child_field(0));
    return arrow::list(item);
  }
  if (lt == "large_list" || lt == "large_list.struct") {
    LANCE_ASSIGN_OR_RAISE(auto item, child_field(0));
    return arrow::large_list(item);
  }
  if (lt == "map") {
    LANCE_ASSIGN_OR_RAISE(auto entries, child_field(0));
    if (entries->type()->id() != arrow::Type::STRUCT || entries->type()->num_fields() != 2) {
      return Status::Invalid("map field '", field.name, "' needs a struct child of two fields");
    }
    return std::make_shared<arrow::MapType>(entries->type()->field(0), entries->type()->field(1),
                                            /*keys_sorted=*/false);
  }
  if (lt.starts_with("fixed_size_list:struct:") && !field.children.empty()) {
    auto parts = Split(lt, ':');
    LANCE_ASSIGN_OR_RAISE(auto size, ParseInt<int32_t>(parts.back(), lt));
    LANCE_ASSIGN_OR_RAISE(auto item, child_field(0));
    return arrow::fixed_size_list(item, size);
  }
  return ParseLeafLogicalType(lt);
}

std::vector<Field> Schema::FieldsPreOrder() const {
  std::vector<Field> out;
  for (const auto& f : fields) CollectPreOrder(f, &out);
  return out;
}

int32_t Schema::MaxFieldId() const {
  int32_t max_id = -1;
  for (const auto& f : FieldsPreOrder()) max_id = std::max(max_id, f.id);
  return max_id;
}

const Field* Schema::FieldById(int32_t id) const { return FindById(fields, id); }

std::string Schema::FieldPath(int32_t id) const {
  std::string path;
  for (const Field* f = FieldById(id); f != nullptr; f = FieldById(f->parent_id)) {
    path = path.empty() ? f->name : f->name + "." + path;
    if (f->parent_id < 0) break;
  }
  return path;
}

Result<std::shared_ptr<arrow::Schema>> Schema::ToArrow() const {
  arrow::FieldVector out;
  for (const auto& f : fields) {
    LANCE_ASSIGN_OR_RAISE(auto af, FieldToArrow(f));
    out.push_back(std::move(af));
  }
  std::shared_ptr<arrow::KeyValueMetadata> md;
  if (!metadata.empty()) {
    md = std::make_shared<arrow::KeyValueMetadata>();
    for (const auto& [k, v] : metadata) md->Append(k, v);
  }
  return arrow::schema(out, md);
}

Result<Schema> Schema::FromArrow(const arrow::Schema& schema, int32_t first_id) {
  Schema out;
  int32_t next_id = first_id;
  for (const auto& af : schema.fields()) {
    LANCE_ASSIGN_OR_RAISE(auto f, FieldFromArrow(*af, -1, &next_id));
    out.fields.push_back(std::move(f));
  }
  if (schema.metadata()) {
    for (int64_t i = 0; i < schema.metadata()->size(); ++i) {
      out.metadata[schema.metadata()->key(i)] = schema.metadata()->value(i);
    }
  }
  return out;
}

}  // namespace lance
