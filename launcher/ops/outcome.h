// What every command's entry in ops/ returns: its report, or a Failure that says what went wrong
// and whose fault it was, from which the CLI picks the exit code (term/exit_codes.h).
//
//   cli/<command>.cc ──request──▶ ops::<Command>() ──Outcome<Report>──▶ print, exit code
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace shardctl::launcher {

enum class Fault {
  kRuntime,      // the environment stopped us: a port taken, an engine that crashed (exit 1)
  kUsage,        // the command line, the config or the request is wrong (exit 2)
  kUnknown,      // no such deployment, where that is a status of its own (`status`: exit 3)
  kInterrupted,  // Ctrl-C or SIGTERM stopped the command at a safe point (exit 130)
};

// A one-line message for the user (where, what, how to fix) and the fault behind it.
class Failure {
 public:
  Failure(Fault fault, std::string message) : fault_(fault), message_(std::move(message)) {}
  // An error from the layers below is the environment's fault unless the caller says otherwise.
  Failure(const common::Error& error)  // NOLINT: implicit, so `return error;` works in ops
      : Failure(Fault::kRuntime, error.message()) {}

  static Failure Usage(const common::Error& error) { return {Fault::kUsage, error.message()}; }
  static Failure Usage(std::string message) { return {Fault::kUsage, std::move(message)}; }

  Fault fault() const { return fault_; }
  const std::string& message() const { return message_; }
  // "where: message", the same fault.
  Failure Context(std::string_view where) const {
    return {fault_, std::string(where) + ": " + message_};
  }

 private:
  Fault fault_;
  std::string message_;
};

// An error from below whose message starts with "usage: " (the slot mover refusing --migration
// atomic, a plan that cannot grow) is the user's fault, without that marker; any other is the
// environment's.
inline constexpr std::string_view kUsageMarker = "usage: ";

// The message of such an error without its marker, or nullopt for the environment's.
inline std::optional<std::string> UsageRefusal(const common::Error& error) {
  const std::string& message = error.message();
  if (!message.starts_with(kUsageMarker)) return std::nullopt;
  return message.substr(kUsageMarker.size());
}

inline Failure Classify(const common::Error& error) {
  if (auto refusal = UsageRefusal(error)) return Failure::Usage(*refusal);
  return error;
}

template <typename T>
using Outcome = common::Result<T, Failure>;

}  // namespace shardctl::launcher
