// A RESP connection for the key copy's data path: requests go out as bytes the caller framed, and
// each reply comes back as the bytes of its frame (common/resp.h), never as a reply tree. A bulk
// reply ("$5\r\nhello\r\n") is byte for byte the encoding of a request argument, so a value read
// from one node is written to another as it came (design.md: "forward bytes, don't rebuild them"):
// no hiredis objects, no copies into strings, and a value is copied once on its way through.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/resp.h"
#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/cluster/control_link.h"

namespace shardctl::launcher {

class FrameLink {
 public:
  // Connects, in TLS and with the password when `access` says so, as RedisConnection::Connect.
  // `timeout` bounds the connect and every later read and write.
  static common::Result<FrameLink> Connect(const Access& access, const std::string& host, int port,
                                           std::chrono::milliseconds timeout);

  // Writes all of `requests` (complete RESP commands).
  common::Status Write(std::string_view requests);

  // The next reply, whole: its type byte first ('$', ':', '+', '-', ...) and "\r\n" last. The view
  // is valid until the next call. An error is the connection breaking or a stream that is not
  // RESP, after which nothing more can be read.
  common::Result<std::string_view> Next();

  const std::string& address() const { return address_; }

 private:
  FrameLink(ControlLink link, std::string address)
      : link_(std::move(link)), address_(std::move(address)) {}

  ControlLink link_;
  common::RespScanner scanner_;
  size_t returned_end_ = 0;  // end of the frame Next() returned last, dropped on the next call
  std::string address_;
};

// A reply's parts, read from its frame.
// ":<n>\r\n" as a number; nullopt for any other frame.
std::optional<int64_t> FrameInteger(std::string_view frame);
// True for "-..." frames; ErrorText is then the message without '-' and "\r\n".
inline bool IsErrorFrame(std::string_view frame) { return frame.starts_with('-'); }
std::string ErrorText(std::string_view frame);
// True for the nil bulk string "$-1\r\n".
inline bool IsNilFrame(std::string_view frame) { return frame.starts_with("$-"); }
// The length of a bulk string's contents, from its frame.
size_t BulkLength(std::string_view frame);

}  // namespace shardctl::launcher
