#!/usr/bin/env bash
# Tests of the factlens CLI's commands: output, exit codes, error locations.
# Usage: cli_test.sh PATH/TO/factlens
set -uo pipefail
FACTLENS=$1
cd "$(dirname "$0")/../.."
LIST=tests/fixtures/cases/list.json
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
expect_exit() {  # expect_exit CODE NAME -- command...
  local want=$1 name=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  [ "$got" = "$want" ] || fail "$name: exit $got, want $want; stderr: $(cat "$tmp/err")"
}

# Plain lines in, one JSON verdict per post out, in order.
printf '5G towers spread the coronavirus!\nnothing to see\n\nBirds aren'"'"'t real\n' >"$tmp/posts.txt"
expect_exit 0 "check --json" -- "$FACTLENS" check --list "$LIST" --allow-unsigned --json "$tmp/posts.txt"
[ "$(wc -l <"$tmp/out")" = 3 ] || fail "check --json: want 3 lines (blank lines skipped), got $(wc -l <"$tmp/out")"
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  const want = [["demote", 1, "5g-covid"], ["none", 2, null], ["label", 4, "birds-satire"]];
  want.forEach(([action, line, rule], i) => {
    const v = lines[i];
    if (v.action !== action || v.line !== line || (v.matches[0]?.ruleId ?? null) !== rule)
      { console.error("unexpected verdict", i, JSON.stringify(v)); process.exit(1); }
  });
  if (JSON.stringify(lines[0].matches[0].spans) !== "[[0,32]]") { console.error("spans", JSON.stringify(lines[0].matches[0].spans)); process.exit(1); }
' "$tmp/out" || fail "check --json: verdicts"
grep -q "3 posts: 1 labelled, 1 demoted, 0 hidden" "$tmp/err" || fail "check: summary on stderr: $(cat "$tmp/err")"

# JSON Lines in, with ids and a per-post region; stdin.
printf '%s\n' '{"id":"p1","text":"A gang is kidnapping children near the market","region":"DE"}' \
  >"$tmp/posts.jsonl"
"$FACTLENS" check --list "$LIST" --allow-unsigned --json --policy '{"severityOnlyInRegions":true}' \
  <"$tmp/posts.jsonl" >"$tmp/out" 2>"$tmp/err" || fail "check jsonl: exit $?"
grep -q '"id":"p1"' "$tmp/out" && grep -q '"action":"demote"' "$tmp/out" ||
  fail "check jsonl: region-scoped verdict: $(cat "$tmp/out")"

# Human-readable output names the rule.
expect_exit 0 "check text" -- "$FACTLENS" check --list "$LIST" --allow-unsigned "$tmp/posts.txt"
grep -q "posts.txt:1: demote: false/medium rule test-core/5g-covid" "$tmp/out" ||
  fail "check text output: $(cat "$tmp/out")"

# Exit codes and located errors.
expect_exit 2 "no --list" -- "$FACTLENS" check "$tmp/posts.txt"
expect_exit 1 "unsigned list without --allow-unsigned" -- "$FACTLENS" check --list "$LIST" "$tmp/posts.txt"
printf '{\n  "format": "factlens/1",\n  "list": {,\n}\n' >"$tmp/broken.json"
expect_exit 2 "syntax error" -- "$FACTLENS" check --list "$tmp/broken.json" --allow-unsigned "$tmp/posts.txt"
grep -q "^$tmp/broken.json:3:12: error: " "$tmp/err" || fail "syntax error location: $(cat "$tmp/err")"
expect_exit 2 "semantic error" -- "$FACTLENS" check --list tests/fixtures/lists/semantic-invalid/pattern-re2-syntax.json --allow-unsigned "$tmp/posts.txt"
grep -q 'pattern-re2-syntax.json: error: rules\[0\] (id "re"): match.patterns\[1\]: missing )' "$tmp/err" ||
  fail "semantic error message: $(cat "$tmp/err")"
printf '{"text": 5}\n' >"$tmp/bad.jsonl"
expect_exit 2 "bad JSON line" -- "$FACTLENS" check --list "$LIST" --allow-unsigned "$tmp/bad.jsonl"
grep -q 'bad.jsonl:1:1: error: a JSON line needs a string field "text"' "$tmp/err" || fail "bad JSON line message"
expect_exit 2 "missing posts file" -- "$FACTLENS" check --list "$LIST" --allow-unsigned "$tmp/nope.txt"
expect_exit 2 "bad policy" -- "$FACTLENS" check --list "$LIST" --allow-unsigned --policy '{"ratings":{"false":"burn"}}'
expect_exit 2 "unknown command" -- "$FACTLENS" frobnicate
expect_exit 0 "help check" -- "$FACTLENS" help check
grep -q "usage: factlens check" "$tmp/out" || fail "help check text"

# eval: CLEF-style TSV files with RFC 4180 quoting (a quoted field spans two lines and
# holds doubled quotes), TREC qrels; the figures come from the engine's search.
printf '\tvclaim\ttitle\n1\tVaccines cause autism in children.\tDo vaccines cause autism?\n2\t"A ""miracle"" cure:\nbleach cures the coronavirus."\tBleach is no cure\n3\t5G towers spread the coronavirus.\tDo 5G towers spread COVID-19?\n' >"$tmp/claims.tsv"
printf '\ttweet_content\n10\tvaccines cause autism in our children!!\n11\t"drinking bleach cures the coronavirus, a ""miracle"""\n' >"$tmp/q.tsv"
printf '10\t0\t1\t1\n11\t0\t2\t1\n' >"$tmp/q.qrels"
expect_exit 0 "eval" -- "$FACTLENS" eval --claims "$tmp/claims.tsv" --queries "$tmp/q.tsv" --qrels "$tmp/q.qrels" --write-list "$tmp/list.json"
grep -q "^claims: 3 " "$tmp/out" || fail "eval: claims count: $(cat "$tmp/out")"
grep -q "^engine .*MAP@1 1.0000 .*MAP@5 1.0000 .*MRR 1.0000" "$tmp/out" || fail "eval figures: $(cat "$tmp/out")"
grep -q "check/search disagreements: 0" "$tmp/out" || fail "eval: check and search disagree"
node -e 'const l = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (l.rules[1].claim !== "A \"miracle\" cure:\nbleach cures the coronavirus.") process.exit(1);' "$tmp/list.json" ||
  fail "eval: quoted TSV field not read as written"
printf '\tvclaim\ttitle\n1\t"never closed\n' >"$tmp/broken.tsv"
expect_exit 2 "eval broken TSV" -- "$FACTLENS" eval --claims "$tmp/broken.tsv" --queries "$tmp/q.tsv" --qrels "$tmp/q.qrels"
grep -q "broken.tsv:2:3: quoted field is never closed" "$tmp/err" || fail "eval broken TSV message: $(cat "$tmp/err")"
printf '10 0 1\n' >"$tmp/bad.qrels"
expect_exit 2 "eval bad qrels" -- "$FACTLENS" eval --claims "$tmp/claims.tsv" --queries "$tmp/q.tsv" --qrels "$tmp/bad.qrels"
grep -q 'bad.qrels:1:1: error: expected "query_id 0 claim_id relevance"' "$tmp/err" || fail "eval bad qrels message"
expect_exit 2 "eval without files" -- "$FACTLENS" eval --claims "$tmp/claims.tsv"

if [ "$failures" -gt 0 ]; then echo "$failures CLI test(s) failed"; exit 1; fi
echo "CLI tests passed"
