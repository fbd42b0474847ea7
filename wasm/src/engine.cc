// Copyright factlens authors.
#include "factlens/engine.h"

#include <algorithm>
#include <utility>

namespace factlens {

struct Engine::Loaded {
  LoadedListInfo info;
  std::unique_ptr<CompiledList> compiled;
};

Engine::Engine() : policy_(DefaultPolicy()) {}
Engine::~Engine() = default;

Status Engine::LoadList(std::string_view text, const LoadOptions& options,
                        LoadedListInfo* info) {
  // Signature checks come first so that an unsigned or forged list costs no
  // parsing work. Verification itself arrives with the signed-lists work; until
  // then a signature is refused rather than silently accepted.
  if (!options.signature.empty() || !options.public_key.empty()) {
    return Status(ErrorKind::kUnsupported,
                  "signature verification is not available in this build; "
                  "load unsigned drafts with allowUnsigned");
  }
  if (!options.allow_unsigned) {
    return Status(ErrorKind::kSignature,
                  "the list has no signature; only authoring tools may load unsigned "
                  "lists (allowUnsigned)");
  }
  RuleList list;
  Status s = ParseList(text, options.limits, &list);
  if (!s.ok()) return s;
  if (options.last_version.has_value() && list.info.version < *options.last_version) {
    return Status(ErrorKind::kRollback,
                  "list.version: " + std::to_string(list.info.version) +
                      " is older than the version already accepted (" +
                      std::to_string(*options.last_version) + ")");
  }
  auto loaded = std::make_unique<Loaded>();
  loaded->info.info = list.info;
  loaded->info.rule_count = list.rules.size();
  loaded->info.is_signed = false;
  s = CompiledList::Compile(std::move(list), &loaded->compiled);
  if (!s.ok()) return s;
  // Only now, with everything checked and compiled, does the engine change.
  if (info != nullptr) *info = loaded->info;
  auto same = std::find_if(lists_.begin(), lists_.end(), [&](const auto& l) {
    return l->info.info.id == loaded->info.info.id;
  });
  if (same != lists_.end()) {
    *same = std::move(loaded);
  } else {
    lists_.push_back(std::move(loaded));
  }
  return Status::Ok();
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

Verdict Engine::Check(std::string_view text, const CheckContext& context) const {
  if (text.size() > kMaxPostBytes) {
    // Cut at a character boundary so the tail is not a broken sequence.
    size_t cut = kMaxPostBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut);
  }
  std::vector<ExplainedMatch> explained;
  if (!lists_.empty()) {
    NormalizedText post = Normalize(text);
    for (const auto& l : lists_) {
      for (RuleMatch& m : l->compiled->Match(post)) {
        ExplainedMatch e;
        e.list_id = l->info.info.id;
        e.rule = &l->compiled->list().rules[m.rule_index];
        e.kind = m.kind;
        e.score = m.score;
        e.spans = std::move(m.spans);
        explained.push_back(std::move(e));
      }
    }
  }
  return Decide(std::move(explained), policy_, context);
}

}  // namespace factlens
