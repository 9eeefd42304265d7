#include "progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace lance::cli {
namespace {

constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
constexpr size_t kMaxBarCells = 30;
constexpr size_t kMinBarCells = 10;

size_t TerminalWidth() {
  struct winsize ws {};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    const long n = std::strtol(columns, nullptr, 10);
    if (n > 0) return static_cast<size_t>(n);
  }
  return 80;
}

}  // namespace

std::string FormatDuration(double seconds) {
  if (!(seconds >= 0) || seconds > 1e8) return "--:--";
  const auto total = static_cast<uint64_t>(std::llround(seconds));
  char buf[32];
  if (total >= 3600) {
    std::snprintf(buf, sizeof buf, "%llu:%02llu:%02llu", static_cast<unsigned long long>(total / 3600),
                  static_cast<unsigned long long>(total / 60 % 60), static_cast<unsigned long long>(total % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%llu:%02llu", static_cast<unsigned long long>(total / 60),
                  static_cast<unsigned long long>(total % 60));
  }
  return buf;
}

std::string FormatRate(double per_second) {
  char buf[32];
  if (per_second < 1000) {
    std::snprintf(buf, sizeof buf, "%.0f", per_second);
  } else if (per_second < 1e6) {
    std::snprintf(buf, sizeof buf, "%.1fk", per_second / 1e3);
  } else if (per_second < 1e9) {
    std::snprintf(buf, sizeof buf, "%.2fM", per_second / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.2fG", per_second / 1e9);
  }
  return buf;
}

std::string FormatProgress(const Progress& p, double elapsed_seconds, size_t width) {
  const std::string stage(p.stage);
  const std::string unit(p.unit);
  const bool timed = elapsed_seconds > 0;
  const double rate = timed ? static_cast<double>(p.done) / elapsed_seconds : 0;
  std::string counts;
  std::string tail;
  uint64_t permille = 0;
  if (p.total) {
    const uint64_t total = *p.total;
    const uint64_t done = std::min(p.done, total);
    permille = total == 0 ? 1000 : done * 1000 / total;
    char pct[8];
    std::snprintf(pct, sizeof pct, "%3llu%%", static_cast<unsigned long long>(permille / 10));
    counts = std::to_string(p.done) + "/" + std::to_string(total) + " " + unit + "  " + pct;
    if (timed) {
      tail = "  " + FormatRate(rate) + " " + unit + "/s  ETA ";
      tail += done >= total ? FormatDuration(0)
              : rate > 0    ? FormatDuration(static_cast<double>(total - done) / rate)
                            : "--:--";
    }
  } else {
    counts = std::to_string(p.done) + " " + unit;
    if (timed) tail = "  " + FormatRate(rate) + " " + unit + "/s";
  }
  std::string line = stage + " ";
  if (p.total) {
    // The bar takes what is left of the line, within bounds.
    const size_t fixed = line.size() + counts.size() + tail.size() + 3;  // "[" "] "
    const size_t room = width > fixed + 1 ? width - fixed - 1 : 0;
    const size_t cells = std::min(room, kMaxBarCells);
    if (cells >= kMinBarCells) {
      const size_t filled = static_cast<size_t>(permille * cells / 1000);
      line += "[" + std::string(filled, '#') + std::string(cells - filled, '.') + "] ";
    }
  }
  line += counts + tail;
  if (width > 0 && line.size() > width - 1) line.resize(width - 1);
  return line;
}

ProgressBar::ProgressBar(bool quiet) : enabled_(!quiet && ::isatty(STDERR_FILENO) == 1) {
  stage_start_ = last_report_ = last_draw_ = Clock::now();
}

ProgressBar::~ProgressBar() { Clear(); }

ProgressCallback ProgressBar::Callback() {
  if (!enabled_) return {};
  return [this](const Progress& p) { Update(p); };
}

void ProgressBar::Update(const Progress& p) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = Clock::now();
  const bool new_stage = !any_draw_ || p.stage != stage_;
  if (new_stage) {
    // The new stage began when the previous one last reported.
    stage_ = std::string(p.stage);
    stage_start_ = any_draw_ ? last_report_ : stage_start_;
    drawn_done_ = 0;
  }
  last_report_ = now;
  const bool complete = p.total && p.done >= *p.total;
  const bool due = now - last_draw_ >= kRedrawInterval;
  if (!new_stage && !(due || complete)) return;
  if (!new_stage && p.done == drawn_done_) return;  // nothing new to show
  const double elapsed = std::chrono::duration<double>(now - stage_start_).count();
  const std::string line = FormatProgress(p, elapsed, TerminalWidth());
  // Back to the line's start, the new text, the rest of the old one erased.
  std::fprintf(stderr, "\r%s\033[K", line.c_str());
  std::fflush(stderr);
  last_draw_ = now;
  drawn_done_ = p.done;
  drawn_ = any_draw_ = true;
}

void ProgressBar::Clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!drawn_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace lance::cli
