#include "proxy/commands/request_pool.h"

namespace shardctl::proxy {

SubRequest* SubRequestPool::Take() {
  const bool reused = kept_.size() > 0;
  SubRequest* request = kept_.Take();
  // Kept requests keep their capacity unchanged while kept: this is what Give() added.
  if (reused) kept_bytes_ -= request->request.capacity();
  return request;
}

void SubRequestPool::Give(SubRequest* request) {
  const size_t bytes = request->request.capacity();
  if (kept_.size() >= kMaxKept || bytes > kMaxBufferBytes || kept_bytes_ + bytes > kMaxKeptBytes) {
    delete request;
    return;
  }
  request->Reset();
  kept_bytes_ += bytes;
  kept_.Keep(request);
}

}  // namespace shardctl::proxy
