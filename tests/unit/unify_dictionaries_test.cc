#include "lance/unify_dictionaries.h"

#include <optional>
#include <string>
#include <vector>

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/io/memory.h>
#include <arrow/ipc/reader.h>
#include <arrow/ipc/writer.h>
#include <gtest/gtest.h>

namespace lance {
namespace {

using Strings = std::vector<std::optional<std::string>>;

std::shared_ptr<arrow::Array> StringArray(const Strings& values) {
  arrow::StringBuilder b;
  for (const auto& v : values) EXPECT_TRUE((v ? b.Append(*v) : b.AppendNull()).ok());
  return b.Finish().ValueOrDie();
}

std::shared_ptr<arrow::Array> Dict(const std::shared_ptr<arrow::DataType>& index_type,
                                   const std::vector<std::optional<int>>& keys, const Strings& values) {
  arrow::Int64Builder kb;
  for (const auto& k : keys) EXPECT_TRUE((k ? kb.Append(*k) : kb.AppendNull()).ok());
  auto idx = arrow::compute::Cast(kb.Finish().ValueOrDie(), index_type).ValueOrDie().make_array();
  return arrow::DictionaryArray::FromArrays(arrow::dictionary(index_type, arrow::utf8()), idx, StringArray(values))
      .ValueOrDie();
}

Strings Decoded(const std::shared_ptr<arrow::Array>& a) {
  auto dense = arrow::compute::Cast(*a, arrow::utf8()).ValueOrDie();
  Strings out;
  const auto& s = static_cast<const arrow::StringArray&>(*dense);
  for (int64_t i = 0; i < s.length(); ++i) {
    out.push_back(s.IsNull(i) ? std::nullopt : std::optional<std::string>(s.GetString(i)));
  }
  return out;
}

std::shared_ptr<arrow::RecordBatchReader> ReaderOf(const std::shared_ptr<arrow::Schema>& schema,
                                                   const std::vector<arrow::ArrayVector>& batches) {
  arrow::RecordBatchVector out;
  for (const auto& columns : batches) out.push_back(arrow::RecordBatch::Make(schema, columns[0]->length(), columns));
  return arrow::RecordBatchReader::Make(out, schema).ValueOrDie();
}

arrow::RecordBatchVector ReadAll(arrow::RecordBatchReader& reader) {
  arrow::RecordBatchVector out;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    EXPECT_TRUE(reader.ReadNext(&batch).ok());
    if (!batch) return out;
    out.push_back(batch);
  }
}

// An Arrow IPC file of `batches`, read back: what `--out` does.
Result<std::shared_ptr<arrow::Table>> ThroughIpcFile(const std::shared_ptr<arrow::Schema>& schema,
                                                     const arrow::RecordBatchVector& batches) {
  LANCE_ASSIGN_OR_RAISE(auto sink, arrow::io::BufferOutputStream::Create());
  auto options = arrow::ipc::IpcWriteOptions::Defaults();
  options.emit_dictionary_deltas = true;
  LANCE_ASSIGN_OR_RAISE(auto writer, arrow::ipc::MakeFileWriter(sink, schema, options));
  for (const auto& b : batches) LANCE_RETURN_NOT_OK(writer->WriteRecordBatch(*b));
  LANCE_RETURN_NOT_OK(writer->Close());
  LANCE_ASSIGN_OR_RAISE(auto buffer, sink->Finish());
  LANCE_ASSIGN_OR_RAISE(auto file,
                        arrow::ipc::RecordBatchFileReader::Open(std::make_shared<arrow::io::BufferReader>(buffer)));
  arrow::RecordBatchVector back;
  for (int i = 0; i < file->num_record_batches(); ++i) {
    LANCE_ASSIGN_OR_RAISE(auto b, file->ReadRecordBatch(i));
    back.push_back(b);
  }
  return arrow::Table::FromRecordBatches(schema, back);
}

TEST(UnifyDictionariesTest, DifferentDictionariesBecomeOneGrowingDictionary) {
  auto type = arrow::dictionary(arrow::int32(), arrow::utf8());
  auto schema = arrow::schema({arrow::field("c", type)});
  // The first dictionary holds a null entry (as 2.0 files give) and a duplicate.
  std::vector<arrow::ArrayVector> in = {
      {Dict(arrow::int32(), {0, 1, 2, std::nullopt, 3}, {"a", "b", std::nullopt, "a"})},
      {Dict(arrow::int32(), {1, 0, 0}, {"x", "b"})},
      {Dict(arrow::int32(), {0, std::nullopt}, {"a"})},
  };
  const std::vector<Strings> want = {{"a", "b", std::nullopt, std::nullopt, "a"}, {"b", "x", "x"}, {"a", std::nullopt}};

  // As they come, the batches cannot go into one IPC file.
  auto plain = ReadAll(*ReaderOf(schema, in));
  EXPECT_FALSE(ThroughIpcFile(schema, plain).ok());

  auto unified = UnifyDictionaries(ReaderOf(schema, in));
  ASSERT_TRUE(unified.ok()) << unified.status().ToString();
  EXPECT_TRUE((*unified)->schema()->Equals(*schema));
  auto out = ReadAll(**unified);
  ASSERT_EQ(out.size(), 3u);
  std::shared_ptr<arrow::Array> previous;
  for (size_t i = 0; i < out.size(); ++i) {
    auto column = out[i]->column(0);
    ASSERT_TRUE(column->ValidateFull().ok()) << column->ValidateFull().ToString();
    EXPECT_TRUE(column->type()->Equals(*type));
    EXPECT_EQ(Decoded(column), want[i]) << "batch " << i;
    const auto& dict = static_cast<const arrow::DictionaryArray&>(*column).dictionary();
    EXPECT_EQ(dict->null_count(), 0);
    if (previous) {  // each dictionary extends the one before
      ASSERT_GE(dict->length(), previous->length());
      EXPECT_TRUE(dict->RangeEquals(*previous, 0, previous->length(), 0));
    }
    previous = dict;
  }
  EXPECT_TRUE(previous->Equals(*StringArray({"a", "b", "x"})));

  auto back = ThroughIpcFile(schema, out);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  auto combined = (*back)->CombineChunks().ValueOrDie();
  EXPECT_EQ(Decoded(combined->column(0)->chunk(0)),
            (Strings{"a", "b", std::nullopt, std::nullopt, "a", "b", "x", "x", "a", std::nullopt}));
}

TEST(UnifyDictionariesTest, AgreeingBatchesPassUntouched) {
  auto type = arrow::dictionary(arrow::int8(), arrow::utf8());
  auto schema = arrow::schema({arrow::field("id", arrow::int64()), arrow::field("c", type)});
  auto ids = *arrow::MakeArrayFromScalar(arrow::Int64Scalar(7), 2);
  auto first = Dict(arrow::int8(), {0, 1}, {"p", "q"});
  auto second = Dict(arrow::int8(), {0, 0}, {"p"});  // a prefix of the first
  auto unified = UnifyDictionaries(ReaderOf(schema, {{ids, first}, {ids, second}}));
  ASSERT_TRUE(unified.ok());
  auto out = ReadAll(**unified);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0]->column(1)->data()->buffers[1], first->data()->buffers[1]);   // indices not copied
  EXPECT_EQ(out[1]->column(1)->data()->buffers[1], second->data()->buffers[1]);
  EXPECT_EQ(out[0]->column(0)->data(), ids->data());
  EXPECT_EQ(Decoded(out[1]->column(1)), (Strings{"p", "p"}));
}

TEST(UnifyDictionariesTest, DictionariesInsideStructsAndLists) {
  auto dtype = arrow::dictionary(arrow::int16(), arrow::utf8());
  auto struct_type = arrow::struct_({arrow::field("d", dtype)});
  auto list_type = arrow::list(dtype);
  auto schema = arrow::schema({arrow::field("s", struct_type), arrow::field("l", list_type)});
  auto make = [&](const std::shared_ptr<arrow::Array>& d, const std::shared_ptr<arrow::Array>& items,
                  const std::vector<int32_t>& offsets) {
    auto s = arrow::StructArray::Make({d}, {arrow::field("d", dtype)}).ValueOrDie();
    arrow::Int32Builder ob;
    EXPECT_TRUE(ob.AppendValues(offsets).ok());
    auto l = arrow::ListArray::FromArrays(*ob.Finish().ValueOrDie(), *items).ValueOrDie();
    return arrow::ArrayVector{s, l};
  };
  std::vector<arrow::ArrayVector> in = {
      make(Dict(arrow::int16(), {0, 1}, {"a", "b"}), Dict(arrow::int16(), {0, 0, 1}, {"m", "n"}), {0, 2, 3}),
      make(Dict(arrow::int16(), {0, std::nullopt}, {"c"}), Dict(arrow::int16(), {1, 0}, {"n", "o"}), {0, 0, 2}),
  };
  auto unified = UnifyDictionaries(ReaderOf(schema, in));
  ASSERT_TRUE(unified.ok());
  auto out = ReadAll(**unified);
  ASSERT_EQ(out.size(), 2u);
  auto child = [](const std::shared_ptr<arrow::RecordBatch>& b, int c) {
    return c == 0 ? static_cast<const arrow::StructArray&>(*b->column(0)).field(0)
                  : static_cast<const arrow::ListArray&>(*b->column(1)).values();
  };
  EXPECT_EQ(Decoded(child(out[1], 0)), (Strings{"c", std::nullopt}));
  EXPECT_EQ(Decoded(child(out[1], 1)), (Strings{"o", "n"}));
  EXPECT_TRUE(static_cast<const arrow::DictionaryArray&>(*child(out[1], 1)).dictionary()->Equals(
      *StringArray({"m", "n", "o"})));
  auto back = ThroughIpcFile(schema, out);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ((*back)->num_rows(), 4);
}

TEST(UnifyDictionariesTest, TooManyValuesForTheIndexTypeIsAnError) {
  auto type = arrow::dictionary(arrow::int8(), arrow::utf8());
  auto schema = arrow::schema({arrow::field("c", type)});
  std::vector<arrow::ArrayVector> in;
  for (int b = 0; b < 3; ++b) {
    Strings values;
    std::vector<std::optional<int>> keys;
    for (int i = 0; i < 100; ++i) {
      values.push_back(std::to_string(b * 100 + i));
      keys.push_back(i);
    }
    in.push_back({Dict(arrow::int8(), keys, values)});
  }
  auto unified = UnifyDictionaries(ReaderOf(schema, in));
  ASSERT_TRUE(unified.ok());
  std::shared_ptr<arrow::RecordBatch> batch;
  ASSERT_TRUE((*unified)->ReadNext(&batch).ok());
  Status st = (*unified)->ReadNext(&batch);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("'c'"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("200 distinct values"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace lance
