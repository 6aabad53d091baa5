// The TOML side of the spec: turns a file into Settings. toml++ throws on syntax errors; the
// exception is caught here and nowhere else.
#include <toml++/toml.h>

#include <fstream>
#include <sstream>

#include "launcher/model/spec.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;

std::string Position(std::string_view source, const toml::source_region& region) {
  return std::string(source) + ":" + std::to_string(region.begin.line) + ":" +
         std::to_string(region.begin.column);
}

// Turns one TOML value into setting text; nullopt for types no setting takes.
std::optional<std::string> ValueText(const toml::node& node) {
  if (auto s = node.as_string()) return s->get();
  if (auto i = node.as_integer()) return std::to_string(i->get());
  if (auto b = node.as_boolean()) return b->get() ? "true" : "false";  // allow-no-auth = true
  if (auto array = node.as_array()) {                                  // cpus = [0, 1, 2]
    // Joined as written, not narrowed to int, so the CPU list parser sees and refuses 4294967296.
    std::string cpus;
    for (const auto& element : *array) {
      auto i = element.as_integer();
      if (!i) return std::nullopt;
      cpus += (cpus.empty() ? "" : ",") + std::to_string(i->get());
    }
    return cpus;
  }
  return std::nullopt;
}

}  // namespace

Result<std::vector<Setting>> ParseSpecToml(std::string_view text, std::string_view source_name) {
  toml::table table;
  try {
    table = toml::parse(text, source_name);
  } catch (const toml::parse_error& error) {
    return Error(Position(source_name, error.source()) + ": TOML syntax error: " +
                 std::string(error.description()) + " (fix the file at that line and column)");
  }
  std::vector<Setting> settings;
  std::string problems;
  for (const auto& [key, node] : table) {
    std::string name(key.str());
    std::string where = Position(source_name, node.source()) + ": " + name;
    if (!IsSpecKey(name)) {
      where = Position(source_name, key.source()) + ": " + name;
      std::string hint = ClosestKey(name, SpecKeys());
      problems +=
          where + ": unknown key" + (hint.empty() ? "" : " (did you mean " + hint + "?)") + "\n";
      continue;
    }
    auto value = ValueText(node);
    if (!value) {
      problems += where + ": must be a string, a whole number or true/false\n";
      continue;
    }
    settings.push_back({name, *value, where});
  }
  if (!problems.empty()) {
    problems.pop_back();
    return Error(problems);
  }
  return settings;
}

Result<std::vector<Setting>> ReadSpecFile(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) {
    return Error(file.string() +
                 ": cannot read the config file (check the path given to --config)");
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseSpecToml(buffer.str(), file.string());
}

}  // namespace shardctl::launcher
