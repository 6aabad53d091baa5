// Command-line parsing for shardctl. Pure: argv in, an Invocation or a usage error out.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/completion.h"
#include "common/result.h"
#include "launcher/model/spec.h"
#include "launcher/term/exit_codes.h"

namespace shardctl::launcher {

struct Invocation {
  std::string command;  // plan, up, status, top, down, restart, logs, supervise, help, version
  std::vector<Setting> settings;  // spec flags, in the order given
  std::optional<std::string> config_file;
  std::optional<std::string> sysfs_root;
  std::optional<std::string> help_topic;  // set by --help or `help CMD`
  bool man_page = false;                  // `help --man`: the man page (the build runs it)
  std::optional<std::vector<std::string>> complete;  // `help --complete WORDS...`: completion
  bool json = false;
  bool dry_run = false;
  bool foreground = false;
  bool purge = false;
  bool no_save = false;  // down --no-save: persistence rdb, stop without saving first
  bool leave = false;    // down --leave: hand slots to the other hosts first, then stop and purge
  bool rolling = false;  // restart --rolling
  bool discard_data = false;  // restart --discard-data: the shard may come back empty
  bool follow = false;        // logs -f
  bool cluster = false;       // status --cluster: every node of the cluster, other hosts' too
  int lines = 50;             // logs --lines
  std::optional<int> shard;   // restart SHARD, logs SHARD
  // rebalance / move-slots / scale
  std::string balance_by = "slots";             // --by
  std::string threshold;                        // --threshold ("": 2%, or 10% with --by load)
  std::chrono::milliseconds load_window{5000};  // rebalance --window (--by load)
  std::optional<int> to_shard;                  // move-slots --to
  std::optional<std::string> slot_ranges;       // move-slots RANGE
  std::string migration = "auto";               // --migration auto|migrate|atomic
  int ready_fd = -1;
  std::chrono::milliseconds interval{1000};  // top --interval
  std::string sort = "ops";                  // top --sort
  int count = 0;                             // top --count: refreshes before exiting; 0: no end
  bool slots = false;                        // top --slots
  std::optional<int> limit;                  // top --slots --limit (default 20)
  bool top_keys = false;                     // top --keys: the proxy's hot keys
  // backup --to DIR, restore --from DIR
  std::string data_dir;
  // backup --wait: how long to wait for a busy deployment rather than refuse at once
  std::chrono::milliseconds backup_wait{0};
  // import --from HOST:PORT and the source's access (not the deployment's --password-file)
  std::string import_from;
  std::optional<std::filesystem::path> source_password_file;
  std::optional<std::filesystem::path> source_tls_ca;
  bool live = false;     // import --live
  bool cutover = false;  // import --cutover
};

// Parses argv (without argv[0]). Errors are usage errors naming the flag and the fix.
common::Result<Invocation> ParseArgs(const std::vector<std::string>& args);

// Builds the spec: the --config file's settings first, then the flags'.
common::Result<Spec> ResolveSpec(const Invocation& invocation);

// The help text for a command ("" for the overview).
std::string HelpText(const std::string& command);

// shardctl(1) in roff: the overview, every command's help text and the deployment options, as
// --help prints them. `version_line` ("shardctl 0.1.0 (git 3265a9b)") goes in the footer.
std::string ManPage(const std::string& version_line);

// The subcommands, in the overview's order ("bench" stands for bench run and bench compare).
const std::vector<std::string>& CommandNames();

// The flags `command` accepts, from the same tables ParseArgs uses, with what their values are
// for completion (--config a file, --state-dir a directory, --name a deployment); "help" included,
// internal flags (`supervise --ready-fd`) left out. Only "help" for `help` and `bench`.
std::vector<common::CompletionFlag> CommandFlags(const std::string& command);

}  // namespace shardctl::launcher
