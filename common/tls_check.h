// Certificates checked as a TLS peer will check them, before anything loads them: loading a file
// (what a server does at CONFIG SET or start) succeeds for an expired certificate or one another
// CA signed, and the shard then serves a certificate no client accepts.
#pragma once

#include <ctime>
#include <string>

#include "common/result.h"
#include "common/tls.h"

namespace shardctl::common {

// The certificate in files.cert_file (a leaf, then any intermediates) at time `now`: within its
// validity dates and chaining to a CA in files.ca_file (that files.key_file is its key is
// checked where the files load: TlsContext::ForServer, MakeAccess). Errors name
// the flag, the file and the fix: "--tls-cert s.crt: expired on Jan  1 00:00:00 2026 GMT (renew
// it)", "--tls-cert s.crt: --tls-ca ca.crt does not verify it (unable to get local issuer
// certificate)".
Status CheckCertificate(const TlsFiles& files, std::time_t now);

// Whether the CA in `ca_file` (named `ca_flag` in errors) verifies the certificate in
// `cert_file` at `now`: a new CA must still trust the certificates in use until they are all
// replaced. Errors name both files.
Status CaVerifies(const std::string& ca_file, const std::string& cert_file, std::time_t now,
                  const std::string& cert_role);

}  // namespace shardctl::common
