// common/endpoint.h and common/numbers.h: the one host:port type and the one integer parser.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "common/endpoint.h"
#include "common/numbers.h"

namespace shardctl::common {
namespace {

TEST(ParseIntegerTest, WholeStringOnly) {
  EXPECT_EQ(ParseInteger<int>("42"), 42);
  EXPECT_EQ(ParseInteger<int>("-7"), -7);
  EXPECT_EQ(ParseInteger<int>("0"), 0);
  EXPECT_EQ(ParseInteger<int>(""), std::nullopt);
  EXPECT_EQ(ParseInteger<int>(" 42"), std::nullopt);
  EXPECT_EQ(ParseInteger<int>("42 "), std::nullopt);
  EXPECT_EQ(ParseInteger<int>("42x"), std::nullopt);
  EXPECT_EQ(ParseInteger<int>("+42"), std::nullopt);
  EXPECT_EQ(ParseInteger<unsigned>("-1"), std::nullopt);
}

TEST(ParseIntegerTest, RangeOfTheType) {
  EXPECT_EQ(ParseInteger<int16_t>("32767"), 32767);
  EXPECT_EQ(ParseInteger<int16_t>("32768"), std::nullopt);
  EXPECT_EQ(ParseInteger<uint64_t>("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseInteger<uint64_t>("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseInteger<int>("ff", 16), 255);
}

TEST(ParseIntegerTest, InRange) {
  EXPECT_EQ(ParseIntegerIn("1", 1, 65535), 1);
  EXPECT_EQ(ParseIntegerIn("65535", 1, 65535), 65535);
  EXPECT_EQ(ParseIntegerIn("0", 1, 65535), std::nullopt);
  EXPECT_EQ(ParseIntegerIn("65536", 1, 65535), std::nullopt);
}

// NaN passes every range check (each comparison with it is false): "--threshold nan%" once said
// "balanced: nothing to move".
TEST(ParseDecimalTest, FiniteNumbersOnly) {
  EXPECT_EQ(ParseDecimal("1.5"), 1.5);
  EXPECT_EQ(ParseDecimal("2"), 2.0);
  EXPECT_EQ(ParseDecimal("1e3"), 1000.0);
  EXPECT_EQ(ParseDecimal("-0.25"), -0.25);
  for (const char* text : {"", "nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e400", "1.5x"}) {
    EXPECT_EQ(ParseDecimal(text), std::nullopt) << text;
  }
}

TEST(ParseRedisIntegerTest, FollowsString2ll) {
  EXPECT_EQ(ParseRedisInteger("0"), 0);
  EXPECT_EQ(ParseRedisInteger("-12"), -12);
  EXPECT_EQ(ParseRedisInteger("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParseRedisInteger("-9223372036854775808"), INT64_MIN);
  for (const char* bad :
       {"", "-", "-0", "007", "+1", "1 ", "9223372036854775808", "12345678901234567890"}) {
    EXPECT_EQ(ParseRedisInteger(bad), std::nullopt) << bad;
  }
}

struct EndpointCase {
  std::string text;
  std::string host;
  int port;
};

class ParseEndpointTest : public testing::TestWithParam<EndpointCase> {};

TEST_P(ParseEndpointTest, ReadsWhatUsersType) {
  auto endpoint = ParseEndpoint(GetParam().text, "127.0.0.1");
  ASSERT_TRUE(endpoint) << endpoint.error().message();
  EXPECT_EQ(endpoint->host, GetParam().host);
  EXPECT_EQ(endpoint->port, GetParam().port);
}

INSTANTIATE_TEST_SUITE_P(Forms, ParseEndpointTest,
                         testing::Values(EndpointCase{"10.0.0.1:7000", "10.0.0.1", 7000},
                                         EndpointCase{"redis.local:6379", "redis.local", 6379},
                                         EndpointCase{"[::1]:7000", "::1", 7000},
                                         EndpointCase{"[fe80::1%eth0]:7000", "fe80::1%eth0", 7000},
                                         EndpointCase{":7001", "127.0.0.1", 7001},
                                         EndpointCase{"7002", "127.0.0.1", 7002}));

TEST(ParseEndpointTest, ErrorsSayWhatIsWrongAndShowTheForm) {
  for (const char* text :
       {"host:0", "host:65536", "host:x", "host:", "::1:7000", "[::1:7000", "[]:7000", ""}) {
    auto endpoint = ParseEndpoint(text, "127.0.0.1");
    ASSERT_FALSE(endpoint) << text;
    EXPECT_NE(endpoint.error().message().find("write HOST:PORT"), std::string::npos)
        << endpoint.error().message();
  }
  EXPECT_NE(ParseEndpoint("::1:7000", "h").error().message().find("IPv6 host in brackets"),
            std::string::npos);
}

TEST(ParseServerEndpointTest, TheLastColonSeparatesThePort) {
  EXPECT_EQ(ParseServerEndpoint("127.0.0.1:6381"), (Endpoint{"127.0.0.1", 6381}));
  EXPECT_EQ(ParseServerEndpoint("::1:41002"), (Endpoint{"::1", 41002}));  // Redis 7.0, Valkey 9
  EXPECT_EQ(ParseServerEndpoint("[::1]:41002"), (Endpoint{"::1", 41002}));
  EXPECT_EQ(ParseServerEndpoint("host2.example:41002"), (Endpoint{"host2.example", 41002}));
  EXPECT_EQ(ParseServerEndpoint(":41002"), (Endpoint{"", 41002}));  // unknown-endpoint
  EXPECT_EQ(ParseServerEndpoint("127.0.0.1"), std::nullopt);
  EXPECT_EQ(ParseServerEndpoint("127.0.0.1:0"), std::nullopt);
}

TEST(EndpointTest, ToStringBracketsIpv6Only) {
  EXPECT_EQ((Endpoint{"127.0.0.1", 7000}).ToString(), "127.0.0.1:7000");
  EXPECT_EQ((Endpoint{"::1", 7000}).ToString(), "[::1]:7000");
  EXPECT_EQ((Endpoint{"redis.local", 1}).ToString(), "redis.local:1");
  EXPECT_EQ(FormatEndpoint("fe80::1", 6379), "[fe80::1]:6379");
}

TEST(EndpointTest, RoundTripsThroughItsText) {
  for (const Endpoint& endpoint :
       {Endpoint{"::1", 7000}, Endpoint{"10.1.2.3", 65535}, Endpoint{"a.example", 1}}) {
    auto parsed = ParseEndpoint(endpoint.ToString(), "x");
    ASSERT_TRUE(parsed);
    EXPECT_EQ(*parsed, endpoint);
    EXPECT_EQ(ParseServerEndpoint(endpoint.ToString()), endpoint);
  }
}

}  // namespace
}  // namespace shardctl::common
