// What every command's entry returns: a report, or a Failure whose fault picks the exit code.
#include <gtest/gtest.h>

#include "common/result.h"
#include "launcher/ops/outcome.h"

namespace shardctl::launcher {
namespace {

Outcome<int> FromBelow(bool fail) {
  common::Result<int> below =
      fail ? common::Result<int>(common::Error("127.0.0.1:7000: Connection refused")) : 42;
  if (!below.ok()) return below.error();  // an Error becomes a runtime Failure
  return *below;
}

TEST(OutcomeTest, AnErrorFromBelowIsTheEnvironmentsFaultAndKeepsItsMessage) {
  auto failed = FromBelow(true);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().fault(), Fault::kRuntime);
  EXPECT_EQ(failed.error().message(), "127.0.0.1:7000: Connection refused");
  auto fine = FromBelow(false);
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(*fine, 42);
}

TEST(OutcomeTest, ContextKeepsTheFault) {
  Failure usage = Failure::Usage("no shard 7");
  Failure named = usage.Context("move-slots");
  EXPECT_EQ(named.fault(), Fault::kUsage);
  EXPECT_EQ(named.message(), "move-slots: no shard 7");
  Outcome<void> interrupted = Failure(Fault::kInterrupted, "interrupted after 2 shard(s)");
  ASSERT_FALSE(interrupted.ok());
  auto context = std::move(interrupted).Context("restart");
  EXPECT_EQ(context.error().fault(), Fault::kInterrupted);
  EXPECT_EQ(context.error().message(), "restart: interrupted after 2 shard(s)");
}

TEST(OutcomeTest, ClassifyMakesTheUsageMarkerTheUsersFaultAndDropsIt) {
  Failure refused = Classify(common::Error("usage: --migration atomic: 127.0.0.1:7000 has none"));
  EXPECT_EQ(refused.fault(), Fault::kUsage);
  EXPECT_EQ(refused.message(), "--migration atomic: 127.0.0.1:7000 has none");
  Failure broken = Classify(common::Error("MIGRATE: IOERR"));
  EXPECT_EQ(broken.fault(), Fault::kRuntime);
  EXPECT_EQ(broken.message(), "MIGRATE: IOERR");
}

TEST(OutcomeTest, AVoidOutcomeIsOkUntilGivenAFailure) {
  Outcome<void> fine;
  EXPECT_TRUE(fine.ok());
  Outcome<void> failed = common::Error("disk full");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().fault(), Fault::kRuntime);
}

}  // namespace
}  // namespace shardctl::launcher
