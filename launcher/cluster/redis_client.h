// A small blocking RESP2 client for the control plane (formation, status probes): commands framed
// by common/resp, bytes over a ControlLink (TCP, or TLS when the Access says so), replies parsed by
// hiredis' I/O-free reader. Not for the data path: every reply is turned into text.
#pragma once

#include <chrono>
#include <concepts>
#include <memory>
#include <string>
#include <vector>

#include "common/cluster_text.h"
#include "common/numbers.h"
#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/cluster/control_link.h"
#include "launcher/model/deployment.h"

struct redisReader;

namespace shardctl::launcher {

using Command = std::vector<std::string>;

class RedisConnection {
 public:
  // Connects with `timeout` for the connect and for every later reply, in TLS when `access` has
  // it, and logs in with its password when there is one (a refused login is an error naming the
  // fix).
  static common::Result<RedisConnection> Connect(const Access& access, const std::string& host,
                                                 int port, std::chrono::milliseconds timeout);

  // Sends one command and returns its reply as text: status and bulk strings as they are,
  // integers in decimal, nil as "", arrays as their elements' text joined by '\n'. An error reply
  // becomes an error carrying Redis' message, and so does an array holding one (EXEC's reply to a
  // transaction one of whose commands failed).
  common::Result<std::string> Run(const Command& command);

  // Sends all commands in one write and reads every reply. The outer error means the connection
  // broke (nothing more can be read); inner errors are per-command error replies.
  common::Result<std::vector<common::Result<std::string>>> Pipeline(
      const std::vector<Command>& commands);

  // As Pipeline, for commands whose replies are arrays of bulk strings (GETKEYSINSLOT): each
  // reply's elements, binary-safe, without joining them into one text. A nested array is
  // flattened one level (SCAN's [cursor, [key, ...]] is cursor, key, ...); integers come as
  // decimal text (PROXY HOTKEYS' [key, requests, reads, error] entries).
  common::Result<std::vector<common::Result<std::vector<std::string>>>> PipelineLists(
      const std::vector<Command>& commands);

  // Pipelining across connections: Send writes the commands now and reads nothing; Receive reads
  // `count` replies later. One thread asking many nodes sends to all of them first, then reads
  // replies that are already there, instead of sleeping through one round trip after another.
  common::Status Send(const std::vector<Command>& commands);
  common::Result<std::vector<common::Result<std::string>>> Receive(size_t count);

  // The byte stream under this connection, for what is not request and reply (a replica's full
  // sync). An error when a reply is still unread.
  common::Result<ControlLink> ReleaseLink() &&;

  const std::string& address() const { return address_; }
  // What this connection logged in with: a reconnect to the same node uses it again.
  const Access& access() const { return access_; }

 private:
  struct FreeReader {
    void operator()(redisReader* reader) const;
  };
  // Sends `commands` in one write and turns each reply with `convert`.
  template <typename Convert>
  auto PipelineWith(const std::vector<Command>& commands, Convert convert)
      -> common::Result<std::vector<decltype(convert(nullptr))>>;
  // Reads `count` replies, each turned with `convert`.
  template <typename Convert>
  auto ReadReplies(size_t count, Convert convert)
      -> common::Result<std::vector<decltype(convert(nullptr))>>;

  RedisConnection(ControlLink link, std::string address, Access access);

  ControlLink link_;
  std::unique_ptr<redisReader, FreeReader> reader_;
  std::string address_;
  Access access_;
};

// The replies of the first of several nodes that answered every command.
struct FirstAnswer {
  std::string address;               // host:port of the node that answered
  std::vector<std::string> replies;  // one per command, as RedisConnection::Run gives them
};

// Sends `commands` to host:port for each of `ports` in order until one node answers all of them
// without an error reply. The error names the last failure ("127.0.0.1:7002: Connection refused").
common::Result<FirstAnswer> AskFirstThatAnswers(const Access& access, const std::string& host,
                                                const std::vector<int>& ports,
                                                const std::vector<Command>& commands,
                                                std::chrono::milliseconds timeout);

// One SCAN of `connection` from `cursor` (COUNT `count`): the keys it returned; `cursor` becomes
// the next one ("0" once the walk is done).
common::Result<std::vector<std::string>> ScanPage(RedisConnection& connection, std::string& cursor,
                                                  const std::string& count);

using common::InfoField;

// The integer value of `field` in INFO text, or `fallback` when absent or not a number.
template <std::integral T>
T InfoNumber(const std::string& info, const std::string& field, T fallback = 0) {
  return common::ParseInteger<T>(InfoField(info, field)).value_or(fallback);
}

}  // namespace shardctl::launcher
