// RESP framing for the proxy's hot path: find where each frame ends, validate it, write replies.
//
// Written from the RESP2 and RESP3 specifications. It never builds a reply tree: the proxy forwards
// bytes and only needs to know where one frame ends and the next begins (design.md: "forward bytes,
// don't rebuild them"). No I/O: the caller feeds bytes and pulls frames, like hiredis read.c.
//
//   socket bytes ──Feed()──▶ [ buffer ] ──Next()──▶ kFrame {begin, end, type}  ──▶ forward slice
//                                          │        kIncomplete (feed more)
//                                          │        kError (close the connection)
//                                          └──Consume(n) drops forwarded bytes from the front
//
// Types: RESP2 + - : $ * (with $-1 and *-1 nulls) and RESP3 _ # , ( ! = % ~ | >. Streamed strings
// and aggregates ("$?", "*?", ...) are rejected with an error. An attribute ('|') and the reply it
// annotates make one frame, wherever it appears.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace shardctl::common {

// Bounds on what one frame may contain. A frame beyond a bound is a protocol error: the connection
// that sent it should be closed, as Redis does.
struct RespLimits {
  // Aggregates (arrays, maps, sets, pushes, attributes) nested inside each other.
  size_t max_depth = 64;
  // Bytes in one bulk string, bulk error or verbatim string: Redis' proto-max-bulk-len default.
  int64_t max_bulk_length = int64_t{512} * 1024 * 1024;
  // Elements announced by one aggregate header (pairs for maps and attributes). Redis 7 accepts up
  // to INT_MAX arguments in a request and replies are not bounded at all; the scanner holds no
  // per-element memory, so this guards only against absurd headers.
  int64_t max_aggregate_count = 2147483647;
  // Bytes on one header or simple line (+ - : , ( and lengths), excluding "\r\n". Redis allows
  // 64 KiB for an inline request; a backend scanner may want more for long Lua status replies.
  size_t max_line_length = 64 * 1024;
};

enum class ScanStatus {
  kIncomplete,  // more bytes are needed; call Feed() and then Next() again
  kFrame,       // one complete top-level frame
  kError,       // the stream is not valid RESP; the error is sticky
};

struct ScanResult {
  ScanStatus status = ScanStatus::kIncomplete;
  // kFrame: the frame is Buffered().substr(begin, end - begin).
  size_t begin = 0;
  size_t end = 0;
  // kFrame: the type byte of the reply ('+', '*', '>', ...). For an attributed reply this is the
  // type of the reply after the attribute, not '|'.
  char type = 0;
  // kError: "Protocol error: <what>", in Redis' wording where Redis has one.
  std::string error;
};

// Splits a byte stream into complete RESP frames.
//
// Owns a buffer of the fed bytes. Next() resumes where the previous call stopped: a large bulk
// string fed in many pieces is never rescanned, and a deep aggregate keeps its progress in a small
// stack. Frames come out in order; Next() moves past each frame it returns, so several frames can
// be pulled before Consume() is called. After kError every further Next() returns the same error;
// the stream cannot be resynchronised, so close the connection (or Reset()).
class RespScanner {
 public:
  explicit RespScanner(RespLimits limits = {});

  // Appends bytes to the buffer. Invalidates views obtained from Buffered().
  void Feed(std::string_view bytes);
  // Scans `bytes` where they are, without copying them, when nothing is buffered (the usual case
  // for a connection whose last read ended on a frame boundary); else the same as Feed(). The
  // caller must call Detach() before `bytes` change or go away (at the end of the read callback
  // that got them): only what is left unconsumed is copied then.
  void FeedBorrowed(std::string_view bytes);
  // Copies what is left of borrowed bytes into the scanner's own buffer; nothing when nothing is
  // borrowed. Offsets of frames returned earlier shift as in Consume(). Invalidates views
  // obtained from Buffered().
  void Detach();

  // Scans for the next complete frame after the last one returned.
  ScanResult Next();

  // Drops `bytes` from the front of Buffered(). Only bytes of frames already returned by Next()
  // can be dropped; larger values are clamped to that. Offsets of frames returned earlier shift
  // down by the number of bytes dropped. Invalidates views obtained from Buffered().
  void Consume(size_t bytes);

  // The bytes fed and not yet consumed; frame offsets index into this view.
  std::string_view Buffered() const;

  // The bytes of a kFrame result; valid until the next Feed(), Consume() or Detach() (while fed
  // bytes are borrowed, a view into the caller's buffer: never keep it past the read callback).
  std::string_view FrameBytes(const ScanResult& frame) const;

  // The bytes after the last frame Next() returned, a frame being scanned included.
  std::string_view Unreturned() const;

  // Drops `bytes` from the front of Unreturned() without scanning them, for a caller that parses
  // something else there (an inline command such as "PING\r\n"). Only possible while no frame is
  // partly scanned (Next() has not started on these bytes) and no error is pending; returns false
  // and changes nothing otherwise. The skipped bytes are released by the next Consume().
  bool SkipUnreturned(size_t bytes);
  // True when no frame is partly scanned and no error is pending: the caller may parse the
  // Unreturned() bytes itself (and SkipUnreturned() them).
  bool AtFrameStart() const;

  // Forgets all bytes and any error, keeping the limits.
  void Reset();

 private:
  struct Level {
    int64_t remaining;  // elements still expected at this level
    bool attribute;     // when done, the annotated value follows in the parent's slot
  };
  enum class Step { kContinue, kIncomplete, kError, kFrame };

  bool ScanSimpleFrame(ScanResult& result);
  Step ScanElement();
  Step ScanLine(size_t& line_end);
  Step ScanBulkBody();
  Step ScanBulkHeader(char type, std::string_view line, size_t next);
  Step ScanAggregateHeader(char type, std::string_view line, size_t next);
  Step FinishElement(size_t next);
  Step Fail(std::string message);
  // Shifts every offset down by head_ once the bytes before it are gone (head_ becomes 0).
  void Rebase();
  // The bytes being scanned: the borrowed ones, else the buffer.
  std::string_view Data() const { return borrowed_.data() != nullptr ? borrowed_ : buffer_; }

  RespLimits limits_;
  std::string buffer_;
  // The caller's bytes while FeedBorrowed() borrows them (then scanned in place of buffer_). Not
  // a view of buffer_ in the other case, so copies and moves of the scanner stay right.
  std::string_view borrowed_;
  size_t head_ = 0;         // bytes before this were consumed
  size_t frame_start_ = 0;  // start of the frame being scanned; end of frames returned
  size_t pos_ = 0;          // start of the next element to scan
  size_t line_search_ = 0;  // where to resume looking for '\r' on the line at pos_
  size_t bulk_body_ = 0;    // a bulk header was scanned: its body starts here...
  size_t bulk_end_ = 0;     // ...and ends (after "\r\n") here; 0 when no body is pending
  char bulk_type_ = 0;
  char frame_type_ = 0;
  std::vector<Level> stack_;
  std::string error_;
};

// True when a request starting with `first_byte` is an inline command ("PING\r\n" typed into
// telnet) rather than a RESP array; Redis decides by this one byte too.
inline bool IsInlineCommand(char first_byte) { return first_byte != '*'; }

// Splits an inline command line ("SET foo bar", as telnet and nc send it, without "\r\n") into
// its arguments at spaces, tabs and CRs. No quoting. The views point into `line`.
std::vector<std::string_view> SplitInlineArgs(std::string_view line);

// Splits a complete request frame (an array of bulk strings, as every client library and
// redis-cli send) into its arguments. The views point into `frame`. "*0\r\n" and "*-1\r\n" give no
// arguments (Redis ignores such requests). Anything else — another type, a non-bulk element,
// bytes after the frame, a truncated frame — is an error naming the problem.
Result<std::vector<std::string_view>> ParseCommandArgs(std::string_view frame);
// The same into `args` (cleared first), so a caller parsing many requests reuses one vector.
Status ParseCommandArgsInto(std::string_view frame, std::vector<std::string_view>& args);

// The request fast path: one pass over the start of `bytes` for a complete request made the usual
// way (an array of bulk strings), framing it and splitting its arguments at once. Strict: it takes
// only what RespScanner followed by ParseCommandArgs would take with the same limits, so the
// caller can fall back to them for everything else and get their canonical errors.
struct FastRequest {
  enum class Kind {
    kRequest,     // a complete request of `length` bytes; `args` holds views into `bytes`
    kIncomplete,  // a well-formed start: more bytes are needed
    kSlowPath,    // anything else (another type, a null or malformed header, over a limit)
  };
  Kind kind = Kind::kSlowPath;
  size_t length = 0;
};
FastRequest ScanRequest(std::string_view bytes, const RespLimits& limits,
                        std::vector<std::string_view>& args);

// Writers. Each appends one complete frame to `out`.
// An array of bulk strings: the request encoding.
void AppendCommand(std::string& out, std::span<const std::string_view> args);
// "-<message>\r\n"; `message` starts with the error code ("ERR ...", "CROSSSLOT ..."). CR and LF in
// the message become spaces, as Redis does, so the frame stays valid.
void AppendError(std::string& out, std::string_view message);
// "+<message>\r\n", with CR and LF replaced by spaces.
void AppendSimple(std::string& out, std::string_view message);
// ":<value>\r\n".
void AppendInteger(std::string& out, int64_t value);
// "$<length>\r\n<bytes>\r\n"; binary safe.
void AppendBulk(std::string& out, std::string_view bytes);
// "*<count>\r\n": the header of an array whose `count` elements the caller appends next.
void AppendArrayHeader(std::string& out, size_t count);
// The null reply of the client's protocol: "$-1\r\n" for RESP2 (protocol 2), "_\r\n" for RESP3.
void AppendNull(std::string& out, int protocol);

}  // namespace shardctl::common
