#include "webhook_signing.h"

#include <stdexcept>

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace tributary::crash {

std::string github_signature(const std::string& secret, const std::string& body) {
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
              reinterpret_cast<const unsigned char*>(body.data()), body.size(), mac, &length))
        throw std::runtime_error("HMAC-SHA256 failed");
    static const char kHex[] = "0123456789abcdef";
    std::string out = "sha256=";
    for (unsigned int i = 0; i < length; ++i) {
        out += kHex[mac[i] >> 4];
        out += kHex[mac[i] & 15];
    }
    return out;
}

}  // namespace tributary::crash
