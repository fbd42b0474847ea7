// Copyright factlens authors.
#include "factlens/jsonpos.h"

#include <algorithm>
#include <vector>

namespace factlens {
namespace {

// A tolerant recursive-descent walk over JSON text that records where each value
// starts. It validates nothing it does not need; ParseList does the validating.
class Scanner {
 public:
  Scanner(std::string_view text, size_t max_values,
          std::unordered_map<std::string, size_t>* out)
      : t_(text), max_values_(max_values), out_(out) {}

  void Run() {
    std::string path;
    Value(&path, 0);
  }

 private:
  static constexpr int kMaxDepth = 256;  // deeper than any list the parser accepts

  void Space() {
    while (i_ < t_.size() &&
           (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\r' || t_[i_] == '\t')) {
      ++i_;
    }
  }

  // Reads a string literal at i_ (which is '"') into *decoded (escapes resolved
  // roughly: only the byte count matters to callers). Returns false at the end.
  bool String(std::string* decoded) {
    ++i_;
    while (i_ < t_.size()) {
      char c = t_[i_++];
      if (c == '"') return true;
      if (c == '\\' && i_ < t_.size()) {
        char e = t_[i_++];
        if (e == 'u') {
          i_ = std::min(t_.size(), i_ + 4);
          if (decoded) decoded->push_back('?');
        } else if (decoded) {
          decoded->push_back(e);
        }
      } else if (decoded) {
        decoded->push_back(c);
      }
    }
    return false;
  }

  bool Value(std::string* path, int depth) {
    Space();
    if (i_ >= t_.size() || depth > kMaxDepth || out_->size() >= max_values_) return false;
    out_->emplace(*path, i_);
    char c = t_[i_];
    if (c == '{') {
      ++i_;
      for (;;) {
        Space();
        if (i_ >= t_.size()) return false;
        if (t_[i_] == '}') return ++i_, true;
        if (t_[i_] != '"') return false;
        std::string key;
        if (!String(&key)) return false;
        Space();
        if (i_ >= t_.size() || t_[i_] != ':') return false;
        ++i_;
        size_t keep = path->size();
        if (!path->empty()) path->push_back('.');
        path->append(key);
        bool ok = Value(path, depth + 1);
        path->resize(keep);
        if (!ok) return false;
        Space();
        if (i_ < t_.size() && t_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < t_.size() && t_[i_] == '}') return ++i_, true;
        return false;
      }
    }
    if (c == '[') {
      ++i_;
      for (size_t index = 0;; ++index) {
        Space();
        if (i_ >= t_.size()) return false;
        if (t_[i_] == ']') return ++i_, true;
        size_t keep = path->size();
        path->append("[" + std::to_string(index) + "]");
        bool ok = Value(path, depth + 1);
        path->resize(keep);
        if (!ok) return false;
        Space();
        if (i_ < t_.size() && t_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < t_.size() && t_[i_] == ']') return ++i_, true;
        return false;
      }
    }
    if (c == '"') return String(nullptr);
    // Numbers, true, false, null: up to the next delimiter.
    while (i_ < t_.size() && t_[i_] != ',' && t_[i_] != '}' && t_[i_] != ']' &&
           t_[i_] != ' ' && t_[i_] != '\n' && t_[i_] != '\r' && t_[i_] != '\t') {
      ++i_;
    }
    return true;
  }

  std::string_view t_;
  size_t i_ = 0;
  size_t max_values_;
  std::unordered_map<std::string, size_t>* out_;
};

}  // namespace

TextPosition PositionAt(std::string_view text, size_t offset) {
  TextPosition p;
  p.offset = std::min(offset, text.size());
  p.line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < p.offset; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      line_start = i + 1;
    }
  }
  p.column = p.offset - line_start + 1;
  return p;
}

JsonPositions::JsonPositions(std::string_view text, size_t base_offset,
                             std::string_view document, size_t max_values)
    : text_(text), document_(document.empty() ? text : document), base_(base_offset) {
  Scanner(text, max_values, &offsets_).Run();
  for (size_t i = document_.find('\n'); i != std::string_view::npos;
       i = document_.find('\n', i + 1)) {
    line_starts_.push_back(i + 1);
  }
}

TextPosition JsonPositions::Locate(size_t offset) const {
  TextPosition p;
  p.offset = std::min(offset, document_.size());
  // Lines starting at or before the offset, after the first.
  size_t before = std::upper_bound(line_starts_.begin(), line_starts_.end(), p.offset) -
                  line_starts_.begin();
  p.line = before + 1;
  p.column = p.offset - (before == 0 ? 0 : line_starts_[before - 1]) + 1;
  return p;
}

bool JsonPositions::Find(std::string_view path, TextPosition* out) const {
  auto it = offsets_.find(std::string(path));
  if (it == offsets_.end()) return false;
  *out = Locate(base_ + it->second);
  return true;
}

bool JsonPositions::FindNearest(std::string_view path, TextPosition* out) const {
  std::string p(path);
  for (;;) {
    if (Find(p, out)) return true;
    if (p.empty()) return false;
    // Drop the last component: ".key" or "[i]".
    size_t cut = p.find_last_of(".[");
    if (cut == std::string::npos) {
      p.clear();
    } else {
      p.resize(cut);
    }
  }
}

bool JsonPositions::FindInString(std::string_view path, size_t index,
                                 TextPosition* out) const {
  auto it = offsets_.find(std::string(path));
  if (it == offsets_.end() || it->second >= text_.size() || text_[it->second] != '"') {
    return false;
  }
  // Walk the literal, counting decoded UTF-8 bytes, until `index` is reached.
  size_t i = it->second + 1, decoded = 0;
  while (i < text_.size() && text_[i] != '"' && decoded < index) {
    if (text_[i] == '\\' && i + 1 < text_.size()) {
      if (text_[i + 1] == 'u' && i + 5 < text_.size()) {
        unsigned cp = 0;
        for (size_t k = i + 2; k < i + 6; ++k) {
          char h = text_[k];
          cp = cp * 16 + (h >= '0' && h <= '9'   ? h - '0'
                          : h >= 'a' && h <= 'f' ? h - 'a' + 10
                          : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                 : 0);
        }
        decoded += cp < 0x80 ? 1 : cp < 0x800 ? 2 : (cp >= 0xD800 && cp < 0xDC00) ? 4 : 3;
        i += (cp >= 0xD800 && cp < 0xDC00) ? 12 : 6;
        continue;
      }
      i += 2;
    } else {
      ++i;
    }
    ++decoded;
  }
  *out = Locate(base_ + std::min(i, text_.size()));
  return true;
}

std::string JsonPositions::PathOfMessage(std::string_view message) {
  std::string m(message);
  // "rules[3] (id \"x\"): ..." names the rule by id too; the path is "rules[3]".
  if (m.rfind("rules[", 0) == 0) {
    size_t close = m.find(']');
    if (close != std::string::npos && m.compare(close + 1, 6, " (id \"") == 0) {
      size_t end = m.find("\"): ", close);
      if (end != std::string::npos) m = m.substr(0, close + 1) + m.substr(end + 2);
    }
  }
  // Then leading ": "-separated segments that look like paths.
  std::string path;
  size_t start = 0;
  for (;;) {
    size_t sep = m.find(": ", start);
    if (sep == std::string::npos) break;
    std::string segment = m.substr(start, sep - start);
    bool is_path = !segment.empty() && segment.find(' ') == std::string::npos &&
                   segment.find('"') == std::string::npos;
    if (!is_path) break;
    if (!path.empty() && segment[0] != '[') path += '.';
    path += segment;
    start = sep + 2;
  }
  return path;
}

}  // namespace factlens
