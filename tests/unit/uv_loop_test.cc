// common::uv::CloseLoop: the check every event-loop test and program ends with. No sockets: a
// timer is the handle left open.
#include <gtest/gtest.h>
#include <uv.h>

#include "common/uv/handle.h"

namespace shardctl {
namespace {

TEST(UvLoopTest, CloseLoopNamesTheHandlesStillLive) {
  uv_loop_t loop{};
  ASSERT_EQ(uv_loop_init(&loop), 0);
  uv_timer_t timer{};
  uv_timer_init(&loop, &timer);

  const common::Status open = common::uv::CloseLoop(&loop);
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.error().message(), "the loop still has 1 handle: timer");

  // Closed but its close callback not run yet: still there, and said so.
  uv_close(common::uv::AsHandle(&timer), nullptr);
  const common::Status closing = common::uv::CloseLoop(&loop);
  ASSERT_FALSE(closing.ok());
  EXPECT_EQ(closing.error().message(), "the loop still has 1 handle: timer (closing)");

  uv_run(&loop, UV_RUN_DEFAULT);
  const common::Status closed = common::uv::CloseLoop(&loop);
  EXPECT_TRUE(closed.ok()) << closed.error().message();
}

TEST(UvLoopTest, CloseIfOpenClosesOnce) {
  uv_loop_t loop{};
  ASSERT_EQ(uv_loop_init(&loop), 0);
  uv_timer_t timer{};
  uv_timer_init(&loop, &timer);
  int closes = 0;
  timer.data = &closes;
  const uv_close_cb count = [](uv_handle_t* handle) { ++*static_cast<int*>(handle->data); };
  common::uv::CloseIfOpen(common::uv::AsHandle(&timer), count);
  common::uv::CloseIfOpen(common::uv::AsHandle(&timer), count);  // already closing: nothing
  uv_run(&loop, UV_RUN_DEFAULT);
  EXPECT_EQ(closes, 1);
  const common::Status closed = common::uv::CloseLoop(&loop);
  EXPECT_TRUE(closed.ok()) << closed.error().message();
}

}  // namespace
}  // namespace shardctl
