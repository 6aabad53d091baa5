#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "proxy/services/options.h"

namespace shardctl::proxy {
namespace {

using namespace std::chrono_literals;
using Args = std::vector<std::string>;

ProxyOptions MustParse(const Args& args) {
  auto options = ParseProxyArgs(args);
  EXPECT_TRUE(options) << options.error().message();
  return options ? *options : ProxyOptions{};
}

std::string ParseError(const Args& args) {
  auto options = ParseProxyArgs(args);
  EXPECT_FALSE(options);
  return options ? "" : options.error().message();
}

TEST(ProxyOptionsTest, DefaultsNeedOnlyTheCluster) {
  const ProxyOptions options = MustParse({"--cluster", "127.0.0.1:7000"});
  EXPECT_EQ(options.cluster, (std::vector<Endpoint>{{"127.0.0.1", 7000}}));
  EXPECT_EQ(options.listen, (Endpoint{"127.0.0.1", 6379}));
  EXPECT_FALSE(options.threads.has_value());  // the CPUs it may run on, decided at start
  EXPECT_EQ(options.max_clients, 10000);
  EXPECT_EQ(options.max_pending, 1024u);
  EXPECT_EQ(options.max_client_buffer, 64ull << 20);
  EXPECT_EQ(options.backend_timeout, 5000ms);
  EXPECT_EQ(options.refresh_interval, 5000ms);
  EXPECT_FALSE(options.metrics_port.has_value());  // no /metrics unless asked
  EXPECT_EQ(options.metrics_bind, "127.0.0.1");
}

TEST(ProxyOptionsTest, EveryFlagInBothSpellings) {
  const ProxyOptions options = MustParse({"--cluster=10.0.0.1:7000,:7001",
                                          "--cluster",
                                          "7002",
                                          "--listen",
                                          "[::1]:6380",
                                          "--threads=3",
                                          "--max-clients",
                                          "5",
                                          "--max-pending=4",
                                          "--max-client-buffer",
                                          "1mb",
                                          "--pubsub-buffer-limit=2mb",
                                          "--read-from",
                                          "prefer-replica",
                                          "--timeout",
                                          "300ms",
                                          "--refresh-interval=2s",
                                          "--pidfile",
                                          "/tmp/p.pid",
                                          "--metrics-port",
                                          "9122",
                                          "--metrics-bind=::1",
                                          "--quiet"});
  EXPECT_EQ(options.cluster,
            (std::vector<Endpoint>{{"10.0.0.1", 7000}, {"127.0.0.1", 7001}, {"127.0.0.1", 7002}}));
  EXPECT_EQ(options.listen, (Endpoint{"::1", 6380}));
  EXPECT_EQ(options.listen.ToString(), "[::1]:6380");
  EXPECT_EQ(options.threads, 3);
  EXPECT_EQ(options.max_clients, 5);
  EXPECT_EQ(options.max_pending, 4u);
  EXPECT_EQ(options.max_client_buffer, 1u << 20);
  EXPECT_EQ(options.pubsub_buffer_limit, 2u << 20);
  EXPECT_EQ(options.read_from, ReadFrom::kPreferReplica);
  EXPECT_EQ(options.backend_timeout, 300ms);
  EXPECT_EQ(options.refresh_interval, 2000ms);
  EXPECT_EQ(options.pidfile, "/tmp/p.pid");
  EXPECT_EQ(options.metrics_port, 9122);
  EXPECT_EQ(options.metrics_bind, "::1");
  EXPECT_TRUE(options.quiet);
}

TEST(ProxyOptionsTest, TlsFilesGoTogetherAndTlsReachesTheShardsByDefault) {
  const ProxyOptions plain = MustParse({"--cluster", "1:1"});
  EXPECT_FALSE(plain.tls_enabled());
  const ProxyOptions tls = MustParse({"--cluster", "1:1", "--tls-cert", "p.crt", "--tls-key=p.key",
                                      "--tls-ca", "ca.crt", "--tls-auth-clients", "optional"});
  EXPECT_TRUE(tls.tls_enabled());
  EXPECT_EQ(tls.tls.cert_file, "p.crt");
  EXPECT_EQ(tls.tls.key_file, "p.key");
  EXPECT_EQ(tls.tls.ca_file, "ca.crt");
  EXPECT_EQ(tls.tls_auth_clients, common::TlsClientCertificates::kOptional);
  EXPECT_TRUE(tls.tls_to_shards);
  EXPECT_FALSE(MustParse({"--cluster", "1:1", "--tls-cert", "p.crt", "--tls-key", "p.key",
                          "--tls-ca", "ca.crt", "--tls-to-shards", "no"})
                   .tls_to_shards);
}

TEST(ProxyOptionsTest, HelpAndVersionNeedNothingElse) {
  EXPECT_TRUE(MustParse({"--help"}).help);
  EXPECT_TRUE(MustParse({"-h"}).help);
  EXPECT_TRUE(MustParse({"--version"}).version);
}

struct BadArgsCase {
  Args args;
  std::string error;
};

class ProxyOptionsErrorTest : public testing::TestWithParam<BadArgsCase> {};

TEST_P(ProxyOptionsErrorTest, NamesTheFlagAndTheFix) {
  EXPECT_EQ(ParseError(GetParam().args), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ProxyOptionsErrorTest,
    testing::Values(
        BadArgsCase{{},
                    "--cluster is required: the address of any node of the cluster, e.g. "
                    "--cluster 127.0.0.1:7000"},
        BadArgsCase{{"--cluster", "127.0.0.1:70000"},
                    "--cluster: bad address \"127.0.0.1:70000\": the port must be a number from "
                    "1 to 65535 (write HOST:PORT, e.g. 127.0.0.1:7000)"},
        BadArgsCase{{"--cluster", "::1:7000"},
                    "--cluster: bad address \"::1:7000\": put an IPv6 host in brackets (write "
                    "HOST:PORT, e.g. 127.0.0.1:7000)"},
        BadArgsCase{{"--cluster", "1:1", "--threads", "0"},
                    "--threads: expected a number from 1 to 256, got \"0\""},
        BadArgsCase{{"--cluster", "1:1", "--threads"},
                    "--threads needs a value (see shardproxy "
                    "--help)"},
        BadArgsCase{{"--cluster", "--threads", "2"},
                    "--cluster needs a value (see shardproxy --help)"},
        BadArgsCase{{"--cluster", "1:1", "--max-client-buffer", "10"},
                    "--max-client-buffer: expected a size of at least 1kb (e.g. 64mb), got "
                    "\"10\""},
        BadArgsCase{{"--cluster", "1:1", "--pubsub-buffer-limit", "lots"},
                    "--pubsub-buffer-limit: expected a size of at least 1kb (e.g. 32mb), got "
                    "\"lots\""},
        BadArgsCase{{"--cluster", "1:1", "--read-from", "replicas"},
                    "--read-from: expected primary, prefer-replica or replica, got \"replicas\""},
        BadArgsCase{{"--cluster", "1:1", "--timeout", "0"},
                    "--timeout: must be more than 0 (e.g. 5s), got \"0\""},
        BadArgsCase{{"--cluster", "1:1", "--metrics-port", "70000"},
                    "--metrics-port: expected a number from 1 to 65535, got \"70000\""},
        BadArgsCase{{"--cluster", "1:1", "--metrics-port", "0"},
                    "--metrics-port: expected a number from 1 to 65535, got \"0\""},
        BadArgsCase{{"--cluster", "1:1", "--metrics-bind", "localhost"},
                    "--metrics-bind: expected an IP address (e.g. 127.0.0.1 or ::1), got "
                    "\"localhost\""},
        BadArgsCase{{"--cluster", "1:1", "--tls-cert", "a.crt", "--tls-key", "a.key"},
                    "--tls-cert, --tls-key and --tls-ca go together: give all three (the proxy's "
                    "certificate, its key, and the CA that signed the shards' and clients' "
                    "certificates)"},
        BadArgsCase{{"--cluster", "1:1", "--tls-auth-clients", "yes"},
                    "--tls-auth-clients needs --tls-cert, --tls-key and --tls-ca"},
        BadArgsCase{{"--cluster", "1:1", "--tls-auth-clients", "maybe"},
                    "--tls-auth-clients: expected no, yes or optional, got \"maybe\""},
        BadArgsCase{{"--cluster", "1:1", "--tls-to-shards", "off"},
                    "--tls-to-shards: expected yes or no, got \"off\""},
        BadArgsCase{{"--cluster", "1:1", "--bogus", "1"},
                    "unknown flag --bogus (see shardproxy --help)"},
        BadArgsCase{{"--cluster", "1:1", "stray"},
                    "unexpected argument \"stray\" (see shardproxy --help)"}));

}  // namespace
}  // namespace shardctl::proxy
