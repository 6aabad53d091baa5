// Heap-allocated libuv handles of the supervisor derive from OwnedHandle and put themselves in
// handle->data, so that any handle can be closed with the right callback (DeleteOwnedHandle) —
// including by the supervisor's final uv_walk, which closes whatever is still open. Handles
// embedded in the Supervisor keep data == nullptr and reach it through loop->data. libuv allows
// freeing a handle's memory only in its close callback; DeleteOwnedHandle is that callback.
#pragma once

#include <uv.h>

namespace shardctl::launcher {

struct OwnedHandle {
  virtual ~OwnedHandle() = default;
};

// A uv_close_cb: deletes the OwnedHandle in handle->data.
inline void DeleteOwnedHandle(uv_handle_t* handle) {
  delete static_cast<OwnedHandle*>(handle->data);
}

// Closes `handle` (whose data is an OwnedHandle) unless it is already closing.
inline void CloseOwnedHandle(uv_handle_t* handle) {
  if (!uv_is_closing(handle)) uv_close(handle, DeleteOwnedHandle);
}

}  // namespace shardctl::launcher
