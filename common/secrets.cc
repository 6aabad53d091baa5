#include "common/secrets.h"

#include <fstream>
#include <sstream>

#include "common/numbers.h"
#include "common/text.h"

namespace shardctl::common {
namespace {

constexpr size_t kMaxPasswordLength = 512;

// "127.x.y.z" with four numbers from 0 to 255.
bool IsLoopbackIpv4(std::string_view host) {
  int parts = 0;
  while (true) {
    const size_t dot = host.find('.');
    auto number = ParseInteger<int>(host.substr(0, dot));
    if (!number || *number > 255 || (parts == 0 && *number != 127)) return false;
    ++parts;
    if (dot == std::string_view::npos) return parts == 4;
    host.remove_prefix(dot + 1);
  }
}

bool IsPasswordCharacter(char c) {
  return c > ' ' && c < 127 && c != '"' && c != '\'' && c != '\\';
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" || IsLoopbackIpv4(host);
}

Result<std::string> ParsePassword(std::string_view text, std::string_view source) {
  const std::string where(source);
  std::string_view password;
  int lines = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = TrimSpace(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (line.empty() || line.front() == '#') continue;
    password = line;
    ++lines;
  }
  if (lines == 0) return Error(where + ": holds no password (write the password on one line)");
  if (lines > 1) {
    return Error(where + ": holds " + std::to_string(lines) +
                 " lines (write only the password, on one line; comments start with #)");
  }
  for (char c : password) {
    if (!IsPasswordCharacter(c)) {
      return Error(where +
                   ": the password may only hold printable ASCII without spaces, quotes or "
                   "backslashes (e.g. make one with: openssl rand -hex 32)");
    }
  }
  if (password.size() > kMaxPasswordLength) {
    return Error(where + ": the password is longer than 512 characters (use a shorter one)");
  }
  return std::string(password);
}

Result<std::string> ReadSecretFile(const std::filesystem::path& path, std::string_view flag) {
  namespace fs = std::filesystem;
  const std::string where = std::string(flag) + " " + path.string();
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error) return Error(where + ": cannot read it (" + error.message() + ")");
  if (!fs::is_regular_file(status)) return Error(where + ": is not a regular file");
  const fs::perms shared = fs::perms::group_all | fs::perms::others_all;
  if ((status.permissions() & shared) != fs::perms::none) {
    return Error(where + ": the group or others may access it (it holds a password: chmod 600 " +
                 path.string() + ")");
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return Error(where + ": cannot read it (check the path and permissions)");
  return text.str();
}

Result<std::string> ReadPasswordFile(const std::filesystem::path& path, std::string_view flag) {
  auto text = ReadSecretFile(path, flag);
  if (!text.ok()) return text.error();
  return ParsePassword(*text, std::string(flag) + " " + path.string());
}

}  // namespace shardctl::common
