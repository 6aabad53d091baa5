#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "launcher/bench/args.h"
#include "launcher/bench/cluster.h"

namespace shardctl::launcher {
namespace {

using namespace std::chrono_literals;
using Args = std::vector<std::string>;

TEST(BenchArgsTest, Defaults) {
  auto options = ParseBenchArgs({"run"});
  ASSERT_TRUE(options.ok()) << options.error().message();
  EXPECT_FALSE(options->help);
  EXPECT_EQ(options->host, "127.0.0.1");
  EXPECT_EQ(options->port, 6379);
  EXPECT_FALSE(options->cluster);
  EXPECT_EQ(options->threads, 1);
  EXPECT_EQ(options->connections, 50);
  EXPECT_EQ(options->pipeline, 1);
  EXPECT_EQ(options->workload.name, "custom");
  EXPECT_TRUE(options->rate.empty());
  EXPECT_EQ(options->duration, kDefaultBenchDuration);
  EXPECT_FALSE(options->requests);
  EXPECT_FALSE(options->json);
}

TEST(BenchArgsTest, EveryFlag) {
  auto options = ParseBenchArgs(
      {"run",          "--cluster", "10.0.0.5:7000", "--threads",   "4",          "--connections=8",
       "--pipeline",   "16",        "--workload",    "mixed-80-20", "--scale",    "0.01",
       "--value-size", "100",       "--rate",        "20k",         "--duration", "3s",
       "--requests",   "1000",      "--json",        "--progress",  "--cpus",     "0-1",
       "--seed",       "99",        "--populate"});
  ASSERT_TRUE(options.ok()) << options.error().message();
  EXPECT_TRUE(options->cluster);
  EXPECT_EQ(options->host, "10.0.0.5");
  EXPECT_EQ(options->port, 7000);
  EXPECT_EQ(options->threads, 4);
  EXPECT_EQ(options->connections, 8);
  EXPECT_EQ(options->pipeline, 16);
  EXPECT_EQ(options->workload.name, "mixed-80-20");
  EXPECT_EQ(options->workload.set_keyspace, 30000u);
  EXPECT_EQ(options->workload.value_size.mean, 100u);
  ASSERT_EQ(options->rate.size(), 1u);
  EXPECT_DOUBLE_EQ(options->rate[0].ops_per_sec, 20000);
  EXPECT_EQ(options->duration, 3s);
  EXPECT_EQ(options->requests, 1000u);
  EXPECT_TRUE(options->json);
  EXPECT_TRUE(options->progress);
  EXPECT_EQ(options->cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(options->seed, 99u);
  EXPECT_TRUE(options->workload.populate);
}

TEST(BenchArgsTest, TlsFiles) {
  auto options =
      ParseBenchArgs({"run", "--tls-ca", "ca.crt", "--tls-cert=c.crt", "--tls-key", "c.key"});
  ASSERT_TRUE(options.ok()) << options.error().message();
  EXPECT_EQ(options->tls_files.ca_file, "ca.crt");
  EXPECT_EQ(options->tls_files.cert_file, "c.crt");
  EXPECT_EQ(options->tls_files.key_file, "c.key");
  EXPECT_EQ(options->tls, nullptr) << "loaded by the command, not the parser";
}

TEST(BenchArgsTest, PresetPipelineUnlessOverridden) {
  auto preset = ParseBenchArgs({"run", "--workload", "redis-vs-dragonfly"});
  ASSERT_TRUE(preset.ok());
  EXPECT_EQ(preset->pipeline, 30);
  auto overridden = ParseBenchArgs({"run", "--workload", "redis-vs-dragonfly", "--pipeline", "1"});
  ASSERT_TRUE(overridden.ok());
  EXPECT_EQ(overridden->pipeline, 1);
}

TEST(BenchArgsTest, Bounds) {
  auto requests_only = ParseBenchArgs({"run", "--requests", "500"});
  ASSERT_TRUE(requests_only.ok());
  EXPECT_FALSE(requests_only->duration) << "--requests alone bounds the run";
  auto profile = ParseBenchArgs({"run", "--rate-profile", "1k:2s,5k:500ms"});
  ASSERT_TRUE(profile.ok());
  EXPECT_EQ(profile->duration, 2500ms) << "a profile's length is the default duration";
  auto longer = ParseBenchArgs({"run", "--rate-profile", "1k:2s", "--duration", "5s"});
  ASSERT_TRUE(longer.ok());
  EXPECT_EQ(longer->duration, 5s);
}

TEST(BenchArgsTest, Help) {
  for (const Args& args : {Args{}, Args{"--help"}, Args{"help"}, Args{"run", "--help"},
                           Args{"run", "--port", "1", "-h"}}) {
    auto options = ParseBenchArgs(args);
    ASSERT_TRUE(options.ok()) << options.error().message();
    EXPECT_TRUE(options->help);
  }
}

struct BadArgs {
  Args args;
  std::string mention;
};

void PrintTo(const BadArgs& bad, std::ostream* out) {
  for (const auto& arg : bad.args) *out << arg << " ";
}

class BenchBadArgsTest : public testing::TestWithParam<BadArgs> {};

TEST_P(BenchBadArgsTest, IsAUsageErrorNamingTheProblem) {
  auto options = ParseBenchArgs(GetParam().args);
  ASSERT_FALSE(options.ok());
  EXPECT_NE(options.error().message().find(GetParam().mention), std::string::npos)
      << options.error().message();
  EXPECT_EQ(options.error().message().find('\n'), std::string::npos) << "one line";
}

INSTANTIATE_TEST_SUITE_P(
    Flags, BenchBadArgsTest,
    testing::Values(BadArgs{{"compare"}, "unknown bench command \"compare\""},
                    BadArgs{{"run", "--threads", "0"}, "--threads"},
                    BadArgs{{"run", "--threads", "many"}, "expected a number from 1 to 256"},
                    BadArgs{{"run", "--connections"}, "--connections needs a value"},
                    BadArgs{{"run", "--pipeline", "--json"}, "--pipeline needs a value"},
                    BadArgs{{"run", "--port", "70000"}, "--port"},
                    BadArgs{{"run", "--cluster", "localhost"}, "write HOST:PORT"},
                    BadArgs{{"run", "--cluster", "localhost:x"}, "--cluster"},
                    BadArgs{{"run", "--workload", "fast"}, "unknown workload \"fast\""},
                    BadArgs{{"run", "--scale", "0"}, "--scale"},
                    BadArgs{{"run", "--scale", "lots"}, "--scale"},
                    BadArgs{{"run", "--ratio", "80/20"}, "GET:SET"},
                    BadArgs{{"run", "--rate", "0"}, "--rate"},
                    BadArgs{{"run", "--rate", "1k", "--rate-profile", "1k:1s"}, "not both"},
                    BadArgs{{"run", "--rate-profile", "1k"}, "RATE:DURATION"},
                    BadArgs{{"run", "--duration", "0s"}, "--duration"},
                    BadArgs{{"run", "--duration", "soon"}, "--duration"},
                    BadArgs{{"run", "--requests", "0"}, "--requests"},
                    BadArgs{{"run", "--cpus", "3-1"}, "--cpus"},
                    BadArgs{{"run", "--tls-cert", "c.crt", "--tls-key", "c.key"}, "need --tls-ca"},
                    BadArgs{{"run", "--tls-ca", "ca.crt", "--tls-cert", "c.crt"},
                            "--tls-cert and --tls-key go together"},
                    BadArgs{{"run", "--tls-ca", ""}, "--tls-ca: give a file"},
                    BadArgs{{"run", "--value-size", "0"}, "--value-size"},
                    BadArgs{{"run", "--json=yes"}, "--json takes no value"},
                    BadArgs{{"run", "--colour"}, "unknown flag --colour"},
                    BadArgs{{"run", "6379"}, "unexpected argument \"6379\""}));

}  // namespace
}  // namespace shardctl::launcher
