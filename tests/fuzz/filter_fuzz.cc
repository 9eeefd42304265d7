// Fuzz target: the SQL filter language (lexer, parser, type rules) over a
// schema with a column of each kind a filter meets, as a filter and as an
// UPDATE value; parsed filters are bound, as a scan would.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <arrow/api.h>

#include "lance/scan/filter_parser.h"

namespace {

const std::shared_ptr<arrow::Schema>& FuzzSchema() {
  static const auto schema = arrow::schema({
      arrow::field("i", arrow::int64()),
      arrow::field("u8", arrow::uint8()),
      arrow::field("f", arrow::float32()),
      arrow::field("d", arrow::float64()),
      arrow::field("s", arrow::utf8()),
      arrow::field("ls", arrow::large_utf8()),
      arrow::field("b", arrow::boolean()),
      arrow::field("bin", arrow::binary()),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("tz", arrow::timestamp(arrow::TimeUnit::NANO, "UTC")),
      arrow::field("day", arrow::date32()),
      arrow::field("dec", arrow::decimal128(10, 2)),
      arrow::field("tags", arrow::list(arrow::utf8())),
      arrow::field("vec", arrow::fixed_size_list(arrow::float32(), 4)),
      arrow::field("st", arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b c", arrow::utf8())})),
  });
  return schema;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;  // the grammar, not the input size, is under test
  std::string_view sql(reinterpret_cast<const char*>(data), size);
  const auto& schema = FuzzSchema();
  auto filter = lance::scan::ParseFilter(sql, *schema);
  if (filter.ok()) (void)filter->Bind(*schema);
  (void)lance::scan::ParseValue(sql, *schema, arrow::int64());
  (void)lance::scan::ParseValue(sql, *schema, arrow::utf8());
  return 0;
}
