// FreeList: objects of one type kept for reuse instead of being freed, so a warm loop allocates
// none per request (the proxy's SubRequests and PendingReplies). The owner decides what is worth
// keeping (Keep) and resets an object before it keeps it. Not thread-safe: one per loop thread.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace shardctl::common {

template <typename T>
class FreeList {
 public:
  // A kept object, or a new one when none is kept.
  T* Take() {
    if (kept_.empty()) return new T;
    T* object = kept_.back().release();
    kept_.pop_back();
    return object;
  }
  // Keeps `object` (already reset) for a later Take().
  void Keep(T* object) { kept_.emplace_back(object); }
  size_t size() const { return kept_.size(); }

 private:
  std::vector<std::unique_ptr<T>> kept_;
};

}  // namespace shardctl::common
