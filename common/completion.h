// Shell completion computed by the program itself. The scripts in packaging/completion/ pass the
// words typed so far to a hidden entry point (`shardctl help --complete`, `shardproxy
// --help-complete`) and offer what it prints, so the commands and flags offered come from the
// same tables the parsers use and cannot drift from them.
//
//   bash/zsh ──words──▶ program ──CompletionNode (its commands, flags)──▶ Complete() ──▶ lines
//
// Pure: the words that depend on the machine (deployment names) come from a callback.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace shardctl::common {

// What follows a flag on the command line.
enum class FlagValue {
  kNone,       // nothing: a switch
  kAny,        // a value the shell cannot guess (a number, a size, an address)
  kFile,       // a file name: the shell completes paths
  kDirectory,  // a directory name
  kDynamic,    // words from the DynamicValues callback (e.g. deployment names)
};

struct CompletionFlag {
  std::string name;  // without the leading "--"
  FlagValue value = FlagValue::kNone;
};

// One command (or the program itself): its flags, its subcommands, and the words it takes as a
// positional argument.
struct CompletionNode {
  std::string name;                      // the word that selects it ("" for the program)
  std::vector<CompletionFlag> flags;     // offered for a word starting with '-'
  std::vector<CompletionNode> commands;  // subcommands, offered for any other word
  std::vector<std::string> words;        // positional words offered alongside the subcommands
};

// The words of kDynamic flags: called with the flag's name and the values of the flags given
// before it on the line ({"state-dir": "/srv/state"}), so the words can depend on them.
using DynamicValues = std::function<std::vector<std::string>(
    const std::string& flag, const std::map<std::string, std::string>& given)>;

// What the shell should offer for the word under the cursor.
struct Completion {
  enum class Kind {
    kWords,        // the words below (already filtered by what was typed)
    kFiles,        // let the shell complete file names
    kDirectories,  // let the shell complete directory names
  };
  Kind kind = Kind::kWords;
  std::vector<std::string> words;
};

// Completes the last of `words`: the words after the program name, the last one being the word
// under the cursor (empty right after a space). A word that takes a flag's value is completed as
// that value; a word starting with '-' as a flag of the innermost command; any other word as a
// subcommand or positional word, or, where the command has none, as one of its flags.
Completion Complete(const CompletionNode& root, const std::vector<std::string>& words,
                    const DynamicValues& dynamic);

// What the shell scripts read: one word per line, or the single line ":files" or ":directories".
std::string FormatCompletion(const Completion& completion);

}  // namespace shardctl::common
