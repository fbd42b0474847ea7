// Copyright factlens authors. `factlens eval`: claim retrieval on CLEF CheckThat! files.
//
// The claims become a factlens/1 list (one rule per claim: claim, match.similar, the
// fact-check title as review.title) loaded through Engine::LoadList, and every tweet
// goes through Engine::Search and Engine::Check: the figures are those of the engine
// as shipped, not of a separate code path.
#include "eval.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "factlens/engine.h"
#include "nlohmann/json.hpp"
#include "tsv.h"

namespace factlens {
namespace {

using nlohmann::json;

const char kEvalHelp[] =
    "usage: factlens eval --claims verified_claims.tsv --queries Q.tsv --qrels Q.qrels\n"
    "                     [--train-queries T.tsv --train-qrels T.qrels] [--fit]\n"
    "                     [--ablation] [--thresholds] [--strip-tail]\n"
    "\n"
    "Ranks the claims for each query with the engine's similarity search and prints\n"
    "MAP@1, MAP@3, MAP@5, MAP@10 and MRR (over the best 48), then, at the engine's\n"
    "default threshold, recall (share of queries whose correct claim Check matches)\n"
    "and false_match_rate (share of queries that still match a claim when their\n"
    "correct claims are withheld).\n"
    "\n"
    "  --claims FILE         TSV: vclaim_id, vclaim, title (header row first)\n"
    "  --queries FILE        TSV: tweet_id, tweet_content (header row first)\n"
    "  --qrels FILE          TREC qrels: tweet_id 0 vclaim_id 1\n"
    "  --train-queries FILE  training queries, for --fit and --ablation\n"
    "  --train-qrels FILE\n"
    "  --fit                 fit the re-ranker on the training queries, print its\n"
    "                        weights (similar.cc's kShippedWeights) and use them\n"
    "  --ablation            for each feature turned off in turn: refit on train and\n"
    "                        print the figures on the queries\n"
    "  --thresholds          print recall and false_match_rate at several thresholds\n"
    "  --write-list FILE     also write the claims as the factlens/1 list evaluated\n"
    "  --write-rankings FILE also write each query's text and best 10 claims (JSON\n"
    "                        Lines), to compare another build's rankings with\n"
    "  --strip-tail          cut the tweets' \"- Name (@handle) Date\" tail (kept by\n"
    "                        default: on train, keeping it scores higher)\n"
    "\n"
    "Exit status: 0 on success, 2 on usage or input errors.\n";

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;

struct Query {
  std::string id;
  std::string text;
  std::vector<std::string> gold;  // claim ids
};

bool ReadWhole(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << path << ": error: cannot read file: " << std::strerror(errno) << "\n";
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *out = buffer.str();
  return true;
}

// Writes `text` to `path` through a temporary file, so a failure leaves no half file.
bool WriteFile(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) {
      std::cerr << temp << ": error: cannot write file: " << std::strerror(errno) << "\n";
      std::remove(temp.c_str());
      return false;
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::cerr << path << ": error: cannot write file: " << std::strerror(errno) << "\n";
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

bool ReadTsv(const std::string& path, size_t columns, std::vector<TsvRecord>* out) {
  std::string text, error;
  if (!ReadWhole(path, &text)) return false;
  if (!ParseTsv(text, out, &error)) {
    std::cerr << path << ":" << error << "\n";
    return false;
  }
  if (out->empty()) {
    std::cerr << path << ": error: no header row\n";
    return false;
  }
  out->erase(out->begin());  // the header
  for (const TsvRecord& r : *out) {
    if (r.fields.size() != columns) {
      std::cerr << path << ":" << r.line << ":1: error: expected " << columns
                << " tab-separated fields, found " << r.fields.size() << "\n";
      return false;
    }
  }
  return true;
}

// Tweets in the CLEF files end with "— Name (@handle) Month D, YYYY". It is kept by
// default (the author often is the claim's subject: MAP@5 on train 0.826 kept,
// 0.801 cut); --strip-tail cuts it.
std::string WithoutTail(const std::string& tweet) {
  size_t dash = tweet.rfind("\xE2\x80\x94");  // em dash
  if (dash == std::string::npos) return tweet;
  size_t handle = tweet.find("(@", dash);
  if (handle == std::string::npos) return tweet;
  return tweet.substr(0, dash);
}

bool ReadQueries(const std::string& queries_path, const std::string& qrels_path,
                 bool keep_tail, std::vector<Query>* out) {
  std::vector<TsvRecord> rows;
  if (!ReadTsv(queries_path, 2, &rows)) return false;
  std::map<std::string, size_t> by_id;
  for (const TsvRecord& r : rows) {
    by_id[r.fields[0]] = out->size();
    out->push_back({r.fields[0], keep_tail ? r.fields[1] : WithoutTail(r.fields[1]), {}});
  }
  std::string text;
  if (!ReadWhole(qrels_path, &text)) return false;
  std::istringstream in(text);
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::istringstream fields(line);
    std::string query, zero, claim, relevance;
    if (!(fields >> query >> zero >> claim >> relevance)) {
      std::cerr << qrels_path << ":" << number
                << ":1: error: expected \"query_id 0 claim_id relevance\"\n";
      return false;
    }
    auto q = by_id.find(query);
    if (q == by_id.end()) {
      std::cerr << qrels_path << ":" << number << ":1: error: query \"" << query
                << "\" is not in " << queries_path << "\n";
      return false;
    }
    if (relevance != "0") (*out)[q->second].gold.push_back(claim);
  }
  return true;
}

// Returns the claims as a factlens/1 list text.
bool ClaimsList(const std::string& path, std::string* list_text, size_t* skipped) {
  std::vector<TsvRecord> rows;
  if (!ReadTsv(path, 3, &rows)) return false;
  json rules = json::array();
  *skipped = 0;
  for (const TsvRecord& r : rows) {
    const std::string& id = r.fields[0];
    const std::string& claim = r.fields[1];
    if (claim.find_first_not_of(" \t\r\n") == std::string::npos) {
      ++*skipped;  // the format needs a claim; an empty one can never be found
      continue;
    }
    rules.push_back({{"id", id},
                     {"claim", claim},
                     {"rating", "false"},
                     {"severity", "low"},
                     {"languages", {"en"}},
                     {"match", {{"similar", {claim}}}},
                     {"review",
                      {{"url", "https://clef2020.invalid/vclaim/" + id},
                       {"title", r.fields[2]},
                       {"publisher", "Snopes"},
                       {"date", "2020-01-01"}}}});
  }
  json list = {{"format", "factlens/1"},
               {"list",
                {{"id", "clef2020-verified-claims"},
                 {"name", "CLEF 2020 CheckThat! verified claims"},
                 {"publisher",
                  {{"name", "CLEF CheckThat!"}, {"url", "https://clef2020.invalid/"}}},
                 {"version", 1},
                 {"issued", "2020-01-01T00:00:00Z"},
                 {"expires", "2999-01-01T00:00:00Z"}}},
               {"rules", std::move(rules)}};
  *list_text = list.dump(-1, ' ', false, json::error_handler_t::replace);
  return true;
}

struct Figures {
  double map[4] = {0, 0, 0, 0};  // @1, @3, @5, @10
  double mrr = 0;
  double recall = 0;
  double false_match_rate = 0;
  size_t queries = 0;
  size_t check_mismatches = 0;  // Check's similar matches differing from Search's
};

constexpr int kMapAt[4] = {1, 3, 5, 10};

double AveragePrecision(const std::vector<SearchResult>& ranked,
                        const std::vector<std::string>& gold, size_t k) {
  if (gold.empty()) return 0;
  double correct = 0, sum = 0;
  for (size_t i = 0; i < ranked.size() && i < k; ++i) {
    if (std::find(gold.begin(), gold.end(), ranked[i].rule->id) != gold.end()) {
      ++correct;
      sum += correct / (i + 1);
    }
  }
  return sum / gold.size();
}

Status Load(Engine* engine, const std::string& list, const SimilarOptions& similar) {
  LoadOptions options;
  options.allow_unsigned = true;
  options.similar = similar;
  return engine->LoadList(list, options, nullptr);
}

Figures Evaluate(const Engine& engine, const std::vector<Query>& queries,
                 double threshold) {
  Figures f;
  for (const Query& q : queries) {
    if (q.gold.empty()) continue;
    ++f.queries;
    std::vector<SearchResult> ranked = engine.Search(q.text, SimilarIndex::kCandidates);
    for (int i = 0; i < 4; ++i) f.map[i] += AveragePrecision(ranked, q.gold, kMapAt[i]);
    for (size_t i = 0; i < ranked.size(); ++i) {
      if (std::find(q.gold.begin(), q.gold.end(), ranked[i].rule->id) != q.gold.end()) {
        f.mrr += 1.0 / (i + 1);
        break;
      }
    }
    bool found = false;
    if (threshold == SimilarIndex::kDefaultThreshold) {
      // At the default threshold the engine decides: Check's matches.
      Verdict v = engine.Check(q.text, CheckContext());
      std::set<std::string> matched, searched;
      for (const ExplainedMatch& m : v.matches) {
        matched.insert(m.rule->id);
        found =
            found || std::find(q.gold.begin(), q.gold.end(), m.rule->id) != q.gold.end();
      }
      for (size_t i = 0; i < ranked.size() && i < CompiledList::kSimilarMatches; ++i) {
        if (ranked[i].score >= threshold) searched.insert(ranked[i].rule->id);
      }
      if (matched != searched) ++f.check_mismatches;
    } else {
      for (const SearchResult& r : ranked) {
        if (r.score < threshold) break;
        found =
            found || std::find(q.gold.begin(), q.gold.end(), r.rule->id) != q.gold.end();
      }
    }
    f.recall += found;
    std::vector<SearchResult> without = engine.Search(q.text, 1, q.gold);
    f.false_match_rate += !without.empty() && without[0].score >= threshold;
  }
  if (f.queries > 0) {
    for (double& m : f.map) m /= f.queries;
    f.mrr /= f.queries;
    f.recall /= f.queries;
    f.false_match_rate /= f.queries;
  }
  return f;
}

// Fits the re-ranker's logistic model on the candidates of `queries` (every claim
// the first stage passes on, labelled by the qrels) by Newton's method with a small
// L2 penalty. The candidates do not depend on the weights, so one pass suffices.
std::vector<double> Fit(const Engine& engine, const std::vector<Query>& queries) {
  constexpr int d = kSimilarFeatureCount;
  std::vector<std::array<double, d>> x;
  std::vector<double> y;
  for (const Query& q : queries) {
    if (q.gold.empty()) continue;
    for (const SearchResult& r : engine.Search(q.text, SimilarIndex::kCandidates)) {
      x.push_back(r.features);
      y.push_back(std::find(q.gold.begin(), q.gold.end(), r.rule->id) != q.gold.end());
    }
  }
  constexpr double kL2 = 1.0;
  std::vector<double> w(d, 0);
  for (int iteration = 0; iteration < 30; ++iteration) {
    double g[d] = {0}, h[d][d] = {{0}};
    for (size_t n = 0; n < x.size(); ++n) {
      double z = 0;
      for (int i = 0; i < d; ++i) z += w[i] * x[n][i];
      double p = 1 / (1 + std::exp(-z));
      for (int i = 0; i < d; ++i) {
        g[i] += (p - y[n]) * x[n][i];
        for (int j = 0; j < d; ++j) h[i][j] += p * (1 - p) * x[n][i] * x[n][j];
      }
    }
    for (int i = 1; i < d; ++i) {  // the bias is not penalised
      g[i] += kL2 * w[i];
      h[i][i] += kL2;
    }
    h[0][0] += 1e-9;
    // Solve h * step = g by Gaussian elimination with partial pivoting.
    double a[d][d + 1];
    for (int i = 0; i < d; ++i) {
      for (int j = 0; j < d; ++j) a[i][j] = h[i][j];
      a[i][d] = g[i];
    }
    for (int c = 0; c < d; ++c) {
      int pivot = c;
      for (int r = c + 1; r < d; ++r) {
        if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
      }
      for (int j = 0; j <= d; ++j) std::swap(a[c][j], a[pivot][j]);
      if (std::fabs(a[c][c]) < 1e-12) continue;
      for (int r = 0; r < d; ++r) {
        if (r == c) continue;
        double factor = a[r][c] / a[c][c];
        for (int j = c; j <= d; ++j) a[r][j] -= factor * a[c][j];
      }
    }
    double change = 0;
    for (int i = 0; i < d; ++i) {
      double step = std::fabs(a[i][i]) < 1e-12 ? 0 : a[i][d] / a[i][i];
      w[i] -= step;
      change = std::max(change, std::fabs(step));
    }
    if (change < 1e-6) break;
  }
  return w;
}

void PrintFigures(const char* name, const Figures& f) {
  std::printf(
      "%-16s MAP@1 %.4f  MAP@3 %.4f  MAP@5 %.4f  MAP@10 %.4f  MRR %.4f  "
      "recall %.4f  false_match_rate %.4f\n",
      name, f.map[0], f.map[1], f.map[2], f.map[3], f.mrr, f.recall, f.false_match_rate);
}

}  // namespace

const char* EvalHelp() { return kEvalHelp; }

int Eval(const std::vector<std::string>& args) {
  std::string claims, queries_path, qrels_path, train_queries, train_qrels;
  std::string write_list, write_rankings;
  bool fit = false, ablation = false, thresholds = false, keep_tail = true;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= args.size()) {
        std::cerr << "factlens eval: " << a << " needs a value\n";
        return false;
      }
      *out = args[++i];
      return true;
    };
    bool ok = true;
    if (a == "--claims") {
      ok = value(&claims);
    } else if (a == "--queries") {
      ok = value(&queries_path);
    } else if (a == "--qrels") {
      ok = value(&qrels_path);
    } else if (a == "--train-queries") {
      ok = value(&train_queries);
    } else if (a == "--train-qrels") {
      ok = value(&train_qrels);
    } else if (a == "--write-list") {
      ok = value(&write_list);
    } else if (a == "--write-rankings") {
      ok = value(&write_rankings);
    } else if (a == "--fit") {
      fit = true;
    } else if (a == "--ablation") {
      ablation = true;
    } else if (a == "--thresholds") {
      thresholds = true;
    } else if (a == "--strip-tail") {
      keep_tail = false;
    } else if (a == "-h" || a == "--help") {
      std::cout << kEvalHelp;
      return kExitOk;
    } else {
      std::cerr << "factlens eval: unknown argument " << a << "\n" << kEvalHelp;
      return kExitUsage;
    }
    if (!ok) return kExitUsage;
  }
  if (claims.empty() || queries_path.empty() || qrels_path.empty()) {
    std::cerr << "factlens eval: --claims, --queries and --qrels are required\n"
              << kEvalHelp;
    return kExitUsage;
  }
  if ((fit || ablation) && (train_queries.empty() || train_qrels.empty())) {
    std::cerr << "factlens eval: --fit and --ablation need --train-queries and "
                 "--train-qrels\n";
    return kExitUsage;
  }
  std::string list;
  size_t skipped = 0;
  if (!ClaimsList(claims, &list, &skipped)) return kExitUsage;
  std::vector<Query> queries, train;
  if (!ReadQueries(queries_path, qrels_path, keep_tail, &queries)) return kExitUsage;
  if (!train_queries.empty() &&
      !ReadQueries(train_queries, train_qrels, keep_tail, &train)) {
    return kExitUsage;
  }

  SimilarOptions options;
  auto engine = std::make_unique<Engine>();
  auto start = std::chrono::steady_clock::now();
  Status s = Load(engine.get(), list, options);
  double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
          .count();
  if (!s.ok()) {
    std::cerr << claims << ": error: the claims do not make a valid list: " << s.message()
              << "\n";
    return kExitUsage;
  }
  std::printf("claims: %zu (skipped %zu empty), list preparation %.0f ms (native)\n",
              engine->Lists()[0].rule_count, skipped, load_ms);
  if (fit) {
    options.weights = Fit(*engine, train);
    std::printf("fitted on %zu training queries; kShippedWeights = {", train.size());
    for (size_t i = 0; i < options.weights.size(); ++i)
      std::printf("%s%.4f", i ? ", " : "", options.weights[i]);
    std::printf("};\n");
    engine = std::make_unique<Engine>();
    if (!Load(engine.get(), list, options).ok()) return kExitUsage;
    Figures ft = Evaluate(*engine, train, SimilarIndex::kDefaultThreshold);
    PrintFigures("train (fitted)", ft);
  }
  start = std::chrono::steady_clock::now();
  Figures f = Evaluate(*engine, queries, SimilarIndex::kDefaultThreshold);
  double per_query =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
          .count() /
      std::max<size_t>(1, f.queries);
  std::printf("queries: %zu with a correct claim, threshold %.2f\n", f.queries,
              SimilarIndex::kDefaultThreshold);
  PrintFigures("engine", f);
  std::printf(
      "check/search disagreements: %zu; %.2f ms per query (native, search + "
      "check + withheld search)\n",
      f.check_mismatches, per_query);
  if (!write_list.empty() && !WriteFile(write_list, list)) return kExitUsage;
  if (!write_rankings.empty()) {
    std::string out;
    for (const Query& q : queries) {
      json row = {{"id", q.id}, {"text", q.text}, {"results", json::array()}};
      for (const SearchResult& r : engine->Search(q.text, 10)) {
        row["results"].push_back({r.rule->id, r.score});
      }
      out += row.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    }
    if (!WriteFile(write_rankings, out)) return kExitUsage;
  }
  if (thresholds) {
    for (double t : {0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99}) {
      Figures ft = Evaluate(*engine, queries, t);
      std::printf("threshold %.2f  recall %.4f  false_match_rate %.4f\n", t, ft.recall,
                  ft.false_match_rate);
    }
  }
  if (ablation) {
    // Each part off in turn; the re-ranker is refitted on train for each, so a row
    // shows what the part buys, not how much the shipped weights rely on it.
    struct Variant {
      const char* name;
      bool SimilarOptions::*flag;
    };
    const Variant variants[] = {
        {"-stemming", &SimilarOptions::stemming},
        {"-stop_words", &SimilarOptions::stop_words},
        {"-word_bigrams", &SimilarOptions::word_bigrams},
        {"-char_ngrams", &SimilarOptions::char_ngrams},
        {"-title_field", &SimilarOptions::title_field},
        {"-rerank", &SimilarOptions::rerank},
    };
    std::printf("ablation (refitted on train, figures on %s):\n", queries_path.c_str());
    for (const Variant& v : variants) {
      SimilarOptions o;
      o.*(v.flag) = false;
      auto e = std::make_unique<Engine>();
      if (!Load(e.get(), list, o).ok()) return kExitUsage;
      if (o.rerank) {
        o.weights = Fit(*e, train);
        e = std::make_unique<Engine>();
        if (!Load(e.get(), list, o).ok()) return kExitUsage;
      }
      PrintFigures(v.name, Evaluate(*e, queries, SimilarIndex::kDefaultThreshold));
    }
  }
  return kExitOk;
}

}  // namespace factlens
