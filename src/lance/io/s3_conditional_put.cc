#include "lance/io/s3_conditional_put.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>

#include <curl/curl.h>
#include <openssl/sha.h>

namespace lance::io {

namespace {

std::string HexSha256(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

// RFC 3986 unreserved characters stay, '/' stays; everything else is %XX.
std::string EncodeKey(const std::string& key) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char ch : key) {
    if (std::isalnum(ch) || ch == '-' || ch == '_' || ch == '.' || ch == '~' || ch == '/') {
      out += static_cast<char>(ch);
    } else {
      out += '%';
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    }
  }
  return out;
}

size_t AppendBody(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

// The text of <Tag>...</Tag> in an S3 error body, or "".
std::string XmlField(const std::string& body, const std::string& tag) {
  const auto start = body.find("<" + tag + ">");
  if (start == std::string::npos) return "";
  const auto from = start + tag.size() + 2;
  const auto end = body.find("</" + tag + ">", from);
  return end == std::string::npos ? "" : body.substr(from, end - from);
}

struct Response {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::string curl_error;
};

Response PutOnce(const S3Config& config, const S3Credentials& creds, const std::string& region,
                 const std::string& url, std::string_view bytes) {
  Response r;
  CURL* curl = curl_easy_init();
  if (curl == nullptr) {
    r.code = CURLE_FAILED_INIT;
    r.curl_error = "curl_easy_init failed";
    return r;
  }
  char error[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "If-None-Match: *");
  headers = curl_slist_append(headers, "Content-Type: application/octet-stream");
  // No "Expect:" override to skip 100-continue: curl 7.88 signs the empty
  // header it then does not send (403 SignatureDoesNotMatch, observed).
  // curl 7.88 signs the headers it is given but does not add the payload
  // hash S3 requires in the signature.
  headers = curl_slist_append(headers, ("x-amz-content-sha256: " + HexSha256(bytes)).c_str());
  if (!config.skip_signature && !creds.session_token.empty()) {
    headers = curl_slist_append(headers, ("x-amz-security-token: " + creds.session_token).c_str());
  }
  const std::string sigv4 = "aws:amz:" + region + ":s3";
  const std::string userpwd = creds.access_key_id + ":" + creds.secret_access_key;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, "PUT");
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, bytes.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(bytes.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  if (!config.skip_signature) {
    curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, sigv4.c_str());
    curl_easy_setopt(curl, CURLOPT_USERPWD, userpwd.c_str());
  }
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &r.body);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config.connect_timeout_seconds * 1000));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(config.request_timeout_seconds * 1000));
  if (!config.proxy_url.empty()) curl_easy_setopt(curl, CURLOPT_PROXY, config.proxy_url.c_str());
  if (config.allow_invalid_certificates) {
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  r.code = curl_easy_perform(curl);
  if (r.code == CURLE_OK) {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r.status);
  } else {
    r.curl_error = error[0] ? error : curl_easy_strerror(r.code);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return r;
}

}  // namespace

std::string S3ObjectUrl(const S3Config& config, const std::string& region, const std::string& key) {
  const std::string path = EncodeKey(key);
  if (!config.endpoint.empty()) {
    // object_store: a virtual-hosted endpoint already names the bucket.
    if (config.virtual_hosted_style) return config.endpoint + "/" + path;
    return config.endpoint + "/" + EncodeKey(config.bucket) + "/" + path;
  }
  if (config.virtual_hosted_style) return "https://" + config.bucket + ".s3." + region + ".amazonaws.com/" + path;
  return "https://s3." + region + ".amazonaws.com/" + EncodeKey(config.bucket) + "/" + path;
}

Status S3PutIfNotExists(const S3Config& config, const S3Credentials& credentials, const std::string& region,
                        const std::string& key, std::string_view bytes, bool* retried) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  const std::string url = S3ObjectUrl(config, region, key);
  const std::string where = "s3://" + config.bucket + "/" + key;
  *retried = false;
  thread_local std::mt19937_64 rng{std::random_device{}()};
  for (int attempt = 0;; ++attempt) {
    Response r = PutOnce(config, credentials, region, url, bytes);
    const bool transient = r.code != CURLE_OK || r.status >= 500 || r.status == 429;
    if (!transient) {
      if (r.status == 200) return Status::OK();
      if (r.status == 412 || r.status == 304) return Status::AlreadyExists(where, " already exists");
      // ConditionalRequestConflict: a concurrent conditional write to the
      // key; object_store reports it as AlreadyExists too (a rebase).
      if (r.status == 409) return Status::AlreadyExists(where, ": concurrent conditional write (409)");
      const std::string code = XmlField(r.body, "Code");
      const std::string message = XmlField(r.body, "Message");
      return Status::IOError("conditional PUT of ", where, " (", url, ") failed: HTTP ", r.status,
                             code.empty() ? "" : " " + code, message.empty() ? "" : ": " + message);
    }
    if (attempt >= config.max_retries) {
      if (r.code != CURLE_OK) {
        return Status::IOError("conditional PUT of ", where, " (", url, ") failed: ", r.curl_error);
      }
      return Status::IOError("conditional PUT of ", where, " (", url, ") failed: HTTP ", r.status, " ",
                             XmlField(r.body, "Code"), " after ", attempt + 1, " attempts");
    }
    *retried = true;
    // object_store's backoff: 100 ms base, doubling, jittered.
    const int64_t cap = 100LL << std::min(attempt, 6);
    std::this_thread::sleep_for(std::chrono::milliseconds(cap / 2 + static_cast<int64_t>(rng() % (cap / 2 + 1))));
  }
}

}  // namespace lance::io
