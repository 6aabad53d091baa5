// Man pages rendered from the --help texts, so `man shardctl` says exactly what `shardctl --help`
// says: the build runs the programs' hidden `--man` entry points (shardctl help --man,
// shardproxy --help-man) and installs what they print. Pure text in, roff out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace shardctl::common {

// The parts of a --help text that a man page puts into sections of their own:
//
//   shardctl - run Redis or Valkey as ... ,   ◀── summary (the paragraph before "Usage:")
//   joined into a Redis Cluster ...
//
//   Usage: shardctl <command> [options]      ◀── usage (the text after "Usage:", or the indented
//                                                 lines under a lone "Usage:")
//   Commands: ...                            ◀── body (everything after the usage)
struct HelpParts {
  std::string summary;  // without the leading "<program> - " or "<program>: "; may be empty
  std::vector<std::string> usage;
  std::string body;
};

HelpParts SplitHelp(std::string_view help, std::string_view program);

// A section of the page: a title and help-formatted text, or subsections of help text.
struct ManSection {
  std::string title;  // "DESCRIPTION", "OPTIONS"
  std::string text;   // help-formatted: prose lines, indented blocks kept as they are
  std::vector<std::pair<std::string, std::string>> subsections;  // (title, help text), in order
};

struct ManPage {
  std::string program;  // "shardctl"
  std::string source;   // the footer's program and version: "shardctl 0.1.0 (git 3265a9b)"
  HelpParts help;       // NAME (the summary up to its first comma), SYNOPSIS, then DESCRIPTION
  std::vector<ManSection> sections;   // after DESCRIPTION
  std::vector<std::string> see_also;  // "shardproxy(1)"
};

// Renders the page as man(7) roff. Help text is kept as written: unindented lines become filled
// paragraphs, indented lines (option tables, examples) stay as they are in no-fill blocks; every
// '-', '\', quote and leading '.' is escaped so that flags copy-paste as typed.
std::string RenderManPage(const ManPage& page);

// Roff for one help text (what RenderManPage does with each section's text).
std::string HelpToRoff(std::string_view help);

}  // namespace shardctl::common
