// The layout is the architecture: these tests read the source tree and fail when a file reaches
// into a module it does not depend on, when a private header is used outside its module, or when
// docs/architecture.md has no row for a module (so the document cannot silently go stale).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace shardctl {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = SHARDCTL_SOURCE_DIR;

// launcher/'s modules and the modules each may include (besides itself and common/). Mirrors the
// library targets in CMakeLists.txt and the diagram in docs/architecture.md.
const std::map<std::string, std::set<std::string>>& LauncherLayers() {
  static const std::map<std::string, std::set<std::string>> layers = {
      {"term", {}},
      {"os", {}},
      {"model", {}},
      {"engine", {"model", "os"}},
      {"state", {"model", "os"}},
      {"cluster", {"model"}},
      {"supervisor", {"cluster", "engine", "state", "model", "os"}},
      {"bench", {"cluster", "engine", "model", "os", "term"}},
      // ops/bench is `bench`'s entry: the load generator is a program part of its own.
      {"ops", {"supervisor", "bench", "cluster", "engine", "state", "model", "os"}},
      // cli parses, makes its command's one call into ops/ and prints: nothing below ops.
      {"cli", {"ops", "model", "term"}},
  };
  return layers;
}

// proxy/'s rooms and the rooms each may include (besides itself and common/); the files at the
// top of proxy/ (the server, main.cc) may include every room. Mirrors the proxy_room targets in
// CMakeLists.txt and docs/architecture.md.
const std::map<std::string, std::set<std::string>>& ProxyLayers() {
  static const std::map<std::string, std::set<std::string>> layers = {
      {"commands", {}},
      {"merge", {"commands"}},
      {"services", {"commands"}},
      {"routing", {"commands", "services"}},
      {"session", {"commands", "merge", "routing", "services"}},
      {"net", {"commands", "merge", "routing", "services", "session"}},
  };
  return layers;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every project include ("dir/.../file.h") of a source file.
std::vector<std::string> ProjectIncludes(const fs::path& file) {
  static const std::regex include(R"re(#include "([^"]+)")re");
  std::vector<std::string> found;
  const std::string text = ReadFile(file);
  for (std::sregex_iterator it(text.begin(), text.end(), include), end; it != end; ++it) {
    found.push_back((*it)[1]);
  }
  return found;
}

std::vector<fs::path> SourcesUnder(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".h" || ext == ".cc")) files.push_back(entry.path());
  }
  return files;
}

std::vector<std::string> LauncherModuleDirs() {
  std::vector<std::string> modules;
  for (const auto& entry : fs::directory_iterator(kRoot / "launcher")) {
    if (entry.is_directory()) modules.push_back(entry.path().filename());
  }
  return modules;
}

TEST(ArchitectureTest, EveryLauncherFolderIsAKnownModule) {
  for (const std::string& module : LauncherModuleDirs()) {
    EXPECT_TRUE(LauncherLayers().contains(module))
        << "launcher/" << module << "/ is not in the module table of architecture_test.cc "
        << "(add it there, to CMakeLists.txt and to docs/architecture.md)";
  }
}

TEST(ArchitectureTest, LauncherModulesIncludeOnlyTheModulesBelowThem) {
  for (const std::string& module : LauncherModuleDirs()) {
    const auto layer = LauncherLayers().find(module);
    if (layer == LauncherLayers().end()) continue;  // reported above
    for (const fs::path& file : SourcesUnder(kRoot / "launcher" / module)) {
      for (const std::string& include : ProjectIncludes(file)) {
        SCOPED_TRACE(file.string() + " includes " + include);
        EXPECT_FALSE(include.starts_with("proxy/")) << "the launcher never includes the proxy";
        if (!include.starts_with("launcher/")) continue;
        const std::string target = include.substr(9, include.find('/', 9) - 9);
        EXPECT_TRUE(target == module || layer->second.contains(target))
            << "launcher/" << module << " may not depend on launcher/" << target;
      }
    }
  }
}

std::vector<std::string> ProxyRooms() {
  std::vector<std::string> rooms;
  for (const auto& entry : fs::directory_iterator(kRoot / "proxy")) {
    if (entry.is_directory()) rooms.push_back(entry.path().filename());
  }
  return rooms;
}

TEST(ArchitectureTest, ProxyRoomsIncludeOnlyTheRoomsBelowThem) {
  for (const std::string& room : ProxyRooms()) {
    const auto layer = ProxyLayers().find(room);
    ASSERT_NE(layer, ProxyLayers().end())
        << "proxy/" << room << "/ is not in the room table of architecture_test.cc (add it "
        << "there, to CMakeLists.txt and to docs/architecture.md)";
    for (const fs::path& file : SourcesUnder(kRoot / "proxy" / room)) {
      for (const std::string& include : ProjectIncludes(file)) {
        SCOPED_TRACE(file.string() + " includes " + include);
        if (!include.starts_with("proxy/")) continue;
        const size_t slash = include.find('/', 6);
        ASSERT_NE(slash, std::string::npos) << "only the server sits at the top of proxy/";
        const std::string target = include.substr(6, slash - 6);
        EXPECT_TRUE(target == room || layer->second.contains(target))
            << "proxy/" << room << " may not depend on proxy/" << target;
      }
    }
  }
}

TEST(ArchitectureTest, CommonAndProxyStayOutOfTheLauncher) {
  for (const char* dir : {"common", "proxy"}) {
    for (const fs::path& file : SourcesUnder(kRoot / dir)) {
      for (const std::string& include : ProjectIncludes(file)) {
        EXPECT_FALSE(include.starts_with("launcher/")) << file << " includes " << include;
        if (std::string(dir) == "common") {
          EXPECT_TRUE(include.starts_with("common/"))
              << file << " includes " << include << ": common/ depends on nothing of ours";
        }
      }
    }
  }
}

// libuv enters common/ only through common/uv/ (its own target, common_uv): the rest of common/
// includes neither <uv.h> nor common/uv/, and common/uv/ includes nothing of launcher/ or proxy/.
TEST(ArchitectureTest, OnlyCommonUvUsesLibuv) {
  static const std::regex uv_header(R"re(#include\s*<uv\.h>)re");
  for (const fs::path& file : SourcesUnder(kRoot / "common")) {
    const bool in_uv = fs::relative(file, kRoot).string().starts_with("common/uv/");
    if (!in_uv) {
      EXPECT_FALSE(std::regex_search(ReadFile(file), uv_header))
          << file << " includes <uv.h>: libuv code belongs in common/uv/";
    }
    for (const std::string& include : ProjectIncludes(file)) {
      if (in_uv) {
        EXPECT_FALSE(include.starts_with("launcher/") || include.starts_with("proxy/"))
            << file << " includes " << include << ": common/uv/ serves both programs";
      } else {
        EXPECT_FALSE(include.starts_with("common/uv/"))
            << file << " includes " << include << ": the rest of common/ stays free of libuv";
      }
    }
  }
}

// io_uring is one file's business (common/uv/write_batch.cc, liburing linked privately by
// common_uv): everything else sees only WriteBatch, and keeps working where io_uring is refused.
TEST(ArchitectureTest, OnlyTheWriteBatchUsesIoUring) {
  static const std::regex uring_header(R"re(#include\s*<liburing\.h>)re");
  for (const char* dir : {"launcher", "proxy", "common", "tests"}) {
    for (const fs::path& file : SourcesUnder(kRoot / dir)) {
      if (fs::relative(file, kRoot) == "common/uv/write_batch.cc") continue;
      EXPECT_FALSE(std::regex_search(ReadFile(file), uring_header))
          << file << " includes <liburing.h>: io_uring belongs in common/uv/write_batch.cc";
    }
  }
  EXPECT_TRUE(std::regex_search(ReadFile(kRoot / "common/uv/write_batch.cc"), uring_header));
}

TEST(ArchitectureTest, PrivateHeadersStayInTheirModule) {
  for (const char* dir : {"launcher", "proxy", "common", "tests"}) {
    for (const fs::path& file : SourcesUnder(kRoot / dir)) {
      const fs::path relative_dir = fs::relative(file.parent_path(), kRoot);
      for (const std::string& include : ProjectIncludes(file)) {
        if (!include.ends_with("_internal.h")) continue;
        EXPECT_EQ(fs::path(include).parent_path(), relative_dir)
            << file << " includes the private header " << include;
      }
    }
  }
}

TEST(ArchitectureTest, DocsHaveARowForEveryModule) {
  const std::string doc = ReadFile(kRoot / "docs" / "architecture.md");
  ASSERT_FALSE(doc.empty()) << "docs/architecture.md is missing";
  for (const std::string& module : LauncherModuleDirs()) {
    EXPECT_NE(doc.find("| `" + module + "/` |"), std::string::npos)
        << "docs/architecture.md has no row for launcher/" << module << "/";
  }
  for (const std::string& room : ProxyRooms()) {
    EXPECT_NE(doc.find("| `" + room + "/` |"), std::string::npos)
        << "docs/architecture.md has no row for proxy/" << room << "/";
  }
  EXPECT_NE(doc.find("| `uv/` |"), std::string::npos)
      << "docs/architecture.md has no row for common/uv/";
  // Every header of common/ and of the proxy's rooms is named in a row.
  for (const char* dir : {"proxy", "common"}) {
    for (const auto& entry : fs::recursive_directory_iterator(kRoot / dir)) {
      if (entry.path().extension() != ".h") continue;
      const std::string stem = entry.path().stem();
      EXPECT_NE(doc.find("`" + stem + "`"), std::string::npos)
          << "docs/architecture.md does not name " << entry.path() << " in a module row";
    }
  }
}

}  // namespace
}  // namespace shardctl
