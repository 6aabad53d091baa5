// docs/proxy-commands.md, rendered from the command table so the page cannot drift from the
// code: a unit test compares the checked-in page with RenderCommandDocs().
#pragma once

#include <string>

namespace shardctl::proxy {

// The whole Markdown page: every command the table knows, grouped by how shardproxy handles it.
std::string RenderCommandDocs();

// Its section on the tests of Redis' own suite that still fail through the proxy, each with its
// reason (suite_failures.cc).
std::string SuiteFailuresSection();

// The section listing the tests of Redis' own suite that still fail through the proxy in the
// connection and introspection families (CLIENT, MONITOR, INFO, tracking, pause, pub/sub), each
// with its reason (command_docs_clients.cc).
std::string SuiteFailuresClients();

}  // namespace shardctl::proxy
