// Tests of the verify component: minisign-format keys and signatures, tampering,
// key rotation statements. Interop with the real minisign binary is in
// minisign_interop_test.sh.
#include "factlens/verify.h"

#include <catch2/catch.hpp>
#include <string>

namespace factlens {
namespace {

struct Keys {
  PublicKey pub;
  SecretKey sec;
};

Keys NewKeys() {
  Keys k;
  GenerateKeyPair(&k.pub, &k.sec);
  return k;
}

std::string SignText(const SecretKey& key, const std::string& message,
                     SignatureAlgorithm alg = SignatureAlgorithm::kPrehashed,
                     const std::string& trusted = "timestamp:1\tfile:list.json\thashed") {
  Signature s;
  REQUIRE(
      Sign(key, message, alg, trusted, "signature from minisign secret key", &s).ok());
  return FormatSignature(s);
}

Status VerifyText(const std::string& pub_text, const std::string& message,
                  const std::string& sig_text, Signature* parsed = nullptr) {
  PublicKey pub;
  Status s = ParsePublicKey(pub_text, &pub);
  if (!s.ok()) return s;
  Signature sig;
  s = ParseSignature(sig_text, &sig);
  if (!s.ok()) return s;
  if (parsed) *parsed = sig;
  return Verify(pub, message, sig);
}

TEST_CASE("verify: keys round-trip through minisign's file formats", "[verify]") {
  Keys k = NewKeys();
  std::string pub_file = FormatPublicKey(k.pub);
  CHECK(pub_file.rfind(
            "untrusted comment: minisign public key " + KeyIdHex(k.pub.key_id) + "\nRW",
            0) == 0);
  PublicKey pub;
  REQUIRE(ParsePublicKey(pub_file, &pub).ok());
  CHECK(pub.key == k.pub.key);
  CHECK(pub.key_id == k.pub.key_id);
  REQUIRE(ParsePublicKey(PublicKeyBase64(k.pub), &pub).ok());  // the bare line too
  CHECK(pub.key == k.pub.key);
  CHECK(PublicKeyOf(k.sec).key == k.pub.key);

  std::string sec_file;
  REQUIRE(FormatSecretKey(k.sec, "", &sec_file).ok());
  CHECK_FALSE(SecretKeyIsEncrypted(sec_file));
  SecretKey sec;
  REQUIRE(ParseSecretKey(sec_file, "", &sec).ok());
  CHECK(sec.key == k.sec.key);
  CHECK(sec.key_id == k.sec.key_id);
}

TEST_CASE("verify: password-protected secret keys (scrypt) need the right password",
          "[verify]") {
  Keys k = NewKeys();
  std::string sec_file;
  REQUIRE(FormatSecretKey(k.sec, "correct horse", &sec_file).ok());
  CHECK(SecretKeyIsEncrypted(sec_file));
  SecretKey sec;
  REQUIRE(ParseSecretKey(sec_file, "correct horse", &sec).ok());
  CHECK(sec.key == k.sec.key);
  Status s = ParseSecretKey(sec_file, "wrong horse", &sec);
  CHECK(s.kind() == ErrorKind::kKey);
  CHECK(s.message() == "secret key: wrong password");
  CHECK(ParseSecretKey(sec_file, "", &sec).kind() == ErrorKind::kKey);
}

TEST_CASE("verify: both algorithms sign and verify; the trusted comment is kept",
          "[verify]") {
  Keys k = NewKeys();
  std::string message = "{\"format\":\"factlens/1\"}";
  for (SignatureAlgorithm alg :
       {SignatureAlgorithm::kPrehashed, SignatureAlgorithm::kLegacy}) {
    std::string sig = SignText(k.sec, message, alg, "timestamp:42\tfile:x");
    CHECK(sig.find(alg == SignatureAlgorithm::kPrehashed ? "\nRU" : "\nRW") !=
          std::string::npos);
    Signature parsed;
    REQUIRE(VerifyText(FormatPublicKey(k.pub), message, sig, &parsed).ok());
    CHECK(parsed.algorithm == alg);
    CHECK(parsed.trusted_comment == "timestamp:42\tfile:x");
    CHECK(VerifyText(FormatPublicKey(k.pub), message + " ", sig).kind() ==
          ErrorKind::kSignature);
  }
}

TEST_CASE("verify: a signature by another key is a key error naming both ids",
          "[verify]") {
  Keys a = NewKeys(), b = NewKeys();
  std::string sig = SignText(a.sec, "m");
  Status s = VerifyText(FormatPublicKey(b.pub), "m", sig);
  CHECK(s.kind() == ErrorKind::kKey);
  CHECK_THAT(s.message(), Catch::Contains(KeyIdHex(a.pub.key_id)) &&
                              Catch::Contains(KeyIdHex(b.pub.key_id)));
  // Same key id, other key (a forged id): the signature fails.
  PublicKey forged = b.pub;
  forged.key_id = a.pub.key_id;
  CHECK(VerifyText(FormatPublicKey(forged), "m", sig).kind() == ErrorKind::kSignature);
}

TEST_CASE("verify: every truncation of a signature or key file is refused", "[verify]") {
  Keys k = NewKeys();
  std::string sig = SignText(k.sec, "m");
  std::string pub = FormatPublicKey(k.pub);
  // Dropping only the final newline keeps every line whole: still valid.
  for (size_t n = 0; n + 1 < sig.size(); ++n) {
    INFO("signature cut at " << n);
    CHECK_FALSE(VerifyText(pub, "m", sig.substr(0, n)).ok());
  }
  for (size_t n = 0; n + 1 < pub.size(); ++n) {
    INFO("key cut at " << n);
    PublicKey parsed;
    // A cut inside the comment line leaves no key line at all.
    CHECK_FALSE(ParsePublicKey(pub.substr(0, n), &parsed).ok());
  }
}

TEST_CASE("verify: oversized inputs are refused before decoding", "[verify]") {
  PublicKey pub;
  CHECK(ParsePublicKey(std::string(kMaxKeyFileBytes + 1, 'A'), &pub).kind() ==
        ErrorKind::kLimit);
  Signature sig;
  CHECK(ParseSignature(std::string(kMaxSignatureFileBytes + 1, 'A'), &sig).kind() ==
        ErrorKind::kLimit);
  Keys k = NewKeys();
  Signature s;
  CHECK(Sign(k.sec, "m", SignatureAlgorithm::kPrehashed, std::string(8193, 'x'), "", &s)
            .kind() == ErrorKind::kLimit);
  CHECK(Sign(k.sec, "m", SignatureAlgorithm::kPrehashed, "two\nlines", "", &s).kind() ==
        ErrorKind::kFormat);
}

// Flips every byte of the message, the signature file and the public key file in
// turn. Every change must be refused with the right kind, except changes to the
// text of an "untrusted comment" line, which minisign's format leaves unsigned on
// purpose: those must still verify (and never reach a trusted field).
TEST_CASE("verify: flipping any byte of list, signature or key is refused", "[verify]") {
  Keys k = NewKeys();
  const std::string message = R"({"format":"factlens/1","list":{"id":"x"}})";
  const std::string sig = SignText(k.sec, message);
  const std::string pub = FormatPublicKey(k.pub);
  const size_t sig_comment_end = sig.find('\n');
  const size_t pub_comment_end = pub.find('\n');
  const size_t prefix = std::string("untrusted comment: ").size();
  int refused = 0, comment_flips = 0;

  for (size_t i = 0; i < message.size(); ++i) {
    std::string m = message;
    m[i] ^= 0x01;
    CHECK(VerifyText(pub, m, sig).kind() == ErrorKind::kSignature);
    ++refused;
  }
  for (size_t i = 0; i < sig.size(); ++i) {
    std::string s = sig;
    s[i] ^= 0x01;
    INFO("signature byte " << i << " ('" << sig[i] << "')");
    Status st = VerifyText(pub, message, s);
    if (i >= prefix && i < sig_comment_end) {
      CHECK(st.ok());
      ++comment_flips;
      continue;
    }
    REQUIRE_FALSE(st.ok());
    Signature parsed;
    bool parses = ParseSignature(s, &parsed).ok();
    // A different key id names another key; anything else is a bad signature.
    ErrorKind want =
        parses && parsed.key_id != k.pub.key_id ? ErrorKind::kKey : ErrorKind::kSignature;
    CHECK(st.kind() == want);
    ++refused;
  }
  for (size_t i = 0; i < pub.size(); ++i) {
    std::string p = pub;
    p[i] ^= 0x01;
    INFO("public key byte " << i);
    Status st = VerifyText(p, message, sig);
    if (i >= prefix && i < pub_comment_end) {
      CHECK(st.ok());
      ++comment_flips;
      continue;
    }
    REQUIRE_FALSE(st.ok());
    PublicKey parsed;
    bool parses = ParsePublicKey(p, &parsed).ok();
    ErrorKind want = !parses || parsed.key_id != k.pub.key_id ? ErrorKind::kKey
                                                              : ErrorKind::kSignature;
    CHECK(st.kind() == want);
    ++refused;
  }
  CHECK(refused > 300);
  CHECK(comment_flips > 40);
}

TEST_CASE("verify: content digest is BLAKE2b-256 in hex", "[verify]") {
  CHECK(ContentDigest("") ==
        "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
  CHECK(ContentDigest("a") != ContentDigest("b"));
}

TEST_CASE("verify: a rotation statement signed by the pinned key moves the pin",
          "[verify]") {
  Keys old_keys = NewKeys(), new_keys = NewKeys(), other = NewKeys();
  std::string statement =
      FormatRotation("demo", old_keys.pub, new_keys.pub, "2026-11-29T00:00:00Z");
  std::string sig = SignText(old_keys.sec, statement);
  KeyRotation r;
  REQUIRE(VerifyRotation(statement, sig, old_keys.pub, &r).ok());
  CHECK(r.list_id == "demo");
  CHECK(r.new_key.key == new_keys.pub.key);

  // Signed by someone else: not the pinned key.
  CHECK(VerifyRotation(statement, SignText(other.sec, statement), old_keys.pub, &r)
            .kind() == ErrorKind::kKey);
  // The new key signing its own promotion proves nothing.
  CHECK(VerifyRotation(statement, SignText(new_keys.sec, statement), old_keys.pub, &r)
            .kind() == ErrorKind::kKey);
  // Altered after signing.
  std::string altered = statement;
  altered.replace(altered.find("demo"), 4, "dema");
  CHECK(VerifyRotation(altered, sig, old_keys.pub, &r).kind() == ErrorKind::kSignature);
  // Signed by the pinned key but naming another old key.
  std::string wrong_old =
      FormatRotation("demo", other.pub, new_keys.pub, "2026-11-29T00:00:00Z");
  CHECK(VerifyRotation(wrong_old, SignText(old_keys.sec, wrong_old), old_keys.pub, &r)
            .kind() == ErrorKind::kKey);
  // Malformed statement, properly signed.
  std::string junk = "{\"format\":\"other\"}";
  CHECK(VerifyRotation(junk, SignText(old_keys.sec, junk), old_keys.pub, &r).kind() ==
        ErrorKind::kFormat);
}

}  // namespace
}  // namespace factlens
