// common/repl_stream.h: a primary's replication stream cut into commands with their offsets,
// however the bytes arrive, and malformed streams refused with the offset where they went wrong.
#include "common/repl_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace shardctl::common {
namespace {

using namespace std::string_literals;

struct Pulled {
  std::vector<ReplCommand> commands;
  std::string error;  // empty when the stream had none
  int64_t offset = 0;
};

// Feeds `chunks` one after the other, pulling every command after each.
Pulled Pull(int64_t start, const std::vector<std::string>& chunks, ReplStreamLimits limits = {}) {
  ReplStreamParser parser(start, limits);
  Pulled pulled;
  for (const std::string& chunk : chunks) {
    parser.Feed(chunk);
    for (;;) {
      Result<std::optional<ReplCommand>> next = parser.Next();
      if (!next) {
        pulled.error = next.error().message();
        pulled.offset = parser.offset();
        return pulled;
      }
      if (!next->has_value()) break;
      pulled.commands.push_back(std::move(**next));
    }
  }
  pulled.offset = parser.offset();
  return pulled;
}

// What a primary sends after the RDB: keepalives around the commands, binary values (CR, LF and
// NUL inside an argument), an empty argument, and an empty command Redis would ignore.
const std::string kStream =
    "\n"
    "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"                   // 23 bytes
    "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$6\r\na\r\nb\0c\r\n"s  // 32 bytes
    "\n\n"
    "*0\r\n"                                               // 4 bytes, ignored
    "*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n"  // 37 bytes
    "*2\r\n$4\r\nLPOP\r\n$0\r\n\r\n"                       // 20 bytes
    "\n";

const std::vector<ReplCommand> kCommands = {
    {.args = {"SELECT", "0"}, .offset = 1000 + 1 + 23},
    {.args = {"SET", "k", "a\r\nb\0c"s}, .offset = 1000 + 24 + 32},
    {.args = {"REPLCONF", "GETACK", "*"}, .offset = 1000 + 56 + 2 + 4 + 37},
    {.args = {"LPOP", ""}, .offset = 1000 + 99 + 20},
};

TEST(ReplStreamParserTest, CutsAWholeStreamIntoCommandsWithTheirOffsets) {
  const Pulled pulled = Pull(1000, {kStream});
  EXPECT_EQ(pulled.error, "");
  EXPECT_EQ(pulled.commands, kCommands);
  EXPECT_EQ(pulled.offset, 1000 + 120);  // the trailing keepalive counts too
  EXPECT_EQ(kStream.size(), 120u);
}

TEST(ReplStreamParserTest, SplittingTheStreamAtAnyByteChangesNothing) {
  for (size_t split = 0; split <= kStream.size(); ++split) {
    const Pulled pulled = Pull(1000, {kStream.substr(0, split), kStream.substr(split)});
    EXPECT_EQ(pulled.error, "") << "split at " << split;
    EXPECT_EQ(pulled.commands, kCommands) << "split at " << split;
    EXPECT_EQ(pulled.offset, 1120) << "split at " << split;
  }
}

TEST(ReplStreamParserTest, OneByteAtATimeGivesTheSameCommands) {
  std::vector<std::string> bytes;
  for (char c : kStream) bytes.emplace_back(1, c);
  const Pulled pulled = Pull(1000, bytes);
  EXPECT_EQ(pulled.error, "");
  EXPECT_EQ(pulled.commands, kCommands);
  EXPECT_EQ(pulled.offset, 1120);
}

// The offset moves only past what is complete: half a command is not consumed yet.
TEST(ReplStreamParserTest, OffsetStopsBeforeAPartialCommand) {
  ReplStreamParser parser(7);
  parser.Feed("\n\n*1\r\n$4\r\nPI");
  Result<std::optional<ReplCommand>> next = parser.Next();
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(next->has_value());
  EXPECT_EQ(parser.offset(), 9);
  parser.Feed("NG\r\n");
  next = parser.Next();
  ASSERT_TRUE(next.ok() && next->has_value());
  EXPECT_EQ(**next, (ReplCommand{.args = {"PING"}, .offset = 23}));
  EXPECT_EQ(parser.offset(), 23);
}

struct MalformedCase {
  const char* name;
  std::string stream;
  std::string error;
};

TEST(ReplStreamParserTest, MalformedStreamsNameTheOffsetAndWhatWasExpected) {
  const std::string ping = "*1\r\n$4\r\nPING\r\n";  // 14 bytes
  const std::string want_command =
      "expected a command (an array of bulk strings): Protocol error: ";
  const MalformedCase cases[] = {
      {"a reply instead of a command", "+OK\r\n",
       "replication stream offset 0: expected a command ('*') or a keepalive ('\\n'), got '+'"},
      {"a binary byte after a command", ping + "\n\x01",
       "replication stream offset 15: expected a command ('*') or a keepalive ('\\n'), got "
       "'\\x01'"},
      {"an inline command", "PING\r\n",
       "replication stream offset 0: expected a command ('*') or a keepalive ('\\n'), got 'P'"},
      {"a negative array length", ping + "*-2\r\n",
       "replication stream offset 14: " + want_command + "invalid multibulk length"},
      {"a null argument", "*1\r\n$-1\r\n",
       "replication stream offset 0: " + want_command + "invalid bulk length"},
      {"a negative argument length", "*1\r\n$-7\r\n",
       "replication stream offset 0: " + want_command + "invalid bulk length"},
      {"a length that is not a number", "*1\r\n$4x\r\nPING\r\n",
       "replication stream offset 0: " + want_command + "invalid bulk length"},
      {"an argument without its CRLF", "*1\r\n$4\r\nPINGxx",
       "replication stream offset 0: " + want_command + "expected '\\r\\n' after bulk data"},
      {"a header ending in LF only", "*1\n$4\r\nPING\r\n",
       "replication stream offset 0: " + want_command + "invalid multibulk length"},
      {"an integer as an argument", "*2\r\n$3\r\nDEL\r\n:1\r\n",
       "replication stream offset 0: " + want_command + "expected '$', got ':'"},
      {"a nested array", ping + ping + "*1\r\n*1\r\n",
       "replication stream offset 28: " + want_command + "aggregates nested deeper than 1 levels"},
      // Refused from the header alone: no wait for (and no buffer of) 512 MB that never come.
      {"an argument over 512 MB", "*1\r\n$536870913\r\n",
       "replication stream offset 0: " + want_command +
           "bulk length 536870913 over the limit of 536870912"},
      {"over a million arguments", "*1048577\r\n",
       "replication stream offset 0: " + want_command + "invalid multibulk length"},
      {"a length line that never ends", "*1\r\n$" + std::string(30, '1'),
       "replication stream offset 0: " + want_command + "line longer than 20 bytes"},
  };
  for (const MalformedCase& c : cases) {
    const Pulled whole = Pull(0, {c.stream});
    EXPECT_EQ(whole.error, c.error) << c.name;
    EXPECT_EQ(whole.error.find('\n'), std::string::npos) << c.name << ": not one line";
    std::vector<std::string> bytes;
    for (char b : c.stream) bytes.emplace_back(1, b);
    EXPECT_EQ(Pull(0, bytes).error, c.error) << c.name << ", fed one byte at a time";
  }
}

TEST(ReplStreamParserTest, CommandsBeforeTheErrorAreReturnedAndTheErrorSticks) {
  ReplStreamParser parser(50);
  parser.Feed("*1\r\n$4\r\nPING\r\n-ERR\r\n");
  Result<std::optional<ReplCommand>> next = parser.Next();
  ASSERT_TRUE(next.ok() && next->has_value());
  EXPECT_EQ((*next)->offset, 64);
  next = parser.Next();
  ASSERT_FALSE(next.ok());
  const std::string error = next.error().message();
  EXPECT_EQ(error,
            "replication stream offset 64: expected a command ('*') or a keepalive ('\\n'), got "
            "'-'");
  parser.Feed("*1\r\n$4\r\nPING\r\n");
  next = parser.Next();
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.error().message(), error);
  EXPECT_EQ(parser.offset(), 64);
}

TEST(ReplStreamParserTest, LimitsAreTheCallers) {
  const ReplStreamLimits limits{.max_argument_length = 3, .max_arguments = 2};
  EXPECT_EQ(Pull(0, {"*2\r\n$3\r\nDEL\r\n$3\r\nabc\r\n"}, limits).commands.size(), 1u);
  EXPECT_EQ(Pull(0, {"*2\r\n$3\r\nDEL\r\n$4\r\nabcd\r\n"}, limits).error,
            "replication stream offset 0: expected a command (an array of bulk strings): "
            "Protocol error: bulk length 4 over the limit of 3");
  EXPECT_EQ(Pull(0, {"*3\r\n"}, limits).error,
            "replication stream offset 0: expected a command (an array of bulk strings): "
            "Protocol error: invalid multibulk length");
}

}  // namespace
}  // namespace shardctl::common
