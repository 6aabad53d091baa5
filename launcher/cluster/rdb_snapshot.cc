#include "launcher/cluster/rdb_snapshot.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "common/resp.h"
#include "launcher/cluster/redis_client.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;
using common::Status;

struct FreeDigest {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using Digest = std::unique_ptr<EVP_MD_CTX, FreeDigest>;

Digest NewSha256() {
  Digest digest(EVP_MD_CTX_new());
  if (digest) EVP_DigestInit_ex(digest.get(), EVP_sha256(), nullptr);
  return digest;
}

std::string HexOf(EVP_MD_CTX* digest) {
  unsigned char sum[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(digest, sum, &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[sum[i] >> 4];
    hex += kHex[sum[i] & 0xf];
  }
  return hex;
}

// A file written whole or not at all: a temporary beside it, fsynced, renamed over it.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path file)
      : file_(std::move(file)), temporary_(file_.string() + ".partial") {
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  }
  ~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) std::filesystem::remove(temporary_, ignored_);
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // errno's failure, with the fix when the disk is full (the caller removes what was written).
  Status WriteFailed() const {
    const int error = errno;
    std::string message = file_.string() + ": " + std::strerror(error);
    if (error == ENOSPC || error == EDQUOT) {
      message +=
          " (free space there, or give --to a directory on a bigger disk; the partial "
          "backup was removed)";
    }
    return Error(message);
  }
  Status Opened() const {
    if (fd_ >= 0) return common::Ok();
    return Error(temporary_.string() + ": " + std::strerror(errno));
  }
  Status Write(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t wrote = ::write(fd_, bytes.data(), bytes.size());
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote < 0) return WriteFailed();
      bytes.remove_prefix(static_cast<size_t>(wrote));
    }
    return common::Ok();
  }
  Status Commit() {
    if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
      fd_ = -1;
      return WriteFailed();
    }
    fd_ = -1;
    std::filesystem::rename(temporary_, file_, ignored_);
    if (ignored_) return Error(file_.string() + ": " + ignored_.message());
    committed_ = true;
    return common::Ok();
  }

 private:
  std::filesystem::path file_;
  std::filesystem::path temporary_;
  int fd_ = -1;
  bool committed_ = false;
  std::error_code ignored_;
};

}  // namespace

std::string SnapshotLink::LoaderVersion(const Engine& loader) {
  return loader.kind == EngineKind::kValkey && loader.major >= 9 ? loader.version : "";
}

Result<SnapshotLink> SnapshotLink::Open(const Access& access, const std::string& host, int port,
                                        std::chrono::milliseconds timeout, Mode mode,
                                        const std::string& valkey_loader) {
  auto connection = RedisConnection::Connect(access, host, port, timeout);
  if (!connection.ok()) return connection.error();
  std::vector<Command> hello = {{"REPLCONF", "capa", "eof"}};
  if (mode == Mode::kSnapshotOnly) hello.push_back({"REPLCONF", "rdb-only", "1"});
  if (!valkey_loader.empty()) hello.push_back({"REPLCONF", "version", valkey_loader});
  auto said = connection->Pipeline(hello);
  if (!said.ok()) return said.error();
  for (size_t i = 0; i < said->size(); ++i) {
    const auto& reply = (*said)[i];
    if (reply.ok()) continue;
    // A primary older than Valkey 8 knows no version to announce; it sends the only format it
    // writes, REDIS0011, whatever it is told.
    if (hello[i][1] == "version" &&
        reply.error().message().find("Unrecognized REPLCONF option") != std::string::npos) {
      continue;
    }
    return Error(connection->address() + ": REPLCONF refused (" + reply.error().message() +
                 "); a snapshot over the network needs Redis or Valkey 7.0 or newer");
  }
  std::string address = connection->address();
  auto link = std::move(connection).value().ReleaseLink();
  if (!link.ok()) return link.error();
  return SnapshotLink(std::move(link).value(), std::move(address));
}

Status SnapshotLink::Request() {
  std::string frame;
  common::AppendCommand(frame, std::vector<std::string_view>{"PSYNC", "?", "-1"});
  if (auto wrote = link_.WriteAll(frame); !wrote.ok()) return wrote.error().Context(address_);
  return common::Ok();
}

Status SnapshotLink::ReadOnce(std::string& payload) {
  char buffer[64 * 1024];
  auto got = link_.ReadSome(buffer, sizeof buffer);
  if (!got.ok()) return got.error().Context(address_);
  auto part = transfer_.Feed(std::string_view(buffer, *got));
  if (!part.ok()) return part.error().Context(address_);
  payload += *part;
  return common::Ok();
}

Status SnapshotLink::AwaitFork(std::chrono::steady_clock::time_point deadline) {
  while (transfer_.stage() == common::RdbTransferReader::Stage::kAwaitingReply) {
    if (std::chrono::steady_clock::now() > deadline) {
      return Error(address_ + ": the snapshot did not start in time (another fork was running)");
    }
    if (auto read = ReadOnce(early_payload_); !read.ok()) return read;
  }
  replication_offset_ = transfer_.replication_offset();
  return common::Ok();
}

Result<SnapshotFile> SnapshotLink::CopyTo(const std::filesystem::path& file) {
  AtomicFile out(file);
  if (auto opened = out.Opened(); !opened.ok()) return opened.error();
  Digest digest = NewSha256();
  if (!digest) return Error("SHA-256: out of memory");
  SnapshotFile written;
  std::string payload = std::move(early_payload_);
  while (true) {
    if (written.rdb_format.size() < 9) {
      written.rdb_format += payload.substr(0, 9 - written.rdb_format.size());
    }
    EVP_DigestUpdate(digest.get(), payload.data(), payload.size());
    if (auto wrote = out.Write(payload); !wrote.ok()) return wrote.error();
    written.bytes += payload.size();
    payload.clear();
    if (transfer_.done()) break;
    if (auto read = ReadOnce(payload); !read.ok()) return read.error();
  }
  if (auto committed = out.Commit(); !committed.ok()) return committed.error();
  written.sha256 = HexOf(digest.get());
  return written;
}

Result<std::string> FileSha256(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error(file.string() + ": cannot be read");
  Digest digest = NewSha256();
  if (!digest) return Error("SHA-256: out of memory");
  std::string chunk(1 << 20, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    EVP_DigestUpdate(digest.get(), chunk.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Error(file.string() + ": read error");
  return HexOf(digest.get());
}

Result<std::string> SnapshotLink::ReadStream(std::chrono::milliseconds wait) {
  if (!handed_remaining_) {
    handed_remaining_ = true;
    if (!transfer_.Remaining().empty()) return transfer_.Remaining();
  }
  if (!link_.WaitReadable(wait)) return std::string();
  char buffer[64 * 1024];
  auto got = link_.ReadSome(buffer, sizeof buffer);
  if (!got.ok()) return got.error().Context(address_);
  return std::string(buffer, *got);
}

Status SnapshotLink::Ack(int64_t offset) {
  std::string frame;
  const std::string at = std::to_string(offset);
  common::AppendCommand(frame, std::vector<std::string_view>{"REPLCONF", "ACK", at});
  if (auto wrote = link_.WriteAll(frame); !wrote.ok()) return wrote.error().Context(address_);
  return common::Ok();
}

}  // namespace shardctl::launcher
