#include "common/tls_check.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <memory>

namespace shardctl::common {
namespace {

struct FreeBio {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct FreeX509 {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct FreeChain {
  void operator()(STACK_OF(X509) * chain) const { sk_X509_pop_free(chain, X509_free); }
};
struct FreeStore {
  void operator()(X509_STORE* store) const { X509_STORE_free(store); }
};
struct FreeStoreContext {
  void operator()(X509_STORE_CTX* context) const { X509_STORE_CTX_free(context); }
};

using Chain = std::unique_ptr<STACK_OF(X509), FreeChain>;

// Every certificate in a PEM file, the leaf first; empty when none could be read.
Chain ReadCertificates(const std::string& path) {
  Chain chain(sk_X509_new_null());
  std::unique_ptr<BIO, FreeBio> bio(BIO_new_file(path.c_str(), "r"));
  if (!chain || !bio) {
    ERR_clear_error();
    return chain;
  }
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    sk_X509_push(chain.get(), cert);
  }
  ERR_clear_error();  // the end of the file reads as an error
  return chain;
}

std::string TimeText(const ASN1_TIME* time) {
  std::unique_ptr<BIO, FreeBio> bio(BIO_new(BIO_s_mem()));
  if (!bio) return "?";
  ASN1_TIME_print(bio.get(), time);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

// Verifies `chain`'s leaf against the CAs in ca_file at `now`; the error is OpenSSL's reason.
Status Verify(const std::string& ca_file, const std::string& ca_flag, STACK_OF(X509) * chain,
              std::time_t now) {
  std::unique_ptr<X509_STORE, FreeStore> store(X509_STORE_new());
  if (X509_STORE_load_locations(store.get(), ca_file.c_str(), nullptr) != 1) {
    return Error(ca_flag + " " + ca_file + ": " + TlsErrorText("cannot load it"));
  }
  std::unique_ptr<X509_STORE_CTX, FreeStoreContext> context(X509_STORE_CTX_new());
  X509* leaf = sk_X509_value(chain, 0);
  if (!context || X509_STORE_CTX_init(context.get(), store.get(), leaf, chain) != 1) {
    return Error(TlsErrorText("cannot set up the certificate check"));
  }
  X509_STORE_CTX_set_time(context.get(), 0, now);
  if (X509_verify_cert(context.get()) == 1) return Ok();
  ERR_clear_error();
  return Error(X509_verify_cert_error_string(X509_STORE_CTX_get_error(context.get())));
}

}  // namespace

Status CheckCertificate(const TlsFiles& files, std::time_t now) {
  const std::string where = "--tls-cert " + files.cert_file;
  Chain chain = ReadCertificates(files.cert_file);
  if (!chain || sk_X509_num(chain.get()) == 0) return Error(where + ": no PEM certificate in it");
  const X509* leaf = sk_X509_value(chain.get(), 0);
  if (X509_cmp_time(X509_get0_notAfter(leaf), &now) < 0) {
    return Error(where + ": expired on " + TimeText(X509_get0_notAfter(leaf)) +
                 " (renew it; no TLS client would accept it)");
  }
  if (X509_cmp_time(X509_get0_notBefore(leaf), &now) > 0) {
    return Error(where + ": not valid before " + TimeText(X509_get0_notBefore(leaf)) +
                 " (check this host's clock, or issue it with an earlier start)");
  }
  if (auto verified = Verify(files.ca_file, "--tls-ca", chain.get(), now); !verified.ok()) {
    return Error(where + ": --tls-ca " + files.ca_file + " does not verify it (" +
                 verified.error().message() + "; give the CA that signed it)");
  }
  return Ok();
}

Status CaVerifies(const std::string& ca_file, const std::string& cert_file, std::time_t now,
                  const std::string& cert_role) {
  Chain chain = ReadCertificates(cert_file);
  if (!chain || sk_X509_num(chain.get()) == 0) {
    return Error(cert_file + ": no PEM certificate in it");
  }
  if (auto verified = Verify(ca_file, "--tls-ca", chain.get(), now); !verified.ok()) {
    return Error("--tls-ca " + ca_file + " does not verify " + cert_role + " (" +
                 verified.error().message() + ")");
  }
  return Ok();
}

}  // namespace shardctl::common
