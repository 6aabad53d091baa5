#include "launcher/term/output.h"

#include <algorithm>
#include <iostream>
#include <sstream>

namespace shardctl::launcher {

std::string FormatTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::ostringstream out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    out << line << "\n";
  }
  return out.str();
}

void PrintError(const std::string& message) {
  std::istringstream lines(message);
  std::string line;
  while (std::getline(lines, line)) std::cerr << "shardctl: " << line << "\n";
}

void PrintWarning(const std::string& text) { std::cerr << "shardctl: warning: " << text << "\n"; }

}  // namespace shardctl::launcher
