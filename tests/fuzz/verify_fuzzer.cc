// Fuzzes the signature side: public keys, secret keys, signature files and key
// rotation statements from hostile bytes, and verification against a fixed key.
// Nothing may crash, and nothing random may verify.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "factlens/verify.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace factlens;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  static PublicKey fixed = [] {
    PublicKey pub;
    SecretKey sec;
    GenerateKeyPair(&pub, &sec);
    return pub;
  }();
  PublicKey pub;
  ParsePublicKey(in, &pub);
  SecretKey sec;
  ParseSecretKey(in, "", &sec);  // unencrypted only: scrypt would make each run slow
  Signature sig;
  if (ParseSignature(in, &sig).ok()) {
    if (Verify(fixed, "message", sig).ok()) __builtin_trap();
    std::string again = FormatSignature(sig);
    Signature reparsed;
    if (!ParseSignature(again, &reparsed).ok()) __builtin_trap();
  }
  // Split: statement | signature at the first NUL.
  size_t nul = in.find('\0');
  if (nul != std::string_view::npos) {
    KeyRotation rotation;
    if (VerifyRotation(in.substr(0, nul), in.substr(nul + 1), fixed, &rotation).ok()) {
      __builtin_trap();
    }
  }
  return 0;
}
