// Who may use the proxy, and how the proxy logs in to the shards (--auth-file).
//
// Pure: the file's text in, an AuthConfig or every problem out; password checks. The file:
//
//   # shardproxy auth file (keep it mode 0600: it holds passwords)
//   requirepass s3cret          # the "default" user's password (AUTH s3cret)
//   user app app-password       # more users (AUTH app app-password, HELLO 3 AUTH app ...)
//   backend-user proxy          # optional: the ACL user the proxy logs in to the shards as
//   backend-password hunter2    # what the proxy sends to every shard (never shown anywhere)
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace shardctl::proxy {

struct AuthConfig {
  std::map<std::string, std::string, std::less<>> users;  // name -> password; "default" too
  std::optional<std::string> backend_user;
  std::optional<std::string> backend_password;

  // True when clients must authenticate before anything but AUTH, HELLO, QUIT and RESET.
  bool required() const { return !users.empty(); }
  // True when `user` exists and `password` is its password (compared in constant time).
  bool Check(std::string_view user, std::string_view password) const;
  // The RESP bytes of "AUTH [backend-user] backend-password" for the proxy's own connections to
  // the shards; empty without a backend password.
  std::string BackendLogin() const;
};

// Parses the auth file's text; errors name the line ("auth.conf:3: user needs a name and a
// password"). `source` is the file name for messages.
common::Result<AuthConfig> ParseAuthConfig(std::string_view text, std::string_view source);

}  // namespace shardctl::proxy
