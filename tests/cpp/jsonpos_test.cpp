// Tests of jsonpos: JSON paths back to lines and columns.
#include "factlens/jsonpos.h"

#include "catch2/catch.hpp"

using namespace factlens;

TEST_CASE("jsonpos: paths of values, nearest members, offsets inside strings",
          "[jsonpos]") {
  std::string text =
      "{\n  \"rules\": [\n    {\"id\": \"a\", \"p\": \"x\\\\by(\"}\n  ]\n}";
  JsonPositions pos(text);
  TextPosition p;
  REQUIRE(pos.Find("rules[0].id", &p));
  CHECK(p.line == 3);
  CHECK(p.column == 12);
  REQUIRE(pos.FindNearest("rules[0].review.url", &p));
  CHECK(p.line == 3);
  CHECK(p.column == 5);
  // Decoded "x\by(": byte 4 is "(", written after the escaped backslash.
  REQUIRE(pos.FindInString("rules[0].p", 4, &p));
  CHECK(text[p.offset] == '(');
  CHECK_FALSE(pos.Find("rules[1]", &p));
  CHECK(JsonPositions::PathOfMessage(
            "rules[0] (id \"a\"): match.patterns[1]: missing ) at offset 3") ==
        "rules[0].match.patterns[1]");
  CHECK(JsonPositions::PathOfMessage("line 3, column 1: syntax error") == "");
}
