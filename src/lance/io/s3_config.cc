#include "lance/io/s3_config.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>
#include <vector>

extern char** environ;

namespace lance::io {

namespace {

// The settings this build implements, by canonical name.
enum class Key {
  kEndpoint, kEndpointS3, kAllowHttp, kRegion, kDefaultRegion, kAccessKeyId, kSecretAccessKey,
  kSessionToken, kVirtualHosted, kSkipSignature, kConnectTimeout, kTimeout, kProxyUrl,
  kAllowInvalidCertificates, kMaxRetries, kConditionalPut, kBucket,
};

struct Alias {
  std::string_view name;
  Key key;
};

// object_store's AmazonS3ConfigKey names and aliases (src/aws/builder.rs),
// plus Lance's own aws_endpoint_url_s3 and client_max_retries.
constexpr Alias kS3Keys[] = {
    {"aws_endpoint", Key::kEndpoint}, {"aws_endpoint_url", Key::kEndpoint}, {"endpoint", Key::kEndpoint},
    {"endpoint_url", Key::kEndpoint}, {"aws_endpoint_url_s3", Key::kEndpointS3},
    {"aws_allow_http", Key::kAllowHttp}, {"aws_region", Key::kRegion}, {"region", Key::kRegion},
    {"aws_default_region", Key::kDefaultRegion}, {"default_region", Key::kDefaultRegion},
    {"aws_access_key_id", Key::kAccessKeyId}, {"access_key_id", Key::kAccessKeyId},
    {"aws_secret_access_key", Key::kSecretAccessKey}, {"secret_access_key", Key::kSecretAccessKey},
    {"aws_session_token", Key::kSessionToken}, {"aws_token", Key::kSessionToken},
    {"session_token", Key::kSessionToken}, {"token", Key::kSessionToken},
    {"aws_virtual_hosted_style_request", Key::kVirtualHosted},
    {"virtual_hosted_style_request", Key::kVirtualHosted},
    {"aws_skip_signature", Key::kSkipSignature}, {"skip_signature", Key::kSkipSignature},
    {"aws_conditional_put", Key::kConditionalPut}, {"conditional_put", Key::kConditionalPut},
    {"aws_bucket", Key::kBucket}, {"aws_bucket_name", Key::kBucket}, {"bucket_name", Key::kBucket},
    {"bucket", Key::kBucket}, {"client_max_retries", Key::kMaxRetries},
};
// object_store's ClientConfigKey names; also accepted with an "aws_" prefix.
constexpr Alias kClientKeys[] = {
    {"allow_http", Key::kAllowHttp}, {"allow_invalid_certificates", Key::kAllowInvalidCertificates},
    {"connect_timeout", Key::kConnectTimeout}, {"timeout", Key::kTimeout}, {"proxy_url", Key::kProxyUrl},
};

// Keys pylance 14 acts on that this build does not implement: refused, so a
// caller never believes a setting took effect when it did not.
constexpr std::string_view kRefused[] = {
    "aws_profile", "profile", "aws_s3_express", "s3_express", "aws_imdsv1_fallback", "imdsv1_fallback",
    "aws_metadata_endpoint", "metadata_endpoint", "aws_unsigned_payload", "unsigned_payload",
    "aws_checksum_algorithm", "checksum_algorithm", "aws_container_credentials_relative_uri",
    "aws_container_credentials_full_uri", "aws_container_authorization_token_file",
    "aws_copy_if_not_exists", "copy_if_not_exists", "aws_disable_tagging", "disable_tagging",
    "aws_request_payer", "request_payer", "aws_server_side_encryption", "aws_sse_kms_key_id",
    "aws_sse_bucket_key_enabled", "aws_sse_customer_key_base64", "aws_role_arn", "aws_role_session_name",
    "aws_web_identity_token_file", "aws_provider_scheme", "aws_endpoint_url_sts",
    // client options without an Arrow S3 equivalent (also as aws_...)
    "default_content_type", "http1_only", "http2_only", "http2_keep_alive_interval",
    "http2_keep_alive_timeout", "http2_keep_alive_while_idle", "http2_max_frame_size", "pool_idle_timeout",
    "pool_max_idle_per_host", "proxy_ca_certificate", "proxy_excludes", "randomize_addresses", "user_agent",
    // Lance's own read/retry tuning, not implemented by this reader
    "client_retry_timeout", "block_size", "download_retry_count",
};

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

enum class Kind { kImplemented, kRefused, kUnknown };

Kind Classify(const std::string& lower, Key* key) {
  for (const auto& a : kS3Keys) {
    if (a.name == lower) {
      *key = a.key;
      return Kind::kImplemented;
    }
  }
  std::string_view client = lower;
  if (client.starts_with("aws_")) client.remove_prefix(4);
  for (const auto& a : kClientKeys) {
    if (a.name == client) {
      *key = a.key;
      return Kind::kImplemented;
    }
  }
  for (auto r : kRefused) {
    if (r == lower || r == client) return Kind::kRefused;
  }
  return Kind::kUnknown;
}

// object_store's boolean spellings.
Result<bool> ParseBool(const std::string& name, const std::string& value) {
  const std::string v = Lower(value);
  if (v == "1" || v == "true" || v == "on" || v == "yes" || v == "y") return true;
  if (v == "0" || v == "false" || v == "off" || v == "no" || v == "n") return false;
  return Status::Invalid("storage option ", name, ": '", value, "' is not a boolean (true/false)");
}

// humantime durations as object_store takes them: "5s", "500ms", "1m 30s".
Result<double> ParseDuration(const std::string& name, const std::string& value) {
  size_t i = 0;
  double total = 0;
  bool any = false;
  auto bad = [&] {
    return Status::Invalid("storage option ", name, ": '", value, "' is not a duration such as 5s or 500ms");
  };
  while (i < value.size()) {
    if (value[i] == ' ') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < value.size() && std::isdigit(static_cast<unsigned char>(value[j]))) ++j;
    if (j == i) return bad();
    const double n = std::strtod(value.substr(i, j - i).c_str(), nullptr);
    size_t k = j;
    while (k < value.size() && std::isalpha(static_cast<unsigned char>(value[k]))) ++k;
    const std::string unit = value.substr(j, k - j);
    double scale;
    if (unit == "ns" || unit == "nsec") scale = 1e-9;
    else if (unit == "us" || unit == "usec") scale = 1e-6;
    else if (unit == "ms" || unit == "msec") scale = 1e-3;
    else if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second" || unit == "seconds") scale = 1;
    else if (unit == "m" || unit == "min" || unit == "mins" || unit == "minute" || unit == "minutes") scale = 60;
    else if (unit == "h" || unit == "hr" || unit == "hrs" || unit == "hour" || unit == "hours") scale = 3600;
    else return bad();
    total += n * scale;
    any = true;
    i = k;
  }
  if (!any) return bad();
  return total;
}

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string_view::npos) env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

struct Given {
  std::string name;  // as the caller spelled it, for messages
  std::string value;
};

}  // namespace

bool IsS3Uri(const std::string& uri) { return Lower(uri.substr(0, 5)) == "s3://"; }

Result<std::optional<S3Config>> ResolveStorageOptions(
    const std::string& uri, const StorageOptions& options,
    const std::optional<std::map<std::string, std::string>>& env_in) {
  std::map<Key, Given> given;
  for (const auto& [name, value] : options) {
    Key key{};
    switch (Classify(Lower(name), &key)) {
      case Kind::kRefused:
        return Status::NotImplemented("storage option '", name, "' (for ", uri,
                                      ") is not supported by lance-cpp; see docs/object-storage.md");
      case Kind::kUnknown:
        continue;  // pylance ignores keys it does not know
      case Kind::kImplemented:
        if (given.count(key)) {
          return Status::Invalid("storage options '", given[key].name, "' and '", name,
                                 "' set the same setting for ", uri);
        }
        given[key] = {name, value};
    }
  }
  if (!IsS3Uri(uri)) return std::optional<S3Config>();

  // The environment fills in what the options leave unset; AWS_ALLOW_HTTP
  // and OBJECT_STORE_CLIENT_MAX_RETRIES override them (Lance inserts those
  // unconditionally).
  const auto env = env_in ? *env_in : ProcessEnvironment();
  for (const auto& [name, value] : env) {
    if (name == "OBJECT_STORE_CLIENT_MAX_RETRIES") {
      given[Key::kMaxRetries] = {name, value};
      continue;
    }
    if (!name.starts_with("AWS_")) continue;
    Key key{};
    if (Classify(Lower(name), &key) != Kind::kImplemented) continue;
    if (key == Key::kAllowHttp || !given.count(key)) given[key] = {name, value};
  }
  auto get = [&](Key k) -> const Given* {
    auto it = given.find(k);
    return it == given.end() ? nullptr : &it->second;
  };

  S3Config c;
  std::string rest = uri.substr(5);
  if (rest.find('?') != std::string::npos || rest.find('#') != std::string::npos) {
    return Status::Invalid("S3 URI ", uri, ": query strings are not supported; pass storage options instead");
  }
  const auto slash = rest.find('/');
  c.bucket = rest.substr(0, slash);
  if (slash != std::string::npos) c.key_prefix = rest.substr(slash + 1);
  while (!c.key_prefix.empty() && c.key_prefix.back() == '/') c.key_prefix.pop_back();
  if (c.bucket.empty()) return Status::Invalid("S3 URI ", uri, " names no bucket");

  auto set_bool = [&](Key k, bool* out) -> Status {
    const Given* g = get(k);
    if (g == nullptr) return Status::OK();
    LANCE_ASSIGN_OR_RAISE(*out, ParseBool(g->name, g->value));
    return Status::OK();
  };
  auto set_duration = [&](Key k, double* out) -> Status {
    const Given* g = get(k);
    if (g == nullptr) return Status::OK();
    LANCE_ASSIGN_OR_RAISE(*out, ParseDuration(g->name, g->value));
    return Status::OK();
  };
  LANCE_RETURN_NOT_OK(set_bool(Key::kAllowHttp, &c.allow_http));
  LANCE_RETURN_NOT_OK(set_bool(Key::kVirtualHosted, &c.virtual_hosted_style));
  LANCE_RETURN_NOT_OK(set_bool(Key::kSkipSignature, &c.skip_signature));
  LANCE_RETURN_NOT_OK(set_bool(Key::kAllowInvalidCertificates, &c.allow_invalid_certificates));
  LANCE_RETURN_NOT_OK(set_duration(Key::kConnectTimeout, &c.connect_timeout_seconds));
  LANCE_RETURN_NOT_OK(set_duration(Key::kTimeout, &c.request_timeout_seconds));
  if (auto* g = get(Key::kMaxRetries)) {
    char* end = nullptr;
    const long n = std::strtol(g->value.c_str(), &end, 10);
    if (g->value.empty() || *end != '\0' || n < 0 || n > 1000) {
      return Status::Invalid("storage option ", g->name, ": '", g->value, "' is not a retry count");
    }
    c.max_retries = static_cast<int>(n);
  }
  if (auto* g = get(Key::kConditionalPut)) {
    if (Lower(g->value) != "etag") {
      return Status::NotImplemented("storage option ", g->name, "=", g->value,
                                    ": lance-cpp commits with If-None-Match (etag) only");
    }
  }
  if (auto* g = get(Key::kProxyUrl)) c.proxy_url = g->value;

  // aws_endpoint_url_s3 wins over aws_endpoint (Lance's effective_s3_endpoint).
  const Given* endpoint = get(Key::kEndpointS3);
  if (endpoint == nullptr) endpoint = get(Key::kEndpoint);
  if (endpoint != nullptr && !endpoint->value.empty()) {
    const std::string& e = endpoint->value;
    const auto sep = e.find("://");
    if (sep == std::string::npos) {
      return Status::Invalid("storage option ", endpoint->name, ": '", e, "' is not a URL such as https://host:port");
    }
    c.endpoint_scheme = Lower(e.substr(0, sep));
    if (c.endpoint_scheme != "http" && c.endpoint_scheme != "https") {
      return Status::Invalid("storage option ", endpoint->name, ": '", e, "' is neither http:// nor https://");
    }
    std::string host = e.substr(sep + 3);
    const auto path = host.find('/');
    if (path != std::string::npos) {
      if (host.find_first_not_of('/', path) != std::string::npos) {
        return Status::NotImplemented("storage option ", endpoint->name, ": '", e,
                                      "' has a path; lance-cpp takes endpoints as scheme://host[:port]");
      }
      host.resize(path);
    }
    if (host.empty()) return Status::Invalid("storage option ", endpoint->name, ": '", e, "' names no host");
    c.endpoint = e.substr(0, sep + 3) + host;
    // Virtual-hosted with an endpoint: object_store takes the endpoint as
    // already naming the bucket; Arrow adds the bucket itself.
    if (c.virtual_hosted_style && host.starts_with(c.bucket + ".")) host = host.substr(c.bucket.size() + 1);
    c.endpoint_host = host;
    if (c.endpoint_scheme == "http" && !c.allow_http) {
      return Status::Invalid("cannot open ", uri, ": endpoint ", e,
                             " is plain HTTP; set the storage option allow_http=true to allow it");
    }
  }

  if (auto* g = get(Key::kRegion)) c.region = g->value;
  if (c.region.empty()) {
    if (auto* g = get(Key::kDefaultRegion)) c.region = g->value;
  }
  const Given* ak = get(Key::kAccessKeyId);
  const Given* sk = get(Key::kSecretAccessKey);
  // Static keys only as a pair, as object_store; else the AWS default chain.
  if (ak != nullptr && sk != nullptr && !ak->value.empty() && !sk->value.empty()) {
    c.access_key_id = ak->value;
    c.secret_access_key = sk->value;
    if (auto* g = get(Key::kSessionToken)) c.session_token = g->value;
  }
  return std::optional<S3Config>(std::move(c));
}

}  // namespace lance::io
