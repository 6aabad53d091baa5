// RealtimeSection against the real scheduler: the calling thread alone at SCHED_FIFO for the
// section's lifetime, then the policy and nice value it had; a thread already real-time left as
// it is; nothing raised without CAP_SYS_NICE. Policies are read from the kernel by thread id
// (pthread_getschedparam answers from a cache in glibc).
#include "launcher/os/realtime_section.h"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <thread>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

using launcher::RealtimeSection;

pid_t ThreadId() { return static_cast<pid_t>(syscall(SYS_gettid)); }
int PolicyOf(pid_t thread) { return sched_getscheduler(thread); }
int PriorityOf(pid_t thread) {
  sched_param param{};
  EXPECT_EQ(sched_getparam(thread, &param), 0);
  return param.sched_priority;
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
  const bool allowed = KernelAllowsRealtime();
  const pid_t main_thread = ThreadId();
  const int main_policy = PolicyOf(main_thread);
  ASSERT_NE(main_policy, SCHED_FIFO) << "run the tests at a fair policy";
  std::thread worker([&] {
    const pid_t self = ThreadId();
    const int before = PolicyOf(self);
    {
      RealtimeSection section;
      EXPECT_EQ(section.raised(), allowed) << section.refusal();
      EXPECT_EQ(section.refusal().empty(), allowed) << section.refusal();
      EXPECT_EQ(PolicyOf(self), allowed ? SCHED_FIFO : before);
      EXPECT_EQ(PolicyOf(main_thread), main_policy) << "another thread was raised with this one";
    }
    EXPECT_EQ(PolicyOf(self), before) << "the policy was not put back";
  });
  worker.join();
  EXPECT_EQ(PolicyOf(main_thread), main_policy);
}

// A batch thread at nice 5 comes back a batch thread at nice 5.
TEST(RealtimeSectionTest, PutsBackABatchPolicyAndItsNiceValue) {
  const bool allowed = KernelAllowsRealtime();
  std::thread worker([&] {
    const pid_t self = ThreadId();
    sched_param none{};
    ASSERT_EQ(sched_setscheduler(0, SCHED_BATCH, &none), 0);
    ASSERT_EQ(setpriority(PRIO_PROCESS, static_cast<id_t>(self), 5), 0);
    {
      RealtimeSection section;
      EXPECT_EQ(section.raised(), allowed);
      EXPECT_EQ(PolicyOf(self), allowed ? SCHED_FIFO : SCHED_BATCH);
    }
    EXPECT_EQ(PolicyOf(self), SCHED_BATCH);
    errno = 0;
    EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(self)), 5);
    EXPECT_EQ(errno, 0);
  });
  worker.join();
}

// Lowering a real-time thread to the lowest level would make it wait longer: it is left as it is.
TEST(RealtimeSectionTest, LeavesAThreadAlreadyRealtimeAsItIs) {
  if (!KernelAllowsRealtime()) GTEST_SKIP() << "the kernel refuses real-time threads here";
  std::thread worker([] {
    const pid_t self = ThreadId();
    sched_param five{};
    five.sched_priority = 5;
    ASSERT_EQ(sched_setscheduler(0, SCHED_RR, &five), 0);
    {
      RealtimeSection section;
      EXPECT_TRUE(section.raised());
      EXPECT_EQ(PolicyOf(self), SCHED_RR);
      EXPECT_EQ(PriorityOf(self), 5);
    }
    EXPECT_EQ(PolicyOf(self), SCHED_RR);
    EXPECT_EQ(PriorityOf(self), 5);
    sched_param fair{};
    EXPECT_EQ(sched_setscheduler(0, SCHED_OTHER, &fair), 0);
  });
  worker.join();
}

TEST(RealtimeSectionTest, WithoutCapSysNiceTheThreadStaysAsItWas) {
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_RTPRIO, &limit), 0);
  if (limit.rlim_cur > 0) GTEST_SKIP() << "RLIMIT_RTPRIO allows real time without the capability";
  std::thread worker([] {
    const pid_t self = ThreadId();
    const int before = PolicyOf(self);
    ASSERT_TRUE(DropSysNiceFromThisThread());
    ASSERT_FALSE(HasEffectiveCapability(CAP_SYS_NICE));
    RealtimeSection section;
    EXPECT_FALSE(section.raised());
    EXPECT_NE(section.refusal(), "");
    EXPECT_EQ(PolicyOf(self), before);
  });
  worker.join();
}

}  // namespace
}  // namespace shardctl::integration
