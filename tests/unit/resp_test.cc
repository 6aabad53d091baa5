#include "common/resp.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace shardctl::common {
namespace {

using namespace std::string_literals;
using namespace std::string_view_literals;

struct ValidCase {
  std::string_view name;
  std::string_view bytes;
  char type;  // the frame's reported type
};

void PrintTo(const ValidCase& valid, std::ostream* os) { *os << valid.name; }

// Frames marked "redis" were captured from redis-server 7.0.15 (RESP3 after HELLO 3 unless noted;
// the attribute, verbatim, bignum, true/false, map, set and double replies via DEBUG PROTOCOL).
const ValidCase kValidCases[] = {
    {"simple", "+OK\r\n"sv, '+'},
    {"simple_empty", "+\r\n"sv, '+'},
    {"error_redis", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"sv,
     '-'},
    {"error_unknown_command_redis",
     "-ERR unknown command 'NOSUCH', with args beginning with: \r\n"sv, '-'},
    {"integer", ":1\r\n"sv, ':'},
    {"integer_zero", ":0\r\n"sv, ':'},
    {"integer_negative", ":-42\r\n"sv, ':'},
    {"integer_plus_sign", ":+7\r\n"sv, ':'},
    {"integer_max", ":9223372036854775807\r\n"sv, ':'},
    {"integer_min", ":-9223372036854775808\r\n"sv, ':'},
    {"bulk_redis", "$1\r\nv\r\n"sv, '$'},
    {"bulk_empty", "$0\r\n\r\n"sv, '$'},
    {"bulk_binary", "$6\r\na\r\n\0b\n\r\n"sv, '$'},
    {"bulk_null_resp2_redis", "$-1\r\n"sv, '$'},
    {"array_resp2_hgetall_redis", "*4\r\n$2\r\nf1\r\n$2\r\nv1\r\n$2\r\nf2\r\n$2\r\nv2\r\n"sv, '*'},
    {"array_empty_resp2_redis", "*0\r\n"sv, '*'},
    {"array_null_resp2_blpop_redis", "*-1\r\n"sv, '*'},
    {"array_nested_zrange_redis", "*1\r\n*2\r\n$1\r\nm\r\n,1.5\r\n"sv, '*'},
    {"array_mixed", "*5\r\n:1\r\n+two\r\n$5\r\nthree\r\n_\r\n*-1\r\n"sv, '*'},
    {"null_redis", "_\r\n"sv, '_'},
    {"true_redis", "#t\r\n"sv, '#'},
    {"false_redis", "#f\r\n"sv, '#'},
    {"double_redis", ",3.141\r\n"sv, ','},
    {"double_zscore_redis", ",1.5\r\n"sv, ','},
    {"double_integral", ",10\r\n"sv, ','},
    {"double_exponent", ",1e+300\r\n"sv, ','},
    {"double_negative_exponent", ",-1.5E-7\r\n"sv, ','},
    {"double_inf_redis", ",inf\r\n"sv, ','},
    {"double_minus_inf_redis", ",-inf\r\n"sv, ','},
    {"double_nan", ",nan\r\n"sv, ','},
    {"double_minus_nan_redis", ",-nan\r\n"sv, ','},
    {"big_number_redis", "(1234567999999999999999999999999999999\r\n"sv, '('},
    {"big_number_negative", "(-3492890328409238509324850943850943825024385\r\n"sv, '('},
    {"bulk_error", "!21\r\nSYNTAX invalid syntax\r\n"sv, '!'},
    {"verbatim_redis", "=29\r\ntxt:This is a verbatim\nstring\r\n"sv, '='},
    {"verbatim_empty_text", "=4\r\nmkd:\r\n"sv, '='},
    {"map_hgetall_redis", "%2\r\n$2\r\nf1\r\n$2\r\nv1\r\n$2\r\nf2\r\n$2\r\nv2\r\n"sv, '%'},
    {"map_debug_redis", "%3\r\n:0\r\n#f\r\n:1\r\n#t\r\n:2\r\n#f\r\n"sv, '%'},
    {"map_empty", "%0\r\n"sv, '%'},
    {"map_hello_redis",
     "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n"
     "$2\r\nid\r\n:11\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
     "$7\r\nmodules\r\n*0\r\n"sv,
     '%'},
    {"set_smembers_redis", "~1\r\n$1\r\na\r\n"sv, '~'},
    {"set_debug_redis", "~3\r\n:0\r\n:1\r\n:2\r\n"sv, '~'},
    {"push_invalidate_redis", ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"sv, '>'},
    {"push_subscribe_redis", ">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n"sv, '>'},
    {"attribute_redis",
     "|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"
     "$39\r\nSome real reply following the attribute\r\n"sv,
     '$'},
    {"attribute_empty", "|0\r\n:1\r\n"sv, ':'},
    {"attribute_twice", "|1\r\n+a\r\n+b\r\n|1\r\n+c\r\n+d\r\n*0\r\n"sv, '*'},
    {"attribute_inside_array", "*2\r\n|1\r\n+ttl\r\n:3\r\n:1\r\n:2\r\n"sv, '*'},
    {"attribute_last_in_array", "*1\r\n|1\r\n+a\r\n+b\r\n%1\r\n+k\r\n+v\r\n"sv, '*'},
    {"nested_mixed", "*3\r\n%1\r\n+k\r\n~2\r\n:1\r\n*0\r\n>1\r\n_\r\n*1\r\n*1\r\n*1\r\n#t\r\n"sv,
     '*'},
};

class RespValidTest : public testing::TestWithParam<ValidCase> {};

void ExpectFrame(const ScanResult& result, size_t begin, size_t end, char type) {
  ASSERT_EQ(result.status, ScanStatus::kFrame) << result.error;
  EXPECT_EQ(result.begin, begin);
  EXPECT_EQ(result.end, end);
  EXPECT_EQ(result.type, type);
}

TEST_P(RespValidTest, WholeFrame) {
  RespScanner scanner;
  scanner.Feed(GetParam().bytes);
  const ScanResult result = scanner.Next();
  ExpectFrame(result, 0, GetParam().bytes.size(), GetParam().type);
  EXPECT_EQ(scanner.FrameBytes(result), GetParam().bytes);
  EXPECT_EQ(scanner.Next().status, ScanStatus::kIncomplete);
}

TEST_P(RespValidTest, OneByteAtATime) {
  const std::string_view bytes = GetParam().bytes;
  RespScanner scanner;
  for (size_t i = 0; i + 1 < bytes.size(); ++i) {
    scanner.Feed(bytes.substr(i, 1));
    const ScanResult result = scanner.Next();
    ASSERT_EQ(result.status, ScanStatus::kIncomplete) << "after byte " << i << ": " << result.error;
  }
  scanner.Feed(bytes.substr(bytes.size() - 1));
  ExpectFrame(scanner.Next(), 0, bytes.size(), GetParam().type);
  EXPECT_EQ(scanner.Next().status, ScanStatus::kIncomplete);
}

TEST_P(RespValidTest, SplitAtEveryPosition) {
  const std::string_view bytes = GetParam().bytes;
  for (size_t split = 1; split < bytes.size(); ++split) {
    RespScanner scanner;
    scanner.Feed(bytes.substr(0, split));
    ASSERT_EQ(scanner.Next().status, ScanStatus::kIncomplete) << "split at " << split;
    scanner.Feed(bytes.substr(split));
    ExpectFrame(scanner.Next(), 0, bytes.size(), GetParam().type);
  }
}

TEST_P(RespValidTest, SurroundedByOtherFrames) {
  RespScanner scanner;
  scanner.Feed("+before\r\n");
  scanner.Feed(GetParam().bytes);
  scanner.Feed(":1\r\n");
  ExpectFrame(scanner.Next(), 0, 9, '+');
  ExpectFrame(scanner.Next(), 9, 9 + GetParam().bytes.size(), GetParam().type);
  ExpectFrame(scanner.Next(), 9 + GetParam().bytes.size(), 13 + GetParam().bytes.size(), ':');
}

// FeedBorrowed(): the bytes are scanned where they are; Detach() copies what is left before the
// caller's buffer is reused. The buffer is overwritten after each Detach(), so a frame that still
// pointed into it would come out wrong.
TEST_P(RespValidTest, BorrowedAndSplitAtEveryPositionWithTheBufferReusedBetween) {
  const std::string_view bytes = GetParam().bytes;
  for (size_t split = 0; split <= bytes.size(); ++split) {
    RespScanner scanner;
    std::string read_buffer(bytes.substr(0, split));
    scanner.FeedBorrowed(read_buffer);
    if (split < bytes.size()) {
      ASSERT_EQ(scanner.Next().status, ScanStatus::kIncomplete) << "split at " << split;
      scanner.Detach();
      read_buffer.assign(read_buffer.size(), '#');
      read_buffer.assign(bytes.substr(split));
      scanner.FeedBorrowed(read_buffer);
    }
    const ScanResult result = scanner.Next();
    ExpectFrame(result, 0, bytes.size(), GetParam().type);
    EXPECT_EQ(scanner.FrameBytes(result), bytes) << "split at " << split;
    scanner.Consume(result.end);
    scanner.Detach();
    EXPECT_TRUE(scanner.Buffered().empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Resp, RespValidTest, testing::ValuesIn(kValidCases),
                         [](const testing::TestParamInfo<ValidCase>& param_info) {
                           return std::string(param_info.param.name);
                         });

struct InvalidCase {
  std::string_view name;
  std::string_view bytes;
  std::string_view error;  // a substring of the error message
};

void PrintTo(const InvalidCase& invalid, std::ostream* os) { *os << invalid.name; }

const InvalidCase kInvalidCases[] = {
    {"unknown_type", "x\r\n"sv, "unknown type byte 'x'"},
    {"unknown_type_binary", "\x01\r\n"sv, "unknown type byte '\\x01'"},
    {"unknown_type_nul", "\0"sv, "unknown type byte '\\x00'"},
    {"unknown_type_in_array", "*2\r\n:1\r\n?\r\n"sv, "unknown type byte '?'"},
    {"inline_command", "PING\r\n"sv, "unknown type byte 'P'"},
    {"stream_chunk_outside_string", ";4\r\nabcd\r\n"sv, "unknown type byte ';'"},
    {"cr_without_lf", "+OK\rX\n"sv, "expected '\\r\\n'"},
    {"bulk_without_crlf", "$3\r\nabcXY"sv, "expected '\\r\\n' after bulk data"},
    {"bulk_too_long_body", "$3\r\nabcd\r\n"sv, "expected '\\r\\n' after bulk data"},
    {"bulk_length_minus_two", "$-2\r\n"sv, "invalid bulk length"},
    {"bulk_length_not_numeric", "$abc\r\n"sv, "invalid bulk length"},
    {"bulk_length_empty", "$\r\n"sv, "invalid bulk length"},
    {"bulk_length_plus", "$+3\r\nabc\r\n"sv, "invalid bulk length"},
    {"bulk_length_leading_zero", "$03\r\nabc\r\n"sv, "invalid bulk length"},
    {"bulk_length_overflow", "$99999999999999999999\r\n"sv, "invalid bulk length"},
    {"bulk_length_int64_max", "$9223372036854775807\r\n"sv, "over the limit of 536870912"},
    {"bulk_over_proto_max_bulk_len", "$536870913\r\n"sv, "over the limit of 536870912"},
    {"bulk_streamed", "$?\r\n;4\r\nHell\r\n;0\r\n"sv, "streamed strings are not supported"},
    {"bulk_error_null", "!-1\r\n"sv, "invalid bulk error length"},
    {"verbatim_null", "=-1\r\n"sv, "invalid verbatim string length"},
    {"verbatim_too_short", "=3\r\ntxt\r\n"sv, "shorter than its 3-byte format"},
    {"verbatim_without_colon", "=5\r\ntxt-x\r\n"sv, "without a 3-byte format and ':'"},
    {"array_length_minus_two", "*-2\r\n"sv, "invalid multibulk length"},
    {"array_length_not_numeric", "*x\r\n"sv, "invalid multibulk length"},
    {"array_length_overflow", "*99999999999999999999\r\n"sv, "invalid multibulk length"},
    {"array_over_int_max", "*2147483648\r\n"sv, "invalid multibulk length"},
    {"array_streamed", "*?\r\n:1\r\n.\r\n"sv, "streamed aggregates are not supported"},
    {"map_null", "%-1\r\n"sv, "invalid map length"},
    {"map_streamed", "%?\r\n"sv, "streamed aggregates are not supported"},
    {"set_negative", "~-3\r\n"sv, "invalid set length"},
    {"push_null", ">-1\r\n"sv, "invalid push length"},
    {"attribute_not_numeric", "|a\r\n"sv, "invalid attribute length"},
    {"integer_empty", ":\r\n"sv, "invalid integer ''"},
    {"integer_not_numeric", ":12a\r\n"sv, "invalid integer '12a'"},
    {"integer_overflow", ":9223372036854775808\r\n"sv, "invalid integer"},
    {"integer_double_sign", ":+-1\r\n"sv, "invalid integer"},
    {"double_empty", ",\r\n"sv, "invalid double"},
    {"double_words", ",pi\r\n"sv, "invalid double 'pi'"},
    {"double_two_dots", ",1.2.3\r\n"sv, "invalid double"},
    {"double_bare_exponent", ",1e\r\n"sv, "invalid double"},
    {"double_hex", ",0x1p3\r\n"sv, "invalid double"},
    {"big_number_empty", "(\r\n"sv, "invalid big number"},
    {"big_number_fraction", "(1.5\r\n"sv, "invalid big number"},
    {"boolean_word", "#true\r\n"sv, "invalid boolean 'true'"},
    {"boolean_empty", "#\r\n"sv, "invalid boolean"},
    {"null_with_text", "_x\r\n"sv, "invalid null"},
};

class RespInvalidTest : public testing::TestWithParam<InvalidCase> {};

TEST_P(RespInvalidTest, WholeFrame) {
  RespScanner scanner;
  scanner.Feed(GetParam().bytes);
  const ScanResult result = scanner.Next();
  ASSERT_EQ(result.status, ScanStatus::kError);
  EXPECT_NE(result.error.find(GetParam().error), std::string::npos) << result.error;
  EXPECT_EQ(result.error.rfind("Protocol error: ", 0), 0u) << result.error;
}

// Also with each byte lent from a one-byte read buffer (FeedBorrowed) that is overwritten after
// each Detach(), as the proxy reads.
TEST_P(RespInvalidTest, OneByteAtATimeGivesTheSameErrorAndItSticks) {
  RespScanner whole;
  whole.Feed(GetParam().bytes);
  const std::string expected = whole.Next().error;

  for (const bool borrowed : {false, true}) {
    RespScanner scanner;
    ScanResult result;
    for (char byte : GetParam().bytes) {
      char read_buffer = byte;
      if (borrowed) {
        scanner.FeedBorrowed(std::string_view(&read_buffer, 1));
      } else {
        scanner.Feed(std::string_view(&read_buffer, 1));
      }
      result = scanner.Next();
      scanner.Detach();
      read_buffer = '#';
      ASSERT_NE(result.status, ScanStatus::kFrame);
      if (result.status == ScanStatus::kError) break;
    }
    ASSERT_EQ(result.status, ScanStatus::kError) << (borrowed ? "borrowed" : "copied");
    EXPECT_EQ(result.error, expected) << (borrowed ? "borrowed" : "copied");
    scanner.Feed("+OK\r\n");
    EXPECT_EQ(scanner.Next().error, expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Resp, RespInvalidTest, testing::ValuesIn(kInvalidCases),
                         [](const testing::TestParamInfo<InvalidCase>& param_info) {
                           return std::string(param_info.param.name);
                         });

std::string Repeat(std::string_view text, size_t times) {
  std::string out;
  for (size_t i = 0; i < times; ++i) out += text;
  return out;
}

TEST(RespScannerTest, PipelinedFramesComeOutInOrderWithExactSpans) {
  std::string stream;
  for (const ValidCase& valid : kValidCases) stream += valid.bytes;
  RespScanner scanner;
  scanner.Feed(stream);
  size_t offset = 0;
  for (const ValidCase& valid : kValidCases) {
    const ScanResult result = scanner.Next();
    ExpectFrame(result, offset, offset + valid.bytes.size(), valid.type);
    EXPECT_EQ(scanner.FrameBytes(result), valid.bytes) << valid.name;
    offset += valid.bytes.size();
  }
  EXPECT_EQ(scanner.Next().status, ScanStatus::kIncomplete);
  EXPECT_EQ(scanner.Buffered().size(), stream.size());
}

TEST(RespScannerTest, PipelinedStreamFedInOddChunksWithConsume) {
  std::string stream;
  for (int round = 0; round < 50; ++round) {
    for (const ValidCase& valid : kValidCases) stream += valid.bytes;
  }
  RespScanner scanner;
  std::vector<std::string> frames;
  for (size_t pos = 0; pos < stream.size(); pos += 7) {
    scanner.Feed(std::string_view(stream).substr(pos, 7));
    for (ScanResult result = scanner.Next(); result.status == ScanStatus::kFrame;
         result = scanner.Next()) {
      EXPECT_EQ(result.begin, 0u);
      frames.emplace_back(scanner.FrameBytes(result));
      scanner.Consume(result.end);
    }
  }
  ASSERT_EQ(frames.size(), 50 * std::size(kValidCases));
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(frames[i], kValidCases[i % std::size(kValidCases)].bytes);
  }
  EXPECT_TRUE(scanner.Buffered().empty());
}

// The proxy's reading: each read lands in one shared buffer, frames are taken and consumed in
// place, the rest is detached before the next read overwrites the buffer.
TEST(RespScannerTest, BorrowedStreamInOddChunksThroughOneReusedBuffer) {
  std::string stream;
  for (int round = 0; round < 20; ++round) {
    for (const ValidCase& valid : kValidCases) stream += valid.bytes;
  }
  for (size_t chunk : {1u, 2u, 5u, 7u, 64u, 1000u}) {
    RespScanner scanner;
    std::string read_buffer;
    std::vector<std::string> frames;
    for (size_t pos = 0; pos < stream.size(); pos += chunk) {
      read_buffer.assign(std::string_view(stream).substr(pos, chunk));
      scanner.FeedBorrowed(read_buffer);
      size_t consumed = 0;
      for (ScanResult result = scanner.Next(); result.status == ScanStatus::kFrame;
           result = scanner.Next()) {
        frames.emplace_back(scanner.FrameBytes(result));
        consumed = result.end;
      }
      scanner.Consume(consumed);
      scanner.Detach();
      read_buffer.assign(read_buffer.size(), '#');
    }
    ASSERT_EQ(frames.size(), 20 * std::size(kValidCases)) << "chunks of " << chunk;
    for (size_t i = 0; i < frames.size(); ++i) {
      ASSERT_EQ(frames[i], kValidCases[i % std::size(kValidCases)].bytes) << "chunks of " << chunk;
    }
    EXPECT_TRUE(scanner.Buffered().empty());
  }
}

TEST(RespScannerTest, FeedWhileBorrowingKeepsTheBorrowedBytes) {
  RespScanner scanner;
  std::string read_buffer = "+OK\r\n$5\r\nhe";
  scanner.FeedBorrowed(read_buffer);
  ExpectFrame(scanner.Next(), 0, 5, '+');
  scanner.Feed("llo\r\n");  // copies the borrowed rest first
  read_buffer.assign(read_buffer.size(), '#');
  const ScanResult result = scanner.Next();
  ExpectFrame(result, 5, 16, '$');
  EXPECT_EQ(scanner.FrameBytes(result), "$5\r\nhello\r\n");
  scanner.Detach();  // nothing borrowed any more: no change
  EXPECT_EQ(scanner.Buffered(), "+OK\r\n$5\r\nhello\r\n");
}

TEST(RespScannerTest, ConsumeCannotDropUnreturnedBytes) {
  RespScanner scanner;
  scanner.Feed("+OK\r\n$5\r\nhel");
  ExpectFrame(scanner.Next(), 0, 5, '+');
  scanner.Consume(100);  // clamped to the 5 bytes of the returned frame
  EXPECT_EQ(scanner.Buffered(), "$5\r\nhel");
  EXPECT_EQ(scanner.Next().status, ScanStatus::kIncomplete);
  scanner.Feed("lo\r\n");
  ExpectFrame(scanner.Next(), 0, 11, '$');
}

TEST(RespScannerTest, ConsumeBetweenFramesShiftsOffsets) {
  RespScanner scanner;
  scanner.Feed(":1\r\n:2\r\n:3\r\n");
  ExpectFrame(scanner.Next(), 0, 4, ':');
  ExpectFrame(scanner.Next(), 4, 8, ':');
  scanner.Consume(4);
  ExpectFrame(scanner.Next(), 4, 8, ':');
  EXPECT_EQ(scanner.Buffered().substr(4), ":3\r\n");
}

TEST(RespScannerTest, LargeBulkFedOneByteAtATimeIsNotRescanned) {
  constexpr size_t kSize = 4 * 1024 * 1024;
  const std::string header = "$" + std::to_string(kSize) + "\r\n";
  RespScanner scanner;
  scanner.Feed(header);
  const std::string body(kSize, 'x');
  // Quadratic rescanning would take hours here; resuming takes milliseconds.
  for (char byte : body) {
    scanner.Feed(std::string_view(&byte, 1));
    ASSERT_EQ(scanner.Next().status, ScanStatus::kIncomplete);
  }
  scanner.Feed("\r");
  ASSERT_EQ(scanner.Next().status, ScanStatus::kIncomplete);
  scanner.Feed("\n");
  ExpectFrame(scanner.Next(), 0, header.size() + kSize + 2, '$');
}

TEST(RespScannerTest, LongLineFedInPiecesIsNotRescanned) {
  constexpr size_t kSize = 4 * 1024 * 1024;
  RespScanner scanner(RespLimits{.max_line_length = kSize});
  scanner.Feed("+");
  const std::string piece(16, 'y');
  for (size_t fed = 0; fed < kSize; fed += piece.size()) {
    scanner.Feed(piece);
    ASSERT_EQ(scanner.Next().status, ScanStatus::kIncomplete);
  }
  scanner.Feed("\r\n");
  ExpectFrame(scanner.Next(), 0, kSize + 3, '+');
}

TEST(RespScannerTest, ManyElementArrayFedOneByteAtATime) {
  constexpr size_t kCount = 100000;
  const std::string frame = "*" + std::to_string(kCount) + "\r\n" + Repeat(":1\r\n", kCount);
  RespScanner scanner;
  for (size_t i = 0; i + 1 < frame.size(); ++i) {
    scanner.Feed(std::string_view(frame).substr(i, 1));
    ASSERT_EQ(scanner.Next().status, ScanStatus::kIncomplete);
  }
  scanner.Feed("\n");
  ExpectFrame(scanner.Next(), 0, frame.size(), '*');
}

TEST(RespScannerTest, DepthLimit) {
  const std::string at_limit = Repeat("*1\r\n", 64) + ":1\r\n";
  RespScanner scanner;
  scanner.Feed(at_limit);
  ExpectFrame(scanner.Next(), 0, at_limit.size(), '*');

  RespScanner too_deep;
  too_deep.Feed(Repeat("*1\r\n", 65) + ":1\r\n");
  const ScanResult result = too_deep.Next();
  ASSERT_EQ(result.status, ScanStatus::kError);
  EXPECT_EQ(result.error, "Protocol error: aggregates nested deeper than 64 levels");
}

TEST(RespScannerTest, DepthLimitCountsMapsSetsAndAttributes) {
  RespScanner scanner(RespLimits{.max_depth = 2});
  scanner.Feed("%1\r\n+k\r\n~1\r\n:1\r\n");
  EXPECT_EQ(scanner.Next().status, ScanStatus::kFrame);
  scanner.Feed("*1\r\n|1\r\n+a\r\n>1\r\n:1\r\n");
  const ScanResult result = scanner.Next();
  ASSERT_EQ(result.status, ScanStatus::kError);
  EXPECT_EQ(result.error, "Protocol error: aggregates nested deeper than 2 levels");
}

TEST(RespScannerTest, ConfiguredBulkLimit) {
  RespScanner scanner(RespLimits{.max_bulk_length = 10});
  scanner.Feed("$10\r\n0123456789\r\n");
  EXPECT_EQ(scanner.Next().status, ScanStatus::kFrame);
  scanner.Feed("!11\r\n");
  EXPECT_EQ(scanner.Next().error, "Protocol error: bulk error length 11 over the limit of 10");
}

TEST(RespScannerTest, ConfiguredAggregateCountLimit) {
  RespScanner scanner(RespLimits{.max_aggregate_count = 2});
  scanner.Feed("%2\r\n:1\r\n:2\r\n:3\r\n:4\r\n");
  EXPECT_EQ(scanner.Next().status, ScanStatus::kFrame);
  scanner.Feed("~3\r\n");
  EXPECT_EQ(scanner.Next().error, "Protocol error: invalid set length");
}

TEST(RespScannerTest, LineLengthLimitHoldsWithOrWithoutTheCrlf) {
  RespScanner scanner(RespLimits{.max_line_length = 8});
  scanner.Feed("+12345678\r\n");
  EXPECT_EQ(scanner.Next().status, ScanStatus::kFrame);
  scanner.Feed("+123456789");  // no "\r\n" yet: the line cannot end in time
  EXPECT_EQ(scanner.Next().error, "Protocol error: line longer than 8 bytes");

  RespScanner whole(RespLimits{.max_line_length = 8});
  whole.Feed("$123456789\r\n");
  EXPECT_EQ(whole.Next().error, "Protocol error: line longer than 8 bytes");
}

TEST(RespScannerTest, ResetForgetsBytesAndError) {
  RespScanner scanner;
  scanner.Feed("x");
  EXPECT_EQ(scanner.Next().status, ScanStatus::kError);
  scanner.Reset();
  EXPECT_TRUE(scanner.Buffered().empty());
  scanner.Feed("+OK\r\n");
  ExpectFrame(scanner.Next(), 0, 5, '+');
}

TEST(RespInlineTest, OnlyAStarStartsAMultibulkRequest) {
  EXPECT_FALSE(IsInlineCommand('*'));
  EXPECT_TRUE(IsInlineCommand('P'));
  EXPECT_TRUE(IsInlineCommand('$'));
}

std::vector<std::string> Strings(const std::vector<std::string_view>& views) {
  return {views.begin(), views.end()};
}

TEST(RespCommandArgsTest, RedisCliRequest) {
  // Captured from `redis-cli SET 'user:{42}' 'hello world'` (redis-cli 7.0.15).
  const std::string_view request = "*3\r\n$3\r\nSET\r\n$9\r\nuser:{42}\r\n$11\r\nhello world\r\n";
  RespScanner scanner;
  scanner.Feed(request);
  const ScanResult frame = scanner.Next();
  ASSERT_EQ(frame.status, ScanStatus::kFrame);
  const auto args = ParseCommandArgs(scanner.FrameBytes(frame));
  ASSERT_TRUE(args.ok()) << args.error().message();
  EXPECT_EQ(Strings(*args), (std::vector<std::string>{"SET", "user:{42}", "hello world"}));
  EXPECT_EQ(args->front().data(), scanner.Buffered().data() + 8);  // a view, not a copy
}

TEST(RespCommandArgsTest, BinaryAndEmptyArguments) {
  const auto args = ParseCommandArgs("*3\r\n$3\r\nSET\r\n$0\r\n\r\n$4\r\n\r\n\0x\r\n"sv);
  ASSERT_TRUE(args.ok()) << args.error().message();
  EXPECT_EQ(Strings(*args), (std::vector<std::string>{"SET", "", "\r\n\0x"s}));
}

TEST(RespCommandArgsTest, EmptyAndNullArraysHaveNoArguments) {
  EXPECT_TRUE(ParseCommandArgs("*0\r\n")->empty());
  EXPECT_TRUE(ParseCommandArgs("*-1\r\n")->empty());
}

struct BadCommandCase {
  std::string_view name;
  std::string_view frame;
  std::string_view error;
};

void PrintTo(const BadCommandCase& bad, std::ostream* os) { *os << bad.name; }

class RespBadCommandTest : public testing::TestWithParam<BadCommandCase> {};

TEST_P(RespBadCommandTest, IsRejected) {
  const auto args = ParseCommandArgs(GetParam().frame);
  ASSERT_FALSE(args.ok());
  EXPECT_EQ(args.error().message(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Resp, RespBadCommandTest,
    testing::Values(
        BadCommandCase{"empty", "", "Protocol error: expected '*', got ''"},
        BadCommandCase{"simple_string", "+PING\r\n", "Protocol error: expected '*', got '+'"},
        BadCommandCase{"integer_element", "*1\r\n:1\r\n", "Protocol error: expected '$', got ':'"},
        BadCommandCase{"nested_array", "*1\r\n*0\r\n", "Protocol error: expected '$', got '*'"},
        BadCommandCase{"null_bulk", "*1\r\n$-1\r\n", "Protocol error: invalid bulk length"},
        BadCommandCase{"bad_count", "*x\r\n", "Protocol error: invalid multibulk length"},
        BadCommandCase{"truncated_header", "*2\r\n$4\r\nPING\r\n",
                       "Protocol error: incomplete command"},
        BadCommandCase{"truncated_body", "*1\r\n$4\r\nPI", "Protocol error: incomplete command"},
        BadCommandCase{"no_crlf_after_body", "*1\r\n$4\r\nPINGxx",
                       "Protocol error: expected '\\r\\n'"},
        BadCommandCase{"trailing_bytes", "*1\r\n$4\r\nPING\r\n+OK\r\n",
                       "Protocol error: 5 bytes after the end of the command"}),
    [](const testing::TestParamInfo<BadCommandCase>& param_info) {
      return std::string(param_info.param.name);
    });

TEST(RespWriterTest, CommandRoundTripsThroughScannerAndParser) {
  const std::string binary = "a\r\nb\0c"s;
  const std::vector<std::string_view> args = {"MSET", "{k}1", "", binary};
  std::string out;
  AppendCommand(out, args);
  EXPECT_EQ(out, "*4\r\n$4\r\nMSET\r\n$4\r\n{k}1\r\n$0\r\n\r\n$6\r\na\r\nb\0c\r\n"sv);
  RespScanner scanner;
  scanner.Feed(out);
  const ScanResult frame = scanner.Next();
  ExpectFrame(frame, 0, out.size(), '*');
  const auto parsed = ParseCommandArgs(scanner.FrameBytes(frame));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, args);
}

TEST(RespWriterTest, RepliesRoundTripThroughScanner) {
  std::string out;
  AppendSimple(out, "OK");
  AppendError(out, "CROSSSLOT Keys in request don't hash to the same slot");
  AppendInteger(out, INT64_MIN);
  AppendBulk(out, "bulk\r\n");
  AppendNull(out, 2);
  AppendNull(out, 3);
  AppendArrayHeader(out, 2);
  AppendInteger(out, 1);
  AppendBulk(out, "");
  EXPECT_EQ(out,
            "+OK\r\n-CROSSSLOT Keys in request don't hash to the same slot\r\n"
            ":-9223372036854775808\r\n$6\r\nbulk\r\n\r\n$-1\r\n_\r\n*2\r\n:1\r\n$0\r\n\r\n");
  RespScanner scanner;
  scanner.Feed(out);
  std::string types;
  for (ScanResult result = scanner.Next(); result.status == ScanStatus::kFrame;
       result = scanner.Next()) {
    types += result.type;
  }
  EXPECT_EQ(types, "+-:$$_*");
}

TEST(RespWriterTest, LineBreaksInSimpleRepliesBecomeSpaces) {
  std::string out;
  AppendError(out, "ERR bad\r\nthing");
  AppendSimple(out, "a\nb");
  EXPECT_EQ(out, "-ERR bad  thing\r\n+a b\r\n");
}

}  // namespace
}  // namespace shardctl::common

namespace shardctl::common {
namespace {

TEST(RespScannerSkipTest, InlineBytesBetweenFramesCanBeSkipped) {
  RespScanner scanner;
  scanner.Feed("*1\r\n$4\r\nPING\r\nPING\r\n*1\r\n$4\r\nPI");
  ScanResult first = scanner.Next();
  ASSERT_EQ(first.status, ScanStatus::kFrame);
  EXPECT_EQ(scanner.Unreturned(), "PING\r\n*1\r\n$4\r\nPI");
  ASSERT_TRUE(scanner.SkipUnreturned(6));
  EXPECT_EQ(scanner.Unreturned(), "*1\r\n$4\r\nPI");
  EXPECT_EQ(scanner.Next().status, ScanStatus::kIncomplete);
  // Now a frame is partly scanned: skipping would corrupt it.
  EXPECT_FALSE(scanner.SkipUnreturned(1));
  scanner.Feed("NG\r\n");
  ScanResult second = scanner.Next();
  ASSERT_EQ(second.status, ScanStatus::kFrame);
  EXPECT_EQ(scanner.FrameBytes(second), "*1\r\n$4\r\nPING\r\n");
  // Consume releases returned frames and skipped bytes alike.
  scanner.Consume(scanner.Buffered().size() - scanner.Unreturned().size());
  EXPECT_EQ(scanner.Buffered(), "");
}

TEST(RespScannerSkipTest, CannotSkipPastTheBufferOrAfterAnError) {
  RespScanner scanner;
  scanner.Feed("PING\r\n");
  EXPECT_FALSE(scanner.SkipUnreturned(7));
  EXPECT_EQ(scanner.Next().status, ScanStatus::kError);  // 'P' is no RESP type
  EXPECT_FALSE(scanner.SkipUnreturned(6));
}

}  // namespace
}  // namespace shardctl::common

// ---------------------------------------------------------------------------------------------
// ScanRequest: the proxy's one-pass request path

namespace shardctl::common {
namespace {

TEST(ScanRequestTest, FramesAndSplitsAUsualRequestInOnePass) {
  std::vector<std::string_view> args;
  const std::string bytes = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n*1\r\n$4\r\nPING\r\n";
  const FastRequest first = ScanRequest(bytes, RespLimits{}, args);
  ASSERT_EQ(first.kind, FastRequest::Kind::kRequest);
  EXPECT_EQ(first.length, bytes.find("*1"));
  EXPECT_EQ(args, (std::vector<std::string_view>{"SET", "k", ""}));
  const FastRequest second = ScanRequest(std::string_view(bytes).substr(first.length), {}, args);
  ASSERT_EQ(second.kind, FastRequest::Kind::kRequest);
  EXPECT_EQ(args, std::vector<std::string_view>{"PING"});
}

TEST(ScanRequestTest, EveryPrefixIsIncomplete) {
  const std::string bytes = "*2\r\n$3\r\nGET\r\n$10\r\n0123456789\r\n";
  std::vector<std::string_view> args;
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_EQ(ScanRequest(bytes.substr(0, cut), RespLimits{}, args).kind,
              FastRequest::Kind::kIncomplete)
        << cut;
  }
}

TEST(ScanRequestTest, LeavesEverythingUnusualToTheScanner) {
  RespLimits limits;
  limits.max_bulk_length = 4;
  std::vector<std::string_view> args;
  for (const char* bytes : {"PING\r\n", "*-1\r\n", "*01\r\n", "*1\r\n:1\r\n", "*1\r\n$-1\r\n",
                            "*1\r\n$1\r\nab\r\n", "*1\r\n$5\r\nabcde\r\n", "*x\r\n", "*1\n",
                            "*1\r\n$1\r\na\n\n", "*1\r\n*1\r\n$1\r\na\r\n"}) {
    EXPECT_EQ(ScanRequest(bytes, limits, args).kind, FastRequest::Kind::kSlowPath) << bytes;
  }
}

}  // namespace
}  // namespace shardctl::common
