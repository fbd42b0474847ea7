// Copyright factlens authors. json_reader: a strict, event-driven JSON reader.
//
// Rule lists are read once per load, and at 10k rules the list text is 4 MB: the
// reading must not cost more than what is done with it. nlohmann/json's lexer
// copies a string byte by byte and keeps a line and column for every byte; this
// reader copies runs of plain bytes at once and works out a line and column only
// for an error. It accepts the JSON that nlohmann/json's strict parser accepts
// (RFC 8259: one value, UTF-8 checked, surrogate pairs paired, an optional UTF-8
// byte order mark) and reports numbers with the same types, so the values a
// handler builds are the same (json_reader_test and the list fuzzer compare the
// two on random text). One difference: nlohmann takes a NUL byte for the end of
// the input and accepts "{}\0" followed by anything; here a NUL is an error, so
// nothing can hide after a list's document.
// It does not recurse: nesting costs one byte of its stack per level, and the
// handler decides how deep is too deep.
#ifndef FACTLENS_JSON_READER_H_
#define FACTLENS_JSON_READER_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace factlens {

// Receives a document's values in order. A method that returns false stops the
// reading (ReadJson then returns false with no syntax error). Each accepts and
// ignores by default, so a handler overrides what it wants to see.
class JsonHandler {
 public:
  virtual ~JsonHandler() = default;
  virtual bool Null() { return true; }
  virtual bool Boolean(bool /*value*/) { return true; }
  // An integer without fraction or exponent: Unsigned when it has no sign and fits
  // 64 bits, Integer when negative and fits; otherwise it arrives as Float.
  virtual bool Integer(int64_t /*value*/) { return true; }
  virtual bool Unsigned(uint64_t /*value*/) { return true; }
  virtual bool Float(double /*value*/) { return true; }
  // `value` and `key` are decoded UTF-8; the handler may move from them.
  virtual bool String(std::string& /*value*/) { return true; }
  virtual bool StartObject() { return true; }
  virtual bool Key(std::string& /*key*/) { return true; }
  virtual bool EndObject() { return true; }
  virtual bool StartArray() { return true; }
  virtual bool EndArray() { return true; }
};

// Reads `text` as one JSON document into `handler`. Returns true when the document
// is well-formed and every handler call returned true. On a syntax error, returns
// false with `*syntax_error` set to "line L, column C: what was wrong", where C
// counts UTF-8 bytes from 1 (as the CLI prints positions) and points at the first
// byte that could not be read; `*syntax_error` stays empty when the handler stopped.
bool ReadJson(std::string_view text, JsonHandler* handler, std::string* syntax_error);

}  // namespace factlens

#endif  // FACTLENS_JSON_READER_H_
