#include <gtest/gtest.h>

#include <string>

#include "proxy/merge/redirect.h"

namespace shardctl::proxy {
namespace {

struct RedirectCase {
  std::string frame;
  ReplyAction action;
  int slot;
  std::string host;
  int port;
};

class ClassifyReplyTest : public testing::TestWithParam<RedirectCase> {};

TEST_P(ClassifyReplyTest, ReadsWhatTheShardAsksFor) {
  const RedirectCase& c = GetParam();
  const Redirect redirect = ClassifyReply(c.frame);
  EXPECT_EQ(redirect.action, c.action) << c.frame;
  EXPECT_EQ(redirect.slot, c.slot) << c.frame;
  EXPECT_EQ(redirect.host, c.host) << c.frame;
  EXPECT_EQ(redirect.port, c.port) << c.frame;
}

INSTANTIATE_TEST_SUITE_P(
    Frames, ClassifyReplyTest,
    testing::Values(
        // Captured from redis-server 7.0.15 (MOVED, ASK) and Redis' source wording.
        RedirectCase{"-MOVED 3999 127.0.0.1:6381\r\n", ReplyAction::kMoved, 3999, "127.0.0.1",
                     6381},
        RedirectCase{"-ASK 12182 127.0.0.1:17002\r\n", ReplyAction::kAsk, 12182, "127.0.0.1",
                     17002},
        RedirectCase{"-MOVED 0 [::1]:7000\r\n", ReplyAction::kMoved, 0, "::1", 7000},
        RedirectCase{"-MOVED 16383 ::1:7000\r\n", ReplyAction::kMoved, 16383, "::1", 7000},
        RedirectCase{"-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
                     ReplyAction::kRetry, -1, "", 0},
        RedirectCase{"-CLUSTERDOWN The cluster is down\r\n", ReplyAction::kRetry, -1, "", 0},
        RedirectCase{"-CLUSTERDOWN Hash slot not served\r\n", ReplyAction::kRetry, -1, "", 0},
        // Everything else goes to the client as is.
        RedirectCase{"-ERR unknown command 'foo'\r\n", ReplyAction::kDeliver, -1, "", 0},
        RedirectCase{"-MOVEDX 1 a:1\r\n", ReplyAction::kDeliver, -1, "", 0},
        RedirectCase{"+MOVED 1 127.0.0.1:7000\r\n", ReplyAction::kDeliver, -1, "", 0},
        RedirectCase{"$5\r\nMOVED\r\n", ReplyAction::kDeliver, -1, "", 0},
        // Unparseable endpoints: Redis' own error reaches the client, never a guess.
        RedirectCase{"-MOVED 16384 127.0.0.1:7000\r\n", ReplyAction::kDeliver, -1, "", 0},
        RedirectCase{"-MOVED x 127.0.0.1:7000\r\n", ReplyAction::kDeliver, -1, "", 0},
        RedirectCase{"-MOVED 1 127.0.0.1:0\r\n", ReplyAction::kDeliver, -1, "", 0},
        RedirectCase{"-MOVED 1 127.0.0.1\r\n", ReplyAction::kDeliver, -1, "", 0},
        RedirectCase{"-ASK 1 :7000\r\n", ReplyAction::kDeliver, -1, "", 0},
        RedirectCase{"-ASK\r\n", ReplyAction::kDeliver, -1, "", 0},
        RedirectCase{"-", ReplyAction::kDeliver, -1, "", 0}));

}  // namespace
}  // namespace shardctl::proxy
