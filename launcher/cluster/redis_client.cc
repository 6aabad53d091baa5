#include "launcher/cluster/redis_client.h"

#include <hiredis/hiredis.h>

#include <string_view>

#include "common/resp.h"

namespace shardctl::launcher {
namespace {

using common::Error;
using common::Result;

Result<std::string> ReplyText(const redisReply* reply) {
  switch (reply->type) {
    case REDIS_REPLY_ERROR:
      return Error(std::string(reply->str, reply->len));
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_STRING:
      return std::string(reply->str, reply->len);
    case REDIS_REPLY_INTEGER:
      return std::to_string(reply->integer);
    case REDIS_REPLY_NIL:
      return std::string();
    case REDIS_REPLY_ARRAY: {
      // An error inside an array is EXEC's reply to a command of the transaction that failed:
      // the transaction did not do all it was sent to do, so the reply is that error.
      std::string joined;
      for (size_t i = 0; i < reply->elements; ++i) {
        auto element = ReplyText(reply->element[i]);
        if (!element.ok()) return element.error();
        if (i) joined += '\n';
        joined += *element;
      }
      return joined;
    }
    default:
      return Error("unexpected reply type " + std::to_string(reply->type));
  }
}

// One element of an array reply as ReplyList keeps it: strings as they are, integers in decimal
// (PROXY HOTKEYS' counts); nil and nested arrays are left out.
void AppendListElement(std::vector<std::string>& elements, const redisReply* element) {
  if (element->type == REDIS_REPLY_INTEGER) {
    elements.push_back(std::to_string(element->integer));
  } else if (element->type != REDIS_REPLY_ARRAY && element->str != nullptr) {
    elements.emplace_back(element->str, element->len);
  }
}

// A flat array reply's elements as they are; an error reply stays an error.
Result<std::vector<std::string>> ReplyList(const redisReply* reply) {
  if (reply->type == REDIS_REPLY_ERROR) return Error(std::string(reply->str, reply->len));
  std::vector<std::string> elements;
  if (reply->type != REDIS_REPLY_ARRAY) return elements;
  for (size_t i = 0; i < reply->elements; ++i) {
    const redisReply* element = reply->element[i];
    if (element->type == REDIS_REPLY_ARRAY) {
      for (size_t j = 0; j < element->elements; ++j)
        AppendListElement(elements, element->element[j]);
    } else {
      AppendListElement(elements, element);
    }
  }
  return elements;
}

// The commands as RESP arrays of bulk strings, one after another.
std::string Frame(const std::vector<Command>& commands) {
  std::string out;
  std::vector<std::string_view> args;
  for (const auto& command : commands) {
    args.assign(command.begin(), command.end());
    common::AppendCommand(out, args);
  }
  return out;
}

}  // namespace

void RedisConnection::FreeReader::operator()(redisReader* reader) const { redisReaderFree(reader); }

RedisConnection::RedisConnection(ControlLink link, std::string address, Access access)
    : link_(std::move(link)),
      reader_(redisReaderCreate()),
      address_(std::move(address)),
      access_(std::move(access)) {}

Result<RedisConnection> RedisConnection::Connect(const Access& access, const std::string& host,
                                                 int port, std::chrono::milliseconds timeout) {
  std::string address = host + ":" + std::to_string(port);
  auto link = ControlLink::Open(host, port, timeout, access.tls.get());
  if (!link.ok()) return Error(address + ": " + link.error().message());
  RedisConnection connection(std::move(link).value(), std::move(address), access);
  if (!connection.reader_) return Error(connection.address() + ": out of memory");
  if (access.password.empty()) return connection;
  if (auto login = connection.Run({"AUTH", access.password}); !login.ok()) {
    const std::string& said = login.error().message();
    // Redis' words when it has no password at all: a password given is then no mismatch.
    const bool none_set = said.find("without any password configured") != std::string::npos;
    return Error(
        connection.address() + ": login refused (" + said + "; " +
        (none_set ? "the server has no password set: give none" : access.wrong_password_hint) +
        ")");
  }
  return connection;
}

Result<ControlLink> RedisConnection::ReleaseLink() && {
  if (reader_->len > reader_->pos) return Error(address_ + ": a reply is still unread");
  return std::move(link_);
}

Result<FirstAnswer> AskFirstThatAnswers(const Access& access, const std::string& host,
                                        const std::vector<int>& ports,
                                        const std::vector<Command>& commands,
                                        std::chrono::milliseconds timeout) {
  std::string last_error = "no node to ask";
  for (int port : ports) {
    auto connection = RedisConnection::Connect(access, host, port, timeout);
    if (!connection.ok()) {
      last_error = connection.error().message();
      continue;
    }
    auto replies = connection->Pipeline(commands);
    if (!replies.ok()) {
      last_error = replies.error().message();
      continue;
    }
    FirstAnswer answer{.address = connection->address(), .replies = {}};
    for (auto& reply : *replies) {
      if (!reply.ok()) {
        last_error = connection->address() + ": " + reply.error().message();
        break;
      }
      answer.replies.push_back(std::move(reply).value());
    }
    if (answer.replies.size() == commands.size()) return answer;
  }
  return Error(last_error);
}

Result<std::string> RedisConnection::Run(const Command& command) {
  auto replies = Pipeline({command});
  if (!replies.ok()) return replies.error();
  return std::move(replies->front());
}

template <typename Convert>
auto RedisConnection::ReadReplies(size_t count, Convert convert)
    -> Result<std::vector<decltype(convert(nullptr))>> {
  std::vector<decltype(convert(nullptr))> replies;
  char buffer[16 * 1024];
  while (replies.size() < count) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader_.get(), &raw) != REDIS_OK) {
      return Error(address_ + ": protocol error: " + reader_->errstr);
    }
    if (raw != nullptr) {
      auto* reply = static_cast<redisReply*>(raw);
      replies.push_back(convert(reply));
      freeReplyObject(reply);
      continue;
    }
    auto got = link_.ReadSome(buffer, sizeof buffer);
    if (!got.ok()) return Error(address_ + ": " + got.error().message());
    redisReaderFeed(reader_.get(), buffer, *got);
  }
  return replies;
}

template <typename Convert>
auto RedisConnection::PipelineWith(const std::vector<Command>& commands, Convert convert)
    -> Result<std::vector<decltype(convert(nullptr))>> {
  if (auto sent = Send(commands); !sent.ok()) return sent.error();
  return ReadReplies(commands.size(), convert);
}

common::Status RedisConnection::Send(const std::vector<Command>& commands) {
  if (auto wrote = link_.WriteAll(Frame(commands)); !wrote.ok()) {
    return Error(address_ + ": " + wrote.error().message());
  }
  return common::Ok();
}

Result<std::vector<Result<std::string>>> RedisConnection::Receive(size_t count) {
  return ReadReplies(count, [](const redisReply* reply) { return ReplyText(reply); });
}

Result<std::vector<Result<std::string>>> RedisConnection::Pipeline(
    const std::vector<Command>& commands) {
  return PipelineWith(commands, [](const redisReply* reply) { return ReplyText(reply); });
}

Result<std::vector<Result<std::vector<std::string>>>> RedisConnection::PipelineLists(
    const std::vector<Command>& commands) {
  return PipelineWith(commands, [](const redisReply* reply) { return ReplyList(reply); });
}

Result<std::vector<std::string>> ScanPage(RedisConnection& connection, std::string& cursor,
                                          const std::string& count) {
  auto replies = connection.PipelineLists({{"SCAN", cursor, "COUNT", count}});
  if (!replies.ok()) return replies.error();
  auto& reply = replies->front();
  if (!reply.ok()) return reply.error().Context(connection.address() + ": SCAN");
  if (reply->empty()) return Error(connection.address() + ": SCAN: empty reply");
  cursor = reply->front();
  reply->erase(reply->begin());
  return std::move(*reply);
}

}  // namespace shardctl::launcher
