#include "launcher/supervisor/restart_policy.h"

#include <algorithm>

namespace shardctl::launcher {

RestartPolicy::Duration RestartPolicy::OnExit(Duration uptime) {
  quick_exits_ = uptime >= kStableAfter ? 1 : quick_exits_ + 1;
  if (quick_exits_ == 1) return Duration(0);
  // 250 ms, 500 ms, 1 s, ... capped; the shift is bounded so it cannot overflow.
  int doublings = std::min(quick_exits_ - 2, 20);
  return std::min(kMaxDelay, Duration(kBaseDelay.count() * (1LL << doublings)));
}

}  // namespace shardctl::launcher
