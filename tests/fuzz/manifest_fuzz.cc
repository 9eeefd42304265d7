// Fuzz target: manifest files (footer, sections, protobuf) and the pieces a
// manifest points at that are parsed from bytes (row-id sequences, lineage,
// tags, transactions).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "lance/table/manifest_file.h"
#include "lance/table/row_id_sequence.h"
#include "lance/table/tags.h"
#include "lance/txn/transaction.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto file = lance::table::ParseManifestFile(bytes, "fuzz.manifest", lance::table::FlagCheck::kNone);
  if (file.ok()) {
    for (const auto& fragment : file->manifest.fragments) {
      if (fragment.row_ids.inline_bytes) {
        auto seq = lance::table::RowIdSequence::Parse(*fragment.row_ids.inline_bytes, "fuzz");
        if (seq.ok() && seq->Length() < (1u << 20)) (void)seq->ToVector();
      }
      if (fragment.created_at_versions.inline_bytes) {
        auto seq = lance::table::RowVersionSequence::Parse(*fragment.created_at_versions.inline_bytes, "fuzz");
        if (seq.ok() && seq->Length() < (1u << 20)) (void)seq->ToVector();
      }
    }
    (void)file->manifest.schema.ToArrow();
    if (file->transaction_bytes) (void)lance::txn::ParseTransaction(*file->transaction_bytes, "fuzz");
  }
  // The same bytes as other small formats.
  (void)lance::txn::ParseTransaction(bytes, "fuzz.txn");
  (void)lance::table::ParseTag(std::string(bytes), "fuzz.json");
  auto seq = lance::table::RowIdSequence::Parse(bytes, "fuzz");
  if (seq.ok() && seq->Length() < (1u << 20)) (void)seq->ToVector();
  return 0;
}
