// Copyright factlens authors. The factlens command-line tool.
//
// Exit codes (DESIGN.md): 0 success, 1 a finding (bad signature, lint error, failed
// example), 2 usage or input errors. Errors go to stderr as
// `file:line:col: error: message` where a location exists.
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "eval.h"
#include "factlens/engine.h"
#include "factlens/normalize.h"
#include "io.h"
#include "keys.h"
#include "nlohmann/json.hpp"
#include "progress.h"
#include "publisher.h"

namespace factlens::cli {
namespace {

using nlohmann::json;

const char kUsage[] =
    "usage: factlens <command> [options]\n"
    "\n"
    "commands:\n"
    "  bench    time the engine on a list and posts (npm run bench)\n"
    "  check    check posts against a rule list, print verdicts\n"
    "  import   ClaimReview / Fact Check Tools fact-checks in, a rule list out\n"
    "  lint     check a rule list for errors before it ships\n"
    "  test     run every rule's examples through the engine\n"
    "  publish  lint, test, version, sign and write a list for static hosting\n"
    "  keygen   create a minisign-compatible key pair\n"
    "  sign     sign a file (a rule list) as minisign -S does\n"
    "  verify   verify a signed file as minisign -V does, and a list's lifecycle\n"
    "  rotate   announce a publisher's new key, signed by the old one\n"
    "  eval     claim retrieval figures on CLEF CheckThat! files (MAP@k, recall)\n"
    "  compile  write a list's compiled form (restored without parsing)\n"
    "  help     show help for a command (factlens help check)\n"
    "  version  print the version\n";

const char kCheckHelp[] =
    "usage: factlens check --list FILE [-p PUBFILE | -P PUBKEY | --allow-unsigned]\n"
    "                      [--json] [--region CC] [--context K=V,...] [--explain]\n"
    "                      [--policy JSON] [POSTS...]\n"
    "\n"
    "Reads posts from the POSTS files (or standard input, or '-'): one post per line,\n"
    "or JSON Lines with a \"text\" field (and optional \"id\", \"region\", "
    "\"language\").\n"
    "Prints one line per post that matched; with --json, one JSON verdict per post:\n"
    "{\"source\",\"line\",\"id\",\"action\",\"rating\",\"severity\",\"score\",\"stance\","
    "\n"
    "\"matches\":[{\"listId\",\"ruleId\",\"kind\",\"score\",\"spans\",\"claim\","
    "\"review\"}]}\n"
    "(spans are UTF-16 [start, end) indices, as in the JavaScript API).\n"
    "\n"
    "  --list FILE        the rule list (factlens/1 JSON); repeat for several lists;\n"
    "                     its signature is FILE.minisig\n"
    "  -p PUBFILE         the publisher's public key (minisign .pub file)\n"
    "  -P PUBKEY          the publisher's public key as its base64 line\n"
    "  --allow-unsigned   accept lists without a signature (drafts only)\n"
    "  --json             JSON Lines output\n"
    "  --region CC        the reader's region (ISO 3166-1 alpha-2), for regional rules\n"
    "  --context K=V,...  the reading context for every post: region=LK,language=si\n"
    "                     (a JSON line's own \"region\"/\"language\" win)\n"
    "  --explain          say why: every match with its rule, kind, score, action and\n"
    "                     the matched text; with --json, adds \"normalized\" (the text\n"
    "                     rules see) and each match's \"matchedText\"\n"
    "  --policy JSON      policy overrides, e.g. '{\"ratings\":{\"satire\":\"none\"}}'\n"
    "\n"
    "A progress bar is drawn on stderr when stderr is a terminal (FACTLENS_PROGRESS=0\n"
    "turns it off).\n"
    "\n"
    "Exit status: 0 when all posts were checked, 1 when a list's signature is missing\n"
    "or bad, 2 on usage or input errors.\n";

int Check(const Args& args) {
  std::vector<std::string> lists, inputs;
  bool allow_unsigned = false, as_json = false, explain = false;
  std::string region, language, policy_json, public_key, public_key_file;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= args.size()) {
        std::cerr << "factlens check: " << a << " needs a value\n";
        return false;
      }
      *out = args[++i];
      return true;
    };
    std::string v;
    if (a == "--list") {
      if (!value(&v)) return kExitUsage;
      lists.push_back(v);
    } else if (a == "-p") {
      if (!value(&public_key_file)) return kExitUsage;
    } else if (a == "-P") {
      if (!value(&public_key)) return kExitUsage;
    } else if (a == "--allow-unsigned") {
      allow_unsigned = true;
    } else if (a == "--json") {
      as_json = true;
    } else if (a == "--region") {
      if (!value(&region)) return kExitUsage;
    } else if (a == "--policy") {
      if (!value(&policy_json)) return kExitUsage;
    } else if (a == "--explain") {
      explain = true;
    } else if (a == "--context") {
      if (!value(&v)) return kExitUsage;
      // region=LK,language=si
      std::stringstream pairs(v);
      std::string pair;
      while (std::getline(pairs, pair, ',')) {
        size_t eq = pair.find('=');
        std::string k = pair.substr(0, eq),
                    val = eq == std::string::npos ? "" : pair.substr(eq + 1);
        if (k == "region" && !val.empty()) {
          region = val;
        } else if (k == "language" && !val.empty()) {
          language = val;
        } else {
          return UsageError(
              "check", "--context: \"" + pair + "\" is not region=CC or language=TAG",
              kCheckHelp);
        }
      }
    } else if (a == "-h" || a == "--help") {
      std::cout << kCheckHelp;
      return kExitOk;
    } else if (a.size() > 1 && a[0] == '-') {
      std::cerr << "factlens check: unknown option " << a << "\n" << kCheckHelp;
      return kExitUsage;
    } else {
      inputs.push_back(a);
    }
  }
  if (lists.empty()) {
    std::cerr << "factlens check: --list FILE is required\n" << kCheckHelp;
    return kExitUsage;
  }
  if (!public_key_file.empty()) {
    std::string error;
    if (!ReadFile(public_key_file, &public_key, &error)) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
  }
  Engine engine;
  if (!policy_json.empty()) {
    Policy policy = DefaultPolicy();
    Status s = ParsePolicyJson(policy_json, &policy);
    if (!s.ok()) {
      std::cerr << "--policy: error: " << s.message() << "\n";
      return kExitUsage;
    }
    engine.SetPolicy(policy);
  }
  for (const std::string& path : lists) {
    std::string text, error;
    if (!ReadFile(path, &text, &error)) {
      std::cerr << error << "\n";
      return kExitUsage;
    }
    LoadOptions options;
    options.allow_unsigned = allow_unsigned;
    if (!public_key.empty()) {
      options.public_key = public_key;
      if (!ReadFile(path + ".minisig", &options.signature, &error)) {
        std::cerr << error << "\n";
        return kExitFinding;
      }
    }
    Status s = engine.LoadList(text, options, nullptr);
    if (!s.ok()) {
      std::cerr << LocatedError(path, s) << "\n";
      return ExitCodeForLoad(s);
    }
  }
  if (inputs.empty()) inputs.push_back("-");

  size_t checked = 0, counts[4] = {0, 0, 0, 0};
  Progress progress(StderrIsTerminal());
  for (const std::string& input : inputs) {
    std::ifstream file;
    std::istream* in = &std::cin;
    if (input != "-") {
      file.open(input, std::ios::binary);
      if (!file) {
        std::cerr << input << ": error: cannot read file: " << std::strerror(errno)
                  << "\n";
        return kExitUsage;
      }
      in = &file;
    }
    const std::string source = input == "-" ? "<stdin>" : input;
    struct stat st;
    progress.Begin(source,
                   input != "-" && stat(input.c_str(), &st) == 0 ? st.st_size : 0);
    uint64_t bytes = 0;
    std::string line;
    for (size_t number = 1; std::getline(*in, line); ++number) {
      bytes += line.size() + 1;
      progress.Update(bytes, checked);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      CheckContext context{region, language};
      std::string text = line;
      json id;
      if (line[0] == '{') {
        json j = json::parse(line, nullptr, false);
        auto t = j.is_object() ? j.find("text") : j.end();
        if (!j.is_object() || t == j.end() || !t->is_string()) {
          std::cerr << source << ":" << number
                    << ":1: error: a JSON line needs a string field \"text\"\n";
          return kExitUsage;
        }
        text = t->get<std::string>();
        if (j.contains("id")) id = j["id"];
        if (j.contains("region") && j["region"].is_string()) context.region = j["region"];
        if (j.contains("language") && j["language"].is_string()) {
          context.language = j["language"];
        }
      }
      Verdict verdict = engine.Check(text, context);
      ++checked;
      ++counts[static_cast<int>(verdict.action)];
      if (as_json) {
        json out = json::parse(VerdictToJson(verdict, text));
        json row = {{"source", source}, {"line", number}};
        if (!id.is_null()) row["id"] = id;
        row.update(out);
        if (explain) {
          row["normalized"] = NormalizeToString(text);
          for (size_t m = 0; m < verdict.matches.size() && m < row["matches"].size();
               ++m) {
            json texts = json::array();
            for (const ByteRange& r : verdict.matches[m].spans) {
              texts.push_back(text.substr(r.begin, r.end - r.begin));
            }
            row["matches"][m]["matchedText"] = texts;
          }
        }
        std::cout << row.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
      } else if (!verdict.matches.empty()) {
        const ExplainedMatch& top = verdict.matches.front();
        std::cout << source << ":" << number << ": " << ActionName(verdict.action) << ": "
                  << RatingName(top.rule->rating) << "/"
                  << SeverityName(top.rule->severity) << " rule " << top.list_id << "/"
                  << top.rule->id << " (" << MatchKindName(top.kind) << ", score "
                  << top.score << "): " << top.rule->claim << "\n";
        if (explain) {
          for (const ExplainedMatch& m : verdict.matches) {
            std::cout << "  " << ActionName(m.action) << " <- rule " << m.list_id << "/"
                      << m.rule->id << " (" << RatingName(m.rule->rating) << "/"
                      << SeverityName(m.rule->severity) << ", " << MatchKindName(m.kind)
                      << ", score " << m.score << ")";
            for (const ByteRange& r : m.spans) {
              std::cout << " [" << r.begin << "," << r.end << ") \""
                        << text.substr(r.begin, r.end - r.begin) << "\"";
            }
            std::cout << "; review " << m.rule->review.url << "\n";
          }
        }
      }
    }
  }
  progress.Finish();
  std::cerr << "factlens check: " << checked << " posts: " << counts[1] << " labelled, "
            << counts[2] << " demoted, " << counts[3] << " hidden\n";
  return kExitOk;
}

struct Command {
  const char* name;
  int (*run)(const Args&);
  const char* (*help)();
};

const char* CheckHelp() { return kCheckHelp; }

const Command kCommands[] = {
    {"check", Check, CheckHelp},       {"keygen", Keygen, KeygenHelp},
    {"sign", SignFiles, SignHelp},     {"verify", VerifyFile, VerifyHelp},
    {"rotate", Rotate, RotateHelp},    {"import", Import, ImportHelp},
    {"lint", Lint, LintHelp},          {"test", Test, TestHelp},
    {"publish", Publish, PublishHelp}, {"eval", Eval, EvalHelp},
    {"compile", Compile, CompileHelp}, {"bench", Bench, BenchHelp},
};

int Main(int argc, char** argv) {
  Args args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  std::string command = args[0];
  args.erase(args.begin());
  for (const Command& c : kCommands) {
    if (command == c.name) return c.run(args);
  }
  if (command == "help" || command == "-h" || command == "--help") {
    for (const Command& c : kCommands) {
      if (!args.empty() && args[0] == c.name) {
        std::cout << c.help();
        return kExitOk;
      }
    }
    std::cout << kUsage;
    return kExitOk;
  }
  if (command == "version" || command == "--version") {
    std::cout << "factlens 0.1.0 (list format factlens/1)\n";
    return kExitOk;
  }
  std::cerr << "factlens: unknown command \"" << command << "\"\n" << kUsage;
  return kExitUsage;
}

}  // namespace
}  // namespace factlens::cli

int main(int argc, char** argv) { return factlens::cli::Main(argc, argv); }
