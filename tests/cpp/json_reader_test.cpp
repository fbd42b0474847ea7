// Tests of json_reader: it accepts exactly what nlohmann/json's strict parser
// accepts, builds the same values, and locates what it rejects.
#include "factlens/json_reader.h"

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "nlohmann/json.hpp"

using namespace factlens;
using nlohmann::json;

namespace {

// Builds an nlohmann value from the reader's events, as json::parse would (a
// repeated key keeps its last value).
class Builder : public JsonHandler {
 public:
  json root;

  bool Null() override { return Put(json(nullptr)); }
  bool Boolean(bool v) override { return Put(json(v)); }
  bool Integer(int64_t v) override { return Put(json(v)); }
  bool Unsigned(uint64_t v) override { return Put(json(v)); }
  bool Float(double v) override { return Put(json(v)); }
  bool String(std::string& v) override { return Put(json(std::move(v))); }
  bool StartObject() override { return Open(json::object()); }
  bool Key(std::string& k) override {
    keys_.back() = k;
    return true;
  }
  bool EndObject() override { return Close(); }
  bool StartArray() override { return Open(json::array()); }
  bool EndArray() override { return Close(); }

 private:
  bool Put(json v) {
    if (stack_.empty()) {
      root = std::move(v);
    } else if (stack_.back().is_object()) {
      stack_.back()[keys_.back()] = std::move(v);
    } else {
      stack_.back().push_back(std::move(v));
    }
    return true;
  }
  bool Open(json v) {
    stack_.push_back(std::move(v));
    keys_.emplace_back();
    return true;
  }
  bool Close() {
    json v = std::move(stack_.back());
    stack_.pop_back();
    keys_.pop_back();
    return Put(std::move(v));
  }
  std::vector<json> stack_;
  std::vector<std::string> keys_;
};

// The type of every value, recursively: 1 and 1.0, or 1u and 1, compare equal
// as nlohmann values but are different types to whoever reads them.
std::string Types(const json& j) {
  std::string out(1, static_cast<char>('a' + static_cast<int>(j.type())));
  if (j.is_structured()) {
    for (const auto& e : j) out += Types(e);
  }
  return out;
}

struct Outcome {
  bool ok;
  std::string error;
  json value;
};

Outcome Read(const std::string& text) {
  Builder b;
  Outcome o;
  o.ok = ReadJson(text, &b, &o.error);
  o.value = std::move(b.root);
  return o;
}

// Checks the reader against nlohmann on `text`.
void Compare(const std::string& text) {
  INFO("text: " << json(text).dump(-1, ' ', true, json::error_handler_t::replace));
  const Outcome ours = Read(text);
  const json theirs = json::parse(text, nullptr, /*allow_exceptions=*/false);
  // nlohmann stops at a NUL byte (see json_reader.h); the reader refuses one.
  const bool theirs_ok = !theirs.is_discarded() && text.find('\0') == std::string::npos;
  REQUIRE(ours.ok == theirs_ok);
  if (ours.ok) {
    CHECK(ours.error.empty());
    CHECK(ours.value == theirs);
    CHECK(Types(ours.value) == Types(theirs));
  } else {
    CHECK(ours.error.rfind("line ", 0) == 0);
  }
}

// Pieces that meet the edge cases of every token, strung together at random.
const char* const kPieces[] = {
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    " ",
    "\n",
    "\t",
    "\r",
    "\"a\"",
    "\"\"",
    "\"k\":",
    "\"\\u00e9\"",
    "\"\\ud83d\\ude00\"",
    "\"\\ud800\"",
    "\"\\udc00\"",
    "\"\\ud800\\u0041\"",
    "\"\\u12\"",
    "\"\\uZZZZ\"",
    "\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"",
    "\"\\x\"",
    "\"\\u0000\"",
    "\"\x01\"",
    "\"\x7f\"",
    "\"\xc3\xa9\"",
    "\"\xc0\xaf\"",
    "\"\xed\xa0\x80\"",
    "\"\xf4\x8f\xbf\xbf\"",
    "\"\xf4\x90\x80\x80\"",
    "\"\xe0\x9f\xbf\"",
    "\"\xf0\x8f\xbf\xbf\"",
    "\"\xc3\"",
    "\"\xe2\x82\"",
    "\"plain text long enough for whole words\"",
    "\"eight by\\\"te\"",
    "0",
    "-0",
    "1",
    "01",
    "-",
    "1.",
    "1.5",
    ".5",
    "1e5",
    "1E+5",
    "1e-5",
    "1e",
    "2.5e-3",
    "1e400",
    "-1e400",
    "1e-400",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "-9223372036854775809",
    "9223372036854775808",
    "123456789012345678901234567890",
    "true",
    "false",
    "null",
    "tru",
    "nul",
    "fals",
    "truex",
    "\xef\xbb\xbf",
    "\xef\xbb",
    "x",
    "'",
    "\"unterminated",
};
// Pieces with a NUL byte (a string literal would end at it).
const std::string kNulPieces[] = {std::string(1, '\0'), std::string("\"a\0b\"", 5),
                                  std::string("1\0", 2)};

}  // namespace

TEST_CASE("json_reader: the same values as nlohmann on well-formed documents",
          "[json_reader]") {
  for (const char* text :
       {"{}", "[]", "0", "\"s\"", "true", " null ", "\xef\xbb\xbf{\"a\":1}",
        "{\"a\":[1,-2,3.5,\"x\",{\"b\":null}],\"c\":{\"d\":[]}}",
        "[18446744073709551615,18446744073709551616,-9223372036854775808,"
        "-9223372036854775809,-0,0.0,1e-400]",
        "{\"dup\":1,\"dup\":2}",
        "[\"\\ud83d\\ude00\",\"\\u00e9\",\"\xf0\x9f\x98\x80\",\"\\u0000\",\"a\\/b\"]"}) {
    Compare(text);
  }
}

TEST_CASE("json_reader: accepts and rejects what nlohmann does, on random text",
          "[json_reader]") {
  std::mt19937 rng(20261201);
  const size_t piece_count = sizeof(kPieces) / sizeof(kPieces[0]);
  int accepted = 0;
  const int runs = 100000;
  for (int i = 0; i < runs; ++i) {
    std::string text;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < n; ++k) {
      if (rng() % 50 == 0) {
        text += kNulPieces[rng() % 3];
      } else {
        text += kPieces[rng() % piece_count];
      }
    }
    Compare(text);
    if (Read(text).ok) ++accepted;
  }
  // The pieces make documents often enough that both sides are exercised.
  CHECK(accepted > runs / 50);
  CHECK(accepted < runs / 2);
}

TEST_CASE("json_reader: the same values as nlohmann on mutated documents",
          "[json_reader]") {
  std::mt19937 rng(7);
  // Random documents, dumped by nlohmann, then one byte changed, dropped or added.
  std::function<json(int)> make = [&](int depth) -> json {
    switch (rng() % (depth > 3 ? 5 : 7)) {
      case 0:
        return json(nullptr);
      case 1:
        return json(rng() % 2 == 0);
      case 2:
        return json(static_cast<int64_t>(rng()) - (1ll << 31));
      case 3:
        return json(static_cast<double>(rng()) / 7.0);
      case 4: {
        std::string s;
        const int len = static_cast<int>(rng() % 20);
        for (int k = 0; k < len; ++k) {
          const char* choices[] = {"a",
                                   "Z",
                                   " ",
                                   "\"",
                                   "\\",
                                   "\n",
                                   "\xc3\xa9",
                                   "\xe2\x82\xac",
                                   "\xf0\x9f\x98\x80",
                                   "\x01"};
          s += choices[rng() % 10];
        }
        return json(s);
      }
      case 5: {
        json a = json::array();
        for (int k = static_cast<int>(rng() % 4); k > 0; --k)
          a.push_back(make(depth + 1));
        return a;
      }
      default: {
        json o = json::object();
        for (int k = static_cast<int>(rng() % 4); k > 0; --k) {
          o["k" + std::to_string(rng() % 5)] = make(depth + 1);
        }
        return o;
      }
    }
  };
  const char kBytes[] = "{}[],:\"\\ 0123456789.eE+-tfnul\x01\x80\xc3\xff";
  for (int i = 0; i < 20000; ++i) {
    std::string text = make(0).dump(i % 2 == 0 ? -1 : 2, ' ', i % 3 == 0);
    Compare(text);
    if (text.empty()) continue;
    const size_t at = rng() % text.size();
    const char byte = kBytes[rng() % (sizeof(kBytes) - 1)];
    switch (rng() % 3) {
      case 0:
        text[at] = byte;
        break;
      case 1:
        text.erase(at, 1);
        break;
      default:
        text.insert(at, 1, byte);
        break;
    }
    Compare(text);
  }
}

TEST_CASE("json_reader: a syntax error says where and what", "[json_reader]") {
  auto error = [](const std::string& text) { return Read(text).error; };
  CHECK(error("{\n  \"format\": \"factlens/1\",\n  \"list\": {,\n}") ==
        "line 3, column 12: unexpected ','; expected a string (an object key)");
  CHECK(error("[1,]") == "line 1, column 4: unexpected ']'; expected a value");
  CHECK(error("[1 2]") ==
        "line 1, column 4: unexpected '2'; expected ',' or ']' in an array");
  CHECK(error("{\"a\" 1}") ==
        "line 1, column 6: unexpected '1'; expected ':' after an object key");
  CHECK(error("") == "line 1, column 1: unexpected end of input; expected a value");
  CHECK(error("{} x") == "line 1, column 4: unexpected 'x' after the document's value");
  CHECK(error("[\"a\nb\"]") ==
        "line 1, column 4: control character U+000A must be escaped inside a string");
  CHECK(error("[\"ab\xff\"]") == "line 1, column 5: ill-formed UTF-8 inside a string");
  CHECK(error("[\"\\q\"]") ==
        "line 1, column 3: unexpected 'q' after '\\' inside a string");
  CHECK(error("[\n \"\\ud800x\"]") ==
        "line 2, column 3: a high surrogate (\\uD800-\\uDBFF) must be followed by a "
        "low one");
  CHECK(error("[1e999]") == "line 1, column 2: number 1e999 is out of range");
  CHECK(error("[\"open") == "line 1, column 7: unexpected end of input inside a string");
  // nlohmann accepts this (it reads the NUL as the end of the input).
  CHECK(error(std::string("{}\0{\"hidden\": 1}", 16)) ==
        "line 1, column 3: unexpected byte 0x00 after the document's value");
}

TEST_CASE("json_reader: a handler that refuses stops the reading, with no error",
          "[json_reader]") {
  struct Refuser : Builder {
    int strings = 0;
    bool String(std::string& v) override {
      ++strings;
      return v != "stop" && Builder::String(v);
    }
  } refuser;
  std::string error;
  CHECK_FALSE(ReadJson("[\"a\",\"stop\",\"b\", nonsense", &refuser, &error));
  CHECK(error.empty());
  CHECK(refuser.strings == 2);
}

TEST_CASE("json_reader: nesting is not recursion", "[json_reader]") {
  // A million levels would overflow the stack of a recursive reader (and wasm's
  // is small); here they cost a byte each.
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  struct Depth : JsonHandler {
    int depth = 0, max_depth = 0;
    bool StartArray() override {
      max_depth = std::max(max_depth, ++depth);
      return true;
    }
    bool EndArray() override {
      --depth;
      return true;
    }
  } d;
  std::string error;
  CHECK(ReadJson(deep, &d, &error));
  CHECK(d.max_depth == 1000000);
  CHECK(d.depth == 0);
}
