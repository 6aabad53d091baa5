// Throwaway TLS material for tests, made with the openssl command in a directory the test owns:
// a CA (NAME.crt, NAME.key) and certificates it signs (for 127.0.0.1, usable by servers and
// clients alike). Fails the test (ADD_FAILURE) when openssl does.
#pragma once

#include <filesystem>
#include <string>

namespace shardctl::integration {

// <dir>/<name>.crt and <dir>/<name>.key: a self-signed CA, valid one day.
void MakeTestCa(const std::filesystem::path& dir, const std::string& name);

// <dir>/<name>.crt and <dir>/<name>.key (mode 0600), signed by <dir>/<ca>.crt, valid for `days`
// from now (-1: it expired a day ago).
void MakeTestCertificate(const std::filesystem::path& dir, const std::string& name,
                         const std::string& ca, int days = 1);

}  // namespace shardctl::integration
