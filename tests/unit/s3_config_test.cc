// ResolveStorageOptions: pylance 14's storage option keys, aliases and
// environment precedence (docs/object-storage.md section 1). No network.
#include "lance/io/s3_config.h"

#include <gtest/gtest.h>

#include "lance/io/s3_conditional_put.h"

namespace lance::io {
namespace {

using Env = std::map<std::string, std::string>;
const StorageOptions kMoto = {{"aws_endpoint", "http://127.0.0.1:5000"}, {"allow_http", "true"}};

S3Config Resolve(const StorageOptions& options, const Env& env = {}, const std::string& uri = "s3://bkt/a/ds") {
  auto r = ResolveStorageOptions(uri, options, env);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok() || !*r) return {};
  return **r;
}

Status Error(const StorageOptions& options, const Env& env = {}, const std::string& uri = "s3://bkt/ds") {
  return ResolveStorageOptions(uri, options, env).status();
}

TEST(S3ConfigTest, BucketAndPrefixFromUri) {
  const S3Config c = Resolve({}, {}, "s3://my-bucket/some/dataset.lance/");
  EXPECT_EQ(c.bucket, "my-bucket");
  EXPECT_EQ(c.key_prefix, "some/dataset.lance");
  EXPECT_EQ(Resolve({}, {}, "s3://b2").key_prefix, "");
  EXPECT_FALSE(Error({}, {}, "s3:///ds").ok());
  EXPECT_FALSE(Error({}, {}, "s3://bkt/ds?endpoint_override=x").ok());
}

TEST(S3ConfigTest, EveryAliasOfEachSetting) {
  struct Case {
    std::string key, value;
    std::string S3Config::*field;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"aws_endpoint", "https://h:1", &S3Config::endpoint, "https://h:1"},
      {"aws_endpoint_url", "https://h:2", &S3Config::endpoint, "https://h:2"},
      {"endpoint", "https://h:3", &S3Config::endpoint, "https://h:3"},
      {"endpoint_url", "https://h:4", &S3Config::endpoint, "https://h:4"},
      {"AWS_Endpoint", "https://h:5", &S3Config::endpoint, "https://h:5"},  // keys are case-insensitive
      {"aws_endpoint_url_s3", "https://h:6", &S3Config::endpoint, "https://h:6"},
      {"aws_region", "eu-west-1", &S3Config::region, "eu-west-1"},
      {"region", "eu-west-2", &S3Config::region, "eu-west-2"},
      {"aws_default_region", "eu-west-3", &S3Config::region, "eu-west-3"},
      {"default_region", "eu-north-1", &S3Config::region, "eu-north-1"},
      {"proxy_url", "http://proxy:3128", &S3Config::proxy_url, "http://proxy:3128"},
      {"aws_proxy_url", "http://proxy:3129", &S3Config::proxy_url, "http://proxy:3129"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.key);
    EXPECT_EQ(Resolve({{c.key, c.value}}).*c.field, c.want);
  }
  const std::vector<std::string> token_keys = {"aws_session_token", "aws_token", "session_token", "token"};
  for (const auto& k : token_keys) {
    SCOPED_TRACE(k);
    const S3Config c = Resolve({{"access_key_id", "AK"}, {"secret_access_key", "SK"}, {k, "TOK"}});
    EXPECT_EQ(c.access_key_id, "AK");
    EXPECT_EQ(c.secret_access_key, "SK");
    EXPECT_EQ(c.session_token, "TOK");
  }
  const std::vector<std::string> http_keys = {"allow_http", "aws_allow_http", "ALLOW_HTTP"};
  for (const auto& k : http_keys) {
    SCOPED_TRACE(k);
    EXPECT_TRUE(Resolve({{"aws_endpoint", "http://h:1"}, {k, "true"}}).allow_http);
  }
  for (const std::string k : {"aws_virtual_hosted_style_request", "virtual_hosted_style_request"}) {
    EXPECT_TRUE(Resolve({{k, "true"}}).virtual_hosted_style) << k;
  }
  for (const std::string k : {"aws_skip_signature", "skip_signature"}) {
    EXPECT_TRUE(Resolve({{k, "yes"}}).skip_signature) << k;
  }
  EXPECT_TRUE(Resolve({{"aws_allow_invalid_certificates", "1"}}).allow_invalid_certificates);
  EXPECT_EQ(Resolve({{"client_max_retries", "7"}}).max_retries, 7);
  EXPECT_DOUBLE_EQ(Resolve({{"connect_timeout", "500ms"}}).connect_timeout_seconds, 0.5);
  EXPECT_DOUBLE_EQ(Resolve({{"aws_timeout", "1m 30s"}}).request_timeout_seconds, 90);
  // The same setting twice under two aliases is ambiguous.
  EXPECT_FALSE(Error({{"aws_region", "a"}, {"region", "b"}}).ok());
}

TEST(S3ConfigTest, StaticKeysOnlyAsAPair) {
  const S3Config c = Resolve({{"aws_access_key_id", "AK"}, {"aws_session_token", "T"}});
  EXPECT_EQ(c.access_key_id, "");
  EXPECT_EQ(c.session_token, "");
}

TEST(S3ConfigTest, RegionPrecedence) {
  EXPECT_EQ(Resolve({{"aws_region", "r1"}, {"aws_default_region", "r2"}}).region, "r1");
  EXPECT_EQ(Resolve({}, {{"AWS_DEFAULT_REGION", "r2"}}).region, "r2");
  EXPECT_EQ(Resolve({}, {{"AWS_REGION", "r1"}, {"AWS_DEFAULT_REGION", "r2"}}).region, "r1");
  EXPECT_EQ(Resolve({}).region, "");  // resolved when the store is opened
}

TEST(S3ConfigTest, OptionBeatsEnvironment) {
  const Env env = {{"AWS_ENDPOINT", "http://bad:1"}, {"AWS_REGION", "env-region"},
                   {"AWS_ACCESS_KEY_ID", "envak"}, {"AWS_SECRET_ACCESS_KEY", "envsk"}};
  const S3Config c = Resolve({{"aws_endpoint", "http://good:2"}, {"allow_http", "true"}, {"aws_region", "opt"}}, env);
  EXPECT_EQ(c.endpoint, "http://good:2");
  EXPECT_EQ(c.region, "opt");
  EXPECT_EQ(c.access_key_id, "envak");  // unset options come from the environment
  EXPECT_EQ(c.secret_access_key, "envsk");
}

TEST(S3ConfigTest, EnvironmentOnly) {
  const Env env = {{"AWS_ENDPOINT_URL", "http://127.0.0.1:9"}, {"AWS_ALLOW_HTTP", "true"},
                   {"AWS_REGION", "us-east-1"}, {"AWS_ACCESS_KEY_ID", "a"}, {"AWS_SECRET_ACCESS_KEY", "s"},
                   {"AWS_SESSION_TOKEN", "t"}, {"REGION", "ignored"}, {"HOME", "/root"}};
  const S3Config c = Resolve({}, env);
  EXPECT_EQ(c.endpoint, "http://127.0.0.1:9");
  EXPECT_EQ(c.endpoint_host, "127.0.0.1:9");
  EXPECT_EQ(c.endpoint_scheme, "http");
  EXPECT_TRUE(c.allow_http);
  EXPECT_EQ(c.region, "us-east-1");
  EXPECT_EQ(c.session_token, "t");
}

TEST(S3ConfigTest, EnvironmentAllowHttpAndRetriesOverrideOptions) {
  // Lance inserts AWS_ALLOW_HTTP unconditionally: env beats option.
  Status st = Error({{"aws_endpoint", "http://h:1"}, {"allow_http", "true"}}, {{"AWS_ALLOW_HTTP", "false"}});
  EXPECT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_TRUE(Resolve({{"aws_endpoint", "http://h:1"}}, {{"AWS_ALLOW_HTTP", "true"}}).allow_http);
  EXPECT_EQ(Resolve({{"client_max_retries", "1"}}, {{"OBJECT_STORE_CLIENT_MAX_RETRIES", "9"}}).max_retries, 9);
}

TEST(S3ConfigTest, EndpointUrlS3WinsOverEndpoint) {
  EXPECT_EQ(Resolve({{"aws_endpoint", "https://a:1"}, {"aws_endpoint_url_s3", "https://b:2"}}).endpoint, "https://b:2");
  EXPECT_EQ(Resolve({{"aws_endpoint", "https://a:1"}}, {{"AWS_ENDPOINT_URL_S3", "https://b:2"}}).endpoint,
            "https://b:2");
}

TEST(S3ConfigTest, HttpEndpointNeedsAllowHttp) {
  Status st = Error({{"aws_endpoint", "http://127.0.0.1:5000"}});
  ASSERT_TRUE(st.IsInvalid());
  EXPECT_NE(st.message().find("allow_http"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("s3://bkt/ds"), std::string::npos) << st.message();
  EXPECT_TRUE(Error({{"aws_endpoint", "http://h:1"}, {"allow_http", "false"}}).IsInvalid());
  EXPECT_TRUE(Error(kMoto).ok());
  EXPECT_TRUE(Error({{"aws_endpoint", "https://h:1"}}).ok());
}

TEST(S3ConfigTest, MalformedValuesNamed) {
  const std::vector<StorageOptions> bad = {
      {{"allow_http", "maybe"}}, {{"aws_endpoint", "127.0.0.1:5000"}}, {{"aws_endpoint", "ftp://h"}},
      {{"connect_timeout", "5"}}, {{"timeout", "5 parsecs"}}, {{"client_max_retries", "-1"}},
  };
  for (const auto& o : bad) {
    Status st = Error(o);
    EXPECT_FALSE(st.ok()) << o.begin()->first;
    EXPECT_NE(st.message().find(o.begin()->first), std::string::npos) << st.message();
  }
}

TEST(S3ConfigTest, UnimplementedKeysRefusedByName) {
  for (const std::string k : {"aws_profile", "aws_s3_express", "aws_request_payer", "aws_server_side_encryption",
                              "aws_sse_kms_key_id", "aws_role_arn", "aws_web_identity_token_file",
                              "aws_unsigned_payload", "aws_checksum_algorithm", "user_agent", "aws_user_agent",
                              "client_retry_timeout", "block_size", "Aws_Copy_If_Not_Exists"}) {
    Status st = Error({{k, "x"}});
    EXPECT_TRUE(st.IsNotImplemented()) << k << ": " << st.ToString();
    EXPECT_NE(st.message().find(k), std::string::npos) << st.message();
    // Refused for local paths too: the same dict must not mean different things.
    EXPECT_TRUE(Error({{k, "x"}}, {}, "/tmp/ds").IsNotImplemented()) << k;
  }
  EXPECT_TRUE(Error({{"aws_conditional_put", "etag"}}).ok());
  EXPECT_TRUE(Error({{"aws_conditional_put", "dynamo:table"}}).IsNotImplemented());
}

TEST(S3ConfigTest, UnknownKeysIgnoredAsPylance) {
  EXPECT_TRUE(Error({{"no_such_option", "1"}}).ok());
  // A local path takes S3 options without meaning anything by them, as pylance.
  auto r = ResolveStorageOptions("/tmp/ds", {{"aws_region", "x"}, {"no_such_option", "1"}}, Env{});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_value());
}

TEST(S3ConfigTest, VirtualHostedEndpointNamesTheBucket) {
  const S3Config c =
      Resolve({{"aws_endpoint", "https://bkt.minio.local:9000"}, {"aws_virtual_hosted_style_request", "true"}});
  EXPECT_EQ(c.endpoint_host, "minio.local:9000");  // Arrow adds the bucket back
  EXPECT_EQ(S3ObjectUrl(c, "r", "ds/_versions/1.manifest"), "https://bkt.minio.local:9000/ds/_versions/1.manifest");
}

TEST(S3ConfigTest, ObjectUrls) {
  S3Config c = Resolve(kMoto);
  EXPECT_EQ(S3ObjectUrl(c, "us-east-1", "a/ds/_versions/x y+.manifest"),
            "http://127.0.0.1:5000/bkt/a/ds/_versions/x%20y%2B.manifest");
  S3Config aws = Resolve({});
  EXPECT_EQ(S3ObjectUrl(aws, "eu-west-1", "k"), "https://s3.eu-west-1.amazonaws.com/bkt/k");
  aws.virtual_hosted_style = true;
  EXPECT_EQ(S3ObjectUrl(aws, "eu-west-1", "k"), "https://bkt.s3.eu-west-1.amazonaws.com/k");
}

}  // namespace
}  // namespace lance::io
