// The CLI's progress line: done / total, percent, rate and time left.
#include "progress_bar.h"

#include <gtest/gtest.h>

namespace lance::cli {
namespace {

Progress Make(uint64_t done, std::optional<uint64_t> total, std::string_view stage = "writing",
              std::string_view unit = "rows") {
  Progress p;
  p.stage = stage;
  p.unit = unit;
  p.done = done;
  p.total = total;
  return p;
}

TEST(FormatDuration, MinutesAndHours) {
  EXPECT_EQ(FormatDuration(0), "0:00");
  EXPECT_EQ(FormatDuration(7.4), "0:07");
  EXPECT_EQ(FormatDuration(59.6), "1:00");
  EXPECT_EQ(FormatDuration(754), "12:34");
  EXPECT_EQ(FormatDuration(3723), "1:02:03");
  EXPECT_EQ(FormatDuration(-1), "--:--");
}

TEST(FormatRate, Units) {
  EXPECT_EQ(FormatRate(0), "0");
  EXPECT_EQ(FormatRate(950), "950");
  EXPECT_EQ(FormatRate(12345), "12.3k");
  EXPECT_EQ(FormatRate(1049600), "1.05M");
  EXPECT_EQ(FormatRate(2e9), "2.00G");
}

TEST(FormatProgress, WithTotal) {
  // 1049600 of 4198400 rows in 2 s: 25%, 524.8k rows/s, 6 s left.
  const std::string line = FormatProgress(Make(1049600, 4198400), 2.0, 120);
  EXPECT_EQ(line,
            "writing [#######.......................] 1049600/4198400 rows   25%  524.8k rows/s  ETA 0:06");
}

TEST(FormatProgress, Complete) {
  const std::string line = FormatProgress(Make(10, 10, "removing", "files"), 0.5, 100);
  EXPECT_EQ(line, "removing [##############################] 10/10 files  100%  20 files/s  ETA 0:00");
}

TEST(FormatProgress, EmptyTotalIsDone) {
  EXPECT_NE(FormatProgress(Make(0, 0), 1.0, 100).find("0/0 rows  100%"), std::string::npos);
}

TEST(FormatProgress, WithoutTotal) {
  EXPECT_EQ(FormatProgress(Make(3000, std::nullopt), 1.5, 100), "writing 3000 rows  2.0k rows/s");
}

TEST(FormatProgress, NoTimeYet) {
  // No rate and no time left before any time has passed.
  EXPECT_EQ(FormatProgress(Make(5, std::nullopt), 0, 100), "writing 5 rows");
  const std::string line = FormatProgress(Make(5, 20), 0, 100);
  EXPECT_NE(line.find("5/20 rows   25%"), std::string::npos);
  EXPECT_EQ(line.find("ETA"), std::string::npos);
}

TEST(FormatProgress, NoRateNoTimeLeft) {
  const std::string line = FormatProgress(Make(0, 20), 1.0, 100);
  EXPECT_NE(line.find("0 rows/s  ETA --:--"), std::string::npos);
}

TEST(FormatProgress, FitsNarrowTerminals) {
  // The bar shrinks, then goes; the line never reaches the last column.
  const std::string wide = FormatProgress(Make(1, 2), 1.0, 200);
  EXPECT_NE(wide.find("[###############...............]"), std::string::npos);
  const std::string narrow = FormatProgress(Make(1, 2), 1.0, 60);
  EXPECT_LT(narrow.size(), 60u);
  EXPECT_NE(narrow.find("1/2 rows   50%"), std::string::npos);
  const std::string tiny = FormatProgress(Make(1, 2), 1.0, 20);
  EXPECT_EQ(tiny.size(), 19u);
  EXPECT_EQ(tiny.find('['), std::string::npos);
}

TEST(FormatProgress, DoneBeyondTotalStaysAtFull) {
  const std::string line = FormatProgress(Make(12, 10), 1.0, 100);
  EXPECT_NE(line.find("100%"), std::string::npos);
  EXPECT_NE(line.find("ETA 0:00"), std::string::npos);
}

}  // namespace
}  // namespace lance::cli
