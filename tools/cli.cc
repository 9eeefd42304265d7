#include "cli.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "lance/dataset.h"

namespace lance::cli {

std::optional<UsageError> ParseArgs(const std::vector<std::string>& argv,
                                    const std::vector<std::string>& value_flags,
                                    const std::vector<std::string>& switch_flags, Args* out) {
  auto contains = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string flag = a, value;
      bool inline_value = false;
      if (auto eq = a.find('='); eq != std::string::npos) {
        flag = a.substr(0, eq);
        value = a.substr(eq + 1);
        inline_value = true;
      }
      if (contains(value_flags, flag)) {
        if (!inline_value) {
          if (i + 1 >= argv.size()) return UsageError{flag + " needs a value"};
          value = argv[++i];
        }
        out->options[flag] = value;
      } else if (contains(switch_flags, flag) && !inline_value) {
        out->options[flag] = "";
      } else {
        return UsageError{"unknown option " + a};
      }
    } else {
      out->positional.push_back(a);
    }
  }
  return std::nullopt;
}

std::string FormatTimestamp(int64_t nanos) {
  int64_t secs = nanos / 1000000000LL;
  int64_t rem = nanos % 1000000000LL;
  if (rem < 0) {
    rem += 1000000000LL;
    secs -= 1;
  }
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(rem / 1000));
  return buf;
}

std::string Counted(uint64_t n, const std::string& singular, const std::string& plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural.empty() ? singular + "s" : plural);
}

void PrintChange(const std::string& what, uint64_t version, bool committed) {
  std::cout << what << "; " << (committed ? "new version " : "version ") << version
            << (committed ? "" : " unchanged") << "\n";
}

std::string& BranchOption() {
  static std::string branch;
  return branch;
}

StorageOptions& StorageOptionsFlag() {
  static StorageOptions options;
  return options;
}

std::optional<UsageError> AddStorageOption(const std::string& key_value) {
  const auto eq = key_value.find('=');
  if (eq == std::string::npos || eq == 0) {
    return UsageError{"--storage-option needs KEY=VALUE, got '" + key_value + "'"};
  }
  const std::string key = key_value.substr(0, eq);
  if (!StorageOptionsFlag().emplace(key, key_value.substr(eq + 1)).second) {
    return UsageError{"--storage-option " + key + " is given twice"};
  }
  return std::nullopt;
}

Result<std::shared_ptr<Dataset>> OpenDataset(const std::string& uri, OpenOptions options) {
  if (options.branch.empty()) options.branch = BranchOption();
  if (options.storage_options.empty()) options.storage_options = StorageOptionsFlag();
  return Dataset::Open(uri, options);
}

Result<uint64_t> LatestVersion(const std::string& uri) {
  LANCE_ASSIGN_OR_RAISE(auto ds, OpenDataset(uri));
  return ds->version();
}

int ReportError(const Status& status) {
  std::string msg = status.message();
  std::replace(msg.begin(), msg.end(), '\n', ' ');
  std::cerr << "error: " << msg << std::endl;
  switch (GetErrorKind(status)) {
    case ErrorKind::kRetryableCommitConflict:
    case ErrorKind::kCommitConflict: return kExitCommitConflict;
    case ErrorKind::kTooMuchWriteContention: return kExitTooMuchContention;
    case ErrorKind::kOther: break;
  }
  return kExitError;
}

std::optional<UsageError> ParseRetryFlags(const Args& args, bool operation_level, RetryParams* out) {
  if (args.Has("--max-retries")) {
    const std::string v = args.Get("--max-retries");
    uint32_t n = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || ptr != v.data() + v.size() || v.empty()) {
      return UsageError{"--max-retries needs a count, got '" + v + "'"};
    }
    if (operation_level) {
      out->conflict_retries = n;
    } else {
      out->num_retries = n;
    }
  }
  if (args.Has("--retry-timeout")) {
    const std::string v = args.Get("--retry-timeout");
    char* end = nullptr;
    const double seconds = std::strtod(v.c_str(), &end);
    if (v.empty() || end != v.c_str() + v.size() || !(seconds >= 0)) {
      return UsageError{"--retry-timeout needs seconds, got '" + v + "'"};
    }
    out->retry_timeout = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  }
  return std::nullopt;
}

int ReportUsage(const std::string& message, const char* usage) {
  std::cerr << "error: " << message << "\nusage: " << usage << std::endl;
  return kExitUsage;
}

}  // namespace lance::cli
