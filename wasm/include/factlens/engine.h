// Copyright factlens authors. engine: owns the loaded lists and answers checks.
//
// One Engine serves a whole browser (or one CLI run). Lists are loaded whole or not
// at all: a list that fails to parse, verify or compile leaves the engine exactly as
// it was, including any earlier version of the same list.
#ifndef FACTLENS_ENGINE_H_
#define FACTLENS_ENGINE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "factlens/list.h"
#include "factlens/match.h"
#include "factlens/score.h"
#include "factlens/status.h"

namespace factlens {

struct LoadOptions {
  bool allow_unsigned = false;  // authoring tools only; the extension never sets it
  std::string signature;        // minisign signature file text
  std::string public_key;       // minisign public key (file text or base64 line)
  std::optional<int64_t> last_version;  // the version last accepted for this list id
  ParseLimits limits;
};

struct LoadedListInfo {
  ListInfo info;
  size_t rule_count = 0;
  bool is_signed = false;
};

class Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Parses, checks and compiles `text`, then adds it (replacing a loaded list with
  // the same id). Returns kSignature when unsigned without allow_unsigned,
  // kUnsupported when a signature is given (verification is not built yet),
  // kRollback when last_version is newer, kFormat/kLimit from parsing.
  Status LoadList(std::string_view text, const LoadOptions& options,
                  LoadedListInfo* info);

  // Removes the list `list_id`. Returns kNotFound if no such list is loaded.
  Status UnloadList(std::string_view list_id);

  // Returns the lists loaded, in load order.
  std::vector<LoadedListInfo> Lists() const;

  void SetPolicy(const Policy& policy) { policy_ = policy; }
  const Policy& policy() const { return policy_; }

  // Returns the verdict for the post `text` (UTF-8). Posts longer than
  // kMaxPostBytes are checked on their first kMaxPostBytes.
  Verdict Check(std::string_view text, const CheckContext& context) const;

  static constexpr size_t kMaxPostBytes = 1u << 20;

 private:
  struct Loaded;
  std::vector<std::unique_ptr<Loaded>> lists_;
  Policy policy_;
};

}  // namespace factlens

#endif  // FACTLENS_ENGINE_H_
