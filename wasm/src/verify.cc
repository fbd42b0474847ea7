// Copyright factlens authors.
//
// Layouts (all little-endian, base64 with padding, as minisign writes them):
//   public key  = "Ed" | key id (8) | Ed25519 public key (32)                 42 bytes
//   secret key  = "Ed" | kdf ("Sc" or 0,0) | "B2" | salt (32) | opslimit (8) |
//                 memlimit (8) | [key id (8) | secret key (64) | checksum (32)] 158 bytes
//                 the bracketed part XORed with scrypt(password) when encrypted;
//                 checksum = BLAKE2b-256("Ed" | key id | secret key)
//   signature   = "ED" or "Ed" | key id (8) | Ed25519 signature (64)          74 bytes
//   global sig  = Ed25519 over (signature (64) | trusted comment text)
#include "factlens/verify.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "factlens/list.h"
#include "nlohmann/json.hpp"

namespace factlens {
namespace {

constexpr char kCommentPrefix[] = "untrusted comment: ";
constexpr char kTrustedPrefix[] = "trusted comment: ";
constexpr size_t kPublicKeyBytes = 42;
constexpr size_t kSecretKeyBytes = 158;
constexpr size_t kSignatureBytes = 74;
constexpr size_t kKeynumSkOffset = 54;  // where [key id | secret | checksum] starts
constexpr size_t kKeynumSkBytes = 104;
constexpr size_t kMaxTrustedCommentBytes = 8192;
constexpr char kRotationFormat[] = "factlens-key-rotation/1";

void EnsureSodium() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (sodium_init() < 0) __builtin_trap();  // no safe way on without a CSPRNG
  });
}

bool DecodeBase64(std::string_view text, std::vector<uint8_t>* out, size_t expected) {
  out->assign(expected + 3, 0);
  size_t len = 0;
  const char* end = nullptr;
  if (sodium_base642bin(out->data(), out->size(), text.data(), text.size(), nullptr, &len,
                        &end, sodium_base64_VARIANT_ORIGINAL) != 0 ||
      end != text.data() + text.size() || len != expected) {
    return false;
  }
  out->resize(len);
  return true;
}

std::string EncodeBase64(const uint8_t* data, size_t n) {
  std::string out(sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(out.data(), out.size(), data, n, sodium_base64_VARIANT_ORIGINAL);
  out.resize(std::strlen(out.c_str()));
  return out;
}

// Splits `text` into lines without their "\n" or "\r\n"; a final newline is optional.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  return lines;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

uint64_t LoadLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

void StoreLe64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

void SecretChecksum(const uint8_t* keynum_sk, uint8_t out[32]) {
  crypto_generichash_state st;
  crypto_generichash_init(&st, nullptr, 0, 32);
  crypto_generichash_update(&st, reinterpret_cast<const uint8_t*>("Ed"), 2);
  crypto_generichash_update(&st, keynum_sk, 8 + 64);
  crypto_generichash_final(&st, out, 32);
}

#ifndef SODIUM_LIBRARY_MINIMAL
constexpr bool kHaveScrypt = true;
// XORs the key part with the scrypt stream minisign derives from the password.
bool ApplyScrypt(std::string_view password, const uint8_t* salt, uint64_t opslimit,
                 uint64_t memlimit, uint8_t* keynum_sk) {
  uint8_t stream[kKeynumSkBytes];
  if (crypto_pwhash_scryptsalsa208sha256(stream, sizeof stream, password.data(),
                                         password.size(), salt, opslimit,
                                         static_cast<size_t>(memlimit)) != 0) {
    return false;
  }
  for (size_t i = 0; i < kKeynumSkBytes; ++i) keynum_sk[i] ^= stream[i];
  sodium_memzero(stream, sizeof stream);
  return true;
}
#else
constexpr bool kHaveScrypt = false;
bool ApplyScrypt(std::string_view, const uint8_t*, uint64_t, uint64_t, uint8_t*) {
  return false;
}
#endif

// Returns the base64 line of a two-line minisign key file, or the text itself if it
// is a single base64 line.
std::string_view KeyPayload(std::string_view text, bool* ok) {
  std::vector<std::string_view> lines = Lines(text);
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  *ok = true;
  if (lines.size() == 1 && !StartsWith(lines[0], kCommentPrefix)) return lines[0];
  if (lines.size() == 2 && StartsWith(lines[0], kCommentPrefix)) return lines[1];
  *ok = false;
  return {};
}

}  // namespace

std::string KeyIdHex(const KeyId& id) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (int i = 7; i >= 0; --i) {
    out += kHex[id[i] >> 4];
    out += kHex[id[i] & 15];
  }
  return out;
}

Status ParsePublicKey(std::string_view text, PublicKey* out) {
  EnsureSodium();
  if (text.size() > kMaxKeyFileBytes) {
    return Status(ErrorKind::kLimit, "public key: larger than " +
                                         std::to_string(kMaxKeyFileBytes) + " bytes");
  }
  bool ok;
  std::string_view payload = KeyPayload(text, &ok);
  std::vector<uint8_t> raw;
  if (!ok || !DecodeBase64(payload, &raw, kPublicKeyBytes)) {
    return Status(ErrorKind::kKey,
                  "public key: not a minisign public key (expected a base64 line of 42 "
                  "bytes, optionally after an \"untrusted comment:\" line)");
  }
  if (raw[0] != 'E' || raw[1] != 'd') {
    return Status(ErrorKind::kKey,
                  "public key: unsupported algorithm (expected Ed25519)");
  }
  std::memcpy(out->key_id.data(), raw.data() + 2, 8);
  std::memcpy(out->key.data(), raw.data() + 10, 32);
  return Status::Ok();
}

std::string PublicKeyBase64(const PublicKey& key) {
  uint8_t raw[kPublicKeyBytes] = {'E', 'd'};
  std::memcpy(raw + 2, key.key_id.data(), 8);
  std::memcpy(raw + 10, key.key.data(), 32);
  return EncodeBase64(raw, sizeof raw);
}

std::string FormatPublicKey(const PublicKey& key) {
  return std::string(kCommentPrefix) + "minisign public key " + KeyIdHex(key.key_id) +
         "\n" + PublicKeyBase64(key) + "\n";
}

bool SecretKeyIsEncrypted(std::string_view text) {
  bool ok;
  std::string_view payload = KeyPayload(text, &ok);
  std::vector<uint8_t> raw;
  return ok && DecodeBase64(payload, &raw, kSecretKeyBytes) && raw[2] == 'S' &&
         raw[3] == 'c';
}

Status ParseSecretKey(std::string_view text, std::string_view password, SecretKey* out) {
  EnsureSodium();
  if (text.size() > kMaxKeyFileBytes) {
    return Status(ErrorKind::kLimit, "secret key: file too large");
  }
  bool ok;
  std::string_view payload = KeyPayload(text, &ok);
  std::vector<uint8_t> raw;
  if (!ok || !DecodeBase64(payload, &raw, kSecretKeyBytes)) {
    return Status(ErrorKind::kKey, "secret key: not a minisign secret key file");
  }
  if (raw[0] != 'E' || raw[1] != 'd' || raw[4] != 'B' || raw[5] != '2') {
    return Status(ErrorKind::kKey, "secret key: unsupported algorithm");
  }
  bool encrypted = raw[2] == 'S' && raw[3] == 'c';
  if (!encrypted && (raw[2] != 0 || raw[3] != 0)) {
    return Status(ErrorKind::kKey, "secret key: unknown key derivation");
  }
  uint8_t* keynum_sk = raw.data() + kKeynumSkOffset;
  if (encrypted) {
    if (!kHaveScrypt) {
      return Status(ErrorKind::kUnsupported,
                    "secret key: password-protected keys need the native build");
    }
    if (password.empty()) {
      return Status(ErrorKind::kKey,
                    "secret key: it is password-protected; no password given");
    }
    uint64_t ops = LoadLe64(raw.data() + 38), mem = LoadLe64(raw.data() + 46);
    // Bound the work a hostile key file can demand (minisign's own: 2^25 ops, 1 GiB).
    if (ops > (uint64_t{1} << 30) || mem > (uint64_t{1} << 31)) {
      return Status(ErrorKind::kLimit, "secret key: key derivation parameters too large");
    }
    if (!ApplyScrypt(password, raw.data() + 6, ops, mem, keynum_sk)) {
      return Status(ErrorKind::kKey,
                    "secret key: key derivation failed (out of memory?)");
    }
  }
  uint8_t chk[32];
  SecretChecksum(keynum_sk, chk);
  const uint8_t* stored = keynum_sk + 72;
  bool zero_chk = std::all_of(stored, stored + 32, [](uint8_t b) { return b == 0; });
  // minisign -W writes an all-zero checksum for unencrypted keys; accept that there.
  if (sodium_memcmp(chk, stored, 32) != 0 && !(zero_chk && !encrypted)) {
    sodium_memzero(raw.data(), raw.size());
    return Status(ErrorKind::kKey, encrypted
                                       ? "secret key: wrong password"
                                       : "secret key: checksum mismatch (corrupted)");
  }
  std::memcpy(out->key_id.data(), keynum_sk, 8);
  std::memcpy(out->key.data(), keynum_sk + 8, 64);
  sodium_memzero(raw.data(), raw.size());
  return Status::Ok();
}

Status FormatSecretKey(const SecretKey& key, std::string_view password,
                       std::string* out) {
  EnsureSodium();
  uint8_t raw[kSecretKeyBytes] = {'E', 'd', 0, 0, 'B', '2'};
  uint8_t* keynum_sk = raw + kKeynumSkOffset;
  std::memcpy(keynum_sk, key.key_id.data(), 8);
  std::memcpy(keynum_sk + 8, key.key.data(), 64);
  std::string comment = "minisign encrypted secret key";
  if (password.empty()) {
    // As minisign -W writes it: no KDF, zero salt and limits, zero checksum.
  } else {
    if (!kHaveScrypt) {
      return Status(ErrorKind::kUnsupported,
                    "secret key: password protection needs the native build");
    }
#ifndef SODIUM_LIBRARY_MINIMAL
    raw[2] = 'S';
    raw[3] = 'c';
    randombytes_buf(raw + 6, 32);
    StoreLe64(raw + 38, crypto_pwhash_scryptsalsa208sha256_OPSLIMIT_SENSITIVE);
    StoreLe64(raw + 46, crypto_pwhash_scryptsalsa208sha256_MEMLIMIT_SENSITIVE);
#endif
    SecretChecksum(keynum_sk, keynum_sk + 72);
    if (!ApplyScrypt(password, raw + 6, LoadLe64(raw + 38), LoadLe64(raw + 46),
                     keynum_sk)) {
      return Status(ErrorKind::kKey,
                    "secret key: key derivation failed (out of memory?)");
    }
  }
  *out =
      std::string(kCommentPrefix) + comment + "\n" + EncodeBase64(raw, sizeof raw) + "\n";
  sodium_memzero(raw, sizeof raw);
  return Status::Ok();
}

void GenerateKeyPair(PublicKey* public_key, SecretKey* secret_key) {
  EnsureSodium();
  crypto_sign_keypair(public_key->key.data(), secret_key->key.data());
  randombytes_buf(public_key->key_id.data(), 8);
  secret_key->key_id = public_key->key_id;
}

PublicKey PublicKeyOf(const SecretKey& secret_key) {
  PublicKey pk;
  pk.key_id = secret_key.key_id;
  crypto_sign_ed25519_sk_to_pk(pk.key.data(), secret_key.key.data());
  return pk;
}

Status ParseSignature(std::string_view text, Signature* out) {
  EnsureSodium();
  if (text.size() > kMaxSignatureFileBytes) {
    return Status(
        ErrorKind::kLimit,
        "signature: larger than " + std::to_string(kMaxSignatureFileBytes) + " bytes");
  }
  std::vector<std::string_view> lines = Lines(text);
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.size() != 4) {
    return Status(ErrorKind::kSignature,
                  "signature: expected 4 lines (untrusted comment, signature, trusted "
                  "comment, global signature), found " +
                      std::to_string(lines.size()));
  }
  if (!StartsWith(lines[0], kCommentPrefix)) {
    return Status(ErrorKind::kSignature,
                  "signature: line 1 must start with \"untrusted comment: \"");
  }
  std::vector<uint8_t> raw;
  if (!DecodeBase64(lines[1], &raw, kSignatureBytes)) {
    return Status(ErrorKind::kSignature,
                  "signature: line 2 is not a base64 signature of 74 bytes");
  }
  if (raw[0] == 'E' && raw[1] == 'D') {
    out->algorithm = SignatureAlgorithm::kPrehashed;
  } else if (raw[0] == 'E' && raw[1] == 'd') {
    out->algorithm = SignatureAlgorithm::kLegacy;
  } else {
    return Status(ErrorKind::kSignature, "signature: unsupported algorithm");
  }
  if (!StartsWith(lines[2], kTrustedPrefix)) {
    return Status(ErrorKind::kSignature,
                  "signature: line 3 must start with \"trusted comment: \"");
  }
  std::string_view trusted = lines[2].substr(std::strlen(kTrustedPrefix));
  if (trusted.size() > kMaxTrustedCommentBytes) {
    return Status(ErrorKind::kLimit, "signature: trusted comment too long");
  }
  std::vector<uint8_t> global;
  if (!DecodeBase64(lines[3], &global, 64)) {
    return Status(ErrorKind::kSignature,
                  "signature: line 4 is not a base64 global signature of 64 bytes");
  }
  std::memcpy(out->key_id.data(), raw.data() + 2, 8);
  std::memcpy(out->signature.data(), raw.data() + 10, 64);
  out->untrusted_comment = std::string(lines[0].substr(std::strlen(kCommentPrefix)));
  out->trusted_comment = std::string(trusted);
  std::memcpy(out->global_signature.data(), global.data(), 64);
  return Status::Ok();
}

std::string FormatSignature(const Signature& s) {
  uint8_t raw[kSignatureBytes] = {
      'E', s.algorithm == SignatureAlgorithm::kPrehashed ? uint8_t{'D'} : uint8_t{'d'}};
  std::memcpy(raw + 2, s.key_id.data(), 8);
  std::memcpy(raw + 10, s.signature.data(), 64);
  return std::string(kCommentPrefix) + s.untrusted_comment + "\n" +
         EncodeBase64(raw, sizeof raw) + "\n" + kTrustedPrefix + s.trusted_comment +
         "\n" + EncodeBase64(s.global_signature.data(), 64) + "\n";
}

namespace {

// Returns what the file signature covers: the file, or its BLAKE2b-512 digest.
std::vector<uint8_t> SignedMessage(std::string_view message,
                                   SignatureAlgorithm algorithm) {
  if (algorithm == SignatureAlgorithm::kLegacy) {
    return std::vector<uint8_t>(message.begin(), message.end());
  }
  std::vector<uint8_t> digest(crypto_generichash_BYTES_MAX);
  crypto_generichash(digest.data(), digest.size(),
                     reinterpret_cast<const uint8_t*>(message.data()), message.size(),
                     nullptr, 0);
  return digest;
}

std::vector<uint8_t> GlobalMessage(const Signature& s) {
  std::vector<uint8_t> m(s.signature.begin(), s.signature.end());
  m.insert(m.end(), s.trusted_comment.begin(), s.trusted_comment.end());
  return m;
}

}  // namespace

Status Sign(const SecretKey& key, std::string_view message, SignatureAlgorithm algorithm,
            std::string_view trusted_comment, std::string_view untrusted_comment,
            Signature* out) {
  EnsureSodium();
  if (trusted_comment.find_first_of("\r\n") != std::string_view::npos ||
      untrusted_comment.find_first_of("\r\n") != std::string_view::npos) {
    return Status(ErrorKind::kFormat, "sign: comments must be a single line");
  }
  if (trusted_comment.size() > kMaxTrustedCommentBytes) {
    return Status(ErrorKind::kLimit, "sign: trusted comment too long");
  }
  Signature s;
  s.algorithm = algorithm;
  s.key_id = key.key_id;
  s.untrusted_comment = std::string(untrusted_comment);
  s.trusted_comment = std::string(trusted_comment);
  std::vector<uint8_t> m = SignedMessage(message, algorithm);
  crypto_sign_detached(s.signature.data(), nullptr, m.data(), m.size(), key.key.data());
  std::vector<uint8_t> g = GlobalMessage(s);
  crypto_sign_detached(s.global_signature.data(), nullptr, g.data(), g.size(),
                       key.key.data());
  *out = std::move(s);
  return Status::Ok();
}

Status Verify(const PublicKey& key, std::string_view message,
              const Signature& signature) {
  EnsureSodium();
  if (signature.key_id != key.key_id) {
    return Status(ErrorKind::kKey,
                  "signature: made with key " + KeyIdHex(signature.key_id) +
                      ", not with the pinned key " + KeyIdHex(key.key_id));
  }
  std::vector<uint8_t> m = SignedMessage(message, signature.algorithm);
  if (crypto_sign_verify_detached(signature.signature.data(), m.data(), m.size(),
                                  key.key.data()) != 0) {
    return Status(ErrorKind::kSignature,
                  "signature: does not verify (the file was changed or the signature is "
                  "not for it)");
  }
  std::vector<uint8_t> g = GlobalMessage(signature);
  if (crypto_sign_verify_detached(signature.global_signature.data(), g.data(), g.size(),
                                  key.key.data()) != 0) {
    return Status(ErrorKind::kSignature,
                  "signature: the trusted comment's signature does not verify");
  }
  return Status::Ok();
}

std::string ContentDigest(std::string_view data) {
  EnsureSodium();
  uint8_t digest[32];
  crypto_generichash(digest, sizeof digest, reinterpret_cast<const uint8_t*>(data.data()),
                     data.size(), nullptr, 0);
  char hex[65];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return hex;
}

Status VerifyRotation(std::string_view statement, std::string_view signature_text,
                      const PublicKey& trusted_key, KeyRotation* out) {
  if (statement.size() > kMaxKeyFileBytes) {
    return Status(ErrorKind::kLimit, "key rotation: statement larger than " +
                                         std::to_string(kMaxKeyFileBytes) + " bytes");
  }
  Signature signature;
  Status s = ParseSignature(signature_text, &signature);
  if (!s.ok()) return Status(s.kind(), "key rotation: " + s.message());
  s = Verify(trusted_key, statement, signature);
  if (!s.ok()) return Status(s.kind(), "key rotation: " + s.message());
  // Only now, signed by the key the reader trusts, is the statement read.
  using nlohmann::json;
  json j = json::parse(statement.begin(), statement.end(), nullptr, false);
  auto text = [&](const char* field, std::string* v) {
    auto it = j.find(field);
    if (it == j.end() || !it->is_string()) return false;
    *v = it->get<std::string>();
    return true;
  };
  std::string format, list_id, old_key, new_key, issued;
  if (!j.is_object() || !text("format", &format) || format != kRotationFormat ||
      !text("list", &list_id) || !text("old_key", &old_key) ||
      !text("new_key", &new_key) || !text("issued", &issued)) {
    return Status(
        ErrorKind::kFormat,
        "key rotation: expected {\"format\":\"factlens-key-rotation/1\", \"list\", "
        "\"old_key\", \"new_key\", \"issued\"}");
  }
  int64_t unused;
  if (!ParseRfc3339(issued, &unused)) {
    return Status(ErrorKind::kFormat, "key rotation: issued: not an RFC 3339 date-time");
  }
  KeyRotation r;
  r.list_id = list_id;
  r.issued = issued;
  s = ParsePublicKey(old_key, &r.old_key);
  if (!s.ok()) return Status(ErrorKind::kFormat, "key rotation: old_key: " + s.message());
  s = ParsePublicKey(new_key, &r.new_key);
  if (!s.ok()) return Status(ErrorKind::kFormat, "key rotation: new_key: " + s.message());
  if (r.old_key.key_id != trusted_key.key_id || r.old_key.key != trusted_key.key) {
    return Status(ErrorKind::kKey,
                  "key rotation: the statement's old_key is not the pinned key");
  }
  *out = r;
  return Status::Ok();
}

std::string FormatRotation(std::string_view list_id, const PublicKey& old_key,
                           const PublicKey& new_key, std::string_view issued) {
  nlohmann::json j = {{"format", kRotationFormat},
                      {"list", std::string(list_id)},
                      {"old_key", PublicKeyBase64(old_key)},
                      {"new_key", PublicKeyBase64(new_key)},
                      {"issued", std::string(issued)}};
  return j.dump(2) + "\n";
}

}  // namespace factlens
