// Copyright factlens authors. `factlens bench`: times the engine natively on a list
// and posts, for scripts/bench.mjs to set beside the wasm build and the naive
// JavaScript baseline. Prints one JSON object; figures are measured, not judged.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "factlens/engine.h"
#include "io.h"
#include "nlohmann/json.hpp"

namespace factlens {
namespace cli {

namespace {
const char kBenchHelp[] =
    "usage: factlens bench --list FILE --posts FILE [--no-prefilter]\n"
    "\n"
    "Loads the list (unsigned drafts allowed: benchmarks use synthetic lists) from\n"
    "its text, exports and restores its compiled form, then checks every post (JSON\n"
    "Lines with a \"text\" field) and prints one JSON object: loadTextMs,\n"
    "exportMs, loadCompiledMs, compiledBytes, posts, bytes, checkMs, mbPerS,\n"
    "medianUs, p99Us, matchedPosts (the first pass over the posts), and warm:\n"
    "the same four figures for a second pass. Used by `npm run bench`.\n";
}  // namespace

const char* BenchHelp() { return kBenchHelp; }

namespace {
double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}
}  // namespace

int Bench(const std::vector<std::string>& args) {
  std::string list_path, posts_path;
  bool prefilter = true;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--list" && i + 1 < args.size()) {
      list_path = args[++i];
    } else if (args[i] == "--posts" && i + 1 < args.size()) {
      posts_path = args[++i];
    } else if (args[i] == "--no-prefilter") {
      prefilter = false;
    } else if (args[i] == "-h" || args[i] == "--help") {
      std::cout << kBenchHelp;
      return 0;
    } else {
      std::cerr << "factlens bench: unexpected argument " << args[i] << "\n"
                << kBenchHelp;
      return 2;
    }
  }
  if (list_path.empty() || posts_path.empty()) {
    std::cerr << "factlens bench: --list and --posts are required\n" << kBenchHelp;
    return 2;
  }
  std::string text, posts_text, error;
  if (!ReadFile(list_path, &text, &error) || !ReadFile(posts_path, &posts_text, &error)) {
    std::cerr << error << "\n";
    return 2;
  }
  std::vector<std::string> posts;
  std::istringstream lines(posts_text);
  std::string line;
  for (size_t number = 1; std::getline(lines, line); ++number) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    auto t = j.is_object() ? j.find("text") : j.end();
    if (!j.is_object() || t == j.end() || !t->is_string()) {
      std::cerr << posts_path << ":" << number << ":1: error: need {\"text\": ...}\n";
      return 2;
    }
    posts.push_back(t->get<std::string>());
  }

  LoadOptions options;
  options.allow_unsigned = true;
  options.use_prefilter = prefilter;
  using Clock = std::chrono::steady_clock;
  Engine engine;
  LoadedListInfo info;
  auto t0 = Clock::now();
  Status s = engine.LoadList(text, options, &info);
  double load_text_ms = Ms(Clock::now() - t0);
  if (!s.ok()) {
    std::cerr << list_path << ": error: " << s.message() << "\n";
    return 2;
  }
  std::string blob;
  t0 = Clock::now();
  s = engine.ExportCompiled(info.info.id, &blob);
  double export_ms = Ms(Clock::now() - t0);
  Engine restored;
  t0 = Clock::now();
  if (s.ok()) s = restored.LoadCompiled(blob, options, nullptr);
  double load_compiled_ms = Ms(Clock::now() - t0);
  if (!s.ok()) {
    std::cerr << "compiled form: error: " << s.message() << "\n";
    return 2;
  }

  // Two passes over the posts: the first meets a cold engine (each pattern's RE2
  // program is compiled on its first need), the second a warm one.
  size_t bytes = 0, matched = 0;
  auto pass = [&](bool count) {
    std::vector<double> times;
    auto start = Clock::now();
    for (const std::string& post : posts) {
      auto p0 = Clock::now();
      Verdict v = restored.Check(post, CheckContext());
      std::string json = VerdictToJson(v, post);  // as the JS API pays for it
      times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - p0).count());
      if (count) {
        bytes += post.size();
        matched += !v.matches.empty();
      }
    }
    double check_ms = Ms(Clock::now() - start);
    std::sort(times.begin(), times.end());
    auto quantile = [&](double q) {
      return times.empty()
                 ? 0.0
                 : times[std::min(times.size() - 1, static_cast<size_t>(q * times.size()))];
    };
    return nlohmann::json{{"checkMs", check_ms},
                          {"mbPerS", bytes / 1e6 / (check_ms / 1e3)},
                          {"medianUs", quantile(0.5)},
                          {"p99Us", quantile(0.99)}};
  };
  nlohmann::json cold = pass(true);
  nlohmann::json warm = pass(false);
  nlohmann::json out = {{"rules", info.rule_count},
                        {"loadTextMs", load_text_ms},
                        {"exportMs", export_ms},
                        {"loadCompiledMs", load_compiled_ms},
                        {"compiledBytes", blob.size()},
                        {"posts", posts.size()},
                        {"bytes", bytes},
                        {"matchedPosts", matched},
                        {"warm", warm}};
  out.update(cold);
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace cli
}  // namespace factlens
