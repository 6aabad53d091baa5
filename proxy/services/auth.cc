#include "proxy/services/auth.h"

#include <vector>

#include "common/resp.h"

namespace shardctl::proxy {
namespace {

// Same time whatever the first differing byte is, so timing does not leak the password.
bool EqualConstantTime(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

}  // namespace

bool AuthConfig::Check(std::string_view user, std::string_view password) const {
  auto found = users.find(user);
  return found != users.end() && EqualConstantTime(found->second, password);
}

common::Result<AuthConfig> ParseAuthConfig(std::string_view text, std::string_view source) {
  AuthConfig config;
  std::string problems;
  int number = 0;
  while (!text.empty()) {
    const size_t newline = std::min(text.find('\n'), text.size());
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(std::min(newline + 1, text.size()));
    ++number;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    const auto words = common::SplitInlineArgs(line);
    if (words.empty()) continue;
    const std::string where = std::string(source) + ":" + std::to_string(number) + ": ";
    const std::string_view key = words[0];
    if (key == "requirepass" && words.size() == 2) {
      config.users["default"] = std::string(words[1]);
    } else if (key == "user" && words.size() == 3) {
      config.users[std::string(words[1])] = std::string(words[2]);
    } else if (key == "backend-user" && words.size() == 2) {
      config.backend_user = std::string(words[1]);
    } else if (key == "backend-password" && words.size() == 2) {
      config.backend_password = std::string(words[1]);
    } else if (key == "requirepass" || key == "backend-user" || key == "backend-password") {
      problems += where + std::string(key) + " takes exactly one value (no spaces)\n";
    } else if (key == "user") {
      problems += where + "user needs a name and a password: user NAME PASSWORD\n";
    } else {
      problems += where + "unknown setting \"" + std::string(key) +
                  "\" (use requirepass, user, backend-user, backend-password)\n";
    }
  }
  if (config.backend_user && !config.backend_password) {
    problems += std::string(source) + ": backend-user needs a backend-password\n";
  }
  if (!problems.empty()) {
    problems.pop_back();
    return common::Error(problems);
  }
  return config;
}

std::string AuthConfig::BackendLogin() const {
  std::string out;
  if (!backend_password) return out;
  std::vector<std::string_view> command = {"AUTH"};
  if (backend_user) command.push_back(*backend_user);
  command.push_back(*backend_password);
  common::AppendCommand(out, command);
  return out;
}

}  // namespace shardctl::proxy
