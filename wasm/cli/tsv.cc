// Copyright factlens authors.
#include "tsv.h"

namespace factlens {

bool ParseTsv(std::string_view text, std::vector<TsvRecord>* out, std::string* error) {
  out->clear();
  size_t i = 0, line = 1, line_start = 0;
  auto where = [&](size_t at) {
    return std::to_string(line) + ":" + std::to_string(at - line_start + 1) + ": ";
  };
  while (i < text.size()) {
    TsvRecord record;
    record.line = line;
    bool end_of_record = false;
    while (!end_of_record) {
      std::string field;
      if (i < text.size() && text[i] == '"') {
        const size_t open = i, open_line = line, open_start = line_start;
        ++i;
        for (;;) {
          if (i >= text.size()) {
            line = open_line;
            line_start = open_start;
            *error = where(open) + "quoted field is never closed";
            return false;
          }
          char c = text[i++];
          if (c == '"') {
            if (i < text.size() && text[i] == '"') {
              field += '"';
              ++i;
            } else {
              break;
            }
          } else {
            if (c == '\n') {
              ++line;
              line_start = i;
            }
            field += c;
          }
        }
        if (i < text.size() && text[i] == '\r') ++i;
        if (i < text.size() && text[i] != '\t' && text[i] != '\n') {
          *error = where(i) + "unexpected text after a closing quote";
          return false;
        }
      } else {
        while (i < text.size() && text[i] != '\t' && text[i] != '\n') field += text[i++];
        if (!field.empty() && field.back() == '\r') field.pop_back();
      }
      record.fields.push_back(std::move(field));
      if (i >= text.size()) {
        end_of_record = true;
      } else if (text[i] == '\t') {
        ++i;
      } else {  // '\n'
        ++i;
        ++line;
        line_start = i;
        end_of_record = true;
      }
    }
    if (record.fields.size() == 1 && record.fields[0].empty()) continue;  // empty line
    out->push_back(std::move(record));
  }
  return true;
}

}  // namespace factlens
