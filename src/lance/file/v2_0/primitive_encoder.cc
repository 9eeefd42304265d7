// A primitive 2.0 field: one column; values accumulate to the cache size and
// a lone large array is cut into pages of about max_page_bytes.
#include <unordered_map>

#include "lance/file/v2_0/array_encoder.h"
#include "lance/file/v2_0/field_encoders.h"

namespace lance::file::v2_0 {
namespace {

class PrimitiveEncoder : public LegacyFieldEncoder {
 public:
  PrimitiveEncoder(Field field, uint32_t column, const EncoderOptions& options)
      : field_(std::move(field)), column_(column), queue_(options.cache_bytes_per_column),
        max_page_bytes_(std::max<uint64_t>(options.max_page_bytes, 1)) {}

  uint32_t num_columns() const override { return 1; }

  Result<std::vector<EncodedPage>> Append(const std::shared_ptr<arrow::Array>& array,
                                          const std::shared_ptr<arrow::Array>& unsliced) override {
    const auto& counted = unsliced ? *unsliced : *array;
    buffer_bytes_[array.get()] = ArrayBufferSize(counted);
    // The unsliced array matters only to a page of this array alone: once a
    // second one is buffered none is kept (each would keep a whole input
    // batch alive, e.g. every column of an IPC record batch).
    if (queue_.empty()) {
      wholes_[array.get()] = unsliced ? unsliced : array;
    } else {
      wholes_.clear();
    }
    auto arrays = queue_.Insert(array, ArrayMemorySize(counted));
    if (!arrays) return std::vector<EncodedPage>{};
    return Pages(std::move(*arrays));
  }

  Result<std::vector<EncodedPage>> FlushData() override {
    auto arrays = queue_.Flush();
    if (!arrays) return std::vector<EncodedPage>{};
    return Pages(std::move(*arrays));
  }

  void AddFinalPages(std::vector<EncodedPage>*) override {}
  void AddColumns(std::vector<EncodedColumn>* columns) override { columns->emplace_back(); }

 private:
  Result<std::vector<EncodedPage>> Pages(arrow::ArrayVector arrays) {
    std::vector<EncodedPage> pages;
    auto sizes = std::exchange(buffer_bytes_, {});
    auto wholes = std::exchange(wholes_, {});
    if (arrays.size() == 1) {
      // Only a single buffered array is split, in parts of equal row counts.
      const auto& array = arrays[0];
      const uint64_t len = static_cast<uint64_t>(array->length());
      const uint64_t size = sizes.count(array.get()) ? sizes[array.get()] : ArrayBufferSize(*array);
      uint64_t parts = std::min((size + max_page_bytes_ - 1) / max_page_bytes_, len);
      if (parts > 1) {
        const uint64_t part_rows = (len + parts - 1) / parts;
        for (uint64_t offset = 0; offset < len; offset += part_rows) {
          const uint64_t rows = std::min(part_rows, len - offset);
          LANCE_ASSIGN_OR_RAISE(auto page, MakePage({array->Slice(static_cast<int64_t>(offset),
                                                                  static_cast<int64_t>(rows))},
                                                    wholes[array.get()].get()));
          pages.push_back(std::move(page));
        }
        return pages;
      }
    }
    LANCE_ASSIGN_OR_RAISE(auto page, MakePage(arrays, arrays.size() == 1 ? wholes[arrays[0].get()].get() : nullptr));
    pages.push_back(std::move(page));
    return pages;
  }

  Result<EncodedPage> MakePage(const arrow::ArrayVector& arrays, const arrow::Array* whole = nullptr) {
    LANCE_ASSIGN_OR_RAISE(auto encoded, EncodePageValues(arrays, field_, whole));
    EncodedPage page;
    page.column_index = column_;
    for (const auto& a : arrays) page.page.length += static_cast<uint64_t>(a->length());
    page.page.encoding_type_url = kArrayEncodingTypeUrl;
    page.page.encoding = encoded.encoding.SerializeAsString();
    page.page.buffers = std::move(encoded.buffers);
    return page;
  }

  Field field_;
  uint32_t column_;
  AccumulationQueue queue_;
  uint64_t max_page_bytes_;
  // get_buffer_memory_size of the buffered arrays, for splitting a lone one.
  std::unordered_map<const arrow::Array*, uint64_t> buffer_bytes_;
  // The array each buffered one was cut from (itself if none), whose
  // validity a lone array's pages keep.
  std::unordered_map<const arrow::Array*, std::shared_ptr<arrow::Array>> wholes_;
};

}  // namespace

std::unique_ptr<LegacyFieldEncoder> MakePrimitiveEncoder(const Field& field, uint32_t column,
                                                         const EncoderOptions& options) {
  return std::make_unique<PrimitiveEncoder>(field, column, options);
}

}  // namespace lance::file::v2_0
