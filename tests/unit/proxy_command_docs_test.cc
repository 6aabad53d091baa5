#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "proxy/commands/command_docs.h"

namespace shardctl::proxy {
namespace {

TEST(CommandDocsTest, CheckedInPageMatchesTheCommandTable) {
  const std::string path = std::string(SHARDCTL_SOURCE_DIR) + "/docs/proxy-commands.md";
  const std::string rendered = RenderCommandDocs();
  if (const char* update = std::getenv("SHARDCTL_UPDATE_DOCS"); update && *update == '1') {
    std::ofstream(path) << rendered;
  }
  std::ifstream file(path);
  ASSERT_TRUE(file) << path << " is missing: run with SHARDCTL_UPDATE_DOCS=1 to write it";
  std::stringstream content;
  content << file.rdbuf();
  EXPECT_EQ(content.str(), rendered)
      << path << " differs from the command table: run the unit test with SHARDCTL_UPDATE_DOCS=1";
}

TEST(CommandDocsTest, NamesEveryGroup) {
  const std::string page = RenderCommandDocs();
  for (const char* expected : {"`GET`", "| `MGET` |", "| `MSETNX` |", "`DBSIZE`", "`SCAN`",
                               "`HELLO`", "`MULTI`", "`WATCH`", "`SUBSCRIBE`"}) {
    EXPECT_NE(page.find(expected), std::string::npos) << expected;
  }
}

}  // namespace
}  // namespace shardctl::proxy
