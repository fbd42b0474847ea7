// Copyright factlens authors. Embind bindings: the engine as the JS class `Engine`.
//
// Every method takes and returns JSON text. One serialiser (score.h VerdictToJson)
// then serves the CLI and JavaScript alike, so both builds are checked against the
// same expected output, and no C++ exception or pointer crosses the boundary.
// Results of fallible calls are {"ok":true,...} or {"ok":false,"kind","message"};
// web/index.js turns the latter into a thrown FactlensError.
#include <emscripten/bind.h>

#include <string>

#include "factlens/engine.h"
#include "nlohmann/json.hpp"

namespace factlens {
namespace {

using nlohmann::json;

std::string StatusJson(const Status& s) {
  json j = {{"ok", s.ok()}};
  if (!s.ok()) {
    j["kind"] = ErrorKindName(s.kind());
    j["message"] = s.message();
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json InfoJson(const LoadedListInfo& l) {
  return {{"id", l.info.id},
          {"name", l.info.name},
          {"publisher", {{"name", l.info.publisher_name}, {"url", l.info.publisher_url}}},
          {"version", l.info.version},
          {"issued", l.info.issued},
          {"expires", l.info.expires},
          {"ruleCount", l.rule_count},
          {"signed", l.is_signed}};
}

// Reads {"region": "DE", "language": "de"}; anything else is ignored.
CheckContext ContextFromJson(const std::string& text) {
  CheckContext context;
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
    json o = json::parse(options_json, nullptr, false);
    if (!o.is_object())
      return StatusJson(Status(ErrorKind::kFormat, "options: not an object"));
    LoadOptions options;
    // Type-checked reads: a wrong type must be an error, never an abort.
    auto flag = o.find("allowUnsigned");
    options.allow_unsigned = flag != o.end() && flag->is_boolean() && flag->get<bool>();
    auto signature = o.find("signature");
    if (signature != o.end() && signature->is_string()) options.signature = *signature;
    auto key = o.find("publicKey");
    if (key != o.end() && key->is_string()) options.public_key = *key;
    auto last = o.find("lastVersion");
    if (last != o.end() && last->is_number_integer()) {
      options.last_version = last->get<int64_t>();
    }
    LoadedListInfo info;
    Status s = engine_.LoadList(text, options, &info);
    if (!s.ok()) return StatusJson(s);
    return json({{"ok", true}, {"info", InfoJson(info)}})
        .dump(-1, ' ', false, json::error_handler_t::replace);
  }

  std::string UnloadList(const std::string& id) {
    return StatusJson(engine_.UnloadList(id));
  }

  std::string Lists() const {
    json out = json::array();
    for (const LoadedListInfo& l : engine_.Lists()) out.push_back(InfoJson(l));
    return out.dump(-1, ' ', false, json::error_handler_t::replace);
  }

  std::string Check(const std::string& text, const std::string& context_json) const {
    return VerdictToJson(engine_.Check(text, ContextFromJson(context_json)), text);
  }

  // `texts_json` is a JSON array of strings; returns a JSON array of verdicts.
  std::string CheckBatch(const std::string& texts_json,
                         const std::string& context_json) const {
    json texts = json::parse(texts_json, nullptr, false);
    if (!texts.is_array()) return "null";
    CheckContext context = ContextFromJson(context_json);
    std::string out = "[";
    for (size_t i = 0; i < texts.size(); ++i) {
      if (i) out += ',';
      const std::string text = texts[i].is_string() ? texts[i].get<std::string>() : "";
      out += VerdictToJson(engine_.Check(text, context), text);
    }
    return out + "]";
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
};

}  // namespace
}  // namespace factlens

EMSCRIPTEN_BINDINGS(factlens) {
  using factlens::EngineBinding;
  emscripten::class_<EngineBinding>("Engine")
      .constructor<>()
      .function("loadList", &EngineBinding::LoadList)
      .function("unloadList", &EngineBinding::UnloadList)
      .function("lists", &EngineBinding::Lists)
      .function("check", &EngineBinding::Check)
      .function("checkBatch", &EngineBinding::CheckBatch)
      .function("setPolicy", &EngineBinding::SetPolicy)
      .function("policy", &EngineBinding::GetPolicy);
}
