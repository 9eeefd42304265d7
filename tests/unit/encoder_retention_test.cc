// What the field encoders keep alive while they buffer values: the writer's
// copies only, never the caller's input (whose buffers may hold a whole
// input batch), and the same pages either way.
#include <memory>
#include <string>
#include <vector>

#include <arrow/array.h>
#include <arrow/array/concatenate.h>
#include <arrow/builder.h>
#include <arrow/type.h>
#include <gtest/gtest.h>

#include "lance/file/field_encoder.h"
#include "lance/schema.h"

namespace lance::file {
namespace {

std::shared_ptr<arrow::Array> Int64s(int64_t n, int64_t start) {
  arrow::Int64Builder b;
  for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(b.Append(start + i * 7).ok());
  return *b.Finish();
}

Field Int64Field() {
  auto schema = Schema::FromArrow(*arrow::schema({arrow::field("f", arrow::int64(), true)}));
  EXPECT_TRUE(schema.ok());
  return schema->fields[0];
}

Result<std::unique_ptr<FieldEncoder>> Int64Encoder(bool v2_0, uint64_t cache_bytes) {
  EncoderOptions options;
  options.version = v2_0 ? FileVersion::kV2_0 : FileVersion::kV2_1;
  options.cache_bytes_per_column = cache_bytes;
  return v2_0 ? MakeFieldEncoderV2_0(Int64Field(), 0, options) : MakeFieldEncoderV2_1(Int64Field(), 0, options);
}

using PageBytes = std::vector<std::vector<std::string>>;  // per page, its buffers

PageBytes BytesOf(const std::vector<EncodedPage>& pages) {
  PageBytes out;
  for (const auto& p : pages) {
    std::vector<std::string> buffers{p.page.encoding};
    for (const auto& b : p.page.buffers) buffers.push_back(b ? b->ToString() : std::string());
    out.push_back(std::move(buffers));
  }
  return out;
}

// Appends two slices of one large parent (as the writer does: a copy plus
// the original) and reports whether the parent's buffer outlived the
// caller's references, with the pages of the flush.
struct Outcome {
  bool parent_alive = false;
  PageBytes pages;
};

Outcome AppendSlices(bool v2_0, uint64_t cache_bytes) {
  auto encoder = Int64Encoder(v2_0, cache_bytes);
  EXPECT_TRUE(encoder.ok()) << encoder.status().ToString();
  std::weak_ptr<arrow::Buffer> parent_values;
  {
    auto parent = Int64s(100000, 3);
    parent_values = parent->data()->buffers[1];
    for (int64_t offset : {1000, 5000}) {
      auto slice = parent->Slice(offset, 100);
      auto copy = arrow::Concatenate({slice});
      EXPECT_TRUE(copy.ok());
      auto ready = (*encoder)->AppendCopied(*copy, slice);
      EXPECT_TRUE(ready.ok()) << ready.status().ToString();
      EXPECT_TRUE(ready->empty());  // all buffered
    }
  }
  Outcome out;
  out.parent_alive = !parent_values.expired();
  auto flushed = (*encoder)->Flush();
  EXPECT_TRUE(flushed.ok()) << flushed.status().ToString();
  out.pages = BytesOf(*flushed);
  return out;
}

// The same values handed over as compact arrays of their own.
PageBytes AppendCompact(bool v2_0, uint64_t cache_bytes) {
  auto encoder = Int64Encoder(v2_0, cache_bytes);
  EXPECT_TRUE(encoder.ok()) << encoder.status().ToString();
  for (int64_t offset : {1000, 5000}) {
    auto values = Int64s(100, 3 + offset * 7);
    EXPECT_TRUE((*encoder)->Append(values).ok());
  }
  auto flushed = (*encoder)->Flush();
  EXPECT_TRUE(flushed.ok());
  return BytesOf(*flushed);
}

TEST(EncoderRetentionTest, V2_0KeepsNoInputBatchOnceTwoArraysAreBuffered) {
  // Each slice counts its parent's 800 KB against the cache (as the
  // reference): 4 MiB keeps both buffered.
  const auto out = AppendSlices(/*v2_0=*/true, 4 << 20);
  EXPECT_FALSE(out.parent_alive);
  ASSERT_EQ(out.pages.size(), 1u);
  EXPECT_EQ(out.pages, AppendCompact(/*v2_0=*/true, 4 << 20));
}

TEST(EncoderRetentionTest, V2_1KeepsNoInputBatch) {
  const auto out = AppendSlices(/*v2_0=*/false, 4 << 20);
  EXPECT_FALSE(out.parent_alive);
  ASSERT_EQ(out.pages.size(), 1u);
  EXPECT_EQ(out.pages, AppendCompact(/*v2_0=*/false, 4 << 20));
}

}  // namespace
}  // namespace lance::file
