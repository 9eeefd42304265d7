// A 2.0 list field: a column of u64 offsets (end of each list from the start
// of the page; a null list's offset is raised by the page's item count + 1),
// then the items' columns. Offsets and validity accumulate in one queue, the
// items in their own encoder, so offset pages and item pages need not align.
#include <arrow/array/array_primitive.h>

#include "lance/file/v2_0/array_encoder.h"
#include "lance/file/v2_0/field_encoders.h"

namespace lance::file::v2_0 {
namespace {

namespace enc = pb::encodings20;

class ListEncoder : public LegacyFieldEncoder {
 public:
  ListEncoder(uint32_t column, std::unique_ptr<LegacyFieldEncoder> items, const EncoderOptions& options)
      : column_(column), items_(std::move(items)), queue_(options.cache_bytes_per_column) {}

  uint32_t num_columns() const override { return 1 + items_->num_columns(); }

  Result<std::vector<EncodedPage>> Append(const std::shared_ptr<arrow::Array>& array,
                                          const std::shared_ptr<arrow::Array>& unsliced) override {
    const auto& data = *array->data();
    const bool large = array->type_id() == arrow::Type::LARGE_LIST;
    const int64_t n = data.length;
    // The list's own offsets (n + 1 of them) and validity, as arrays the queue can count.
    auto offsets_buffer = data.buffers[1];
    std::shared_ptr<arrow::Array> offsets =
        large ? std::shared_ptr<arrow::Array>(std::make_shared<arrow::Int64Array>(n + 1, offsets_buffer, nullptr, 0, data.offset))
              : std::shared_ptr<arrow::Array>(std::make_shared<arrow::Int32Array>(n + 1, offsets_buffer, nullptr, 0, data.offset));
    std::shared_ptr<arrow::Array> validity;
    if (array->null_count() > 0) {
      validity = std::make_shared<arrow::BooleanArray>(n, data.buffers[0], nullptr, 0, data.offset);
    } else {
      validity = std::make_shared<arrow::BooleanArray>(0, std::make_shared<arrow::Buffer>(nullptr, 0));
    }
    const int64_t first = OffsetAt(*offsets, 0);
    const int64_t last = OffsetAt(*offsets, n);
    auto values = large ? static_cast<const arrow::LargeListArray&>(*array).values()
                        : static_cast<const arrow::ListArray&>(*array).values();
    auto items = values->Slice(first, last - first);

    std::vector<EncodedPage> pages;
    // The reference counts the offsets and validity arrays it makes, which
    // keep the list's whole buffers.
    const auto& counted = unsliced ? *unsliced->data() : data;
    const uint64_t extent = static_cast<uint64_t>(counted.offset + counted.length);
    const uint64_t offsets_memory = 96 + (extent + 1) * (large ? 8 : 4);
    const uint64_t validity_memory = 112 + (array->null_count() > 0 ? (extent + 7) / 8 : 0);
    std::optional<arrow::ArrayVector> ready = queue_.Insert(offsets, offsets_memory);
    if (ready) {
      ready->push_back(validity);
    } else {
      ready = queue_.Insert(validity, validity_memory);
    }
    if (ready) {
      LANCE_ASSIGN_OR_RAISE(auto page, MakeOffsetsPage(*ready));
      pages.push_back(std::move(page));
    }
    // The items are counted as the reference sees them: the whole child of
    // the list it was handed.
    std::shared_ptr<arrow::Array> counted_values = values;
    if (unsliced) counted_values = arrow::MakeArray(unsliced->data()->child_data[0]);
    LANCE_ASSIGN_OR_RAISE(auto item_pages, items_->Append(items, counted_values));
    if (ready && item_pages.empty()) {
      // A full offsets page takes the items buffered so far with it.
      LANCE_ASSIGN_OR_RAISE(item_pages, items_->FlushData());
    }
    for (auto& p : item_pages) pages.push_back(std::move(p));
    return pages;
  }

  Result<std::vector<EncodedPage>> FlushData() override {
    std::vector<EncodedPage> pages;
    if (auto ready = queue_.Flush()) {
      LANCE_ASSIGN_OR_RAISE(auto page, MakeOffsetsPage(*ready));
      pages.push_back(std::move(page));
    }
    LANCE_ASSIGN_OR_RAISE(auto item_pages, items_->FlushData());
    for (auto& p : item_pages) pages.push_back(std::move(p));
    return pages;
  }

  void AddFinalPages(std::vector<EncodedPage>* pages) override { items_->AddFinalPages(pages); }
  void AddColumns(std::vector<EncodedColumn>* columns) override {
    columns->emplace_back();
    items_->AddColumns(columns);
  }

 private:
  static int64_t OffsetAt(const arrow::Array& offsets, int64_t i) {
    if (offsets.type_id() == arrow::Type::INT64) return static_cast<const arrow::Int64Array&>(offsets).Value(i);
    return static_cast<const arrow::Int32Array&>(offsets).Value(i);
  }

  // `arrays` alternates offsets and validity (empty = no nulls).
  Result<EncodedPage> MakeOffsetsPage(const arrow::ArrayVector& arrays) {
    uint64_t num_lists = 0;
    uint64_t span = 0;
    for (size_t i = 0; i < arrays.size(); i += 2) {
      const auto& off = *arrays[i];
      num_lists += static_cast<uint64_t>(off.length() - 1);
      span += static_cast<uint64_t>(OffsetAt(off, off.length() - 1) - OffsetAt(off, 0));
    }
    const uint64_t null_adjustment = span + 1;
    std::vector<uint64_t> out;
    out.reserve(num_lists);
    for (size_t i = 0; i < arrays.size(); i += 2) {
      const auto& off = *arrays[i];
      const arrow::BooleanArray* valid =
          i + 1 < arrays.size() && arrays[i + 1]->length() > 0
              ? static_cast<const arrow::BooleanArray*>(arrays[i + 1].get())
              : nullptr;
      const int64_t base = static_cast<int64_t>((out.empty() ? 0 : out.back()) % null_adjustment);
      const int64_t modifier = base - OffsetAt(off, 0);
      for (int64_t j = 1; j < off.length(); ++j) {
        uint64_t v = static_cast<uint64_t>(OffsetAt(off, j) + modifier);
        if (valid != nullptr && !valid->Value(j - 1)) v += null_adjustment;
        out.push_back(v);
      }
    }
    enc::ArrayEncoding encoding;
    auto* list = encoding.mutable_list();
    auto* flat = list->mutable_offsets()->mutable_nullable()->mutable_no_nulls()->mutable_values()->mutable_flat();
    flat->set_bits_per_value(64);
    flat->mutable_buffer()->set_buffer_index(0);
    flat->mutable_buffer()->set_buffer_type(enc::Buffer::page);
    list->set_null_offset_adjustment(null_adjustment);
    list->set_num_items(span);

    EncodedPage page;
    page.column_index = column_;
    page.page.length = num_lists;
    page.page.encoding_type_url = kArrayEncodingTypeUrl;
    page.page.encoding = encoding.SerializeAsString();
    page.page.buffers.push_back(arrow::Buffer::FromVector(std::move(out)));
    return page;
  }

  uint32_t column_;
  std::unique_ptr<LegacyFieldEncoder> items_;
  AccumulationQueue queue_;
};

}  // namespace

std::unique_ptr<LegacyFieldEncoder> MakeListEncoder(const Field&, uint32_t column,
                                                    std::unique_ptr<LegacyFieldEncoder> items,
                                                    const EncoderOptions& options) {
  return std::make_unique<ListEncoder>(column, std::move(items), options);
}

}  // namespace lance::file::v2_0
