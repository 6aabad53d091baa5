// FreeList: objects of one type kept for reuse instead of being freed, so a warm loop allocates
// none per request (the proxy's SubRequests and PendingReplies). The owner decides what is worth
// keeping (Keep) and resets an object before it keeps it. Not thread-safe: one per loop thread.
//
// Under AddressSanitizer a kept object is poisoned until it is taken again: a pointer still held
// to it after it was given back (a use after free the reuse would otherwise hide, since the next
// Take() hands the same memory to someone else) is reported as ASan reports a freed one.
#pragma once

#include <sanitizer/asan_interface.h>

#include <cstddef>
#include <memory>
#include <vector>

namespace shardctl::common {

template <typename T>
class FreeList {
 public:
  FreeList() = default;
  FreeList(const FreeList&) = delete;
  FreeList& operator=(const FreeList&) = delete;
  ~FreeList() {
    for (auto& object : kept_) ASAN_UNPOISON_MEMORY_REGION(object.get(), sizeof(T));
  }

  // A kept object, or a new one when none is kept.
  T* Take() {
    if (kept_.empty()) return new T;
    T* object = kept_.back().release();
    kept_.pop_back();
    ASAN_UNPOISON_MEMORY_REGION(object, sizeof(T));
    return object;
  }
  // Keeps `object` (already reset) for a later Take().
  void Keep(T* object) {
    kept_.emplace_back(object);
    ASAN_POISON_MEMORY_REGION(object, sizeof(T));
  }
  size_t size() const { return kept_.size(); }

 private:
  std::vector<std::unique_ptr<T>> kept_;
};

}  // namespace shardctl::common
