// Copyright factlens authors.
//
// The list text is read by json_reader (strict JSON, fast) into a small DOM of our
// own (Value) through a builder rather than with nlohmann's json::parse, because
// the builder can (1) stop at the first limit (depth, rule count, string size)
// before memory grows with hostile input, (2) reject duplicate keys, which
// json::parse silently resolves, and (3) hand each rule on as soon as it is read,
// so a large list is never whole as a JSON tree.
#include "factlens/list.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "factlens/hash.h"
#include "factlens/json_reader.h"
#include "re2/regexp.h"

namespace factlens {
namespace {

constexpr int64_t kMaxSafeInteger = 9007199254740991;  // 2^53 - 1, exact in JS

// ------------------------------------------------------------------------ DOM --

// One JSON value of the list, as the checks below read it. (nlohmann/json's tree
// cost a map node per member and a heap copy per string; with this one a 10k list
// loads 7% faster.) An object keeps its members in document order; OnlyKeys
// reports unknown keys in byte order, as a sorted map listed them, so messages do
// not depend on the order an author wrote the fields in.
struct Member;
struct Value {
  enum class Kind : uint8_t {
    kNull,
    kBool,
    kInteger,
    kUnsigned,
    kFloat,
    kString,
    kArray,
    kObject
  };
  Value() = default;
  explicit Value(Kind k) : kind(k) {}

  Kind kind = Kind::kNull;
  // (A boolean's or a float's value is never read: the checks read only its kind.)
  union {
    int64_t integer = 0;  // kInteger
    uint64_t natural;     // kUnsigned
  };
  std::string string;
  std::vector<Value> items;     // kArray
  std::vector<Member> members;  // kObject

  bool is_object() const { return kind == Kind::kObject; }
  bool is_array() const { return kind == Kind::kArray; }
  bool is_string() const { return kind == Kind::kString; }
  // An integer without fraction or exponent, of either sign (as nlohmann's
  // is_number_integer).
  bool is_integer() const { return kind == Kind::kInteger || kind == Kind::kUnsigned; }
  // True if this is an integer from `low` to `high`, then stored in `*out`.
  // (The reader sends an integer without a sign as unsigned, a negative one as
  // signed; "-0" comes as a signed 0.)
  bool IntegerIn(int64_t low, int64_t high, int64_t* out) const {
    int64_t v;
    if (kind == Kind::kInteger) {
      v = integer;
    } else if (kind == Kind::kUnsigned && natural <= uint64_t{INT64_MAX}) {
      v = static_cast<int64_t>(natural);
    } else {
      return false;
    }
    if (v < low || v > high) return false;
    *out = v;
    return true;
  }
  // Returns the member `key`, or nullptr.
  Value* Find(std::string_view key);
};
struct Member {
  explicit Member(std::string&& k) : key(std::move(k)) {}
  std::string key;
  Value value;
};

Value* Value::Find(std::string_view key) {
  for (Member& m : members) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

// ---------------------------------------------------------------- DOM builder --

class LimitedDomBuilder : public JsonHandler {
 public:
  // `on_rule`, if set, receives each element of the top-level "rules" array as soon
  // as it is complete (with its index), and the builder drops it from the array:
  // a list of 100k rules is never whole in memory as a JSON tree.
  using RuleSink = std::function<void(Value&&, size_t)>;
  LimitedDomBuilder(const ParseLimits& limits, Value* root, RuleSink on_rule = nullptr)
      : limits_(limits), root_(root), on_rule_(std::move(on_rule)) {}

  bool Null() override { return Put(Value::Kind::kNull); }
  bool Boolean(bool /*value*/) override { return Put(Value::Kind::kBool); }
  bool Integer(int64_t v) override {
    return Put(Value::Kind::kInteger, [v](Value& slot) { slot.integer = v; });
  }
  bool Unsigned(uint64_t v) override {
    return Put(Value::Kind::kUnsigned, [v](Value& slot) { slot.natural = v; });
  }
  bool Float(double /*value*/) override { return Put(Value::Kind::kFloat); }
  bool String(std::string& v) override {
    if (v.size() > limits_.max_string_bytes) {
      return Fail(ErrorKind::kLimit, "string of " + std::to_string(v.size()) +
                                         " bytes exceeds the limit of " +
                                         std::to_string(limits_.max_string_bytes));
    }
    return Put(Value::Kind::kString, [&v](Value& slot) { slot.string = std::move(v); });
  }
  bool StartObject() override { return Open(Value::Kind::kObject); }
  bool Key(std::string& k) override {
    Frame& top = stack_.back();
    // The pending key is the previous member's: the error is about this object.
    top.key = nullptr;
    if (k.size() > limits_.max_string_bytes)
      return Fail(ErrorKind::kLimit, "key too long");
    std::vector<Member>& members = top.value->members;
    // A rule has a few members, searched in place; an object with many (hostile,
    // or not a rule) gets a set, so that it cannot cost a search per member.
    bool duplicate;
    if (members.size() < kMembersSearched) {
      duplicate = top.value->Find(k) != nullptr;
    } else {
      if (top.keys == nullptr) {
        top.keys = std::make_unique<std::unordered_set<std::string>>();
        for (const Member& m : members) top.keys->insert(m.key);
      }
      duplicate = !top.keys->insert(k).second;
    }
    if (duplicate) return Fail(ErrorKind::kFormat, "duplicate key \"" + k + "\"");
    // (Room for a rule's fields at once: growing 1, 2, 4, 8 cost an allocation and
    // a move of the members each time.)
    if (members.empty()) members.reserve(kMembersReserved);
    members.emplace_back(std::move(k));
    top.key = &members.back().key;
    return true;
  }
  bool EndObject() override { return Close(); }
  bool StartArray() override { return Open(Value::Kind::kArray); }
  bool EndArray() override { return Close(); }
  // A syntax error is located by line and column, not by JSON path.
  void SyntaxError(std::string message) {
    if (status_.ok()) status_ = Status(ErrorKind::kFormat, std::move(message));
  }

  const Status& status() const { return status_; }

 private:
  static constexpr size_t kMembersSearched = 16;
  static constexpr size_t kMembersReserved = 9;  // a rule's fields, extensions aside
  struct Frame {
    Value* value;
    const std::string* key;  // the pending member's key, objects only
    size_t count;            // elements so far, arrays only
    // The keys of an object of kMembersSearched members or more (made then: a
    // frame is pushed for every object and array).
    std::unique_ptr<std::unordered_set<std::string>> keys;
  };

  bool Open(Value::Kind kind) {
    if (stack_.size() + 1 > limits_.max_depth) {
      return Fail(ErrorKind::kLimit, "JSON nested deeper than " +
                                         std::to_string(limits_.max_depth) + " levels");
    }
    if (!Count()) return false;
    Value* value = Place(kind);
    // (A kept vector is empty; its capacity is what is reused.)
    if (kind == Value::Kind::kObject && !spare_members_.empty()) {
      value->members = std::move(spare_members_.back());
      spare_members_.pop_back();
    } else if (kind == Value::Kind::kArray && !spare_items_.empty()) {
      value->items = std::move(spare_items_.back());
      spare_items_.pop_back();
    }
    stack_.push_back({value, nullptr, 0, nullptr});
    return true;
  }

  bool Close() {
    stack_.pop_back();
    RuleDone();
    return true;
  }

  // Places a value of `kind`, which `fill` completes (made in its place: a value
  // made apart and moved in cost a construction, a move and a destruction).
  template <typename Fill>
  bool Put(Value::Kind kind, const Fill& fill) {
    if (!Count()) return false;
    fill(*Place(kind));
    RuleDone();
    return status_.ok();
  }
  // A value whose kind is all there is to it (the checks never read a boolean's or
  // a float's value).
  bool Put(Value::Kind kind) {
    return Put(kind, [](Value&) {});
  }

  bool IsRules(const Frame& f) const { return f.key != nullptr && *f.key == "rules"; }

  // True if the innermost open value is the top-level "rules" array.
  bool InRules() const {
    return stack_.size() == 2 && IsRules(stack_[0]) && stack_[1].value->is_array();
  }

  // Hands a just-completed element of the rules array to on_rule_.
  void RuleDone() {
    if (!on_rule_ || !InRules() || !status_.ok()) return;
    std::vector<Value>& items = stack_[1].value->items;
    on_rule_(std::move(items.back()), stack_[1].count - 1);
    Recycle(items.back());
    items.pop_back();
  }

  // Keeps the vectors of a handed-on rule's objects and arrays, emptied, for the
  // next rule's. A rule's JSON is a few objects and arrays, and making and freeing
  // their vectors for every rule cost 2.5% of a 10k load's instructions (callgrind). What
  // is kept is no more than one rule's tree held at once, as it was while it was read.
  void Recycle(Value& v) {
    for (Member& m : v.members) Recycle(m.value);
    for (Value& item : v.items) Recycle(item);
    if (v.members.capacity() > 0) {
      v.members.clear();
      spare_members_.push_back(std::move(v.members));
    }
    if (v.items.capacity() > 0) {
      v.items.clear();
      spare_items_.push_back(std::move(v.items));
    }
  }

  // Counts one more value against the list's budget of values.
  bool Count() {
    if (++values_ <= limits_.max_values) return true;
    return Fail(
        ErrorKind::kLimit,
        "the list has more than " + std::to_string(limits_.max_values) + " JSON values");
  }

  // Returns a fresh value of `kind` where the next value goes: the root, the
  // pending member of the innermost object (made empty by Key), or the end of the
  // innermost array.
  Value* Place(Value::Kind kind) {
    if (stack_.empty()) {
      *root_ = Value(kind);
      return root_;
    }
    Frame& top = stack_.back();
    if (top.value->is_object()) {
      Value& slot = top.value->members.back().value;
      slot.kind = kind;
      return &slot;
    }
    ++top.count;
    // The rules array is the only one that can grow large; bound it while reading.
    if (stack_.size() == 2 && IsRules(stack_[0]) && top.count > limits_.max_rules) {
      Fail(ErrorKind::kLimit,
           "rules: more than " + std::to_string(limits_.max_rules) + " rules");
    }
    return &top.value->items.emplace_back(kind);
  }

  bool Fail(ErrorKind kind, std::string message) {
    if (status_.ok()) status_ = Status(kind, Where() + message);
    return false;
  }

  // Returns the JSON path of the current position, e.g. "rules[3].match: ".
  std::string Where() const {
    std::string path;
    for (size_t i = 0; i < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      if (f.value->is_object()) {
        if (f.key == nullptr || f.key->empty()) continue;
        if (!path.empty()) path += '.';
        path += *f.key;
      } else {
        path += "[" + std::to_string(f.count == 0 ? 0 : f.count - 1) + "]";
      }
    }
    return path.empty() ? "" : path + ": ";
  }

  const ParseLimits& limits_;
  Value* root_;
  RuleSink on_rule_;
  std::vector<Frame> stack_;
  std::vector<std::vector<Member>> spare_members_;  // see Recycle
  std::vector<std::vector<Value>> spare_items_;
  size_t values_ = 0;
  Status status_;
};

// ------------------------------------------------------------------- checking --

// True if `text` ends in ": ", as a rule's own prefix does.
bool EndsWithColon(const std::string& text) {
  return text.size() >= 2 && text.compare(text.size() - 2, 2, ": ") == 0;
}

// Where a check looks, as its message gives it: "list.publisher", or a rule's
// field, "rules[3] (id \"x\"): match.keywords[0]". A path becomes text only for a
// message (Text): a rule's checks name a dozen places, almost never in an error,
// and making each place's text up front cost a rule several allocations: 3.6% of
// a 10k load's instructions (callgrind). A path refers to its parent: keep each one that
// is extended in a variable of its own, as ReadRule does.
class Path {
 public:
  // The document ("") or a place named outright ("list", "list.publisher").
  Path(const char* name) : name_(name) {}  // NOLINT: a literal is a path
  // Rule `index` of the rules array. `*id`, when set, is the rule's id as read so
  // far: the message names the rule by its first 128 bytes.
  Path(size_t index, const std::string* const* id) : index_(index), id_(id) {}

  Path Key(std::string_view key) const { return Path(this, key, kNoIndex); }
  Path At(size_t index) const { return Path(this, {}, index); }

  std::string Text() const {
    std::string text;
    AppendTo(&text);
    return text;
  }

 private:
  static constexpr size_t kNoIndex = ~size_t{0};
  Path(const Path* parent, std::string_view key, size_t index)
      : parent_(parent), key_(key), index_(index) {}

  void AppendTo(std::string* text) const {
    if (name_ != nullptr) {
      text->append(name_);
    } else if (parent_ == nullptr) {  // a rule
      *text += "rules[" + std::to_string(index_) + "]";
      if (*id_ != nullptr) *text += " (id \"" + (*id_)->substr(0, 128) + "\")";
      *text += ": ";
    } else {
      parent_->AppendTo(text);
      if (index_ != kNoIndex) {
        *text += "[" + std::to_string(index_) + "]";
      } else {
        // A member of a rule follows its ": "; of a named place, a '.'.
        if (!text->empty() && !EndsWithColon(*text)) *text += '.';
        text->append(key_);
      }
    }
  }

  const Path* parent_ = nullptr;
  const char* name_ = nullptr;
  std::string_view key_;
  size_t index_ = kNoIndex;
  const std::string* const* id_ = nullptr;
};

// Collects the first semantic error; every check names where it looked.
class Checker {
 public:
  explicit Checker(const ParseLimits& limits) : limits_(limits) {}

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  size_t unicode_classes = 0;  // in the list's patterns so far
  // With PatternSyntax::kLeftToCompile: the current rule's patterns whose syntax
  // PatternSyntax::kChecked would have checked by now (ReadRule's first ones).
  bool check_syntax = true;
  size_t patterns_passed = 0;

  // The message reads "where: message", or after a rule's own prefix (which ends
  // in ": "), "rules[3] (id \"x\"): message".
  bool Fail(const Path& where, const std::string& message,
            ErrorKind kind = ErrorKind::kFormat) {
    if (!status_.ok()) return false;
    std::string text = where.Text();
    if (!text.empty() && !EndsWithColon(text)) text += ": ";
    status_ = Status(kind, text + message);
    return false;
  }

  // Fails on keys outside `allowed`, naming the first in byte order; keys starting
  // with "x-" are extensions. (string_views: a key is compared with each allowed
  // name by length first, where a const char* cost a strlen and a memcmp each, for
  // every key of 100k rules.)
  bool OnlyKeys(const Value& obj, const Path& where,
                std::initializer_list<std::string_view> allowed) {
    const std::string* first_unknown = nullptr;
    for (const Member& m : obj.members) {
      const std::string& k = m.key;
      if (k.size() >= 2 && k[0] == 'x' && k[1] == '-') continue;
      // (Length and first byte before the bytes: rfind and == each cost a call.)
      bool known = std::any_of(allowed.begin(), allowed.end(), [&](std::string_view a) {
        return a.size() == k.size() && !k.empty() && a[0] == k[0] && a == k;
      });
      if (!known && (first_unknown == nullptr || k < *first_unknown)) first_unknown = &k;
    }
    if (first_unknown != nullptr) return Fail(where.Key(*first_unknown), "unknown field");
    return true;
  }

  Value* Object(Value& parent, std::string_view key, const Path& where, bool required) {
    Value* v = parent.Find(key);
    if (v == nullptr) {
      if (required) Fail(where.Key(key), "missing required field");
      return nullptr;
    }
    if (!v->is_object()) {
      Fail(where.Key(key), "must be an object");
      return nullptr;
    }
    return v;
  }

  // Reads a string field of 1..max_bytes bytes, moving it out of `parent` (each
  // rule's JSON is read once, then dropped).
  bool String(Value& parent, std::string_view key, const Path& where, bool required,
              size_t max_bytes, std::string* out) {
    Value* v = parent.Find(key);
    if (v == nullptr) {
      return required ? Fail(where.Key(key), "missing required field") : true;
    }
    return StringValue(*v, where.Key(key), max_bytes, out);
  }

  // A string over a field's documented length is a format error; over a hard
  // limit of ParseLimits (strings, patterns), a limit error.
  bool StringValue(Value& v, const Path& where, size_t max_bytes, std::string* out) {
    if (!v.is_string()) return Fail(where, "must be a string");
    std::string& s = v.string;
    if (s.empty()) return Fail(where, "must not be empty");
    if (s.size() > max_bytes) {
      bool hard =
          max_bytes == limits_.max_string_bytes || max_bytes == limits_.max_pattern_bytes;
      return Fail(where, "longer than " + std::to_string(max_bytes) + " bytes",
                  hard ? ErrorKind::kLimit : ErrorKind::kFormat);
    }
    *out = std::move(s);
    return true;
  }

  // Reads an array of non-empty strings (1..max_items entries unless allow_empty).
  bool StringArray(Value& parent, std::string_view key, const Path& where,
                   size_t max_bytes, std::vector<std::string>* out,
                   bool allow_empty = false) {
    Value* v = parent.Find(key);
    if (v == nullptr) return true;
    const Path here = where.Key(key);
    if (!v->is_array()) return Fail(here, "must be an array of strings");
    std::vector<Value>& items = v->items;
    if (items.empty() && !allow_empty) return Fail(here, "must not be empty");
    if (items.size() > limits_.max_items) {
      return Fail(here, "more than " + std::to_string(limits_.max_items) + " entries",
                  ErrorKind::kLimit);
    }
    out->reserve(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      std::string s;
      if (!StringValue(items[i], here.At(i), max_bytes, &s)) return false;
      out->push_back(std::move(s));
    }
    return true;
  }

 private:
  const ParseLimits& limits_;
  Status status_;
};

bool IsIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-';
}

// The rule ids a parse has read, for its duplicate check: each id's bytes once,
// after a length byte, in one string, and an open-addressed table of their
// offsets, hashed with a per-process key (factlens/hash.h: the ids are the
// list's, and a list is hostile input). An unordered_set<std::string> took a
// node and a string per id, 4.8 MB at 100k rules natively, and it is held to the
// end of the parse, where a load's memory peaks with the list text beside it.
class IdSet {
 public:
  // Adds `id` (at most 255 bytes: IsValidId's limit is 128); false if it was
  // there already.
  bool Insert(std::string_view id) {
    if (2 * (count_ + 1) > slots_.size()) Grow();
    for (size_t i = TextHash(id, seed_) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i] == kEmpty) {
        slots_[i] = static_cast<uint32_t>(ids_.size());
        ids_ += static_cast<char>(id.size());
        ids_ += id;
        ++count_;
        return true;
      }
      if (SameText(At(slots_[i]), id)) return false;
    }
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  std::string_view At(uint32_t offset) const {
    return std::string_view(ids_).substr(offset + 1, static_cast<uint8_t>(ids_[offset]));
  }
  void Grow() {
    std::vector<uint32_t> slots(slots_.empty() ? 1024 : 2 * slots_.size(), kEmpty);
    const size_t mask = slots.size() - 1;
    for (uint32_t offset : slots_) {
      if (offset == kEmpty) continue;
      size_t i = TextHash(At(offset), seed_) & mask;
      while (slots[i] != kEmpty) i = (i + 1) & mask;
      slots[i] = offset;
    }
    slots_.swap(slots);
    mask_ = mask;
  }
  uint64_t seed_ = TextHashSeed();
  std::string ids_;
  std::vector<uint32_t> slots_;
  size_t mask_ = 0, count_ = 0;
};

// ids: ^[a-z0-9][a-z0-9._-]{0,max-1}$
bool IsValidId(const std::string& id, size_t max_len) {
  if (id.empty() || id.size() > max_len) return false;
  if (!IsIdChar(id[0]) || id[0] == '.' || id[0] == '_' || id[0] == '-') return false;
  return std::all_of(id.begin(), id.end(), IsIdChar);
}

bool IsUpperAlpha2(const std::string& s) {
  return s.size() == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z';
}

bool StartsWith(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// A match.urls entry: "http(s)://host/..." or a bare domain "example.com" (ASCII;
// international names in punycode), with at least one dot.
bool IsUrlOrDomain(const std::string& s) {
  std::string host = s;
  for (const char* scheme : {"https://", "http://"}) {
    if (StartsWith(s, scheme)) {
      host = s.substr(std::strlen(scheme));
      host = host.substr(0, host.find_first_of("/?#"));
      size_t at = host.rfind('@');
      if (at != std::string::npos) host = host.substr(at + 1);
      host = host.substr(0, host.find(':'));
      break;
    }
  }
  if (host.empty() || host.find('.') == std::string::npos || host.front() == '.' ||
      host.back() == '.') {
    return false;
  }
  return std::all_of(host.begin(), host.end(), [](char ch) {
    unsigned char c = static_cast<unsigned char>(ch);
    return std::isalnum(c) || c == '-' || c == '.';
  });
}

// Returns the offset of the '(' that is never closed in `pattern`, skipping
// escapes and character classes; or 0 if none is found.
size_t UnclosedParenOffset(const std::string& pattern) {
  std::vector<size_t> open;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\') {
      ++i;
    } else if (in_class) {
      if (c == ']') in_class = false;
    } else if (c == '[') {
      in_class = true;
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') ++i;
    } else if (c == '(') {
      open.push_back(i);
    } else if (c == ')' && !open.empty()) {
      open.pop_back();
    }
  }
  return open.empty() ? 0 : open.back();
}

// Returns how many \p and \P escapes (Unicode classes) `pattern` holds.
size_t CountUnicodeClasses(const std::string& pattern) {
  size_t n = 0;
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '\\') continue;
    n += pattern[i + 1] == 'p' || pattern[i + 1] == 'P';
    ++i;  // the escaped character, so that \\p is no class
  }
  return n;
}

bool ReadTerms(Checker& c, Value& set, std::string_view key, const Path& where,
               std::vector<std::string>* out) {
  // Empty term arrays are allowed; the set needs some term in all or any.
  if (!c.StringArray(set, key, where, 200, out, /*allow_empty=*/true)) return false;
  for (size_t i = 0; i < out->size(); ++i) {
    const std::string& t = (*out)[i];
    if (t == "*") {
      return c.Fail(where.Key(key).At(i), "a wildcard needs a prefix");
    }
  }
  return true;
}

bool ReadRule(Checker& c, Value& r, size_t index, const ParseLimits& limits, Rule* rule) {
  // Name the rule by its id as early as possible, so every message carries it: the
  // id's string in the JSON, then (moved) in the rule.
  const std::string* id_text = nullptr;
  const Path where(index, &id_text);
  if (!r.is_object()) return c.Fail(where, "must be an object");
  const Value* id = r.Find("id");
  if (id != nullptr && id->is_string()) id_text = &id->string;
  if (!c.OnlyKeys(r, where,
                  {"id", "claim", "rating", "severity", "regions", "languages", "match",
                   "review", "examples"})) {
    return false;
  }
  if (!c.String(r, "id", where, true, 128, &rule->id)) return false;
  id_text = &rule->id;
  if (!IsValidId(rule->id, 128)) {
    return c.Fail(where.Key("id"), "must be lower-case letters, digits, '.', '_' or '-'");
  }
  if (!c.String(r, "claim", where, true, 1000, &rule->claim)) return false;

  std::string rating, severity;
  if (!c.String(r, "rating", where, true, 64, &rating)) return false;
  if (!ParseRating(rating, &rule->rating)) {
    return c.Fail(where.Key("rating"), "\"" + rating +
                                           "\" is not one of false, altered, "
                                           "partly_false, missing_context, satire, true");
  }
  if (!c.String(r, "severity", where, true, 64, &severity)) return false;
  if (!ParseSeverity(severity, &rule->severity)) {
    return c.Fail(where.Key("severity"),
                  "\"" + severity + "\" is not one of low, medium, high, critical");
  }

  if (!c.StringArray(r, "regions", where, 2, &rule->regions)) return false;
  for (size_t i = 0; i < rule->regions.size(); ++i) {
    if (!IsUpperAlpha2(rule->regions[i])) {
      return c.Fail(
          where.Key("regions").At(i),
          "\"" + rule->regions[i] + "\" is not an ISO 3166-1 alpha-2 code (e.g. \"DE\")");
    }
  }
  for (size_t i = 1; i < rule->regions.size(); ++i) {
    if (std::find(rule->regions.begin(), rule->regions.begin() + i, rule->regions[i]) !=
        rule->regions.begin() + i) {
      return c.Fail(where.Key("regions").At(i),
                    "\"" + rule->regions[i] + "\" is listed twice");
    }
  }
  if (!c.StringArray(r, "languages", where, 35, &rule->languages)) return false;
  for (size_t i = 0; i < rule->languages.size(); ++i) {
    if (!IsLanguageTag(rule->languages[i])) {
      return c.Fail(where.Key("languages").At(i),
                    "\"" + rule->languages[i] + "\" is not a BCP 47 language tag");
    }
  }

  // match: at least one matcher.
  Value* match = c.Object(r, "match", where, true);
  if (match == nullptr) return false;
  const Path mw = where.Key("match");
  if (!c.OnlyKeys(*match, mw, {"patterns", "keywords", "similar", "urls"})) return false;
  if (!c.StringArray(*match, "patterns", mw, limits.max_pattern_bytes, &rule->patterns)) {
    return false;
  }
  for (size_t i = 0; i < rule->patterns.size(); ++i) {
    c.unicode_classes += CountUnicodeClasses(rule->patterns[i]);
    if (c.unicode_classes > limits.max_unicode_classes) {
      return c.Fail(mw.Key("patterns").At(i),
                    "the list's patterns use Unicode classes (\\p) more than " +
                        std::to_string(limits.max_unicode_classes) +
                        " times (each takes RE2 up to 2 ms to parse)",
                    ErrorKind::kLimit);
    }
    if (!c.check_syntax) {
      c.patterns_passed = i + 1;
      continue;
    }
    std::string error = PatternSyntaxError(rule->patterns[i]);
    if (!error.empty()) {
      return c.Fail(mw.Key("patterns").At(i), error);
    }
  }
  Value* kw = match->Find("keywords");
  if (kw != nullptr) {
    const Path kww = mw.Key("keywords");
    if (!kw->is_array()) return c.Fail(kww, "must be an array of keyword sets");
    if (kw->items.empty()) return c.Fail(kww, "must not be empty");
    if (kw->items.size() > limits.max_items) {
      return c.Fail(kww, "more than " + std::to_string(limits.max_items) + " entries",
                    ErrorKind::kLimit);
    }
    for (size_t i = 0; i < kw->items.size(); ++i) {
      Value& set = kw->items[i];
      const Path sw = kww.At(i);
      if (!set.is_object()) return c.Fail(sw, "must be an object");
      if (!c.OnlyKeys(set, sw, {"all", "any", "none", "within"})) return false;
      KeywordSet ks;
      if (!ReadTerms(c, set, "all", sw, &ks.all) ||
          !ReadTerms(c, set, "any", sw, &ks.any) ||
          !ReadTerms(c, set, "none", sw, &ks.none)) {
        return false;
      }
      if (ks.all.empty() && ks.any.empty()) {
        return c.Fail(sw, "needs at least one term in \"all\" or \"any\"");
      }
      const Value* within = set.Find("within");
      if (within != nullptr) {
        // (An unsigned integer is one too large for int64_t or not negative.)
        int64_t words;
        if (!within->IntegerIn(1, 1000, &words))
          return c.Fail(sw.Key("within"), "must be an integer from 1 to 1000");
        ks.within = static_cast<int>(words);
      }
      rule->keywords.push_back(std::move(ks));
    }
  }
  if (!c.StringArray(*match, "similar", mw, 1000, &rule->similar)) return false;
  if (!c.StringArray(*match, "urls", mw, 2000, &rule->urls)) return false;
  for (size_t i = 0; i < rule->urls.size(); ++i) {
    if (!IsUrlOrDomain(rule->urls[i])) {
      return c.Fail(mw.Key("urls").At(i), "\"" + rule->urls[i] +
                                              "\" is neither an http(s) URL nor a domain "
                                              "like example.com");
    }
  }
  if (rule->patterns.empty() && rule->keywords.empty() && rule->similar.empty() &&
      rule->urls.empty()) {
    return c.Fail(mw, "needs at least one of patterns, keywords, similar, urls");
  }

  Value* review = c.Object(r, "review", where, true);
  if (review == nullptr) return false;
  const Path rw = where.Key("review");
  if (!c.OnlyKeys(*review, rw, {"url", "title", "publisher", "date"})) return false;
  Review& rv = rule->review;
  if (!c.String(*review, "url", rw, true, 2000, &rv.url) ||
      !c.String(*review, "title", rw, true, 500, &rv.title) ||
      !c.String(*review, "publisher", rw, true, 200, &rv.publisher) ||
      !c.String(*review, "date", rw, true, 64, &rv.date)) {
    return false;
  }
  // Only https links are ever followed: a javascript: or data: link must never
  // reach a page.
  if (!StartsWith(rv.url, "https://") || rv.url.size() <= 8) {
    return c.Fail(rw.Key("url"), "must be an https:// URL");
  }
  int64_t unused;
  if (!ParseRfc3339(rv.date, &unused)) {
    return c.Fail(rw.Key("date"), "not an RFC 3339 date (e.g. 2025-03-01)");
  }

  Value* examples = c.Object(r, "examples", where, false);
  if (!c.ok()) return false;
  if (examples != nullptr) {
    const Path ew = where.Key("examples");
    if (!c.OnlyKeys(*examples, ew, {"match", "no_match"})) return false;
    if (!c.StringArray(*examples, "match", ew, limits.max_string_bytes,
                       &rule->examples_match, true) ||
        !c.StringArray(*examples, "no_match", ew, limits.max_string_bytes,
                       &rule->examples_no_match, true)) {
      return false;
    }
  }
  return true;
}

bool ReadInfo(Checker& c, Value& root, ListInfo* info) {
  Value* list = c.Object(root, "list", "", true);
  if (list == nullptr) return false;
  if (!c.OnlyKeys(
          *list, "list",
          {"id", "name", "publisher", "version", "issued", "expires", "description"})) {
    return false;
  }
  if (!c.String(*list, "id", "list", true, 64, &info->id)) return false;
  if (!IsValidId(info->id, 64)) {
    return c.Fail("list.id", "must be lower-case letters, digits, '.', '_' or '-'");
  }
  std::string description;
  if (!c.String(*list, "name", "list", true, 200, &info->name) ||
      !c.String(*list, "description", "list", false, 2000, &description)) {
    return false;
  }
  Value* publisher = c.Object(*list, "publisher", "list", true);
  if (publisher == nullptr) return false;
  if (!c.OnlyKeys(*publisher, "list.publisher", {"name", "url"}) ||
      !c.String(*publisher, "name", "list.publisher", true, 200, &info->publisher_name) ||
      !c.String(*publisher, "url", "list.publisher", true, 2000, &info->publisher_url)) {
    return false;
  }
  if (!StartsWith(info->publisher_url, "https://")) {
    return c.Fail("list.publisher.url", "must be an https:// URL");
  }
  const Value* version = list->Find("version");
  if (version == nullptr) return c.Fail("list.version", "missing required field");
  if (!version->is_integer()) return c.Fail("list.version", "must be an integer");
  if (!version->IntegerIn(0, kMaxSafeInteger, &info->version))
    return c.Fail("list.version", "must be from 0 to 2^53-1");
  if (!c.String(*list, "issued", "list", true, 64, &info->issued) ||
      !c.String(*list, "expires", "list", true, 64, &info->expires)) {
    return false;
  }
  // issued/expires need a time of day: a list's lifetime is checked to the second.
  if (info->issued.size() <= 10 || !ParseRfc3339(info->issued, &info->issued_unix)) {
    return c.Fail("list.issued", "not an RFC 3339 date-time (e.g. 2026-01-31T00:00:00Z)");
  }
  if (info->expires.size() <= 10 || !ParseRfc3339(info->expires, &info->expires_unix)) {
    return c.Fail("list.expires",
                  "not an RFC 3339 date-time (e.g. 2026-01-31T00:00:00Z)");
  }
  if (info->expires_unix <= info->issued_unix) {
    return c.Fail("list.expires", "must be after list.issued");
  }
  return true;
}

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool Digits(std::string_view s, size_t at, size_t n, int* out) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

const char* RatingName(Rating rating) {
  switch (rating) {
    case Rating::kFalse:
      return "false";
    case Rating::kAltered:
      return "altered";
    case Rating::kPartlyFalse:
      return "partly_false";
    case Rating::kMissingContext:
      return "missing_context";
    case Rating::kSatire:
      return "satire";
    case Rating::kTrue:
      return "true";
  }
  return "false";
}

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kLow:
      return "low";
    case Severity::kMedium:
      return "medium";
    case Severity::kHigh:
      return "high";
    case Severity::kCritical:
      return "critical";
  }
  return "low";
}

bool ParseRating(std::string_view name, Rating* out) {
  for (int i = 0; i < kRatingCount; ++i) {
    if (name == RatingName(static_cast<Rating>(i))) {
      *out = static_cast<Rating>(i);
      return true;
    }
  }
  return false;
}

bool ParseSeverity(std::string_view name, Severity* out) {
  for (int i = 0; i < kSeverityCount; ++i) {
    if (name == SeverityName(static_cast<Severity>(i))) {
      *out = static_cast<Severity>(i);
      return true;
    }
  }
  return false;
}

// BCP 47 in the simple shape lists need: ^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8})*$
bool IsLanguageTag(std::string_view s) {
  size_t i = 0, n = s.size();
  while (i < n && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
  if (i < 2 || i > 3) return false;
  while (i < n) {
    if (s[i] != '-') return false;
    size_t start = ++i;
    while (i < n && std::isalnum(static_cast<unsigned char>(s[i]))) ++i;
    if (i - start < 1 || i - start > 8) return false;
  }
  return true;
}

bool ParseRfc3339(std::string_view s, int64_t* unix_seconds) {
  int year, month, day;
  if (!Digits(s, 0, 4, &year) || s.size() < 10 || s[4] != '-' ||
      !Digits(s, 5, 2, &month) || s[7] != '-' || !Digits(s, 8, 2, &day)) {
    return false;
  }
  static const int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1]) return false;
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month == 2 && day == 29 && !leap) return false;
  int64_t seconds = DaysFromCivil(year, month, day) * 86400;
  if (s.size() == 10) {
    *unix_seconds = seconds;
    return true;
  }
  int hour, minute, second;
  if ((s[10] != 'T' && s[10] != 't') || !Digits(s, 11, 2, &hour) || s.size() < 19 ||
      s[13] != ':' || !Digits(s, 14, 2, &minute) || s[16] != ':' ||
      !Digits(s, 17, 2, &second) || hour > 23 || minute > 59 || second > 60) {
    return false;
  }
  size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    size_t start = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return false;
  }
  int64_t offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh, om;
    if (!Digits(s, i + 1, 2, &oh) || i + 3 >= s.size() || s[i + 3] != ':' ||
        !Digits(s, i + 4, 2, &om) || oh > 23 || om > 59) {
      return false;
    }
    offset = (oh * 3600 + om * 60) * (s[i] == '+' ? 1 : -1);
    i += 6;
  } else {
    return false;
  }
  if (i != s.size()) return false;
  *unix_seconds = seconds + hour * 3600 + minute * 60 + std::min(second, 59) - offset;
  return true;
}

// (As the author wrote it, so that error offsets point into their text.)
std::string PatternSyntaxError(const std::string& pattern) {
  re2::RegexpStatus status;
  re2::Regexp* re = re2::Regexp::Parse(pattern, re2::Regexp::LikePerl, &status);
  if (re != nullptr) {
    re->Decref();
    return "";
  }
  std::string message = re2::RegexpStatus::CodeText(status.code());
  size_t offset = 0;
  const re2::StringPiece arg = status.error_arg();
  if (status.code() == re2::kRegexpMissingParen) {
    offset = UnclosedParenOffset(pattern);
  } else if (arg.data() >= pattern.data() &&
             arg.data() <= pattern.data() + pattern.size()) {
    offset = static_cast<size_t>(arg.data() - pattern.data());
  }
  message += " at offset " + std::to_string(offset);
  if (!arg.empty() && status.code() != re2::kRegexpMissingParen && arg.size() <= 40) {
    message += " (\"" + std::string(arg.data(), arg.size()) + "\")";
  }
  return message;
}

namespace {

// The first syntax error in the first `count` patterns of `rule`, rule `index` of
// its list, named as ReadRule names it; or OK.
Status PatternSyntaxErrorIn(size_t index, const Rule& rule, size_t count) {
  for (size_t p = 0; p < count; ++p) {
    std::string error = PatternSyntaxError(rule.patterns[p]);
    if (!error.empty()) {
      return Status(ErrorKind::kFormat, "rules[" + std::to_string(index) + "] (id \"" +
                                            rule.id + "\"): match.patterns[" +
                                            std::to_string(p) + "]: " + error);
    }
  }
  return Status::Ok();
}

}  // namespace

Status FirstPatternSyntaxError(const std::vector<Rule>& rules, size_t first_rule) {
  for (size_t r = first_rule; r < rules.size(); ++r) {
    Status s = PatternSyntaxErrorIn(r, rules[r], rules[r].patterns.size());
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

// Horspool's search: most steps skip the key's length.
size_t EstimateRuleCount(std::string_view text) {
  static constexpr char kKey[] = "\"claim\"";
  constexpr size_t n = sizeof kKey - 1;
  size_t skip[256];
  for (size_t& s : skip) s = n;
  for (size_t i = 0; i + 1 < n; ++i) {
    skip[static_cast<unsigned char>(kKey[i])] = n - 1 - i;
  }
  size_t count = 0;
  for (size_t at = 0; at + n <= text.size();) {
    const unsigned char last = text[at + n - 1];
    if (last == kKey[n - 1] && std::memcmp(text.data() + at, kKey, n - 1) == 0) {
      ++count;
      at += n;
    } else {
      at += skip[last];
    }
  }
  return count;
}

Status RulePatternSyntaxError(size_t index, const Rule& rule) {
  return PatternSyntaxErrorIn(index, rule, rule.patterns.size());
}

namespace {

// ParseList's reading, each rule to `sink` (see the public ParseList taking one).
// `earlier_syntax_error`, if set, returns the first syntax error in the rules
// before the current one, for kLeftToCompile when the sink does not check them.
Status ParseListTo(std::string_view text, const ParseLimits& limits, PatternSyntax syntax,
                   const RuleSink& sink,
                   const std::function<Status()>& earlier_syntax_error, ListInfo* info,
                   size_t* rule_count) {
  if (text.size() > limits.max_list_bytes) {
    return Status(ErrorKind::kLimit, "list of " + std::to_string(text.size()) +
                                         " bytes exceeds the limit of " +
                                         std::to_string(limits.max_list_bytes));
  }
  // Rules are read as the parser completes each one; their errors are reported
  // after the document's syntax and its header, as if read afterwards: the first
  // rule error by index wins, and later rules are not read, only dropped.
  Checker rule_checker(limits);
  rule_checker.check_syntax = syntax == PatternSyntax::kChecked;
  size_t rules = 0;
  IdSet ids;
  Status rule_error;
  // With syntax left to Compile, a rule's error gives way to the first syntax
  // error among the patterns kChecked would have checked before it: the earlier
  // rules', then the rule's own first ones.
  auto fail_rule = [&](Status error, const Rule& rule, size_t i) {
    if (!rule_checker.check_syntax) {
      Status earlier = earlier_syntax_error ? earlier_syntax_error() : Status::Ok();
      if (earlier.ok()) {
        earlier = PatternSyntaxErrorIn(
            i, rule, std::min(rule.patterns.size(), rule_checker.patterns_passed));
      }
      if (!earlier.ok()) error = std::move(earlier);
    }
    rule_error = std::move(error);
  };
  auto on_rule = [&](Value&& element, size_t i) {
    if (!rule_error.ok()) return;
    Rule rule;
    rule_checker.patterns_passed = 0;
    if (!ReadRule(rule_checker, element, i, limits, &rule)) {
      fail_rule(rule_checker.status(), rule, i);
      return;
    }
    if (!ids.Insert(rule.id)) {
      rule_checker.patterns_passed = rule.patterns.size();
      const std::string* id = &rule.id;  // (valid: at most 128 bytes, all shown)
      fail_rule(Status(ErrorKind::kFormat,
                       Path(i, &id).Key("id").Text() + ": duplicate rule id"),
                rule, i);
      return;
    }
    Status taken = sink(rule, i);
    if (!taken.ok()) {
      rule_error = std::move(taken);
      return;
    }
    ++rules;
  };
  Value root;
  LimitedDomBuilder builder(limits, &root, on_rule);
  std::string syntax_error;
  const bool read = ReadJson(text, &builder, &syntax_error);
  if (!syntax_error.empty()) builder.SyntaxError(std::move(syntax_error));
  // (A limit can be hit in a call that goes on, such as the rule count.)
  if (!builder.status().ok()) return builder.status();
  if (!read) return Status(ErrorKind::kFormat, "not a JSON document");
  if (!root.is_object())
    return Status(ErrorKind::kFormat, "a list must be a JSON object");

  Checker c(limits);
  ListInfo header;
  if (!c.OnlyKeys(root, "", {"format", "list", "rules"})) return c.status();
  if (!c.String(root, "format", "", true, 64, &header.format)) return c.status();
  if (header.format != kFormatV1) {
    return Status(
        ErrorKind::kFormat,
        "format: \"" + header.format + "\" is not supported (expected \"factlens/1\")");
  }
  if (!ReadInfo(c, root, &header)) return c.status();
  const Value* found = root.Find("rules");
  if (found == nullptr)
    return Status(ErrorKind::kFormat, "rules: missing required field");
  if (!found->is_array()) return Status(ErrorKind::kFormat, "rules: must be an array");
  if (!rule_error.ok()) return rule_error;
  *info = std::move(header);
  *rule_count = rules;
  return Status::Ok();
}

}  // namespace

Status ParseList(std::string_view text, const ParseLimits& limits, const RuleSink& sink,
                 ListInfo* info, size_t* rule_count, PatternSyntax syntax) {
  return ParseListTo(text, limits, syntax, sink, nullptr, info, rule_count);
}

Status ParseList(std::string_view text, const ParseLimits& limits, RuleList* out,
                 PatternSyntax syntax) {
  *out = RuleList();
  std::vector<Rule> rules;
  // Reserved for the count the text suggests (EstimateRuleCount). Growth by
  // doubling would move every rule read so far into fresh memory each time and
  // then to a block of the exact count (2 MB of rules at 10k, 20 at 100k), while
  // the text is still held: with the copies, wasm memory's peak rose by 3.7 MB at
  // 10k rules, and it never shrinks.
  if (text.size() <= limits.max_list_bytes) {
    rules.reserve(std::min(EstimateRuleCount(text), limits.max_rules));
  }
  RuleList list;
  size_t count = 0;
  Status s = ParseListTo(
      text, limits, syntax,
      [&rules](Rule& rule, size_t) {
        rules.push_back(std::move(rule));
        return Status::Ok();
      },
      [&rules] { return FirstPatternSyntaxError(rules); }, &list.info, &count);
  if (!s.ok()) return s;
  list.rules = std::move(rules);
  list.pattern_syntax_unchecked = syntax == PatternSyntax::kLeftToCompile;
  // Shrunk to fit, if the estimate was high: slack would stay allocated while the
  // rules are compiled, and wasm memory keeps its peak.
  list.rules.shrink_to_fit();
  *out = std::move(list);
  return Status::Ok();
}

}  // namespace factlens
