#include "lance/file/dictionary_join.h"

#include <cstdint>

#include <arrow/api.h>
#include <arrow/compute/api.h>

namespace lance::file {

Result<std::shared_ptr<arrow::Array>> JoinDictionaryArrays(const arrow::ArrayVector& pieces,
                                                           const std::shared_ptr<arrow::DataType>& type,
                                                           arrow::MemoryPool* pool) {
  if (type->id() != arrow::Type::DICTIONARY) return Status::Invalid("not a dictionary type: ", type->ToString());
  const auto& dict_type = static_cast<const arrow::DictionaryType&>(*type);
  const auto& index_type = dict_type.index_type();
  if (pieces.empty()) return arrow::MakeEmptyArray(type, pool);
  if (pieces.size() == 1) return pieces[0];
  // The kernels below live in arrow_compute, registered once per process.
  static const Status compute_ready = arrow::compute::Initialize();
  LANCE_RETURN_NOT_OK(compute_ready);
  arrow::ArrayVector dictionaries, indices;
  bool same = true;
  for (const auto& piece : pieces) {
    if (piece->type_id() != arrow::Type::DICTIONARY) return Status::Invalid("joining a non-dictionary array");
    const auto& d = static_cast<const arrow::DictionaryArray&>(*piece);
    dictionaries.push_back(d.dictionary());
    indices.push_back(d.indices());
    same = same && d.dictionary()->Equals(*dictionaries[0]);
  }
  arrow::compute::ExecContext ctx(pool);
  if (same) {
    LANCE_ASSIGN_OR_RAISE(auto all, arrow::Concatenate(indices, pool));
    return arrow::DictionaryArray::FromArrays(type, all, dictionaries[0]);
  }
  const int bits = index_type->bit_width();
  const bool is_signed = arrow::is_signed_integer(index_type->id());
  const int64_t max_index = bits >= 63 ? INT64_MAX : (int64_t{1} << (is_signed ? bits - 1 : bits)) - 1;
  // Every piece's indices into the appended dictionaries, as int64.
  arrow::ArrayVector global;
  int64_t shift = 0;
  for (size_t k = 0; k < pieces.size(); ++k) {
    LANCE_ASSIGN_OR_RAISE(auto wide, arrow::compute::Cast(indices[k], arrow::int64(),
                                                          arrow::compute::CastOptions::Safe(), &ctx));
    LANCE_ASSIGN_OR_RAISE(auto moved, arrow::compute::Add(wide, arrow::Datum(shift), arrow::compute::ArithmeticOptions(),
                                                          &ctx));
    global.push_back(moved.make_array());
    shift += dictionaries[k]->length();
  }
  LANCE_ASSIGN_OR_RAISE(auto all_global, arrow::Concatenate(global, pool));
  LANCE_ASSIGN_OR_RAISE(auto appended, arrow::Concatenate(dictionaries, pool));
  std::shared_ptr<arrow::Array> dictionary = appended, keys = all_global;
  if (shift - 1 > max_index) {
    // Too many values appended: keep each distinct value (null too) once.
    LANCE_ASSIGN_OR_RAISE(auto unique, arrow::compute::Unique(appended, &ctx));
    arrow::compute::SetLookupOptions lookup(unique, arrow::compute::SetLookupOptions::MATCH);
    LANCE_ASSIGN_OR_RAISE(auto positions, arrow::compute::IndexIn(appended, lookup, &ctx));
    LANCE_ASSIGN_OR_RAISE(auto mapped, arrow::compute::Take(positions, all_global,
                                                            arrow::compute::TakeOptions::Defaults(), &ctx));
    dictionary = unique;
    keys = mapped.make_array();
    if (unique->length() - 1 > max_index) {
      return Status::Invalid("the pages' dictionaries hold ", unique->length(), " distinct values, more than ",
                             index_type->ToString(), " indices can address");
    }
  }
  LANCE_ASSIGN_OR_RAISE(auto cast, arrow::compute::Cast(keys, index_type, arrow::compute::CastOptions::Safe(), &ctx));
  return arrow::DictionaryArray::FromArrays(type, cast.make_array(), dictionary);
}

}  // namespace lance::file
