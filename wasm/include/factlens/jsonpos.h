// Copyright factlens authors. jsonpos: where a JSON value sits in its text.
//
// The list parser reports errors by JSON path ("rules[3] (id \"x\"): match.patterns[0]:
// ..."), which survives any reformatting of the file. Publishers' editors want a
// line and a column; JsonPositions maps paths back to positions by scanning the
// text once. The scan is tolerant: on malformed JSON it keeps what it indexed
// before the error, so a located message is still possible for the valid prefix.
#ifndef FACTLENS_JSONPOS_H_
#define FACTLENS_JSONPOS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace factlens {

struct TextPosition {
  size_t offset = 0;  // byte offset into the text
  size_t line = 0;    // 1-based; 0 means unknown
  size_t column = 0;  // 1-based, in bytes (as nlohmann/json counts)
};

// Returns the 1-based line and column of byte `offset` in `text`.
TextPosition PositionAt(std::string_view text, size_t offset);

class JsonPositions {
 public:
  // Indexes every value of the JSON `text` by its path: object members as
  // "list.version" and "rules[3].match.patterns[0]", root array items as "[0]".
  // `text` must outlive the object. `base_offset` is added to every offset (for
  // JSON embedded in a larger document, such as an HTML page); PositionOf then
  // counts lines in `document` (defaults to `text`). Only the first `max_values`
  // values are indexed (the list parser refuses lists with more: ParseLimits), so
  // hostile text cannot make the index grow past what a real list needs.
  explicit JsonPositions(std::string_view text, size_t base_offset = 0,
                         std::string_view document = {}, size_t max_values = 4000000);

  // Returns true and sets *out to the position of the value at `path` (its first
  // byte: the opening quote of a string).
  bool Find(std::string_view path, TextPosition* out) const;

  // Returns true and sets *out to the position of the longest prefix of `path`
  // (by whole path components) that exists: "rules[5].review.url" falls back to
  // "rules[5].review", then "rules[5]", when the member is missing.
  bool FindNearest(std::string_view path, TextPosition* out) const;

  // Returns the position of the `index`-th byte of the decoded string value at
  // `path` (so an RE2 error offset points into the file despite escapes such as
  // "\\b"). Returns false if there is no string at `path`.
  bool FindInString(std::string_view path, size_t index, TextPosition* out) const;

  // Returns the JSON path a list parser message starts with ("rules[3] (id \"x\"):
  // match.patterns[0]: missing ) ..." -> "rules[3].match.patterns[0]"), or "" if it
  // starts with none. The path may name a missing member: use FindNearest.
  static std::string PathOfMessage(std::string_view message);

  size_t size() const { return offsets_.size(); }

 private:
  std::string_view text_;
  std::string_view document_;
  size_t base_ = 0;
  std::unordered_map<std::string, size_t> offsets_;  // path -> offset in text_
  // Offsets in document_ where lines 2, 3, ... start: a position is a binary search,
  // not a count of every line before it (a lint of 200k rules asks 400k times).
  std::vector<size_t> line_starts_;

  TextPosition Locate(size_t offset) const;
};

}  // namespace factlens

#endif  // FACTLENS_JSONPOS_H_
