// Copyright factlens authors. keygen, sign, verify and rotate: minisign's commands
// with minisign's flag letters and files, plus the list lifecycle checks.
#include "keys.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>

#include "factlens/engine.h"
#include "factlens/verify.h"
#include "io.h"

namespace factlens::cli {
namespace {

const char kKeygenHelp[] =
    "usage: factlens keygen [-W] [-f] -p PUBFILE -s SECFILE [--password-file FILE]\n"
    "\n"
    "Creates a key pair in minisign's format. The secret key is protected by a\n"
    "password read from the terminal (twice), or from --password-file; -W writes it\n"
    "unencrypted. Without a terminal and without -W or --password-file it stops\n"
    "rather than wait. Existing files are kept unless -f is given.\n";

const char kSignHelp[] =
    "usage: factlens sign -s SECFILE -m FILE... [-x SIGFILE] [-t TRUSTED_COMMENT]\n"
    "                     [-c UNTRUSTED_COMMENT] [-l] [--password-file FILE]\n"
    "\n"
    "Signs FILE into FILE.minisig (or SIGFILE), as `minisign -S` does: prehashed\n"
    "(BLAKE2b-512, \"ED\") by default, the legacy algorithm (\"Ed\") with -l. The "
    "default\n"
    "trusted comment is minisign's: timestamp, file name, and \"hashed\".\n";

const char kVerifyHelp[] =
    "usage: factlens verify (-p PUBFILE | -P PUBKEY) -m FILE [-x SIGFILE] [-q]\n"
    "                       [--rotation STATEMENT]... [--last-version N]\n"
    "                       [--last-digest HEX] [--now RFC3339]\n"
    "\n"
    "Verifies FILE against FILE.minisig (or SIGFILE) and the public key, as\n"
    "`minisign -V` does, and prints the trusted comment. If FILE is a factlens list it\n"
    "also checks its lifecycle: the list must parse, must not have expired, and its\n"
    "version must not be older than --last-version (nor equal with other content than\n"
    "--last-digest). --rotation gives key rotation statements (each with "
    "STATEMENT.minisig)\n"
    "leading from the given key to the list's new key.\n"
    "Exit status: 0 verified, 1 rejected (signature, key, rollback, expiry), 2 usage\n"
    "or input errors.\n";

const char kRotateHelp[] =
    "usage: factlens rotate -s OLD_SECFILE -p NEW_PUBFILE --list ID -o STATEMENT\n"
    "                       [--password-file FILE]\n"
    "\n"
    "Writes a key rotation statement moving list ID (or \"*\": all the publisher's "
    "lists)\n"
    "from the old key to the new one, and signs it with the old key into\n"
    "STATEMENT.minisig. Readers who pinned the old key accept lists signed by the new\n"
    "key when the statement comes with them (rules/FORMAT.md, \"Key rotation\").\n"
    "The same statement and signature are also written to STATEMENT.<OLD KEY ID> and\n"
    "its .minisig: publish every rotation's keyed copy beside the list (the latest\n"
    "also as STATEMENT), so readers pinned several keys back follow the chain.\n";

// Reads a password from the terminal without echo. Returns false if there is no
// terminal: no command ever waits on a pipe for a password.
bool ReadPasswordFromTerminal(const char* prompt, std::string* out) {
  int fd = open("/dev/tty", O_RDWR | O_NOCTTY);
  if (fd < 0) return false;
  termios old_attrs;
  bool have_attrs = tcgetattr(fd, &old_attrs) == 0;
  if (have_attrs) {
    termios quiet = old_attrs;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  if (write(fd, prompt, std::strlen(prompt)) < 0) {
    // The prompt is a courtesy; reading still works.
  }
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') line += c;
  if (have_attrs) tcsetattr(fd, TCSAFLUSH, &old_attrs);
  if (write(fd, "\n", 1) < 0) {
    // As above.
  }
  close(fd);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  *out = line;
  return true;
}

// Gets the password for a secret key: from --password-file, else the terminal.
int GetPassword(const std::string& password_file, bool confirm, std::string* out) {
  if (!password_file.empty()) {
    std::string text, error;
    if (!ReadFile(password_file, &text, &error)) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
    size_t nl = text.find_first_of("\r\n");
    *out = text.substr(0, nl);
    if (out->empty()) {
      std::cerr << password_file << ": error: the password file is empty\n";
      return kExitUsage;
    }
    return kExitOk;
  }
  if (!ReadPasswordFromTerminal("Password: ", out)) {
    std::cerr << "factlens: error: no terminal to ask for the password; use "
                 "--password-file FILE (or -W with keygen for an unencrypted key)\n";
    return kExitUsage;
  }
  if (confirm) {
    std::string again;
    ReadPasswordFromTerminal("Password (one more time): ", &again);
    if (again != *out) {
      std::cerr << "factlens: error: the passwords do not match\n";
      return kExitUsage;
    }
  }
  if (out->empty()) {
    std::cerr << "factlens: error: empty password; use -W for an unencrypted key\n";
    return kExitUsage;
  }
  return kExitOk;
}

int LoadSecretKey(const std::string& path, const std::string& password_file,
                  SecretKey* key) {
  std::string text, error;
  if (!ReadFile(path, &text, &error)) {
    std::cerr << error << "\n";
    return kExitUsage;
  }
  std::string password;
  if (SecretKeyIsEncrypted(text)) {
    int rc = GetPassword(password_file, false, &password);
    if (rc != kExitOk) return rc;
  }
  Status s = ParseSecretKey(text, password, key);
  if (!s.ok()) {
    std::cerr << path << ": error: " << s.message() << "\n";
    return kExitUsage;
  }
  return kExitOk;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

int ReadSecretKey(const std::string& path, const std::string& password_file,
                  SecretKey* key) {
  return LoadSecretKey(path, password_file, key);
}

int Keygen(const Args& args) {
  std::string pub, sec, password_file;
  bool unencrypted = false, force = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-p" || a == "-s" || a == "--password-file") {
      if (i + 1 >= args.size())
        return UsageError("keygen", a + " needs a value", kKeygenHelp);
      (a == "-p" ? pub : a == "-s" ? sec : password_file) = args[++i];
    } else if (a == "-W") {
      unencrypted = true;
    } else if (a == "-f") {
      force = true;
    } else if (a == "-h" || a == "--help") {
      std::cout << kKeygenHelp;
      return kExitOk;
    } else {
      return UsageError("keygen", "unknown argument " + a, kKeygenHelp);
    }
  }
  if (pub.empty() || sec.empty())
    return UsageError("keygen", "-p and -s are required", kKeygenHelp);
  if (!force) {
    for (const std::string& path : {pub, sec}) {
      if (access(path.c_str(), F_OK) == 0) {
        std::cerr << path << ": error: already exists; use -f to overwrite it\n";
        return kExitUsage;
      }
    }
  }
  std::string password;
  if (!unencrypted) {
    int rc = GetPassword(password_file, true, &password);
    if (rc != kExitOk) return rc;
  }
  PublicKey public_key;
  SecretKey secret_key;
  GenerateKeyPair(&public_key, &secret_key);
  std::string secret_text;
  Status s = FormatSecretKey(secret_key, password, &secret_text);
  if (!s.ok()) {
    std::cerr << "factlens keygen: error: " << s.message() << "\n";
    return kExitUsage;
  }
  std::string error;
  if (!WriteFileAtomic(sec, secret_text, 0600, &error) ||
      !WriteFileAtomic(pub, FormatPublicKey(public_key), 0644, &error)) {
    std::cerr << error << "\n";
    return kExitUsage;
  }
  std::cout << "The secret key was saved as " << sec << " - keep it secret!\n"
            << "The public key was saved as " << pub << " - that one can be public.\n\n"
            << "Files signed with this key pair can be verified with:\n\n"
            << "factlens verify -m <file> -P " << PublicKeyBase64(public_key) << "\n";
  return kExitOk;
}

int SignFiles(const Args& args) {
  std::string sec, sigfile, trusted, untrusted = "signature from minisign secret key",
                                     password_file;
  std::vector<std::string> files;
  bool legacy = false, have_trusted = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-s" || a == "-m" || a == "-x" || a == "-t" || a == "-c" ||
        a == "--password-file") {
      if (i + 1 >= args.size())
        return UsageError("sign", a + " needs a value", kSignHelp);
      const std::string& v = args[++i];
      if (a == "-s") sec = v;
      if (a == "-m") files.push_back(v);
      if (a == "-x") sigfile = v;
      if (a == "-t") trusted = v, have_trusted = true;
      if (a == "-c") untrusted = v;
      if (a == "--password-file") password_file = v;
    } else if (a == "-l") {
      legacy = true;
    } else if (a == "-h" || a == "--help") {
      std::cout << kSignHelp;
      return kExitOk;
    } else {
      return UsageError("sign", "unknown argument " + a, kSignHelp);
    }
  }
  if (sec.empty() || files.empty())
    return UsageError("sign", "-s and -m are required", kSignHelp);
  if (!sigfile.empty() && files.size() > 1) {
    return UsageError("sign", "-x names one signature file; sign one file at a time",
                      kSignHelp);
  }
  SecretKey key;
  int rc = LoadSecretKey(sec, password_file, &key);
  if (rc != kExitOk) return rc;
  for (const std::string& file : files) {
    std::string message, error;
    if (!ReadFile(file, &message, &error)) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
    std::string comment = trusted;
    if (!have_trusted) {
      comment = "timestamp:" + std::to_string(std::time(nullptr)) +
                "\tfile:" + BaseName(file) + (legacy ? "" : "\thashed");
    }
    Signature signature;
    Status s = Sign(key, message,
                    legacy ? SignatureAlgorithm::kLegacy : SignatureAlgorithm::kPrehashed,
                    comment, untrusted, &signature);
    if (!s.ok()) {
      std::cerr << "factlens sign: error: " << s.message() << "\n";
      return kExitUsage;
    }
    std::string out = sigfile.empty() ? file + ".minisig" : sigfile;
    if (!WriteFileAtomic(out, FormatSignature(signature), 0644, &error)) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
  }
  return kExitOk;
}

int VerifyFile(const Args& args) {
  std::string pubfile, pubkey, file, sigfile, last_digest, now;
  std::vector<std::string> rotation_files;
  std::optional<int64_t> last_version;
  bool quiet = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-p" || a == "-P" || a == "-m" || a == "-x" || a == "--rotation" ||
        a == "--last-version" || a == "--last-digest" || a == "--now") {
      if (i + 1 >= args.size())
        return UsageError("verify", a + " needs a value", kVerifyHelp);
      const std::string& v = args[++i];
      if (a == "-p") pubfile = v;
      if (a == "-P") pubkey = v;
      if (a == "-m") file = v;
      if (a == "-x") sigfile = v;
      if (a == "--rotation") rotation_files.push_back(v);
      if (a == "--last-digest") last_digest = v;
      if (a == "--now") now = v;
      if (a == "--last-version") {
        char* end = nullptr;
        long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || n < 0) {
          return UsageError("verify", "--last-version needs a non-negative integer",
                            kVerifyHelp);
        }
        last_version = n;
      }
    } else if (a == "-q") {
      quiet = true;
    } else if (a == "-h" || a == "--help") {
      std::cout << kVerifyHelp;
      return kExitOk;
    } else {
      return UsageError("verify", "unknown argument " + a, kVerifyHelp);
    }
  }
  if (file.empty() || (pubfile.empty() == pubkey.empty())) {
    return UsageError("verify", "-m and one of -p or -P are required", kVerifyHelp);
  }
  std::string message, signature_text, error;
  if (sigfile.empty()) sigfile = file + ".minisig";
  if (!pubfile.empty() && !ReadFile(pubfile, &pubkey, &error)) {
    std::cerr << error << "\n";
    return kExitUsage;
  }
  if (!ReadFile(file, &message, &error) || !ReadFile(sigfile, &signature_text, &error)) {
    std::cerr << error << "\n";
    return kExitUsage;
  }
  LoadOptions options;
  options.public_key = pubkey;
  options.signature = signature_text;
  options.last_version = last_version;
  options.last_digest = last_digest;
  if (!now.empty()) {
    int64_t t;
    if (!ParseRfc3339(now, &t))
      return UsageError("verify", "--now needs an RFC 3339 time", kVerifyHelp);
    options.now_unix = t;
  }
  for (const std::string& r : rotation_files) {
    RotationProof proof;
    if (!ReadFile(r, &proof.statement, &error) ||
        !ReadFile(r + ".minisig", &proof.signature, &error)) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
    options.rotations.push_back(std::move(proof));
  }

  // A factlens list gets the whole lifecycle through the engine; any other file
  // gets minisign's check.
  bool is_list = message.find("\"factlens/1\"") != std::string::npos;
  if (is_list) {
    Engine engine;
    LoadedListInfo info;
    Status s = engine.LoadList(message, options, &info);
    if (!s.ok()) {
      std::cerr << LocatedError(file, s) << "\n";
      return ExitCodeForLoad(s);
    }
    if (!quiet) {
      std::cout << "Signature and comment signature verified\n"
                << "Trusted comment: " << info.trusted_comment << "\n"
                << "List " << info.info.id << " version " << info.info.version << " ("
                << info.rule_count << " rules, expires " << info.info.expires
                << "): accepted\n"
                << "Digest: " << info.digest << "\n";
      if (info.key_rotated)
        std::cout << "Key rotated: pin the new key " << info.public_key << "\n";
    }
    return kExitOk;
  }
  if (!options.rotations.empty()) {
    return UsageError("verify", "--rotation applies to factlens lists only", kVerifyHelp);
  }
  PublicKey key;
  Signature signature;
  Status s = ParsePublicKey(pubkey, &key);
  if (s.ok()) s = ParseSignature(signature_text, &signature);
  if (s.ok()) s = Verify(key, message, signature);
  if (!s.ok()) {
    std::cerr << file << ": error: " << s.message() << " [" << ErrorKindName(s.kind())
              << "]\n";
    return s.kind() == ErrorKind::kLimit ? kExitUsage : kExitFinding;
  }
  if (!quiet) {
    std::cout << "Signature and comment signature verified\n"
              << "Trusted comment: " << signature.trusted_comment << "\n";
  }
  return kExitOk;
}

int Rotate(const Args& args) {
  std::string sec, pub, list_id, out, password_file;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-s" || a == "-p" || a == "--list" || a == "-o" || a == "--password-file") {
      if (i + 1 >= args.size())
        return UsageError("rotate", a + " needs a value", kRotateHelp);
      const std::string& v = args[++i];
      if (a == "-s") sec = v;
      if (a == "-p") pub = v;
      if (a == "--list") list_id = v;
      if (a == "-o") out = v;
      if (a == "--password-file") password_file = v;
    } else if (a == "-h" || a == "--help") {
      std::cout << kRotateHelp;
      return kExitOk;
    } else {
      return UsageError("rotate", "unknown argument " + a, kRotateHelp);
    }
  }
  if (sec.empty() || pub.empty() || list_id.empty() || out.empty()) {
    return UsageError("rotate", "-s, -p, --list and -o are required", kRotateHelp);
  }
  SecretKey old_secret;
  int rc = LoadSecretKey(sec, password_file, &old_secret);
  if (rc != kExitOk) return rc;
  std::string pub_text, error;
  if (!ReadFile(pub, &pub_text, &error)) {
    std::cerr << error << "\n";
    return kExitUsage;
  }
  PublicKey new_key;
  Status s = ParsePublicKey(pub_text, &new_key);
  if (!s.ok()) {
    std::cerr << pub << ": error: " << s.message() << "\n";
    return kExitUsage;
  }
  char issued[32];
  std::time_t t = std::time(nullptr);
  std::strftime(issued, sizeof issued, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  std::string statement =
      FormatRotation(list_id, PublicKeyOf(old_secret), new_key, issued);
  Signature signature;
  s = Sign(
      old_secret, statement, SignatureAlgorithm::kPrehashed,
      "factlens key rotation\tlist:" + list_id + "\tnew_key:" + KeyIdHex(new_key.key_id),
      "signature from minisign secret key", &signature);
  // The statement under its own name too, STATEMENT.<old key id>: readers pinned to
  // an older key walk these from their pin, one rotation at a time.
  const std::string keyed = out + "." + KeyIdHex(old_secret.key_id);
  const std::string signature_text = FormatSignature(signature);
  if (!s.ok() || !WriteFileAtomic(out, statement, 0644, &error) ||
      !WriteFileAtomic(out + ".minisig", signature_text, 0644, &error) ||
      !WriteFileAtomic(keyed, statement, 0644, &error) ||
      !WriteFileAtomic(keyed + ".minisig", signature_text, 0644, &error)) {
    std::cerr << (s.ok() ? error : s.message()) << "\n";
    return kExitUsage;
  }
  std::cout << "Key rotation statement written to " << out << " and " << keyed
            << ", each signed into .minisig beside it\n";
  return kExitOk;
}

const char* KeygenHelp() { return kKeygenHelp; }
const char* SignHelp() { return kSignHelp; }
const char* VerifyHelp() { return kVerifyHelp; }
const char* RotateHelp() { return kRotateHelp; }

}  // namespace factlens::cli
