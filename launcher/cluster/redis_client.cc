#include "launcher/cluster/redis_client.h"

#include <hiredis/hiredis.h>

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
      std::string joined;
      for (size_t i = 0; i < reply->elements; ++i) {
        auto element = ReplyText(reply->element[i]);
        if (i) joined += '\n';
        joined += element.ok() ? *element : element.error().message();
      }
      return joined;
    }
    default:
      return Error("unexpected reply type " + std::to_string(reply->type));
  }
}

// A flat array reply's elements as they are; an error reply stays an error.
Result<std::vector<std::string>> ReplyList(const redisReply* reply) {
  if (reply->type == REDIS_REPLY_ERROR) return Error(std::string(reply->str, reply->len));
  std::vector<std::string> elements;
  if (reply->type != REDIS_REPLY_ARRAY) return elements;
  for (size_t i = 0; i < reply->elements; ++i) {
    const redisReply* element = reply->element[i];
    if (element->str != nullptr) elements.emplace_back(element->str, element->len);
  }
  return elements;
}

std::vector<const char*> ArgvPointers(const Command& command, std::vector<size_t>& lengths) {
  std::vector<const char*> argv;
  lengths.clear();
  for (const auto& arg : command) {
    argv.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  return argv;
}

}  // namespace

void RedisConnection::Free::operator()(redisContext* context) const { redisFree(context); }

Result<RedisConnection> RedisConnection::Connect(const std::string& host, int port,
                                                 std::chrono::milliseconds timeout) {
  std::string address = host + ":" + std::to_string(port);
  timeval tv{.tv_sec = timeout.count() / 1000,
             .tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  redisContext* context = redisConnectWithTimeout(host.c_str(), port, tv);
  if (context == nullptr) return Error(address + ": out of memory");
  if (context->err) {
    std::string message = address + ": " + context->errstr;
    redisFree(context);
    return Error(message);
  }
  redisSetTimeout(context, tv);
  RedisConnection connection(context, std::move(address));
  if (ControlPassword().empty()) return connection;
  if (auto login = connection.Run({"AUTH", ControlPassword()}); !login.ok()) {
    return Error(connection.address() + ": login refused (" + login.error().message() +
                 "; the deployment's password file no longer matches the shards' requirepass)");
  }
  return connection;
}

namespace {
std::string control_password;  // see UseControlPassword
}  // namespace

Result<FirstAnswer> AskFirstThatAnswers(const std::string& host, const std::vector<int>& ports,
                                        const std::vector<Command>& commands,
                                        std::chrono::milliseconds timeout) {
  std::string last_error = "no node to ask";
  for (int port : ports) {
    auto connection = RedisConnection::Connect(host, port, timeout);
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

void UseControlPassword(std::string password) { control_password = std::move(password); }

const std::string& ControlPassword() { return control_password; }

Result<std::string> RedisConnection::Run(const Command& command) {
  auto replies = Pipeline({command});
  if (!replies.ok()) return replies.error();
  return std::move(replies->front());
}

common::Status RedisConnection::Append(const std::vector<Command>& commands) {
  std::vector<size_t> lengths;
  for (const auto& command : commands) {
    auto argv = ArgvPointers(command, lengths);
    if (redisAppendCommandArgv(context_.get(), static_cast<int>(argv.size()), argv.data(),
                               lengths.data()) != REDIS_OK) {
      return Error(address_ + ": " + context_->errstr);
    }
  }
  return common::Ok();
}

template <typename Convert>
auto RedisConnection::ReadReplies(size_t count, Convert convert)
    -> Result<std::vector<decltype(convert(nullptr))>> {
  std::vector<decltype(convert(nullptr))> replies;
  for (size_t i = 0; i < count; ++i) {
    void* raw = nullptr;
    if (redisGetReply(context_.get(), &raw) != REDIS_OK || raw == nullptr) {
      return Error(address_ + ": " + (context_->err ? context_->errstr : "connection lost"));
    }
    auto* reply = static_cast<redisReply*>(raw);
    replies.push_back(convert(reply));
    freeReplyObject(reply);
  }
  return replies;
}

template <typename Convert>
auto RedisConnection::PipelineWith(const std::vector<Command>& commands, Convert convert)
    -> Result<std::vector<decltype(convert(nullptr))>> {
  // hiredis writes the appended commands in its first read.
  if (auto appended = Append(commands); !appended.ok()) return appended.error();
  return ReadReplies(commands.size(), convert);
}

common::Status RedisConnection::Send(const std::vector<Command>& commands) {
  if (auto appended = Append(commands); !appended.ok()) return appended;
  for (int done = 0; !done;) {
    if (redisBufferWrite(context_.get(), &done) != REDIS_OK) {
      return Error(address_ + ": " + context_->errstr);
    }
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

std::string InfoField(const std::string& info, const std::string& field) {
  std::string key = field + ":";
  size_t at = 0;
  while ((at = info.find(key, at)) != std::string::npos) {
    if (at == 0 || info[at - 1] == '\n') {
      size_t end = info.find_first_of("\r\n", at);
      return info.substr(at + key.size(), end - at - key.size());
    }
    at += key.size();
  }
  return "";
}

}  // namespace shardctl::launcher
