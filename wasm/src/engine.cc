// Copyright factlens authors.
#include "factlens/engine.h"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <optional>
#include <utility>

#include "factlens/binary.h"
#include "factlens/hash.h"
#include "factlens/stance.h"
#include "factlens/verify.h"

namespace factlens {

struct Engine::Loaded {
  LoadedListInfo info;
  std::unique_ptr<CompiledList> compiled;
};

// The text hash's seed is drawn when the first engine is made, not by the first
// load or check that needs it: under Node, the first draw from the random source
// starts its crypto module (7 ms), which belongs to start-up, not to a list.
Engine::Engine() : policy_(DefaultPolicy()) { TextHashSeed(); }
Engine::~Engine() = default;

namespace {

// Checks the signature chain: pinned key, rotations, then the list's signature.
// On success *verifier is the key that signed the list.
Status VerifySignature(std::string_view text, const LoadOptions& options,
                       PublicKey* verifier, std::vector<KeyRotation>* rotations,
                       std::string* trusted_comment) {
  if (options.public_key.empty()) {
    return Status(ErrorKind::kKey, "no public key pinned for this list");
  }
  if (options.signature.size() > kMaxSignatureFileBytes) {
    return Status(
        ErrorKind::kLimit,
        "signature: larger than " + std::to_string(kMaxSignatureFileBytes) + " bytes");
  }
  PublicKey key;
  Status s = ParsePublicKey(options.public_key, &key);
  if (!s.ok()) return s;
  Signature signature;
  s = ParseSignature(options.signature, &signature);
  if (!s.ok()) return s;
  for (size_t i = 0; i < options.rotations.size(); ++i) {
    KeyRotation rotation;
    s = VerifyRotation(options.rotations[i].statement, options.rotations[i].signature,
                       key, &rotation);
    if (!s.ok()) {
      return Status(s.kind(), "rotations[" + std::to_string(i) + "]: " + s.message());
    }
    key = rotation.new_key;
    rotations->push_back(rotation);
  }
  s = Verify(key, text, signature);
  if (!s.ok()) return s;
  *verifier = key;
  *trusted_comment = signature.trusted_comment;
  return Status::Ok();
}

int64_t NowUnix(const LoadOptions& options) {
  return options.now_unix.has_value() ? *options.now_unix
                                      : static_cast<int64_t>(std::time(nullptr));
}

}  // namespace

Status Engine::CheckLifecycle(const LoadedListInfo& out,
                              const LoadOptions& options) const {
  const ListInfo& li = out.info;
  if (li.expires_unix <= NowUnix(options)) {
    return Status(ErrorKind::kExpired, "list \"" + li.id + "\" version " +
                                           std::to_string(li.version) + " expired at " +
                                           li.expires);
  }
  auto refuse_rollback = [&](int64_t known, const std::string& known_digest,
                             const char* whose) -> Status {
    if (li.version < known) {
      return Status(ErrorKind::kRollback, "list.version: " + std::to_string(li.version) +
                                              " is older than the version " + whose +
                                              " (" + std::to_string(known) + ")");
    }
    if (li.version == known && !known_digest.empty() && known_digest != out.digest) {
      return Status(ErrorKind::kRollback,
                    "list.version: " + std::to_string(li.version) +
                        " was already accepted with other content (a replayed or "
                        "altered version; the publisher must raise the version)");
    }
    return Status::Ok();
  };
  if (options.last_version.has_value()) {
    Status s =
        refuse_rollback(*options.last_version, options.last_digest, "already accepted");
    if (!s.ok()) return s;
  }
  auto same = std::find_if(lists_.begin(), lists_.end(),
                           [&](const auto& l) { return l->info.info.id == li.id; });
  if (same != lists_.end()) {
    return refuse_rollback((*same)->info.info.version, (*same)->info.digest, "loaded");
  }
  return Status::Ok();
}

Status Engine::LoadList(std::string_view text, const LoadOptions& options,
                        LoadedListInfo* info, const std::function<void()>& text_done) {
  // Size first: nothing below may hash or parse more than the limit allows.
  if (text.size() > options.limits.max_list_bytes) {
    return Status(ErrorKind::kLimit, "list of " + std::to_string(text.size()) +
                                         " bytes exceeds the limit of " +
                                         std::to_string(options.limits.max_list_bytes));
  }
  auto loaded = std::make_unique<Loaded>();
  LoadedListInfo& out = loaded->info;
  std::vector<KeyRotation> rotations;
  // A signature that is given must verify, even for drafts.
  if (!options.signature.empty() || !options.allow_unsigned) {
    if (options.signature.empty()) {
      return Status(ErrorKind::kSignature,
                    "the list has no signature; only authoring tools may load unsigned "
                    "lists (allowUnsigned)");
    }
    PublicKey verifier;
    Status s =
        VerifySignature(text, options, &verifier, &rotations, &out.trusted_comment);
    if (!s.ok()) return s;
    out.is_signed = true;
    out.key_id = KeyIdHex(verifier.key_id);
    out.public_key = PublicKeyBase64(verifier);
    out.key_rotated = !rotations.empty();
  }
  // Each rule is compiled as it is read (CompiledList::Builder), so that the rules
  // are never all in memory as Rule objects beside the text. Compiling parses the
  // patterns anyway, so ParseList leaves their syntax to it (kLeftToCompile); the
  // load still reports what the steps would in their own order: ParseList's errors
  // (a pattern's syntax as written among them, in document order), then the
  // lifecycle's, then Compile's.
  CompileOptions compile_options;
  compile_options.use_prefilter = options.use_prefilter;
  compile_options.use_case_sensitive = options.use_case_sensitive;
  compile_options.similar = options.similar;
  // (A rule's record is at most its JSON's size and 16 bytes, and a rule's JSON
  // takes a hundred at least.)
  CompiledList::Builder builder(
      compile_options, std::min(EstimateRuleCount(text), options.limits.max_rules),
      text.size() + text.size() / 4, /*pattern_syntax_unchecked=*/true);
  Status compile_error;  // Compile's first that is not a pattern's syntax: held
  auto compile_rule = [&](Rule& rule, size_t index) {
    if (compile_error.ok()) {
      Status s = builder.Add(rule);
      if (s.ok()) return s;
      Status syntax = RulePatternSyntaxError(index, rule);
      if (!syntax.ok()) return syntax;  // ParseList's own (kChecked's)
      compile_error = std::move(s);
      return Status::Ok();
    }
    // Past it, only ParseList's errors can still come first.
    return RulePatternSyntaxError(index, rule);
  };
  ListInfo li;
  size_t rule_count = 0;
  Status s = ParseList(text, options.limits, compile_rule, &li, &rule_count,
                       PatternSyntax::kLeftToCompile);
  if (!s.ok()) return s;
  for (const KeyRotation& r : rotations) {
    if (r.list_id != "*" && r.list_id != li.id) {
      return Status(ErrorKind::kKey, "key rotation for list \"" + r.list_id +
                                         "\" cannot vouch for list \"" + li.id + "\"");
    }
  }
  out.digest = ContentDigest(text);
  if (text_done) text_done();  // (`text` is not read below)
  out.info = li;
  out.rule_count = rule_count;
  s = CheckLifecycle(out, options);
  if (!s.ok()) return s;
  if (!compile_error.ok()) return compile_error;
  auto same = std::find_if(lists_.begin(), lists_.end(),
                           [&](const auto& l) { return l->info.info.id == li.id; });
  loaded->compiled = builder.Finish(std::move(li));
  // Only now, with everything checked and compiled, does the engine change.
  if (info != nullptr) *info = out;
  if (same != lists_.end()) {
    *same = std::move(loaded);
  } else {
    lists_.push_back(std::move(loaded));
  }
  return Status::Ok();
}

bool Engine::IsStale(std::string_view list_id, int64_t now_unix) const {
  for (const auto& l : lists_) {
    if (l->info.info.id == list_id) return l->info.info.expires_unix <= now_unix;
  }
  return false;
}

namespace {

constexpr char kMagic[4] = {'F', 'L', 'C', 'L'};
constexpr uint32_t kLoadSection = SectionTag("LOAD");
constexpr uint32_t kRuleSection = SectionTag("RULE");  // CompiledList's, with the records

}  // namespace

Status Engine::ExportCompiled(std::string_view list_id,
                              const std::function<void(std::string_view)>& emit,
                              std::pair<uint64_t, uint64_t>* records) const {
  if (records != nullptr) *records = {0, 0};
  auto it = std::find_if(lists_.begin(), lists_.end(),
                         [&](const auto& l) { return l->info.info.id == list_id; });
  if (it == lists_.end()) {
    return Status(ErrorKind::kNotFound,
                  "no list \"" + std::string(list_id) + "\" is loaded");
  }
  std::vector<CompiledSectionWriter> sections = (*it)->compiled->ExportSections();
  // How the engine accepted the list: what lists() reports and what rollback
  // checks compare (the digest of the list text).
  const LoadedListInfo& l = (*it)->info;
  sections.push_back({kLoadSection, [&l](ByteWriter* w) {
                        w->U8(l.is_signed ? 1 : 0);
                        w->U64(l.rule_count);
                        w->Str(l.digest);
                        w->Str(l.key_id);
                        w->Str(l.public_key);
                        w->U8(l.key_rotated ? 1 : 0);
                        w->Str(l.trusted_comment);
                      }});
  // In order of tag, as the format has always had them.
  std::sort(sections.begin(), sections.end(),
            [](const CompiledSectionWriter& a, const CompiledSectionWriter& b) {
              return a.tag < b.tag;
            });
  // Each section's size first (ByteWriter::Counter): its header, which comes
  // before it, holds it, and the checksum starts from the total.
  std::vector<size_t> sizes;
  uint64_t body = 12;  // the bytes before the checksum
  for (const CompiledSectionWriter& section : sections) {
    ByteWriter counter = ByteWriter::Counter();
    section.write(&counter);
    sizes.push_back(counter.size());
    body += 8 + counter.size() + section.held_size;
  }
  Checksum64Stream sum(body);
  uint64_t emitted = 0;
  auto put = [&](std::string_view part) {
    sum.Add(part);
    emitted += part.size();
    emit(part);
  };
  {
    ByteWriter header;
    header.Append(std::string_view(kMagic, 4));
    header.U32(kCompiledFormVersion);
    header.U32(static_cast<uint32_t>(sections.size()));
    put(header.bytes());
  }
  for (size_t i = 0; i < sections.size(); ++i) {
    ByteWriter head;
    head.U32(sections[i].tag);
    head.U32(static_cast<uint32_t>(sizes[i] + sections[i].held_size));
    put(head.bytes());
    // Written a part at a time (kReadPart bytes, or a large array as it is), each
    // handed out before the next is written: a section is never whole here.
    ByteWriter w = ByteWriter::Streaming(kReadPart, put);
    w.Reserve(sizes[i]);
    sections[i].write(&w);
    w.Flush();
    // The records are the RULE section's bytes after its counts and strings.
    const bool rule_section = sections[i].tag == kRuleSection;
    if (records != nullptr && rule_section) *records = {emitted, emitted};
    if (sections[i].held_size > 0 && !sections[i].put_held(put)) {
      return Status(ErrorKind::kFormat,
                    "the list's rule records could not be read from the compiled form "
                    "it was restored from (its bytes are no longer there)");
    }
    if (records != nullptr && rule_section) records->second = emitted;
  }
  ByteWriter trailer;
  trailer.U64(sum.Finish());
  emit(trailer.bytes());
  return Status::Ok();
}

Status Engine::ExportCompiled(std::string_view list_id, std::string* out) const {
  out->clear();
  Status s = ExportCompiled(list_id, [out](std::string_view part) { out->append(part); });
  if (!s.ok()) out->clear();
  return s;
}

Status Engine::LoadCompiled(std::string_view bytes, const LoadOptions& options,
                            LoadedListInfo* info) {
  return LoadCompiled(
      bytes.size(),
      [bytes](size_t offset, size_t size) { return bytes.substr(offset, size); }, options,
      info);
}

Status Engine::LoadCompiled(size_t form_size, const CompiledFormReader& read,
                            const LoadOptions& options, LoadedListInfo* info,
                            bool keep_reader) {
  auto bad = [](const std::string& why) {
    return Status(ErrorKind::kFormat, "compiled list: " + why);
  };
  if (form_size < 20 || std::memcmp(read(0, 4).data(), kMagic, 4) != 0) {
    return bad("not a factlens compiled list (no \"FLCL\" header)");
  }
  ByteReader header(read(4, 8));
  const uint32_t version = header.U32();
  const uint32_t count = header.U32();
  if (version != kCompiledFormVersion) {
    return bad("format version " + std::to_string(version) + ", this engine reads " +
               std::to_string(kCompiledFormVersion) +
               "; load the list text again and re-export");
  }
  // The checksum first, over the form in parts of kReadPart bytes (a reader over
  // bytes held elsewhere copies each part in, then the next over it).
  const size_t body_size = form_size - 8;
  Checksum64Stream checksum(body_size);
  for (size_t at = 0; at < body_size; at += kReadPart)
    checksum.Add(read(at, std::min(kReadPart, body_size - at)));
  if (ByteReader(read(body_size, 8)).U64() != checksum.Finish()) {
    return bad("checksum mismatch: the bytes are truncated or corrupted");
  }
  // Where each section is; each is read when it is imported.
  CompiledSectionSpans sections;
  size_t at = 12;
  for (uint32_t i = 0; i < count; ++i) {
    auto truncated = [&] { return bad("section " + std::to_string(i) + " truncated"); };
    if (body_size - at < 8) return truncated();
    ByteReader section_header(read(at, 8));
    const uint32_t tag = section_header.U32();
    const uint32_t length = section_header.U32();
    at += 8;
    if (length > body_size - at) return truncated();
    if (!sections.emplace(tag, CompiledSectionSpan{at, length}).second) {
      return bad("section " + std::to_string(i) + " repeated");
    }
    at += length;
  }
  if (at != body_size) return bad("bytes after the last section");
  auto load = sections.find(kLoadSection);
  if (load == sections.end()) return bad("section LOAD: missing");
  auto loaded = std::make_unique<Loaded>();
  LoadedListInfo& out = loaded->info;
  ByteReader lr(read(load->second.offset, load->second.size));
  const bool was_signed = lr.U8() != 0;
  const uint64_t rule_count = lr.U64();
  lr.Str(&out.digest);
  lr.Str(&out.key_id);
  lr.Str(&out.public_key);
  out.key_rotated = lr.U8() != 0;
  lr.Str(&out.trusted_comment);
  if (!lr.ok() || !lr.at_end()) return bad("section LOAD: malformed");
  if (!was_signed && !options.allow_unsigned) {
    return Status(ErrorKind::kSignature,
                  "the compiled list was made from an unsigned list; only authoring "
                  "tools may load unsigned lists (allowUnsigned)");
  }
  CompileOptions compile_options;
  compile_options.use_prefilter = options.use_prefilter;
  compile_options.use_case_sensitive = options.use_case_sensitive;
  compile_options.similar = options.similar;
  Status s = CompiledList::Import(sections, read, compile_options, &loaded->compiled,
                                  keep_reader);
  if (!s.ok()) return s;
  const ListInfo& list_info = loaded->compiled->info();
  if (loaded->compiled->rule_count() != rule_count) {
    return bad("section LOAD: rule count does not match section RULE");
  }
  out.info = list_info;
  out.rule_count = rule_count;
  out.is_signed = was_signed;
  // The same lifecycle checks as for list text: expiry, and rollback against
  // last_version/last_digest and against a version already loaded.
  s = CheckLifecycle(out, options);
  if (!s.ok()) return s;
  if (info != nullptr) *info = out;
  auto same = std::find_if(lists_.begin(), lists_.end(),
                           [&](const auto& l) { return l->info.info.id == out.info.id; });
  if (same != lists_.end()) {
    *same = std::move(loaded);
  } else {
    lists_.push_back(std::move(loaded));
  }
  return Status::Ok();
}

const CompiledList* Engine::Compiled(std::string_view list_id) const {
  for (const auto& l : lists_) {
    if (l->info.info.id == list_id) return l->compiled.get();
  }
  return nullptr;
}

Status Engine::UnloadList(std::string_view list_id) {
  auto it = std::find_if(lists_.begin(), lists_.end(),
                         [&](const auto& l) { return l->info.info.id == list_id; });
  if (it == lists_.end()) {
    return Status(ErrorKind::kNotFound,
                  "no list \"" + std::string(list_id) + "\" is loaded");
  }
  lists_.erase(it);
  return Status::Ok();
}

std::vector<LoadedListInfo> Engine::Lists() const {
  std::vector<LoadedListInfo> out;
  for (const auto& l : lists_) out.push_back(l->info);
  return out;
}

namespace {

// Returns `text` cut to Engine::kMaxPostBytes at a character boundary, so the tail
// is not a broken sequence.
std::string_view Truncated(std::string_view text) {
  if (text.size() <= Engine::kMaxPostBytes) return text;
  size_t cut = Engine::kMaxPostBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

}  // namespace

std::vector<SearchResult> Engine::Search(std::string_view text, size_t k,
                                         const std::vector<std::string>& withheld) const {
  text = Truncated(text);
  k = std::min(k, kMaxSearchResults);
  std::vector<SearchResult> out;
  if (lists_.empty() || k == 0) return out;
  NormalizedText post = Normalize(text);
  for (const auto& l : lists_) {
    const CompiledList& compiled = *l->compiled;
    std::vector<uint32_t> held;
    if (!withheld.empty()) {
      for (uint32_t r = 0; r < compiled.rule_count(); ++r) {
        if (std::find(withheld.begin(), withheld.end(), compiled.rule_id(r)) !=
            withheld.end())
          held.push_back(r);
      }
    }
    for (const SimilarHit& hit : compiled.Search(post, k, held)) {
      out.push_back(
          {l->info.info.id, &compiled.rule(hit.rule_index), hit.score, hit.features});
    }
  }
  // Stable: equal scores keep load order, then rule order.
  std::stable_sort(
      out.begin(), out.end(),
      [](const SearchResult& a, const SearchResult& b) { return a.score > b.score; });
  if (out.size() > k) out.resize(k);
  return out;
}

Verdict Engine::Check(std::string_view text, const CheckContext& context) const {
  text = Truncated(text);
  std::vector<ExplainedMatch> explained;
  if (!lists_.empty()) {
    NormalizedText post = Normalize(text);
    std::optional<StanceReader> stance;  // made for the first match
    for (const auto& l : lists_) {
      for (RuleMatch& m : l->compiled->Match(post)) {
        if (!stance) stance.emplace(text, post);
        ExplainedMatch e;
        e.list_id = l->info.info.id;
        e.rule = &l->compiled->rule(m.rule_index);
        e.kind = m.kind;
        e.score = m.score;
        e.spans = std::move(m.spans);
        e.stance = stance->Of(e.spans, *e.rule);
        explained.push_back(std::move(e));
      }
    }
  }
  return Decide(std::move(explained), policy_, context);
}

}  // namespace factlens
