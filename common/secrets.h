// Secrets on disk and who can reach an address: the password file shardctl and shardproxy read,
// and the loopback test that decides whether a listener needs a password at all.
//
// A password file holds one password on one line (comments start with '#'); it must not be
// readable or writable by the group or others, so a password never leaks through a mode the user
// forgot. Passwords are kept to printable ASCII without spaces or quotes, so they need no quoting
// in a server config file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "common/result.h"

namespace shardctl::common {

// True when only this host can reach `host`: 127.0.0.0/8, ::1 and "localhost". 0.0.0.0, :: and
// every other address or name are reachable from elsewhere.
bool IsLoopbackHost(std::string_view host);

// The password in a password file's text: its only line that is neither blank nor a comment,
// without surrounding whitespace. Errors name `source` and say what to fix (never the password).
Result<std::string> ParsePassword(std::string_view text, std::string_view source);

// Reads a file holding secrets. Refused when the group or others have any access to it, or when
// it cannot be read; `flag` ("--password-file") starts every message.
Result<std::string> ReadSecretFile(const std::filesystem::path& path, std::string_view flag);

// Reads a password file: ReadSecretFile, then ParsePassword.
Result<std::string> ReadPasswordFile(const std::filesystem::path& path, std::string_view flag);

}  // namespace shardctl::common
