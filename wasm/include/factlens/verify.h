// Copyright factlens authors. verify: minisign-compatible keys and signatures.
//
// The files are minisign's, byte for byte, so publishers can sign with either tool
// and readers' lists verify with either: public keys ("untrusted comment:" line +
// base64 of "Ed" || key id || Ed25519 public key), secret keys (unencrypted, and
// scrypt-encrypted where the build has scrypt), and signatures ("ED": Ed25519 over
// BLAKE2b-512 of the file, minisign's default; "Ed": over the file itself) with a
// trusted comment covered by a second, global signature.
//
// Key rotation statements (rules/FORMAT.md, "Key rotation") let a publisher move
// to a new key: a small JSON document naming the old and new public keys, signed
// by the old key.
#ifndef FACTLENS_VERIFY_H_
#define FACTLENS_VERIFY_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "factlens/status.h"

namespace factlens {

using KeyId = std::array<uint8_t, 8>;

struct PublicKey {
  KeyId key_id{};
  std::array<uint8_t, 32> key{};
};

struct SecretKey {
  KeyId key_id{};
  std::array<uint8_t, 64> key{};  // libsodium's Ed25519 secret key (seed || public)
};

enum class SignatureAlgorithm { kPrehashed, kLegacy };  // "ED", "Ed"

struct Signature {
  SignatureAlgorithm algorithm = SignatureAlgorithm::kPrehashed;
  KeyId key_id{};
  std::array<uint8_t, 64> signature{};
  std::string untrusted_comment;
  std::string trusted_comment;  // trusted only after Verify succeeded
  std::array<uint8_t, 64> global_signature{};
};

// Hard limits, checked before any decoding work.
inline constexpr size_t kMaxKeyFileBytes = 4096;
inline constexpr size_t kMaxSignatureFileBytes =
    16384;  // minisign: 8 KiB trusted comment

// Returns the key id as minisign prints it: 16 upper-case hex digits of the id
// read as a little-endian integer ("F3F0898C9013BDD6").
std::string KeyIdHex(const KeyId& id);

// Parses a public key: a minisign .pub file, or just its base64 line. Returns
// kKey if it is not one.
Status ParsePublicKey(std::string_view text, PublicKey* out);
// Returns the base64 line of a public key ("RWQ...").
std::string PublicKeyBase64(const PublicKey& key);
// Returns a minisign .pub file for `key`.
std::string FormatPublicKey(const PublicKey& key);

// Parses a minisign secret key file. Encrypted keys need `password` and a build
// with scrypt (native); returns kKey for a malformed file or a wrong password,
// kUnsupported for an encrypted key in a build without scrypt.
Status ParseSecretKey(std::string_view text, std::string_view password, SecretKey* out);
// Returns true if the secret key file `text` is password-protected.
bool SecretKeyIsEncrypted(std::string_view text);
// Returns a minisign secret key file for `key`, encrypted with `password` (scrypt,
// minisign's parameters) unless `password` is empty. Returns kUnsupported for a
// password in a build without scrypt.
Status FormatSecretKey(const SecretKey& key, std::string_view password, std::string* out);

// Returns a new random key pair (libsodium's CSPRNG).
void GenerateKeyPair(PublicKey* public_key, SecretKey* secret_key);

// Returns the public half of `secret_key`.
PublicKey PublicKeyOf(const SecretKey& secret_key);

// Parses a minisign signature file. Returns kSignature if it is malformed.
Status ParseSignature(std::string_view text, Signature* out);
// Returns a minisign signature file.
std::string FormatSignature(const Signature& signature);

// Signs `message` into *out with `trusted_comment` (no line breaks).
Status Sign(const SecretKey& key, std::string_view message, SignatureAlgorithm algorithm,
            std::string_view trusted_comment, std::string_view untrusted_comment,
            Signature* out);

// Verifies `signature` of `message` against `key`: the key ids must agree (kKey
// otherwise, naming both), then the file signature and the global signature over
// the trusted comment must verify (kSignature otherwise).
Status Verify(const PublicKey& key, std::string_view message, const Signature& signature);

// Returns the BLAKE2b-256 digest of `data` as 64 lower-case hex digits: how a
// caller remembers which bytes it accepted for a list version.
std::string ContentDigest(std::string_view data);

// A verified key rotation: the publisher of `list_id` ("*": all its lists) moves
// from `old_key` to `new_key`.
struct KeyRotation {
  std::string list_id;
  PublicKey old_key;
  PublicKey new_key;
  std::string issued;
};

// Verifies a rotation statement (JSON, rules/FORMAT.md) and its signature against
// `trusted_key`, the key the caller pins. Returns kKey if the statement is not
// signed by `trusted_key` or does not name it as the old key, kSignature if the
// signature fails, kFormat if the statement is malformed.
Status VerifyRotation(std::string_view statement, std::string_view signature_text,
                      const PublicKey& trusted_key, KeyRotation* out);

// Returns a rotation statement moving `list_id` from `old_key` to `new_key`.
std::string FormatRotation(std::string_view list_id, const PublicKey& old_key,
                           const PublicKey& new_key, std::string_view issued);

}  // namespace factlens

#endif  // FACTLENS_VERIFY_H_
