// A primary's snapshot taken over the network, the way a new replica gets one: shardctl backup
// copies every primary's data into one directory wherever the primaries run (this host or
// others), with TLS and passwords as the deployment's access says.
//
//   Open:    connect, log in, REPLCONF rdb-only 1 (the snapshot alone, no command stream after
//            it) and capa eof (diskless: the fork streams to us, nothing is written on its disk)
//   Request: PSYNC ? -1
//   AwaitFork: until +FULLRESYNC; the primary writes it and then forks in the same call, so once
//            it arrives no later write can reach the snapshot (the child itself may not exist
//            yet: anything the primary answers after it, it answers after the fork)
//   CopyTo:  the payload into a file, with its size and SHA-256, written whole or not at all
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "common/rdb_transfer.h"
#include "common/result.h"
#include "launcher/cluster/access.h"
#include "launcher/cluster/control_link.h"
#include "launcher/model/deployment.h"

namespace shardctl::launcher {

// What CopyTo wrote.
struct SnapshotFile {
  uint64_t bytes = 0;
  std::string sha256;      // lowercase hex
  std::string rdb_format;  // the file's first 9 bytes: "REDIS0010", "VALKEY080"
};

class SnapshotLink {
 public:
  // kSnapshotOnly: the primary sends the snapshot and nothing after it (backup).
  // kFollow: it keeps this link as a replica's and streams every write after the snapshot
  // (import --live): read it with ReadStream, acknowledge with Ack.
  enum class Mode { kSnapshotOnly, kFollow };

  // `valkey_loader`: the Valkey version that will load the snapshot, announced as a replica
  // announces its own (REPLCONF version), so that a Valkey 9 primary sends the format that version
  // reads: without it Valkey 9 sends REDIS0011, which cannot hold a hash field's TTL (the fork
  // fails, "Can't store key in RDB version 11"). "" for a Redis primary (it refuses the option);
  // a Valkey older than 8, which does not know it, is not told.
  // What to announce as `valkey_loader` for a snapshot `loader` will load: its version when it
  // is Valkey 9 or newer (the only engine with a format of its own, VALKEY080, that a primary
  // sends only when asked), else "".
  static std::string LoaderVersion(const Engine& loader);

  static common::Result<SnapshotLink> Open(const Access& access, const std::string& host, int port,
                                           std::chrono::milliseconds timeout,
                                           Mode mode = Mode::kSnapshotOnly,
                                           const std::string& valkey_loader = "");

  common::Status Request();
  // Reads until the primary has forked for the snapshot; an error at `deadline` (keepalives keep
  // coming while the primary waits for another fork to end).
  common::Status AwaitFork(std::chrono::steady_clock::time_point deadline);
  // Writes the payload to `file` (through a temporary file, fsynced and renamed).
  common::Result<SnapshotFile> CopyTo(const std::filesystem::path& file);

  // kFollow, after CopyTo: the stream's bytes that came with the snapshot's end, then whatever
  // arrives within `wait` ("" when nothing did). An error when the primary closed the link.
  common::Result<std::string> ReadStream(std::chrono::milliseconds wait);
  // REPLCONF ACK: tells the primary how far this replica has applied (it sends nothing after a
  // diskless snapshot until the first one, and drops a replica that stays silent).
  common::Status Ack(int64_t offset);

  // The primary's replication offset at the snapshot: the stream starts there.
  int64_t replication_offset() const { return replication_offset_; }
  const std::string& address() const { return address_; }

 private:
  SnapshotLink(ControlLink link, std::string address)
      : link_(std::move(link)), address_(std::move(address)) {}
  // Reads once from the link into the transfer reader; payload bytes are appended to `payload`.
  common::Status ReadOnce(std::string& payload);

  ControlLink link_;
  std::string address_;
  common::RdbTransferReader transfer_;
  std::string early_payload_;  // payload bytes that arrived with the +FULLRESYNC line
  int64_t replication_offset_ = -1;
  bool handed_remaining_ = false;  // ReadStream gave out the bytes that followed the snapshot
};

// Hex SHA-256 of a file, read in chunks; an error names the file.
common::Result<std::string> FileSha256(const std::filesystem::path& file);

}  // namespace shardctl::launcher
