#include "launcher/cluster/access.h"

namespace shardctl::launcher {

common::Result<Access> MakeAccess(std::string password, const std::optional<ControlTls>& tls) {
  Access access{.password = std::move(password), .tls = nullptr};
  if (!tls) return access;
  auto context = common::TlsContext::ForClient(
      {.cert_file = tls->cert_file, .key_file = tls->key_file, .ca_file = tls->ca_file});
  if (!context) return context.error();
  access.tls = *std::move(context);
  return access;
}

common::Result<Access> AccessFor(const Deployment& deployment) {
  if (!deployment.tls.enabled()) return MakeAccess(deployment.auth.password, std::nullopt);
  return MakeAccess(deployment.auth.password, ControlTls{.ca_file = deployment.tls.ca,
                                                         .cert_file = deployment.tls.cert,
                                                         .key_file = deployment.tls.key});
}

std::shared_ptr<const Access> SharedAccess::Current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

void SharedAccess::Replace(Access access) {
  auto replacement = std::make_shared<const Access>(std::move(access));
  std::lock_guard lock(mutex_);
  current_ = std::move(replacement);
}

}  // namespace shardctl::launcher
