// A 2.0 struct field: a header column holding one page (written when the
// file finishes, without buffers) then the children's columns. File version
// 2.0 has no place for the struct's own validity, so null structs are refused.
#include "lance/file/v2_0/array_encoder.h"
#include "lance/file/v2_0/field_encoders.h"

namespace lance::file::v2_0 {
namespace {

namespace enc = pb::encodings20;

class StructEncoder : public LegacyFieldEncoder {
 public:
  StructEncoder(std::string name, uint32_t column, std::vector<std::unique_ptr<LegacyFieldEncoder>> children)
      : name_(std::move(name)), column_(column), children_(std::move(children)) {}

  uint32_t num_columns() const override {
    uint32_t n = 1;
    for (const auto& c : children_) n += c->num_columns();
    return n;
  }

  Result<std::vector<EncodedPage>> Append(const std::shared_ptr<arrow::Array>& array,
                                          const std::shared_ptr<arrow::Array>& unsliced) override {
    if (array->null_count() > 0) {
      return Status::NotImplemented("struct field '", name_, "' has ", array->null_count(),
                                    " null values, which file version 2.0 cannot store (use 2.1 or later)");
    }
    const auto& s = static_cast<const arrow::StructArray&>(*array);
    rows_seen_ += static_cast<uint64_t>(array->length());
    std::vector<EncodedPage> pages;
    for (size_t i = 0; i < children_.size(); ++i) {
      // Children are slices of the struct's whole children, which the reference counts.
      auto whole = arrow::MakeArray((unsliced ? unsliced : array)->data()->child_data[i]);
      LANCE_ASSIGN_OR_RAISE(auto child_pages, children_[i]->Append(s.field(static_cast<int>(i)), whole));
      for (auto& p : child_pages) pages.push_back(std::move(p));
    }
    return pages;
  }

  Result<std::vector<EncodedPage>> FlushData() override {
    std::vector<EncodedPage> pages;
    for (auto& c : children_) {
      LANCE_ASSIGN_OR_RAISE(auto child_pages, c->FlushData());
      for (auto& p : child_pages) pages.push_back(std::move(p));
    }
    return pages;
  }

  void AddFinalPages(std::vector<EncodedPage>* pages) override {
    enc::ArrayEncoding encoding;
    encoding.mutable_struct_();
    EncodedPage header;
    header.column_index = column_;
    header.page.length = rows_seen_;
    header.page.encoding_type_url = kArrayEncodingTypeUrl;
    header.page.encoding = encoding.SerializeAsString();
    pages->push_back(std::move(header));
    for (auto& c : children_) c->AddFinalPages(pages);
  }

  void AddColumns(std::vector<EncodedColumn>* columns) override {
    columns->emplace_back();
    for (auto& c : children_) c->AddColumns(columns);
  }

 private:
  std::string name_;
  uint32_t column_;
  std::vector<std::unique_ptr<LegacyFieldEncoder>> children_;
  uint64_t rows_seen_ = 0;
};

}  // namespace

std::unique_ptr<LegacyFieldEncoder> MakeStructEncoder(const Field& field, uint32_t column,
                                                      std::vector<std::unique_ptr<LegacyFieldEncoder>> children) {
  return std::make_unique<StructEncoder>(field.name, column, std::move(children));
}

}  // namespace lance::file::v2_0
