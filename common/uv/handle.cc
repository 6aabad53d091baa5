#include "common/uv/handle.h"

#include <string>

namespace shardctl::common::uv {

Status CloseLoop(uv_loop_t* loop) {
  if (uv_loop_close(loop) == 0) return Ok();
  struct Live {
    int count = 0;
    std::string names;
  } live;
  uv_walk(
      loop,
      [](uv_handle_t* handle, void* arg) {
        auto* found = static_cast<Live*>(arg);
        if (found->count++ > 0) found->names += ", ";
        found->names += uv_handle_type_name(handle->type);
        if (uv_is_closing(handle)) found->names += " (closing)";
      },
      &live);
  if (live.count == 0) return Error("the loop still has pending requests");
  return Error("the loop still has " + std::to_string(live.count) +
               (live.count == 1 ? " handle: " : " handles: ") + live.names);
}

}  // namespace shardctl::common::uv
