// Copyright factlens authors. factlens publish: lint, test, bump the version, set
// issued/expires, sign, and write list + signature + index.json as static files.
//
// Readers fetch the list and its signature separately, so both must change
// together: every new file is written completely under a temporary name first;
// only then are they renamed over the old ones, and if a rename fails the ones
// already replaced are put back from hard-link backups. A failure at any step
// leaves the last good files as they were.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>

#include "factlens/lint.h"
#include "factlens/list.h"
#include "factlens/verify.h"
#include "keys.h"
#include "nlohmann/json.hpp"
#include "publisher.h"

namespace factlens::cli {
namespace {

using ojson = nlohmann::ordered_json;

const char kPublishHelp[] =
    "usage: factlens publish LIST -s SECFILE -o DIR --base-url URL\n"
    "                        [--expires-in DAYS] [--password-file FILE] [--now RFC3339]\n"
    "                        [--corpus FILE] [--max-share PERCENT]\n"
    "\n"
    "Publishes LIST into DIR, ready to be served as static files:\n"
    "  1. sets list.version to one more than the larger of LIST's version and the\n"
    "     version already in DIR, list.issued to now and list.expires to now + DAYS\n"
    "     (default 30);\n"
    "  2. lints the result (as factlens lint; errors stop here) and runs its examples\n"
    "     (as factlens test; a failure stops here);\n"
    "  3. signs it with SECFILE (minisign format, as factlens sign; an encrypted key's\n"
    "     password from --password-file or the terminal);\n"
    "  4. writes DIR/ID.json, DIR/ID.json.minisig and DIR/index.json (which names\n"
    "     each list of DIR: id, name, version, url, signature, issued, expires, rules,\n"
    "     keyId, publicKey, digest). URLs are BASE-URL/ID.json.\n"
    "LIST itself is not changed. All files are written under temporary names and\n"
    "renamed only when all are complete; if anything fails, the files already in\n"
    "DIR are left as they were.\n"
    "\n"
    "Exit status: 0 published, 1 lint errors or failed examples (nothing written),\n"
    "2 usage or input errors (nothing written).\n";

std::string Rfc3339(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&tt));
  return buf;
}

// Writes all `files` (path, content) or none: see the file comment.
bool WriteAllOrNothing(const std::vector<std::pair<std::string, std::string>>& files,
                       std::string* error) {
  std::string suffix = ".publish-" + std::to_string(getpid());
  std::vector<std::string> temps;
  auto cleanup = [&] {
    for (const std::string& t : temps) unlink(t.c_str());
  };
  for (const auto& [path, content] : files) {
    std::string tmp = path + suffix + ".new";
    // WriteFileAtomic writes and fsyncs tmp under its own temporary name first.
    if (!WriteFileAtomic(tmp, content, 0644, error)) {
      cleanup();
      return false;
    }
    temps.push_back(tmp);
  }
  std::vector<std::string> backups(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    struct stat st;
    if (lstat(files[i].first.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      backups[i] = files[i].first + suffix + ".old";
      if (link(files[i].first.c_str(), backups[i].c_str()) != 0) {
        *error =
            files[i].first + ": error: cannot keep a backup: " + std::strerror(errno);
        for (size_t k = 0; k < i; ++k) {
          if (!backups[k].empty()) unlink(backups[k].c_str());
        }
        cleanup();
        return false;
      }
    }
  }
  size_t done = 0;
  for (; done < files.size(); ++done) {
    if (rename(temps[done].c_str(), files[done].first.c_str()) != 0) {
      *error = files[done].first +
               ": error: cannot replace the file: " + std::strerror(errno) +
               "; the previous files were restored";
      break;
    }
  }
  if (done < files.size()) {
    for (size_t k = 0; k < done; ++k) {  // put back what was replaced
      if (!backups[k].empty()) {
        rename(backups[k].c_str(), files[k].first.c_str());
        backups[k].clear();
      } else {
        unlink(files[k].first.c_str());
      }
    }
    for (size_t k = done; k < temps.size(); ++k) unlink(temps[k].c_str());
    for (const std::string& b : backups) {
      if (!b.empty()) unlink(b.c_str());
    }
    return false;
  }
  for (const std::string& b : backups) {
    if (!b.empty()) unlink(b.c_str());
  }
  return true;
}

}  // namespace

const char* PublishHelp() { return kPublishHelp; }

int Publish(const Args& args) {
  std::string list_file, sec, dir, base_url, password_file, now_text, corpus;
  long days = 30;
  LintOptions lint;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-s" || a == "-o" || a == "--base-url" || a == "--expires-in" ||
        a == "--password-file" || a == "--now" || a == "--corpus" || a == "--max-share") {
      if (i + 1 >= args.size())
        return UsageError("publish", a + " needs a value", kPublishHelp);
      const std::string& v = args[++i];
      char* end = nullptr;
      if (a == "-s") sec = v;
      if (a == "-o") dir = v;
      if (a == "--base-url") base_url = v;
      if (a == "--password-file") password_file = v;
      if (a == "--now") now_text = v;
      if (a == "--corpus") corpus = v;
      if (a == "--expires-in") {
        days = std::strtol(v.c_str(), &end, 10);
        if (*end != '\0' || days < 1 || days > 3660)
          return UsageError("publish", "--expires-in needs 1 to 3660 days", kPublishHelp);
      }
      if (a == "--max-share") {
        double pct = std::strtod(v.c_str(), &end);
        if (*end != '\0' || pct < 0 || pct > 100)
          return UsageError("publish", "--max-share needs a percentage", kPublishHelp);
        lint.max_corpus_share = pct / 100;
      }
    } else if (a == "-h" || a == "--help") {
      std::cout << kPublishHelp;
      return kExitOk;
    } else if (a.size() > 1 && a[0] == '-') {
      return UsageError("publish", "unknown option " + a, kPublishHelp);
    } else if (list_file.empty()) {
      list_file = a;
    } else {
      return UsageError("publish", "one LIST at a time", kPublishHelp);
    }
  }
  if (list_file.empty() || sec.empty() || dir.empty() || base_url.empty()) {
    return UsageError("publish", "LIST, -s, -o and --base-url are required",
                      kPublishHelp);
  }
  if (base_url.rfind("https://", 0) != 0) {
    return UsageError("publish", "--base-url must be https: readers only follow https",
                      kPublishHelp);
  }
  while (!base_url.empty() && base_url.back() == '/') base_url.pop_back();
  int64_t now = static_cast<int64_t>(std::time(nullptr));
  if (!now_text.empty() && !ParseRfc3339(now_text, &now)) {
    return UsageError("publish", "--now needs an RFC 3339 time", kPublishHelp);
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::cerr << dir << ": error: not a directory\n";
    return kExitUsage;
  }
  std::string text, error;
  if (!ReadFile(list_file, &text, &error)) {
    std::cerr << error << "\n";
    return kExitUsage;
  }
  RuleList source;
  Status s = ParseList(text, ParseLimits(), &source);
  if (!s.ok()) {
    std::cerr << LocatedError(list_file, s) << "\n";
    return kExitFinding;
  }
  const std::string id = source.info.id;
  const std::string out_list = dir + "/" + id + ".json";
  int64_t version = source.info.version;
  std::string published;
  if (ReadFile(out_list, &published, &error)) {
    RuleList old;
    if (ParseList(published, ParseLimits(), &old).ok()) {
      version = std::max(version, old.info.version);
    }
  }
  ++version;

  // The list as published: the author's file with new version and dates.
  ojson doc = ojson::parse(text, nullptr, false);
  doc["list"]["version"] = version;
  doc["list"]["issued"] = Rfc3339(now);
  doc["list"]["expires"] = Rfc3339(now + days * 86400);
  std::string out_text = doc.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";

  lint.now_unix = now;
  if (!corpus.empty()) {
    std::string corpus_text;
    if (!ReadFile(corpus, &corpus_text, &error)) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
    size_t start = 0;
    while (start < corpus_text.size()) {
      size_t end = corpus_text.find('\n', start);
      if (end == std::string::npos) end = corpus_text.size();
      std::string line = corpus_text.substr(start, end - start);
      if (line.find_first_not_of(" \t\r") != std::string::npos)
        lint.corpus.push_back(line);
      start = end + 1;
    }
  }
  LintReport report = LintList(out_text, lint);
  for (const LintFinding& f : report.findings) {
    std::cerr << FormatFinding(list_file + " (as published)", f) << "\n";
  }
  if (report.errors > 0) {
    std::cerr << "factlens publish: " << report.errors
              << " lint error(s); nothing was published\n";
    return kExitFinding;
  }
  ExamplesReport examples;
  s = RunExamples(out_text, &examples);
  if (!s.ok()) {
    std::cerr << LocatedError(list_file, s) << "\n";
    return kExitFinding;
  }
  for (const ExampleResult& r : examples.results) {
    if (r.passed || r.skipped) continue;
    std::cerr << list_file << ": FAIL rule " << r.rule_id << ": "
              << (r.should_match ? "must match" : "must not match") << ": \"" << r.text
              << "\": " << r.explanation << "\n";
  }
  if (examples.failed > 0) {
    std::cerr << "factlens publish: " << examples.failed
              << " example(s) failed; nothing was published\n";
    return kExitFinding;
  }

  SecretKey key;
  int rc = ReadSecretKey(sec, password_file, &key);
  if (rc != kExitOk) {
    std::cerr << "factlens publish: nothing was published\n";
    return rc;
  }
  Signature signature;
  s = Sign(key, out_text, SignatureAlgorithm::kPrehashed,
           "timestamp:" + std::to_string(now) + "\tfile:" + id +
               ".json\thashed\tlist:" + id + "\tversion:" + std::to_string(version),
           "signature from minisign secret key", &signature);
  PublicKey public_key = PublicKeyOf(key);
  if (s.ok()) s = Verify(public_key, out_text, signature);
  if (!s.ok()) {
    std::cerr << "factlens publish: error: signing failed: " << s.message()
              << "; nothing was published\n";
    return kExitUsage;
  }

  // index.json: this list's entry, replacing its old one, others kept.
  ojson index = ojson{{"format", "factlens-index/1"}, {"lists", ojson::array()}};
  std::string index_text;
  if (ReadFile(dir + "/index.json", &index_text, &error)) {
    ojson old = ojson::parse(index_text, nullptr, false);
    if (old.is_object() && old.contains("lists") && old["lists"].is_array()) {
      for (const ojson& e : old["lists"]) {
        if (e.is_object() && e.contains("id") && e["id"] != id)
          index["lists"].push_back(e);
      }
    }
  }
  index["lists"].push_back({{"id", id},
                            {"name", source.info.name},
                            {"publisher", source.info.publisher_name},
                            {"version", version},
                            {"url", base_url + "/" + id + ".json"},
                            {"signature", base_url + "/" + id + ".json.minisig"},
                            {"issued", Rfc3339(now)},
                            {"expires", Rfc3339(now + days * 86400)},
                            {"rules", source.rules.size()},
                            {"keyId", KeyIdHex(public_key.key_id)},
                            {"publicKey", PublicKeyBase64(public_key)},
                            {"digest", ContentDigest(out_text)}});
  std::string new_index = index.dump(2) + "\n";
  if (!WriteAllOrNothing({{out_list, out_text},
                          {out_list + ".minisig", FormatSignature(signature)},
                          {dir + "/index.json", new_index}},
                         &error)) {
    std::cerr << error << "\nfactlens publish: nothing was published\n";
    return kExitUsage;
  }
  std::cout << "Published " << id << " version " << version << " (" << source.rules.size()
            << " rules, " << examples.passed << " examples passed"
            << (examples.skipped ? ", " + std::to_string(examples.skipped) + " skipped"
                                 : "")
            << ", expires " << Rfc3339(now + days * 86400) << ")\n"
            << "  " << out_list << "\n  " << out_list << ".minisig\n  " << dir
            << "/index.json\n"
            << "Readers pin key " << KeyIdHex(public_key.key_id) << " and subscribe to "
            << base_url << "/" << id << ".json\n";
  return kExitOk;
}

}  // namespace factlens::cli
