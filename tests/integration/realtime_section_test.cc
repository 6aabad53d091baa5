// RealtimeSection against the real scheduler: the calling thread alone at SCHED_FIFO for the
// section's lifetime, the policy it had afterwards, and nothing raised without CAP_SYS_NICE.
#include "launcher/os/realtime_section.h"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

using launcher::RealtimeSection;

int PolicyOf(pthread_t thread) {
  int policy = -1;
  sched_param param{};
  EXPECT_EQ(pthread_getschedparam(thread, &policy, &param), 0);
  return policy;
}

// Drops CAP_SYS_NICE from the calling thread's effective set (capabilities are per thread, so
// the rest of the test process keeps it). False when the kernel refused.
bool DropSysNiceFromThisThread() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  data[CAP_TO_INDEX(CAP_SYS_NICE)].effective &= ~CAP_TO_MASK(CAP_SYS_NICE);
  return syscall(SYS_capset, &header, data) == 0;
}

TEST(RealtimeSectionTest, RaisesOnlyTheCallingThreadForItsLifetime) {
  const pthread_t main_thread = pthread_self();
  ASSERT_EQ(PolicyOf(main_thread), SCHED_OTHER);
  std::thread worker([&] {
    ASSERT_EQ(PolicyOf(pthread_self()), SCHED_OTHER);
    {
      RealtimeSection section;
      EXPECT_EQ(section.raised(), MayRunRealtime());
      EXPECT_EQ(PolicyOf(pthread_self()), section.raised() ? SCHED_FIFO : SCHED_OTHER);
      EXPECT_EQ(PolicyOf(main_thread), SCHED_OTHER) << "another thread was raised with this one";
    }
    EXPECT_EQ(PolicyOf(pthread_self()), SCHED_OTHER) << "the policy was not put back";
  });
  worker.join();
  EXPECT_EQ(PolicyOf(main_thread), SCHED_OTHER);
}

TEST(RealtimeSectionTest, WithoutCapSysNiceTheThreadStaysAsItWas) {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_RTPRIO, &limit), 0);
  if (limit.rlim_cur > 0) GTEST_SKIP() << "RLIMIT_RTPRIO allows real time without the capability";
  std::thread worker([] {
    ASSERT_TRUE(DropSysNiceFromThisThread());
    ASSERT_FALSE(HasEffectiveCapability(CAP_SYS_NICE));
    RealtimeSection section;
    EXPECT_FALSE(section.raised());
    EXPECT_EQ(PolicyOf(pthread_self()), SCHED_OTHER);
  });
  worker.join();
}

}  // namespace
}  // namespace shardctl::integration
