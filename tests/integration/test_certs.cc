#include "tests/integration/test_certs.h"

#include <vector>

#include "tests/integration/harness.h"

namespace shardctl::integration {
namespace {

void Openssl(std::vector<std::string> args) {
  args.insert(args.begin(), "openssl");
  auto done = RunCommand(args, std::chrono::seconds(30));
  if (done.exit_code != 0) ADD_FAILURE() << done.Describe();
}

}  // namespace

void MakeTestCa(const std::filesystem::path& dir, const std::string& name) {
  Openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", dir / (name + ".key"),
           "-out", dir / (name + ".crt"), "-days", "1", "-subj", "/CN=shardctl test " + name});
}

void MakeTestCertificate(const std::filesystem::path& dir, const std::string& name,
                         const std::string& ca, int days) {
  Openssl({"req", "-newkey", "rsa:2048", "-nodes", "-keyout", dir / (name + ".key"), "-out",
           dir / (name + ".csr"), "-subj", "/CN=127.0.0.1"});
  Openssl({"x509", "-req", "-in", dir / (name + ".csr"), "-CA", dir / (ca + ".crt"), "-CAkey",
           dir / (ca + ".key"), "-CAcreateserial", "-out", dir / (name + ".crt"), "-days",
           std::to_string(days)});
  std::filesystem::permissions(dir / (name + ".key"), std::filesystem::perms::owner_read |
                                                          std::filesystem::perms::owner_write);
}

}  // namespace shardctl::integration
