// Fuzzes matching: the first byte chooses whether the input is a post checked
// against the demo list (patterns, keywords, URLs) or a list checked against fixed
// posts. Verdicts must be well-formed: spans inside the post, strongest first.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "factlens/engine.h"

namespace {

std::string ReadDemoList() {
  std::ifstream in(std::string(FACTLENS_SOURCE_DIR) + "/rules/examples/demo.json");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void CheckVerdict(const factlens::Verdict& v, size_t post_size) {
  for (const factlens::ExplainedMatch& m : v.matches) {
    if (m.action > v.action || m.score < 0 || m.score > 1) __builtin_trap();
    for (const factlens::ByteRange& s : m.spans) {
      if (s.begin > s.end || s.end > post_size) __builtin_trap();
    }
  }
  factlens::VerdictToJson(v, std::string(post_size, 'x'));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace factlens;
  if (size == 0) return 0;
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  LoadOptions unsigned_draft;
  unsigned_draft.allow_unsigned = true;
  if (data[0] & 1) {
    static Engine* demo = [] {
      auto* e = new Engine();
      if (!e->LoadList(
                ReadDemoList(),
                [] {
                  LoadOptions o;
                  o.allow_unsigned = true;
                  return o;
                }(),
                nullptr)
               .ok()) {
        __builtin_trap();
      }
      return e;
    }();
    CheckVerdict(demo->Check(in, {"LK", ""}), in.size());
  } else {
    Engine engine;
    unsigned_draft.limits.max_list_bytes = 1 << 18;
    if (engine.LoadList(in, unsigned_draft, nullptr).ok()) {
      for (const char* post :
           {"5g spreads the virus https://fake.example/a", "h0ax v4ccine", "",
            "\xF0\x9F\x99\x84 the earth is flat"}) {
        CheckVerdict(engine.Check(post, {}), std::string_view(post).size());
      }
    }
  }
  return 0;
}
