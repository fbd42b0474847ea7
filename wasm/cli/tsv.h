// Copyright factlens authors. tsv: tab-separated files with RFC 4180 quoting.
//
// The CLEF CheckThat! files are written by pandas: fields separated by tabs, a field
// that holds a tab, quote or newline is quoted with '"' and its quotes doubled.
// Lines cannot be read one by one: a quoted field may span several.
#ifndef FACTLENS_CLI_TSV_H_
#define FACTLENS_CLI_TSV_H_

#include <string>
#include <string_view>
#include <vector>

namespace factlens {

struct TsvRecord {
  size_t line = 0;  // 1-based line where the record starts
  std::vector<std::string> fields;
};

// Parses `text` into records (a trailing newline ends the last record; empty lines
// are skipped). Returns false and sets *error to "line:col: message" on an
// unterminated quoted field or text after a closing quote.
bool ParseTsv(std::string_view text, std::vector<TsvRecord>* out, std::string* error);

}  // namespace factlens

#endif  // FACTLENS_CLI_TSV_H_
