// What gets installed beside the binaries, tried the way a user meets it:
// --version names the git revision the binaries were built from.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = SHARDCTL_SOURCE_DIR;

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

// The revision the sources are at, as the build records it; "unknown" outside a
// checkout.
std::string SourceRevision() {
  auto top = RunCommand(
      {"git", "-C", kSource.string(), "rev-parse", "--show-toplevel"}, 10s);
  if (top.exit_code != 0 ||
      fs::canonical(Trimmed(top.out)) != fs::canonical(kSource)) {
    return "unknown";
  }
  auto head = RunCommand(
      {"git", "-C", kSource.string(), "rev-parse", "--short=7", "HEAD"}, 10s);
  return head.exit_code == 0 ? Trimmed(head.out) : "unknown";
}

TEST(VersionTest, NamesTheVersionAndTheGitRevision) {
  const std::regex line(
      R"((shardctl|shardproxy) \d+\.\d+\.\d+ \(git ([0-9a-f]{7}(-dirty)?|unknown)\)\n)");
  const std::string revision = SourceRevision();
  for (const std::vector<std::string> &argv :
       {std::vector<std::string>{SHARDCTL_BINARY, "--version"},
        std::vector<std::string>{SHARDCTL_BINARY, "version"},
        std::vector<std::string>{SHARDPROXY_BINARY, "--version"}}) {
    auto result = RunCommand(argv, 10s);
    ASSERT_EQ(result.exit_code, 0) << result.Describe();
    EXPECT_TRUE(std::regex_match(result.out, line)) << result.out;
    EXPECT_NE(result.out.find("(git " + revision), std::string::npos)
        << result.out << "sources at " << revision
        << " (rebuild after a commit)";
  }
}

} // namespace
} // namespace shardctl::integration
