// Result<T>: a value or an error message, the shape of std::expected (C++23) for C++20. The error
// type is Error unless a layer needs more (the launcher's commands carry an exit class too).
//
// Errors travel up the stack gaining context: a spawn failure deep in the supervisor reaches the
// user as "shard 7: spawn failed: port 7007 in use". Use Context() at each boundary that knows
// something the callee did not ("shard 7").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace shardctl::common {

// An error message meant for a human; the first word(s) say where, the rest what and how to fix.
class Error {
 public:
  explicit Error(std::string message) : message_(std::move(message)) {}
  const std::string& message() const { return message_; }
  // Returns "where: message".
  Error Context(std::string_view where) const {
    return Error(std::string(where) + ": " + message_);
  }

 private:
  std::string message_;
};

template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT: implicit like std::expected
  Result(E error) : state_(std::move(error)) {}  // NOLINT
  // An error of another type that makes an E (an Error where E carries more).
  template <typename F>
  requires(!std::is_same_v<F, E> && !std::is_convertible_v<F, T> && std::is_constructible_v<E, F>)
      Result(F error)
      : state_(E(std::move(error))) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const E& error() const { return std::get<E>(state_); }
  // Prefixes the error (if any) with `where`; a value passes through untouched.
  Result Context(std::string_view where) && {
    if (ok()) return std::move(*this);
    return error().Context(where);
  }

 private:
  std::variant<T, E> state_;
};

// Result<void>: success or an error.
template <typename E>
class [[nodiscard]] Result<void, E> {
 public:
  Result() = default;
  Result(E error) : error_(std::move(error)) {}  // NOLINT
  template <typename F>
  requires(!std::is_same_v<F, E> && std::is_constructible_v<E, F>) Result(F error)
      : error_(E(std::move(error))) {}  // NOLINT

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const E& error() const { return *error_; }
  Result Context(std::string_view where) && {
    if (ok()) return {};
    return error_->Context(where);
  }

 private:
  std::optional<E> error_;
};

using Status = Result<void>;

inline Status Ok() { return {}; }

}  // namespace shardctl::common
