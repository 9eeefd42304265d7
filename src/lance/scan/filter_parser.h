// SQL filter predicates (the `PRED` of the CLI contract) -> Arrow compute expressions.
//
// The accepted language is the subset of DataFusion SQL that pylance's `filter=`
// takes and the contract names: comparisons (= == != <> < <= > >=), AND OR NOT,
// parentheses, IS [NOT] NULL / TRUE / FALSE, [NOT] IN (...), [NOT] LIKE / ILIKE
// 'pattern' [ESCAPE '\'], [NOT] BETWEEN .. AND .., arithmetic + - * / %, string
// concatenation ||, integer / float / 'string' / "string" / TRUE / FALSE / NULL
// literals, DATE '...' and TIMESTAMP[(p)] '...' literals, columns (case-insensitive
// unless back-quoted), nested struct fields as a.b or a['b'], `quoted names`,
// -- and /* */ comments; and the list and string predicates, as DataFusion evaluates
// them: array_has(list, constant) (aliases array_contains, list_has, list_contains),
// array_has_any(list, [constants]) (list_has_any, arrays_overlap),
// array_has_all(list, [constants]) (list_has_all), contains / starts_with /
// ends_with(string, constant string). Function names ignore case; column names
// inside a call's arguments do not (DataFusion plans calls without Lance's lookup).
//
// Types follow what pylance does, which is two steps: Lance first converts a bare
// literal compared with a column to that column's type (an error when it does not
// fit: `i8 = 300`, `id = 1.5`, `d = '2024-01-01'`), then DataFusion's coercion rules
// type everything else (int8 + int64 -> int64, uint64 vs int64 -> decimal(20, 0),
// string vs number -> number, naive timestamp literal vs zoned column -> local time in
// the column's zone, ...). Floats compare in IEEE total order (NaN above +inf, -NaN
// below -inf), except that a comparison with a zero literal treats -0.0 and 0.0 as
// equal, as pylance's rewrite does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <arrow/compute/expression.h>
#include <arrow/type_fwd.h>

#include "lance/status.h"

namespace lance::scan {

/// Parses `sql` and binds it against `schema`: column references resolve (nested
/// a.b through structs, `quoted` names), literals are cast to the compared column's
/// type the way pylance (Lance + DataFusion) does, and the result must be boolean.
/// Errors are Status::Invalid and say what and where (a 0-based byte offset into
/// `sql`), e.g. `filter "x >" at 3: expected an expression`.
///
/// The returned expression is unbound and names its columns (nested ones by path);
/// Bind it against the schema of the batches it will run on. It evaluates to true,
/// false or null per row; a filter keeps only the rows where it is true. It may call
/// "lance_float_total_order_key", a compute function ParseFilter registers in Arrow's
/// default registry (together with arrow::compute::Initialize()).
Result<arrow::compute::Expression> ParseFilter(std::string_view sql,
                                               const arrow::Schema& schema);

/// Parses `sql` as a value expression of the same language (the right side of
/// UPDATE's `SET col = value`) and casts it to `target`. Errors as ParseFilter's.
Result<arrow::compute::Expression> ParseValue(std::string_view sql, const arrow::Schema& schema,
                                              const std::shared_ptr<arrow::DataType>& target);

/// A new column's values (add_columns): the expression, the type it
/// evaluates to and whether DataFusion would call it nullable (a column is
/// as nullable as it and its parents, a non-null literal is not, operators
/// are nullable when an operand is, IS ... never).
struct NewColumnValue {
  arrow::compute::Expression expr;  // bound against `schema`
  std::shared_ptr<arrow::DataType> type;
  bool nullable = true;
};
Result<NewColumnValue> ParseNewColumn(std::string_view sql, const arrow::Schema& schema);

/// The columns (top-level field names) a filter refers to, for projection: each
/// once, in order of first appearance.
std::vector<std::string> FilterColumns(const arrow::compute::Expression& expr);

}  // namespace lance::scan
