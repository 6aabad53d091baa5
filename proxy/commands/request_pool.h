// SubRequestPool: a worker's finished SubRequests kept for reuse, so a warm loop allocates none
// per request. What is kept is bounded three ways, so a burst cannot pin memory for good: at most
// kMaxKept requests (every request in flight at a deep pipeline), none whose buffer grew past
// kMaxBufferBytes (one huge value is not kept for the small requests after it), and buffers of
// kMaxKeptBytes in all (16384 requests of 64 KiB each would otherwise be 1 GiB per worker).
#pragma once

#include <cstddef>

#include "common/free_list.h"
#include "proxy/commands/request.h"

namespace shardctl::proxy {

class SubRequestPool {
 public:
  static constexpr size_t kMaxKept = 16384;
  static constexpr size_t kMaxBufferBytes = 64 * 1024;
  static constexpr size_t kMaxKeptBytes = 16 * 1024 * 1024;

  // A request as new (its buffer may have capacity).
  SubRequest* Take();
  // Takes back a finished request: reset and kept, or freed when a bound says so.
  void Give(SubRequest* request);

  size_t kept() const { return kept_.size(); }
  // The capacity of the kept requests' buffers, summed.
  size_t kept_bytes() const { return kept_bytes_; }

 private:
  common::FreeList<SubRequest> kept_;
  size_t kept_bytes_ = 0;
};

}  // namespace shardctl::proxy
