#include "lance/file/validate_array.h"

#include <cstring>
#include <mutex>

#include <arrow/type.h>
#include <arrow/util/utf8.h>

namespace lance::file {

namespace {

using TypePtr = std::shared_ptr<arrow::DataType>;

// The type with every string type replaced by its binary twin (the same
// layout); nullptr where a nesting it does not rebuild holds strings.
TypePtr WithoutStrings(const TypePtr& type, bool* has_strings) {
  switch (type->id()) {
    case arrow::Type::STRING:
      *has_strings = true;
      return arrow::binary();
    case arrow::Type::LARGE_STRING:
      *has_strings = true;
      return arrow::large_binary();
    case arrow::Type::STRUCT: {
      arrow::FieldVector fields;
      for (const auto& f : type->fields()) {
        TypePtr t = WithoutStrings(f->type(), has_strings);
        if (!t) return nullptr;
        fields.push_back(f->WithType(t));
      }
      return arrow::struct_(fields);
    }
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::FIXED_SIZE_LIST: {
      const auto& value = type->field(0);
      TypePtr t = WithoutStrings(value->type(), has_strings);
      if (!t) return nullptr;
      if (type->id() == arrow::Type::LIST) return arrow::list(value->WithType(t));
      if (type->id() == arrow::Type::LARGE_LIST) return arrow::large_list(value->WithType(t));
      return arrow::fixed_size_list(value->WithType(t),
                                    static_cast<const arrow::FixedSizeListType&>(*type).list_size());
    }
    default: {
      // Anything else is kept as it is, unless strings hide inside it.
      for (const auto& f : type->fields()) {
        bool inner = false;
        WithoutStrings(f->type(), &inner);
        if (inner) return nullptr;
      }
      if (type->id() == arrow::Type::DICTIONARY) {
        const auto& dict = static_cast<const arrow::DictionaryType&>(*type);
        const auto id = dict.value_type()->id();
        if (id == arrow::Type::STRING || id == arrow::Type::LARGE_STRING) return nullptr;
      }
      return type;
    }
  }
}

// The same buffers and children under the rebuilt type.
std::shared_ptr<arrow::ArrayData> Retype(const std::shared_ptr<arrow::ArrayData>& data, const TypePtr& type) {
  auto out = std::make_shared<arrow::ArrayData>(*data);
  out->type = type;
  for (size_t i = 0; i < out->child_data.size(); ++i) {
    out->child_data[i] = Retype(data->child_data[i], type->field(static_cast<int>(i))->type());
  }
  return out;
}

template <typename Offset>
bool StringsAreUtf8(const arrow::ArrayData& data) {
  if (data.length == 0) return true;
  const auto* offsets = data.GetValues<Offset>(1);
  const uint8_t* bytes = data.buffers[2] ? data.buffers[2]->data() : nullptr;
  const int64_t begin = static_cast<int64_t>(offsets[0]);
  const int64_t end = static_cast<int64_t>(offsets[data.length]);
  if (end == begin) return true;
  if (!arrow::util::ValidateUTF8(bytes + begin, end - begin)) return false;
  // The bytes are valid as a whole; each value is valid too when none
  // starts inside a character (on a continuation byte 10xxxxxx).
  uint8_t inside = 0;
  for (int64_t i = 1; i < data.length; ++i) {
    const int64_t o = static_cast<int64_t>(offsets[i]);
    if (o < end) inside |= static_cast<uint8_t>((bytes[o] & 0xC0) == 0x80);
  }
  return inside == 0;
}

// True when every string value in the tree (offsets already validated) is
// UTF-8; false means "not proven", not "invalid" (nulls may hold any bytes).
bool AllStringsUtf8(const arrow::ArrayData& data) {
  switch (data.type->id()) {
    case arrow::Type::STRING:
      return StringsAreUtf8<int32_t>(data);
    case arrow::Type::LARGE_STRING:
      return StringsAreUtf8<int64_t>(data);
    default:
      for (const auto& child : data.child_data) {
        if (!AllStringsUtf8(*child)) return false;
      }
      return true;
  }
}

}  // namespace

Status ValidateDecodedArray(const arrow::Array& array) {
  static std::once_flag utf8_tables;
  std::call_once(utf8_tables, [] { arrow::util::InitializeUTF8(); });
  bool has_strings = false;
  TypePtr shadow = WithoutStrings(array.type(), &has_strings);
  if (!shadow || !has_strings) return array.ValidateFull();
  // Everything but UTF-8 (offsets, lengths, nulls, children) under the
  // binary twin, then UTF-8 in bulk; where the bulk check cannot prove it,
  // Arrow's own per-value check gives the answer and the message.
  LANCE_RETURN_NOT_OK(arrow::MakeArray(Retype(array.data(), shadow))->ValidateFull());
  if (AllStringsUtf8(*array.data())) return Status::OK();
  return array.ValidateFull();
}

}  // namespace lance::file
