// util::ReadAhead: the batches of a sequence of readers, in order, whatever
// the threads and the byte limit; errors where they happened.
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/record_batch.h>
#include <gtest/gtest.h>

#include "lance/util/read_ahead.h"

namespace lance::util {
namespace {

std::shared_ptr<arrow::Schema> Schema() { return arrow::schema({arrow::field("v", arrow::int64())}); }

std::shared_ptr<arrow::RecordBatch> Batch(int64_t first, int64_t rows) {
  arrow::Int64Builder b;
  for (int64_t i = 0; i < rows; ++i) EXPECT_TRUE(b.Append(first + i).ok());
  return arrow::RecordBatch::Make(Schema(), rows, {*b.Finish()});
}

// Reader r gives r % 3 + 1 batches of 10 rows, numbered on from r * 1000.
Result<std::shared_ptr<arrow::RecordBatchReader>> Numbered(size_t r) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (size_t b = 0; b < r % 3 + 1; ++b) batches.push_back(Batch(static_cast<int64_t>(r * 1000 + b * 10), 10));
  return arrow::RecordBatchReader::Make(batches, Schema());
}

// A reader that gives one batch, then fails.
class Failing : public arrow::RecordBatchReader {
 public:
  std::shared_ptr<arrow::Schema> schema() const override { return Schema(); }
  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    if (given_) return Status::IOError("read failed");
    given_ = true;
    *out = Batch(-10, 10);
    return Status::OK();
  }

 private:
  bool given_ = false;
};

std::vector<int64_t> Firsts(ReadAhead& ahead, Status* end) {
  std::vector<int64_t> out;
  while (true) {
    std::shared_ptr<arrow::RecordBatch> batch;
    *end = ahead.ReadNext(&batch);
    if (!end->ok() || !batch) return out;
    out.push_back(std::static_pointer_cast<arrow::Int64Array>(batch->column(0))->Value(0));
  }
}

TEST(ReadAheadTest, BatchesInReaderOrderForAnyThreadsAndLimit) {
  std::vector<int64_t> want;
  for (size_t r = 0; r < 40; ++r) {
    for (size_t b = 0; b < r % 3 + 1; ++b) want.push_back(static_cast<int64_t>(r * 1000 + b * 10));
  }
  for (size_t threads : {1, 2, 5}) {
    for (uint64_t max_bytes : {uint64_t{0}, uint64_t{1} << 20}) {
      ReadAhead ahead(40, Numbered, threads, max_bytes);
      Status end;
      EXPECT_EQ(Firsts(ahead, &end), want) << threads << " threads, " << max_bytes << " bytes";
      EXPECT_TRUE(end.ok()) << end.ToString();
    }
  }
}

TEST(ReadAheadTest, NoReaders) {
  ReadAhead ahead(0, Numbered, 2, 1 << 20);
  Status end;
  EXPECT_TRUE(Firsts(ahead, &end).empty());
  EXPECT_TRUE(end.ok());
}

TEST(ReadAheadTest, AnErrorComesAfterTheBatchesBeforeIt) {
  auto open = [](size_t r) -> Result<std::shared_ptr<arrow::RecordBatchReader>> {
    if (r == 2) return Status::Invalid("cannot open reader 2");
    return Numbered(r);
  };
  ReadAhead ahead(6, open, 2, 0);
  Status end;
  EXPECT_EQ(Firsts(ahead, &end), (std::vector<int64_t>{0, 1000, 1010}));
  EXPECT_TRUE(end.IsInvalid()) << end.ToString();

  auto failing = [](size_t r) -> Result<std::shared_ptr<arrow::RecordBatchReader>> {
    if (r == 1) return std::make_shared<Failing>();
    return Numbered(r);
  };
  ReadAhead reading(4, failing, 2, 1 << 20);
  EXPECT_EQ(Firsts(reading, &end), (std::vector<int64_t>{0, -10}));
  EXPECT_TRUE(end.IsIOError()) << end.ToString();
}

// A long reader counting the batches it has given.
class Counting : public arrow::RecordBatchReader {
 public:
  explicit Counting(std::atomic<int>* given) : given_(given) {}
  std::shared_ptr<arrow::Schema> schema() const override { return Schema(); }
  Status ReadNext(std::shared_ptr<arrow::RecordBatch>* out) override {
    if (*given_ >= 50) return Status::OK();
    *out = Batch(*given_ * 10, 10);
    ++*given_;
    return Status::OK();
  }

 private:
  std::atomic<int>* given_;
};

TEST(ReadAheadTest, ALongReaderIsNotReadWhollyAheadOfASlowConsumer) {
  std::atomic<int> given{0};
  auto open = [&](size_t r) -> Result<std::shared_ptr<arrow::RecordBatchReader>> {
    if (r == 0) return std::make_shared<Counting>(&given);
    return Numbered(r);
  };
  ReadAhead ahead(2, open, 2, 0);
  for (int taken = 0; taken < 50; ++taken) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // One batch waiting, one being read at most.
    EXPECT_LE(given.load() - taken, 2);
    std::shared_ptr<arrow::RecordBatch> batch;
    ASSERT_TRUE(ahead.ReadNext(&batch).ok());
    ASSERT_NE(batch, nullptr);
  }
}

TEST(ReadAheadTest, StopsEarlyWhenDestroyedUnread) {
  // Destroying it with readers still going joins its threads.
  ReadAhead ahead(100, Numbered, 2, 0);
  std::shared_ptr<arrow::RecordBatch> batch;
  ASSERT_TRUE(ahead.ReadNext(&batch).ok());
}

}  // namespace
}  // namespace lance::util
