#include "launcher/os/realtime_section.h"

#include <pthread.h>
#include <sched.h>

namespace shardctl::launcher {

RealtimeSection::RealtimeSection() {
  sched_param old{};
  if (pthread_getschedparam(pthread_self(), &old_policy_, &old) != 0) return;
  old_priority_ = old.sched_priority;
  // The lowest real-time priority is enough: any of them runs before every fairly scheduled
  // task, and the kernel's own real-time threads keep precedence over us.
  sched_param raised{};
  raised.sched_priority = sched_get_priority_min(SCHED_FIFO);
  raised_ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &raised) == 0;
}

RealtimeSection::~RealtimeSection() {
  if (!raised_) return;
  sched_param old{};
  old.sched_priority = old_priority_;
  (void)pthread_setschedparam(pthread_self(), old_policy_, &old);
}

}  // namespace shardctl::launcher
