// Copyright factlens authors. Embind bindings: the engine as the JS class `Engine`.
//
// Every method takes and returns JSON text. One serialiser (score.h VerdictToJson)
// then serves the CLI and JavaScript alike, so both builds are checked against the
// same expected output, and no C++ exception or pointer crosses the boundary.
// Results of fallible calls are {"ok":true,...} or {"ok":false,"kind","message"};
// web/index.js turns the latter into a thrown FactlensError.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "factlens/claimreview.h"
#include "factlens/engine.h"
#include "nlohmann/json.hpp"

namespace factlens {
namespace {

using nlohmann::json;

// A CompiledFormReader over a compiled form in JavaScript, for LoadCompiledFrom:
// `read(offset, view)` fills `view` and returns true, or returns false. Copies
// share one buffer (a list keeps a copy: CompiledList::Import's kept reader).
class JsFormReader {
 public:
  explicit JsFormReader(emscripten::val read) : state_(std::make_shared<State>()) {
    state_->read = std::move(read);
  }
  std::string_view operator()(size_t offset, size_t size) const {
    if (size == 0) return std::string_view("", 0);
    State& st = *state_;
    // A form's parts (the checksum's, an import's windows) are freed before the
    // next is made, so that only one is ever in wasm memory and none stays while
    // the list is built; a kept list's records, small, reuse the one buffer.
    if (size > st.capacity || size > kReuseUpTo) {
      st.part.reset();
      st.part.reset(new char[size]);  // not a std::string: no zero-fill of what JS writes
      st.capacity = size;
    }
    const bool ok = st.read(static_cast<double>(offset),
                            emscripten::val(emscripten::typed_memory_view(
                                size, reinterpret_cast<unsigned char*>(st.part.get()))))
                        .as<bool>();
    return ok ? std::string_view(st.part.get(), size) : std::string_view();
  }
  void FreePart() const {
    state_->part.reset();
    state_->capacity = 0;
  }

 private:
  static constexpr size_t kReuseUpTo = 4096;
  struct State {
    emscripten::val read = emscripten::val::undefined();
    std::unique_ptr<char[]> part;
    size_t capacity = 0;
  };
  std::shared_ptr<State> state_;
};

std::string StatusJson(const Status& s) {
  json j = {{"ok", s.ok()}};
  if (!s.ok()) {
    j["kind"] = ErrorKindName(s.kind());
    j["message"] = s.message();
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json InfoJson(const LoadedListInfo& l) {
  json j = {
      {"id", l.info.id},
      {"name", l.info.name},
      {"publisher", {{"name", l.info.publisher_name}, {"url", l.info.publisher_url}}},
      {"version", l.info.version},
      {"issued", l.info.issued},
      {"expires", l.info.expires},
      {"ruleCount", l.rule_count},
      {"signed", l.is_signed},
      {"digest", l.digest}};
  if (l.is_signed) {
    j["keyId"] = l.key_id;
    j["publicKey"] = l.public_key;
    j["keyRotated"] = l.key_rotated;
    j["trustedComment"] = l.trusted_comment;
  }
  return j;
}

// Reads a string field if present; false if present with another type.
bool OptionalString(const json& o, const char* key, std::string* out) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return true;
  if (!it->is_string()) return false;
  *out = it->get<std::string>();
  return true;
}
// Reads {"region": "DE", "language": "de"}; anything else is ignored.
CheckContext ContextFromJson(const std::string& text) {
  CheckContext context;
  if (text == "{}") return context;  // (most checks: no parse)
  json j = json::parse(text, nullptr, false);
  if (j.is_object()) {
    auto region = j.find("region");
    if (region != j.end() && region->is_string())
      context.region = region->get<std::string>();
    auto language = j.find("language");
    if (language != j.end() && language->is_string()) {
      context.language = language->get<std::string>();
    }
  }
  return context;
}

class EngineBinding {
 public:
  std::string LoadList(const std::string& text, const std::string& options_json) {
    return LoadListBytes(text, options_json);
  }
  std::string LoadListBytes(std::string_view text, const std::string& options_json,
                            const std::function<void()>& text_done = {}) {
    LoadOptions options;
    Status s = ReadLoadOptions(options_json, &options);
    if (!s.ok()) return StatusJson(s);
    LoadedListInfo info;
    s = engine_.LoadList(text, options, &info, text_done);
    if (!s.ok()) return StatusJson(s);
    return json({{"ok", true}, {"info", InfoJson(info)}})
        .dump(-1, ' ', false, json::error_handler_t::replace);
  }

  // LoadCompiled on a compiled form of `size` bytes that stays in JavaScript:
  // `read(offset, view)` fills `view`, a buffer in wasm memory, with the form's
  // bytes from `offset` (at once: the view dies when memory grows) and returns
  // true, or false if it could not (it never throws: a JavaScript exception
  // would unwind through C++ frames without their destructors). Only the part
  // being read is in wasm memory, so restoring a large list does not raise wasm
  // memory's peak (which stays) by the size of its form.
  //
  // With `keep`, `read` reads the same bytes for as long as the list stays
  // loaded (the wrapper has taken the caller's buffer), and the list keeps it:
  // its rule records stay in JavaScript, read one at a time when a rule is
  // needed. The result's "kept" says which bytes those are, [begin, end): `read`
  // is asked for no others after the load.
  std::string LoadCompiledFrom(size_t size, emscripten::val read,
                               const std::string& options_json, bool keep) {
    LoadOptions options;
    Status s = ReadLoadOptions(options_json, &options);
    if (!s.ok()) return StatusJson(s);
    JsFormReader reader(std::move(read));
    LoadedListInfo info;
    s = engine_.LoadCompiled(size, reader, options, &info, keep);
    reader.FreePart();  // the last part read (up to 256 KB) would stay with the list
    if (!s.ok()) return StatusJson(s);
    json result = {{"ok", true}, {"info", InfoJson(info)}};
    if (keep) {
      // What the list still reads: the wrapper lets go of the form's other parts.
      const auto [begin, end] = engine_.Compiled(info.info.id)->kept_form_range();
      result["kept"] = {begin, end};
    }
    return result.dump(-1, ' ', false, json::error_handler_t::replace);
  }

  // Returns a view of a buffer of `size` bytes in wasm memory, for the next
  // LoadListInput, holding the first `keep` bytes of the one before. The JS wrapper
  // encodes the list's text straight into it (and at once: the view dies when
  // memory grows), so a large list is copied into wasm memory once, not encoded
  // into a JavaScript buffer and then copied, and it keeps what it wrote when the
  // text's UTF-8 outgrows its first guess of a byte per UTF-16 unit. Wasm memory
  // never shrinks, so the buffer is sized to the text, never to a bound.
  emscripten::val InputBuffer(size_t size, size_t keep) {
    // Not a std::string: resize() would zero-fill bytes the caller overwrites at
    // once (40 MB of memset for a 100k-rule list).
    keep = std::min({keep, size, input_size_});
    if (keep == 0) input_.reset();  // freed first: the two need not both fit
    std::unique_ptr<char[]> buffer(new char[size > 0 ? size : 1]);
    if (keep > 0) std::memcpy(buffer.get(), input_.get(), keep);
    input_ = std::move(buffer);
    input_size_ = size;
    return emscripten::val(emscripten::typed_memory_view(
        input_size_, reinterpret_cast<unsigned char*>(input_.get())));
  }
  // LoadList on the first `size` bytes InputBuffer received (no more than it
  // holds); frees them as soon as the load no longer reads them.
  std::string LoadListInput(size_t size, const std::string& options_json) {
    const size_t held = TakeInputSize();
    std::unique_ptr<char[]> text = std::move(input_);
    return LoadListBytes(std::string_view(text.get(), std::min(size, held)), options_json,
                         [&text] { text.reset(); });
  }

  // Gives the compiled form of `id` to `sink` (a JS function) part by part, each a
  // view of wasm memory valid during the call only (the sink copies it): a section
  // is built just before and freed just after, so the form is never whole in wasm
  // memory, which keeps its peak. Returns a status JSON.
  // With the status, "records": where the rule records lie in the form (the
  // wrapper's exportCompiled with `parts` splits it there).
  std::string ExportCompiled(const std::string& id, emscripten::val sink) {
    std::pair<uint64_t, uint64_t> records;
    const Status s = engine_.ExportCompiled(
        id,
        [&sink](std::string_view part) {
          sink(emscripten::val(emscripten::typed_memory_view(
              part.size(), reinterpret_cast<const unsigned char*>(part.data()))));
        },
        &records);
    if (!s.ok()) return StatusJson(s);
    return json({{"ok", true}, {"records", {records.first, records.second}}}).dump();
  }

 private:
  static Status ReadLoadOptions(const std::string& options_json, LoadOptions* out) {
    json o = json::parse(options_json, nullptr, false);
    if (!o.is_object()) return Status(ErrorKind::kFormat, "options: not an object");
    LoadOptions& options = *out;
    // Type-checked reads: a wrong type must be an error, never an abort.
    auto flag = o.find("allowUnsigned");
    options.allow_unsigned = flag != o.end() && flag->is_boolean() && flag->get<bool>();
    if (!OptionalString(o, "signature", &options.signature) ||
        !OptionalString(o, "publicKey", &options.public_key) ||
        !OptionalString(o, "lastDigest", &options.last_digest)) {
      return Status(ErrorKind::kFormat, "options: a string field has another type");
    }
    auto last = o.find("lastVersion");
    if (last != o.end() && last->is_number_integer()) {
      options.last_version = last->get<int64_t>();
    }
    auto now = o.find("now");
    if (now != o.end() && now->is_number_integer())
      options.now_unix = now->get<int64_t>();
    auto rotations = o.find("rotations");
    if (rotations != o.end() && rotations->is_array()) {
      for (const json& r : *rotations) {
        RotationProof proof;
        if (!r.is_object() || !OptionalString(r, "statement", &proof.statement) ||
            !OptionalString(r, "signature", &proof.signature)) {
          return Status(ErrorKind::kFormat,
                        "options.rotations: expected {statement, signature}");
        }
        options.rotations.push_back(std::move(proof));
      }
    }
    auto prefilter = o.find("prefilter");
    if (prefilter != o.end() && prefilter->is_boolean()) {
      options.use_prefilter = prefilter->get<bool>();
    }
    return Status::Ok();
  }

 public:
  std::string UnloadList(const std::string& id) {
    return StatusJson(engine_.UnloadList(id));
  }

  // `now_unix` marks lists past their expiry as stale (still in use, as the last
  // good version, until a newer one verifies).
  std::string Lists(double now_unix) const {
    json out = json::array();
    for (const LoadedListInfo& l : engine_.Lists()) {
      json j = InfoJson(l);
      j["stale"] = engine_.IsStale(l.info.id, static_cast<int64_t>(now_unix));
      out.push_back(std::move(j));
    }
    return out.dump(-1, ' ', false, json::error_handler_t::replace);
  }

  // Returns a view of the first `size` bytes of a buffer in wasm memory for the
  // next CheckInput or CheckBatchInput, growing it if needed (what it holds stays).
  // The JS wrapper encodes the posts straight into it (TextEncoder.encodeInto,
  // native): a std::string argument is encoded by a JavaScript loop, and a batch
  // sent as JSON was parsed again here, which cost more than checking a short post
  // (12 and 33 us for a post of 2 KB). The view dies when memory grows, so the
  // wrapper asks for one on every check; the check keeps the buffer for the next
  // one unless it is large (kKeptBytes).
  emscripten::val PostBuffer(size_t size) {
    if (posts_.size() < size) posts_.resize(size);
    return emscripten::val(emscripten::typed_memory_view(
        size, reinterpret_cast<unsigned char*>(posts_.data())));
  }

  // Returns a view of the verdict's JSON for the post in the first `size` bytes of
  // PostBuffer's (VerdictView).
  emscripten::val CheckInput(size_t size, const std::string& context_json) {
    const std::string_view text(posts_.data(), std::min(size, posts_.size()));
    return VerdictView(
        VerdictToJson(engine_.Check(text, ContextFromJson(context_json)), text));
  }

  // Returns a view of a JSON array of verdicts for the posts in PostBuffer's, back
  // to back (VerdictView); `sizes_json` is a JSON array of their sizes in bytes.
  // "null" if the sizes are not such an array or overrun the buffer.
  emscripten::val CheckBatchInput(const std::string& sizes_json,
                                  const std::string& context_json) {
    return VerdictView(CheckBatch(sizes_json, context_json));
  }

  // Returns {"ok":true,"results":[{listId, ruleId, score, claim, rating, severity,
  // review}]}, best first; `k` is clamped to [0, Engine::kMaxSearchResults].
  std::string Search(const std::string& text, int k) const {
    json results = json::array();
    for (const SearchResult& r :
         engine_.Search(text, k < 0 ? 0 : static_cast<size_t>(k))) {
      results.push_back({{"listId", r.list_id},
                         {"ruleId", r.rule->id},
                         {"score", std::round(r.score * 10000) / 10000},
                         {"claim", r.rule->claim},
                         {"rating", RatingName(r.rule->rating)},
                         {"severity", SeverityName(r.rule->severity)},
                         {"review",
                          {{"url", r.rule->review.url},
                           {"title", r.rule->review.title},
                           {"publisher", r.rule->review.publisher},
                           {"date", r.rule->review.date}}}});
    }
    return json({{"ok", true}, {"results", std::move(results)}})
        .dump(-1, ' ', false, json::error_handler_t::replace);
  }

  std::string SetPolicy(const std::string& policy_json) {
    Policy policy = DefaultPolicy();
    Status s = ParsePolicyJson(policy_json, &policy);
    if (s.ok()) engine_.SetPolicy(policy);
    return StatusJson(s);
  }

  std::string GetPolicy() const { return PolicyToJson(engine_.policy()); }

 private:
  Engine engine_;
  std::string CheckBatch(const std::string& sizes_json, const std::string& context_json) {
    const std::string_view posts = posts_;
    json sizes = json::parse(sizes_json, nullptr, false);
    if (!sizes.is_array()) return "null";
    CheckContext context = ContextFromJson(context_json);
    std::string out = "[";
    size_t at = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (!sizes[i].is_number_unsigned()) return "null";
      const uint64_t size = sizes[i].get<uint64_t>();
      if (size > posts.size() - at) return "null";
      const std::string_view text(posts.data() + at, size);
      at += size;
      if (i) out += ',';
      out += VerdictToJson(engine_.Check(text, context), text);
    }
    return out + "]";
  }
  // Keeps `verdicts` (a check's JSON) until the next check and returns a view of
  // its bytes, which the JS wrapper decodes at once (TextDecoder, native): an
  // std::string return was decoded by Embind's JavaScript, a loop over every byte
  // looking for NULs before the decoding (8k x86 instructions a check at 10k
  // rules, the most of any JavaScript in a check). The post buffer is kept for the
  // next check unless it is large: made again, it was an allocation and a
  // zero-fill of the post's size at every check.
  emscripten::val VerdictView(std::string verdicts) {
    if (posts_.capacity() > kKeptBytes) std::string().swap(posts_);
    if (verdicts_.capacity() > kKeptBytes) std::string().swap(verdicts_);
    verdicts_ = std::move(verdicts);
    return emscripten::val(emscripten::typed_memory_view(
        verdicts_.size(), reinterpret_cast<const unsigned char*>(verdicts_.data())));
  }
  // The most of either buffer kept from one check to the next (a larger one is
  // freed at the next check).
  static constexpr size_t kKeptBytes = 64 << 10;
  size_t TakeInputSize() {
    const size_t size = input_size_;
    input_size_ = 0;
    return size;
  }
  std::unique_ptr<char[]> input_;  // InputBuffer
  size_t input_size_ = 0;
  std::string posts_;     // PostBuffer: the posts of the next check
  std::string verdicts_;  // the last check's verdicts (VerdictView)
};

// Returns the module's heap figures as JSON: bytes malloc has handed out and not
// got back, bytes malloc has taken from the wasm memory in all (in use, or free
// for its reuse: dlmalloc's mallinfo), and the size of the wasm memory (the rest is
// the module's stack and data, and memory not yet taken). The memory test and
// embedders use it to see that dispose() and list reloads give memory back.
std::string MemoryStats() {
  struct mallinfo info = mallinfo();
  return json({{"bytesInUse", static_cast<uint64_t>(info.uordblks)},
               {"heapReserved", static_cast<uint64_t>(info.arena)},
               {"heapSize", static_cast<uint64_t>(emscripten_get_heap_size())}})
      .dump();
}

json MessageJson(const ImportMessage& m) {
  json j = {{"severity", m.error ? "error" : "warning"}, {"message", m.message}};
  if (m.where.line > 0) {
    j["line"] = m.where.line;
    j["column"] = m.where.column;  // UTF-8 bytes; web/engine.js counts UTF-16 units
    j["offset"] = m.where.offset;
  }
  return j;
}

// ClaimReview markup in, a factlens/1 list out: the run `factlens import` makes
// (claimreview.h ImportClaimReviews) on one input. `options_json`: {pageUrl,
// merge (a list to update), ratings (a table's JSON text), listId, listName,
// publisher, publisherUrl, severity, keywords, now (unix seconds)}. Returns {"ok":
// true, list, shape, reviews, added, updated, unchanged, kept, skipped, version,
// versionBumped, changes, messages}, or {"ok":false, kind, message, messages}:
// the importer's reports are returned either way.
std::string ImportClaimReview(const std::string& text, const std::string& options_json) {
  auto fail = [](const Status& s, const json& messages) {
    return json({{"ok", false},
                 {"kind", ErrorKindName(s.kind())},
                 {"message", s.message()},
                 {"messages", messages}})
        .dump(-1, ' ', false, json::error_handler_t::replace);
  };
  json o = json::parse(options_json, nullptr, false);
  if (!o.is_object()) {
    return fail(Status(ErrorKind::kFormat, "options: not an object"), json::array());
  }
  ImportOptions options;
  std::string page_url, merge, ratings, severity = "medium";
  if (!OptionalString(o, "pageUrl", &page_url) || !OptionalString(o, "merge", &merge) ||
      !OptionalString(o, "ratings", &ratings) ||
      !OptionalString(o, "listId", &options.list_id) ||
      !OptionalString(o, "listName", &options.list_name) ||
      !OptionalString(o, "publisher", &options.publisher_name) ||
      !OptionalString(o, "publisherUrl", &options.publisher_url) ||
      !OptionalString(o, "severity", &severity)) {
    return fail(Status(ErrorKind::kFormat, "options: a string field has another type"),
                json::array());
  }
  if (!ParseSeverity(severity, &options.severity)) {
    return fail(Status(ErrorKind::kFormat,
                       "options.severity: \"" + severity + "\" is not a severity"),
                json::array());
  }
  auto keywords = o.find("keywords");
  options.derive_keywords =
      keywords != o.end() && keywords->is_boolean() && keywords->get<bool>();
  auto now = o.find("now");
  if (now != o.end() && now->is_number_integer()) options.now_unix = now->get<int64_t>();

  RatingTable table;
  Status s = ratings.empty() ? RatingTable::BuiltIn(&table)
                             : RatingTable::Parse(ratings, &table);
  if (!s.ok()) {
    return fail(Status(s.kind(), "options.ratings: " + s.message()), json::array());
  }
  ImportRun run;
  s = ImportClaimReviews({text}, page_url, table, options, merge, &run);
  json messages = json::array();
  for (const ImportRun::Input& input : run.inputs) {
    for (const ImportMessage& m : input.messages) messages.push_back(MessageJson(m));
  }
  for (const ImportMessage& m : run.report.messages) messages.push_back(MessageJson(m));
  if (!s.ok()) return fail(s, messages);

  const ImportReport& r = run.report;
  json changes = json::array();
  static const char* const kKinds[] = {"added", "updated", "unchanged", "kept"};
  for (const ImportChange& c : r.changes) {
    changes.push_back(
        {{"kind", kKinds[c.kind]}, {"ruleId", c.rule_id}, {"detail", c.detail}});
  }
  return json({{"ok", true},
               {"list", run.list_text},
               {"shape", run.inputs.empty() ? "" : run.inputs[0].shape},
               {"reviews", run.inputs.empty() ? 0 : run.inputs[0].reviews},
               {"added", r.added},
               {"updated", r.updated},
               {"unchanged", r.unchanged},
               {"kept", r.kept},
               {"skipped", r.skipped},
               {"version", r.version},
               {"versionBumped", r.version_bumped},
               {"changes", std::move(changes)},
               {"messages", std::move(messages)}})
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace
}  // namespace factlens

EMSCRIPTEN_BINDINGS(factlens) {
  using factlens::EngineBinding;
  emscripten::function("memoryStats", &factlens::MemoryStats);
  emscripten::function("importClaimReview", &factlens::ImportClaimReview);
  emscripten::class_<EngineBinding>("Engine")
      .constructor<>()
      .function("loadList", &EngineBinding::LoadList)
      .function("inputBuffer", &EngineBinding::InputBuffer)
      .function("loadListInput", &EngineBinding::LoadListInput)
      .function("loadCompiledFrom", &EngineBinding::LoadCompiledFrom)
      .function("exportCompiled", &EngineBinding::ExportCompiled)
      .function("unloadList", &EngineBinding::UnloadList)
      .function("lists", &EngineBinding::Lists)
      .function("postBuffer", &EngineBinding::PostBuffer)
      .function("checkInput", &EngineBinding::CheckInput)
      .function("checkBatchInput", &EngineBinding::CheckBatchInput)
      .function("search", &EngineBinding::Search)
      .function("setPolicy", &EngineBinding::SetPolicy)
      .function("policy", &EngineBinding::GetPolicy);
}
