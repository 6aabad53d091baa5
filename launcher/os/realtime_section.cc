#include "launcher/os/realtime_section.h"

#include <pthread.h>
#include <sched.h>

#include <cstring>

namespace shardctl::launcher {

RealtimeSection::RealtimeSection() {
  sched_param old{};
  if (int failed = pthread_getschedparam(pthread_self(), &old_policy_, &old); failed != 0) {
    refusal_ = std::strerror(failed);
    return;
  }
  old_priority_ = old.sched_priority;
  if (old_policy_ == SCHED_FIFO || old_policy_ == SCHED_RR) {
    raised_ = true;  // lowering it to our level would make it wait longer, not less
    return;
  }
  if (old_policy_ != SCHED_OTHER && old_policy_ != SCHED_BATCH && old_policy_ != SCHED_IDLE) {
    refusal_ = "the thread runs under another policy (" + std::to_string(old_policy_) + ")";
    return;  // SCHED_DEADLINE: pthread_setschedparam could not put it back
  }
  // The lowest real-time priority is enough: any of them runs before every fairly scheduled
  // task, and the kernel's own real-time threads keep precedence over us.
  sched_param raised{};
  raised.sched_priority = sched_get_priority_min(SCHED_FIFO);
  if (int failed = pthread_setschedparam(pthread_self(), SCHED_FIFO, &raised); failed != 0) {
    refusal_ = std::strerror(failed);
    return;
  }
  raised_ = changed_ = true;
}

RealtimeSection::~RealtimeSection() {
  if (!changed_) return;
  // The nice value survives the round trip: the kernel keeps it while the thread is real-time.
  sched_param old{};
  old.sched_priority = old_priority_;
  if (pthread_setschedparam(pthread_self(), old_policy_, &old) == 0) return;
  // Never stay real-time past the section (threads made later would inherit it).
  sched_param fair{};
  (void)pthread_setschedparam(pthread_self(), SCHED_OTHER, &fair);
}

}  // namespace shardctl::launcher
