#include "common/man_page.h"

#include <algorithm>
#include <cctype>

namespace shardctl::common {
namespace {

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    lines.push_back(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return lines;
}

bool Indented(std::string_view line) { return !line.empty() && line.front() == ' '; }

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

std::string Join(const std::vector<std::string_view>& lines, size_t from, size_t to) {
  std::string text;
  for (size_t i = from; i < to; ++i) text.append(lines[i]).append("\n");
  return text;
}

// Roff text for one line: hyphens, backslashes and quotes as themselves; no control line.
std::string Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\e";
        break;
      case '-':
        out += "\\-";
        break;
      case '\'':
        out += "\\(aq";
        break;
      case '`':
        out += "\\(ga";
        break;
      default:
        out += c;
    }
  }
  if (!out.empty() && out.front() == '.') out.insert(0, "\\&");
  return out;
}

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// NAME's one line: the summary without "<program> - " or "<program>: ", up to its first comma or
// full stop, on one line.
std::string WhatIs(const std::string& program, std::string_view summary) {
  for (std::string_view prefix : {" - ", ": "}) {
    const std::string lead = program + std::string(prefix);
    if (summary.starts_with(lead)) summary.remove_prefix(lead.size());
  }
  summary = summary.substr(0, std::min(summary.find_first_of(",."), summary.size()));
  std::string line(Trim(summary));
  std::replace(line.begin(), line.end(), '\n', ' ');
  return line;
}

}  // namespace

HelpParts SplitHelp(std::string_view help, std::string_view program) {
  const std::vector<std::string_view> lines = Lines(help);
  auto usage_line = std::find_if(lines.begin(), lines.end(),
                                 [](std::string_view line) { return line.starts_with("Usage:"); });
  HelpParts parts;
  if (usage_line == lines.end()) {
    parts.body = std::string(help);
    return parts;
  }
  const size_t usage_at = usage_line - lines.begin();
  if (usage_at > 0 && lines[0].starts_with(program)) {
    parts.summary = std::string(Trim(Join(lines, 0, usage_at))) + "\n";
  }
  size_t next = usage_at + 1;
  if (std::string_view rest = Trim(lines[usage_at].substr(6)); !rest.empty()) {
    parts.usage.emplace_back(rest);
  } else {
    for (; next < lines.size() && Indented(lines[next]); ++next) {
      parts.usage.emplace_back(Trim(lines[next]));
    }
  }
  while (next < lines.size() && Trim(lines[next]).empty()) ++next;
  parts.body = Join(lines, next, lines.size());
  return parts;
}

std::string HelpToRoff(std::string_view help) {
  const std::vector<std::string_view> lines = Lines(help);
  std::string out;
  bool paragraph_due = false;
  for (size_t i = 0; i < lines.size();) {
    if (Trim(lines[i]).empty()) {
      paragraph_due = !out.empty();
      ++i;
      continue;
    }
    if (paragraph_due) out += ".PP\n";
    paragraph_due = false;
    if (!Indented(lines[i])) {
      out += Escape(lines[i++]) + "\n";
      continue;
    }
    // Option tables and examples keep their columns.
    out += ".nf\n";
    for (; i < lines.size() && Indented(lines[i]); ++i) out += Escape(lines[i]) + "\n";
    out += ".fi\n";
  }
  return out;
}

std::string RenderManPage(const ManPage& page) {
  std::string out =
      ".TH " + Upper(page.program) + " 1 \"\" \"" + Escape(page.source) + "\" \"User Commands\"\n";
  // Left-aligned, unhyphenated: flags and paths must read as typed.
  out += ".ad l\n.nh\n";
  out += ".SH NAME\n" + Escape(page.program) + " \\- " +
         Escape(WhatIs(page.program, page.help.summary)) + "\n";
  out += ".SH SYNOPSIS\n.nf\n";
  for (const auto& usage : page.help.usage) out += Escape(usage) + "\n";
  out += ".fi\n.SH DESCRIPTION\n" + HelpToRoff(page.help.summary);
  if (!page.help.summary.empty()) out += ".PP\n";
  out += HelpToRoff(page.help.body);
  for (const auto& section : page.sections) {
    out += ".SH " + Escape(Upper(section.title)) + "\n" + HelpToRoff(section.text);
    for (const auto& [title, text] : section.subsections) {
      out += ".SS \"" + Escape(title) + "\"\n" + HelpToRoff(text);
    }
  }
  if (!page.see_also.empty()) {
    out += ".SH \"SEE ALSO\"\n";
    for (size_t i = 0; i < page.see_also.size(); ++i) {
      const std::string_view entry = page.see_also[i];
      const size_t paren = std::min(entry.find('('), entry.size());
      out += "\\fB" + Escape(entry.substr(0, paren)) + "\\fR" + Escape(entry.substr(paren)) +
             (i + 1 < page.see_also.size() ? ",\n" : "\n");
    }
  }
  return out;
}

}  // namespace shardctl::common
