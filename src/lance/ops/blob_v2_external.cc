#include "lance/ops/blob_v2_external.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace lance::ops {
namespace {

// The object store schemes the pinned pylance knows; others it refuses.
constexpr const char* kKnownSchemes[] = {"file", "file-object-store", "memory", "s3",  "s3+ddb",
                                         "gs",   "az",                "abfss",  "oss", "hf"};

// A URI split into what decides which store it names (scheme, authority)
// and the path segments inside that store.
struct ParsedUri {
  std::string scheme;  // lower case; "file" for a plain absolute path
  std::string authority;
  std::vector<std::string> segments;
};

std::optional<std::string> SchemeOf(const std::string& uri) {
  const size_t colon = uri.find(':');
  if (colon == std::string::npos || colon < 2 || !std::isalpha(static_cast<unsigned char>(uri[0]))) {
    return std::nullopt;
  }
  std::string scheme;
  for (size_t i = 0; i < colon; ++i) {
    const unsigned char c = static_cast<unsigned char>(uri[i]);
    if (!std::isalnum(c) && c != '+' && c != '-' && c != '.') return std::nullopt;
    scheme.push_back(static_cast<char>(std::tolower(c)));
  }
  return scheme;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// `%20` and the like decoded, so a base given as a plain path matches URIs.
std::string PercentDecoded(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 && HexValue(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::vector<std::string> Segments(const std::string& path, bool decode) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t slash = std::min(path.find('/', start), path.size());
    if (slash > start) {
      const std::string part = path.substr(start, slash - start);
      out.push_back(decode ? PercentDecoded(part) : part);
    }
    start = slash + 1;
  }
  return out;
}

// nullopt for a relative path: neither a URI nor an absolute local path.
std::optional<ParsedUri> Parse(const std::string& uri) {
  ParsedUri parsed;
  auto scheme = SchemeOf(uri);
  if (!scheme) {
    if (uri.empty() || uri.front() != '/') return std::nullopt;
    parsed.scheme = "file";
    parsed.segments = Segments(uri, /*decode=*/false);
    return parsed;
  }
  parsed.scheme = *scheme;
  std::string rest = uri.substr(scheme->size() + 1);
  if (rest.rfind("//", 0) == 0) {
    const size_t slash = std::min(rest.find('/', 2), rest.size());
    parsed.authority = rest.substr(2, slash - 2);
    rest = rest.substr(slash);
  }
  parsed.segments = Segments(rest, /*decode=*/true);
  return parsed;
}

// The absolute form pylance stores: lower-case scheme, file URIs with an
// authority part, spaces percent-encoded.
std::string Normalize(const std::string& uri, const ParsedUri& parsed) {
  std::string rest = uri.substr(parsed.scheme.size() + 1);
  if (rest.rfind("//", 0) != 0) rest = "//" + rest;
  std::string out = parsed.scheme + ":";
  for (char c : rest) {
    if (c == ' ') {
      out += "%20";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string Join(const std::vector<std::string>& parts, size_t from) {
  std::string out;
  for (size_t i = from; i < parts.size(); ++i) out += (i > from ? "/" : "") + parts[i];
  return out;
}

}  // namespace

Result<ExternalBlobRef> ResolveExternalBlobUri(const std::string& uri, const BlobV2ExternalPolicy& policy,
                                               const std::string& field) {
  if (uri.empty()) return Status::Invalid("blob v2 field '", field, "': an external blob URI cannot be empty");
  auto parsed = Parse(uri);
  if (parsed && std::find(std::begin(kKnownSchemes), std::end(kKnownSchemes), parsed->scheme) ==
                    std::end(kKnownSchemes)) {
    return Status::Invalid("blob v2 field '", field, "': external blob URI '", uri, "' has unknown scheme '",
                           parsed->scheme, "'");
  }
  // The longest registered base that holds the URI, as pylance picks.
  const BasePath* best = nullptr;
  size_t best_len = 0;
  std::string relative;
  for (const auto& base : policy.bases) {
    if (base.is_dataset_root || !parsed) continue;
    auto root = Parse(base.path);
    if (!root || root->scheme != parsed->scheme || root->authority != parsed->authority) continue;
    const auto& r = root->segments;
    const auto& s = parsed->segments;
    if (s.size() <= r.size() || !std::equal(r.begin(), r.end(), s.begin())) continue;
    if (best == nullptr || r.size() > best_len) {
      best = &base;
      best_len = r.size();
      relative = Join(s, r.size());
    }
  }
  if (best != nullptr) return ExternalBlobRef{best->id, relative};
  if (!parsed) {
    return Status::Invalid("blob v2 field '", field, "': external URI '", uri,
                           "' is outside registered external bases and is not a valid absolute URI");
  }
  if (!policy.allow_outside_bases) {
    return Status::Invalid("blob v2 field '", field, "': external blob URI '", uri,
                           "' is outside registered external bases (dataset root is not allowed); allow external "
                           "blobs outside bases to store it as an absolute URI");
  }
  if (!SchemeOf(uri)) {
    // A plain absolute path is no URI to pylance.
    return Status::Invalid("blob v2 field '", field, "': external URI '", uri,
                           "' is outside registered external bases and is not a valid absolute URI");
  }
  return ExternalBlobRef{0, Normalize(uri, *parsed)};
}

}  // namespace lance::ops
