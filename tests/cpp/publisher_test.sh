#!/usr/bin/env bash
# Tests of the publisher's toolkit: factlens import (every input shape, broken and
# partial markup, merge), lint (each finding, located), test (each failure
# message), publish (atomicity), check --context/--explain/progress, the committed
# demo signature, and one end-to-end run: ClaimReview -> import -> lint -> test ->
# publish -> minisign -V -> the wasm engine (node) loads it and labels a post.
# Usage: publisher_test.sh PATH/TO/factlens
set -uo pipefail
F=$(realpath "$1")
cd "$(dirname "$0")/../.."
ROOT=$PWD
FX=tests/fixtures/claimreview
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
run() {  # run CODE NAME -- command...: output in $tmp/out, $tmp/err
  local want=$1 name=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  [ "$got" = "$want" ] || fail "$name: exit $got, want $want; stderr: $(cat "$tmp/err")"
}
has() {  # has FILE NAME PATTERN: grep -E
  grep -qE -- "$3" "$1" || fail "$2: want /$3/ in: $(cat "$1")"
}
NOW=--now=2025-06-01T00:00:00Z
NOWA=(--now 2025-06-01T00:00:00Z)

# ---- import: every shape ----------------------------------------------------------
run 0 "import single object" -- "$F" import "${NOWA[@]}" "$FX/single.json" -o "$tmp/single.json"
has "$tmp/err" "single shape" "single.json: json-ld, 1 review"
has "$tmp/single.json" "single rule id from URL" '"id": "vaccine-magnets"'
has "$tmp/single.json" "Falso maps to false" '"rating": "false"'
run 0 "import array" -- "$F" import "${NOWA[@]}" "$FX/array.json" -o "$tmp/array.json"
has "$tmp/err" "array shape" "json-ld array, 2 review"
has "$tmp/array.json" "Satire maps to satire" '"rating": "satire"'
# DataFeed with broken and partial items: missing rating, unknown rating, http link.
run 1 "import DataFeed with partial items" -- "$F" import "${NOWA[@]}" "$FX/feed.json" -o "$tmp/feed.json"
has "$tmp/err" "feed shape" "json-ld DataFeed, 2 review"
has "$tmp/err" "missing rating located" 'feed.json:19:5: error: .*has no textual rating'
has "$tmp/err" "unknown rating located, not guessed" 'feed.json:26:5: error: unknown rating "Wobbly"'
has "$tmp/err" "http review link refused" 'feed.json:33:5: error: review url "http://desk.example/checks/plain-http" is not https'
has "$tmp/feed.json" "Faux maps to false" '"id": "moon-cheese"'
grep -q "Wobbly\|plain-http\|no-rating" "$tmp/feed.json" && fail "feed: skipped reviews must not be in the list"
# @graph in an HTML page, attributes in any case and order, relative link resolved
# against <link rel=canonical>.
run 0 "import HTML" -- "$F" import "${NOWA[@]}" rules/examples/claimreview-sample.html -o "$tmp/html.json"
has "$tmp/err" "html shape" "claimreview-sample.html: html, 3 review"
has "$tmp/err" "relative URL reported" 'claimreview-sample.html:23:7: warning: review url "/fact-checks/bridge-closure-permanent" is relative'
has "$tmp/html.json" "relative URL resolved" '"url": "https://verify.harbour-street.example/fact-checks/bridge-closure-permanent"'
has "$tmp/html.json" "Pants on Fire! maps to false" '"id": "solar-panels-drain-batteries"'
has "$tmp/html.json" "appearance becomes a debunked URL" '"https://rumours.example/fluoride-truth"'
# Broken markup: a truncated block is reported with its position; a relative link
# without a page URL is refused; with --page-url it resolves.
run 2 "import broken HTML, nothing usable" -- "$F" import "${NOWA[@]}" "$FX/broken.html" -o "$tmp/broken.json"
has "$tmp/err" "broken block located" 'broken.html:2:[0-9]+: error: ld\+json block is not valid JSON'
has "$tmp/err" "relative without base" 'broken.html:5:1: error: review url "checks/relative-no-base" is relative and the page URL is unknown'
[ -e "$tmp/broken.json" ] && fail "broken import must not write a list"
run 1 "import broken HTML with --page-url" -- "$F" import "${NOWA[@]}" --page-url https://desk.example/a/b.html "$FX/broken.html" -o "$tmp/broken.json"
has "$tmp/broken.json" "resolved against --page-url" '"url": "https://desk.example/a/checks/relative-no-base"'
# Fact Check Tools: several reviews of one claim become one rule (latest linked,
# the other kept); reviews that disagree are reported and left out.
run 1 "import Fact Check Tools" -- "$F" import "${NOWA[@]}" "$FX/fact-check-tools.json" -o "$tmp/fct.json"
has "$tmp/err" "fct shape" "fact-check-tools, 4 review"
has "$tmp/err" "disagreeing reviews" 'fact-check-tools.json:29:9: error: the reviews of "The new tax doubles every bread price." disagree'
[ "$(grep -c '"id":' "$tmp/fct.json")" = 2 ] || fail "fct: want one rule (+ list id): $(cat "$tmp/fct.json")"
has "$tmp/fct.json" "latest review linked" '"url": "https://two.example/checks/hot-water"'
has "$tmp/fct.json" "other review kept" '"x-also-reviewed"'
# Ratings table from a file.
printf '{"format":"factlens-ratings/1","ratings":{"false":["Wobbly"]}}' >"$tmp/ratings.json"
run 1 "import --ratings" -- "$F" import "${NOWA[@]}" --ratings "$tmp/ratings.json" "$FX/feed.json" -o "$tmp/feed2.json"
has "$tmp/feed2.json" "own table maps Wobbly" '"claim": "A claim with a rating nobody mapped."'
has "$tmp/err" "own table lacks Faux" 'unknown rating "Faux"'
printf '{"format":"factlens-ratings/1","ratings":{"false":["Nope"],"true":["NOPE!"]}}' >"$tmp/bad-ratings.json"
run 2 "conflicting ratings table" -- "$F" import --ratings "$tmp/bad-ratings.json" "$FX/single.json"
has "$tmp/err" "conflict named" 'ratings.true\[0\]: "NOPE!" is also listed under false'

# ---- import --merge: ids stable, hand edits kept, version bumped, nothing dropped -
cp "$tmp/single.json" "$tmp/merge.json"
node -e '
  const fs = require("fs"); const l = JSON.parse(fs.readFileSync(process.argv[1]));
  l.rules[0].severity = "high"; l.rules[0].match.patterns = ["\\bvaccin\\w* .{0,30}magnet"];
  l.rules.push({ ...l.rules[0], id: "hand-written", claim: "Hand-written rule.",
    review: { ...l.rules[0].review, url: "https://desk.example/hand" } });
  fs.writeFileSync(process.argv[1], JSON.stringify(l, null, 2));' "$tmp/merge.json"
run 0 "merge" -- "$F" import "${NOWA[@]}" --merge "$tmp/merge.json" "$FX/array.json"
has "$tmp/err" "merge report added" "satire-mayor: added"
has "$tmp/err" "merge report kept" "hand-written: kept: not in this import"
has "$tmp/err" "merge summary" "1 added, 0 updated, 1 unchanged, 1 kept, 0 skipped; version 2 \(bumped\)"
node -e '
  const l = JSON.parse(require("fs").readFileSync(process.argv[1]));
  const r = Object.fromEntries(l.rules.map((x) => [x.id, x]));
  if (l.list.version !== 2) throw new Error("version " + l.list.version);
  if (r["vaccine-magnets"].severity !== "high" || !r["vaccine-magnets"].match.patterns) throw new Error("hand edits lost");
  if (!r["hand-written"] || !r["satire-mayor"]) throw new Error("rule dropped or missing");' "$tmp/merge.json" ||
  fail "merge result"
run 0 "merge again changes nothing" -- "$F" import "${NOWA[@]}" --merge "$tmp/merge.json" "$FX/array.json"
has "$tmp/err" "no bump" "0 added, 0 updated, 2 unchanged, 1 kept, 0 skipped; version 2$"

# ---- lint ---------------------------------------------------------------------------
run 1 "lint: raw findings" -- "$F" lint --now 2026-01-05T00:00:00Z "$FX/lint-bad.json"
has "$tmp/err" "review-url" 'lint-bad.json:27:26: error: review link "http://desk.example/r/copy" is not https.*\[review-url\]'
has "$tmp/err" "duplicate-id" 'lint-bad.json:30:13: error: duplicate rule id "copy" \(first used by rules\[1\] at line 22\).*\[duplicate-id\]'
has "$tmp/err" "re2" 'lint-bad.json:34:32: error: RE2 cannot compile pattern "\(unclosed \\b": missing \).*\[re2\]'
printf 'the cat sat\nthe dog ran\nhello there\n' >"$tmp/corpus.txt"
run 1 "lint: semantic findings" -- "$F" lint --now 2026-01-05T00:00:00Z --corpus "$tmp/corpus.txt" "$FX/lint-semantic.json"
has "$tmp/err" "expires-soon" 'lint-semantic.json:9:16: warning: the list expires in 5 day\(s\).*\[expires-soon\]'
has "$tmp/err" "too-broad with share" 'lint-semantic.json:12:5: error: rule "broad" is too broad: matched 2 of 3 corpus posts \(66.7%; the limit is 1.0%\), e.g. "the cat sat".*\[too-broad\]'
has "$tmp/err" "shadowed" 'lint-semantic.json:21:5: error: rule "shadow" never decides a verdict: every matcher it has is also in rule "broad" \(line 12\).*\[shadowed\]'
has "$tmp/err" "no-examples" 'lint-semantic.json:21:5: warning: rule "shadow" has no examples.match.*\[no-examples\]'
has "$tmp/err" "no-match-examples" 'lint-semantic.json:21:5: warning: rule "shadow" has no examples.no_match.*\[no-match-examples\]'
has "$tmp/err" "pattern-style" 'lint-semantic.json:26:31: warning: rule "shadow": pattern "\\bTHE\\b" is matched as "\\bthe\\b".*\[pattern-style\]'
has "$tmp/err" "matches-empty" 'lint-semantic.json:34:31: warning: .*"\(moon\)\?" can match the empty string.*\[matches-empty\]'
has "$tmp/err" "matches-everything" 'lint-semantic.json:34:42: error: .*pattern ".\{0,80\}" matches .*\[matches-everything\]'
has "$tmp/err" "never-matches" 'lint-semantic.json:34:[0-9]+: error: rule "dead": this keyword set can never match: term "Moon!" is in both "all" and "none" \[never-matches\]'
run 1 "lint: expired" -- "$F" lint --now 2026-02-01T00:00:00Z "$FX/lint-semantic.json"
has "$tmp/err" "expired" 'lint-semantic.json:9:16: error: the list expired on 2026-01-10T00:00:00Z.*\[expired\]'
run 1 "lint: parse error located" -- "$F" lint tests/fixtures/lists/semantic-invalid/pattern-re2-syntax.json
has "$tmp/err" "parser error has a line" 'pattern-re2-syntax.json:[0-9]+:[0-9]+: error: .*\[re2\]'
run 0 "lint: the demo list is clean" -- "$F" lint --now 2025-06-01T00:00:00Z rules/examples/demo.json
has "$tmp/err" "demo clean" "demo.json: 0 error\(s\), 0 warning\(s\)"
run 2 "lint: missing file" -- "$F" lint "$tmp/nope.json"

# ---- test ---------------------------------------------------------------------------
run 1 "test: failures" -- "$F" test "$FX/test-fails.json"
has "$tmp/out" "nothing matched, with normalised text" 'test-fails.json:20:19: FAIL rule moon-cheese: must match: "The m00n is made of CHEESE": did not match \(normalised: "the m00n is made of cheese"\); no rule of the list matched it'
has "$tmp/out" "another rule matched instead" 'test-fails.json:20:49: FAIL rule moon-cheese: must match: "the moon tastes like cheddar": did not match .*matched instead: rule "cheddar" by its keywords matcher on "cheddar"'
has "$tmp/out" "matched a no_match" 'test-fails.json:21:53: FAIL rule moon-cheese: must not match: "moon and cheese pairing night": matched by its pattern matcher on "moon and cheese"'
has "$tmp/out" "summary" "test-fails.json: 6 examples: 3 passed, 3 failed, 0 skipped"
run 0 "test: demo passes" -- "$F" test rules/examples/demo.json
has "$tmp/out" "demo summary" "demo.json: [0-9]+ examples: [0-9]+ passed, 0 failed"

# ---- the committed demo signature is fresh ------------------------------------------
"$F" verify -q -p rules/keys/demo.pub -m rules/examples/demo.json >/dev/null 2>&1 ||
  fail "rules/examples/demo.json.minisig does not verify: demo.json changed; run scripts/sign-demo.sh --update-committed"
minisign -Vm rules/examples/demo.json -p rules/keys/demo.pub -q >/dev/null 2>&1 ||
  fail "minisign -V of the committed demo signature"
"$F" lint rules/examples/harbour-street.json >/dev/null 2>&1 || fail "the committed imported example list lints clean"

# ---- publish: success, then atomicity ------------------------------------------------
mkdir -p "$tmp/site"
printf 'pw-for-tests\n' >"$tmp/pw.txt"; printf 'wrong\n' >"$tmp/wrong.txt"
"$F" keygen -p "$tmp/p.pub" -s "$tmp/p.key" --password-file "$tmp/pw.txt" >/dev/null || fail "keygen"
run 0 "publish" -- "$F" publish rules/examples/demo.json -s "$tmp/p.key" --password-file "$tmp/pw.txt" \
  -o "$tmp/site" --base-url https://lists.example/factlens/
has "$tmp/out" "publish report" "Published factlens-demo version 2"
minisign -Vm "$tmp/site/factlens-demo.json" -p "$tmp/p.pub" -q || fail "minisign -V of the published list"
node -e '
  const i = JSON.parse(require("fs").readFileSync(process.argv[1]));
  const e = i.lists[0];
  if (i.format !== "factlens-index/1" || e.id !== "factlens-demo" || e.version !== 2 ||
      e.url !== "https://lists.example/factlens/factlens-demo.json" ||
      e.signature !== e.url + ".minisig") throw new Error(JSON.stringify(i));' "$tmp/site/index.json" ||
  fail "index.json"
cp -r "$tmp/site" "$tmp/site-v2"
# Signing fails (wrong password): nothing changes.
run 2 "publish with a wrong password" -- "$F" publish rules/examples/demo.json -s "$tmp/p.key" \
  --password-file "$tmp/wrong.txt" -o "$tmp/site" --base-url https://lists.example/factlens
diff -r "$tmp/site" "$tmp/site-v2" >/dev/null || fail "a failed signing step changed the published files"
# A rename fails midway (index.json cannot be replaced): the list and signature
# already renamed are put back; nothing half-published, no temporary files left.
rm "$tmp/site/index.json"; mkdir -p "$tmp/site/index.json/blocked"
run 2 "publish failing midway" -- "$F" publish rules/examples/demo.json -s "$tmp/p.key" \
  --password-file "$tmp/pw.txt" -o "$tmp/site" --base-url https://lists.example/factlens
has "$tmp/err" "midway failure reported" "index.json: error: cannot replace the file"
cmp -s "$tmp/site/factlens-demo.json" "$tmp/site-v2/factlens-demo.json" || fail "midway failure: list not restored"
cmp -s "$tmp/site/factlens-demo.json.minisig" "$tmp/site-v2/factlens-demo.json.minisig" || fail "midway failure: signature not restored"
[ "$(ls "$tmp/site" | wc -l)" = 3 ] || fail "midway failure left files behind: $(ls "$tmp/site")"
minisign -Vm "$tmp/site/factlens-demo.json" -p "$tmp/p.pub" -q || fail "old files still verify"
rm -r "$tmp/site/index.json"
# A lint error or a failed example publishes nothing.
run 1 "publish refuses failing examples" -- "$F" publish "$FX/test-fails.json" -s "$tmp/p.key" \
  --password-file "$tmp/pw.txt" -o "$tmp/site" --base-url https://lists.example/factlens
[ -e "$tmp/site/test-fails.json" ] && fail "a list with failing examples was published"
run 2 "publish needs https base" -- "$F" publish rules/examples/demo.json -s "$tmp/p.key" -o "$tmp/site" --base-url http://x.example

# ---- check: --context, --explain, progress bar ---------------------------------------
printf '%s\n' '{"text":"Rumour: the Harbour Street bridge will close permanently next month"}' \
  'Fluoride in tap water is used for mind control, wake up' >"$tmp/posts.jsonl"
run 0 "check --explain" -- "$F" check --list rules/examples/harbour-street.json --allow-unsigned --explain "$tmp/posts.jsonl"
has "$tmp/out" "explain names rule, kind, span" 'demote <- rule harbour-street-verify/tap-water-fluoride-mind-control \(false/medium, keywords, score 0.8\) \[0,8\) "Fluoride" \[16,21\) "water" .*; review https://verify.harbour-street.example/fact-checks/tap-water-fluoride-mind-control$'
run 0 "check --json --explain" -- "$F" check --list rules/examples/harbour-street.json --allow-unsigned --json --explain "$tmp/posts.jsonl"
has "$tmp/out" "normalized text" '"normalized":"fluoride in tap water is used for mind control wake up"'
has "$tmp/out" "matched text" '"matchedText":\["Fluoride","water","used","control"\]'
run 0 "check --context" -- "$F" check --list tests/fixtures/cases/list.json --allow-unsigned --json \
  --policy '{"severityOnlyInRegions":true}' --context region=DE,language=de <<<'A gang is kidnapping children near the market'
has "$tmp/out" "context region applied" '"action":"demote"'
run 2 "check --context bad" -- "$F" check --list tests/fixtures/cases/list.json --allow-unsigned --context colour=red
grep -q $'\r' "$tmp/err" && fail "progress bar drawn when stderr is not a terminal"
if command -v script >/dev/null; then
  seq 1 3000 | sed 's/^/post number /' >"$tmp/many.txt"
  script -qec "'$F' check --list tests/fixtures/cases/list.json --allow-unsigned '$tmp/many.txt' >/dev/null" "$tmp/tty.log" >/dev/null 2>&1
  grep -q '\[#*\.*\] *[0-9]*%' "$tmp/tty.log" || fail "no progress bar on a terminal: $(head -c 300 "$tmp/tty.log")"
fi

# ---- help for each command ------------------------------------------------------------
for c in import lint test publish check; do
  "$F" help "$c" | grep -q "usage: factlens $c" || fail "help $c"
done

# ---- end to end: ClaimReview -> import -> lint -> test -> publish -> minisign -> wasm --
# Similarity matching (issue 4) is not in this engine yet, so the import derives a
# keyword set from each claim (--keywords): that is what labels the post below.
E=$tmp/e2e; mkdir -p "$E/site"
run 0 "e2e import" -- "$F" import --keywords --id harbour-street-verify rules/examples/claimreview-sample.html -o "$E/list.json"
run 0 "e2e lint" -- "$F" lint "$E/list.json"
run 0 "e2e test" -- "$F" test "$E/list.json"
run 0 "e2e publish" -- "$F" publish "$E/list.json" -s "$tmp/p.key" --password-file "$tmp/pw.txt" -o "$E/site" --base-url https://verify.harbour-street.example/lists
minisign -Vm "$E/site/harbour-street-verify.json" -p "$tmp/p.pub" >"$tmp/out" 2>&1 || fail "e2e minisign -V: $(cat "$tmp/out")"
has "$tmp/out" "e2e trusted comment" "Trusted comment: timestamp:[0-9]+.*list:harbour-street-verify.*version:2"
if [ -f web/dist/factlens-core.wasm ]; then
  (cd "$ROOT" && node --input-type=module -e '
    import { readFileSync } from "node:fs";
    import { createEngine } from "factlens";
    const [dir, pub] = process.argv.slice(1);
    const engine = await createEngine();
    const info = engine.loadList(readFileSync(dir + "/harbour-street-verify.json", "utf8"), {
      signature: readFileSync(dir + "/harbour-street-verify.json.minisig", "utf8"),
      publicKey: readFileSync(pub, "utf8") });
    if (!info.signed || info.id !== "harbour-street-verify") throw new Error(JSON.stringify(info));
    const v = engine.check("Wake up: solar panels on the roof drain electric car batteries parked nearby!");
    if (v.action !== "demote" || v.matches[0].ruleId !== "solar-panels-drain-batteries" ||
        !v.matches[0].review.url.startsWith("https://verify.harbour-street.example/"))
      throw new Error(JSON.stringify(v));
    let refused = false;
    try { engine.loadList(readFileSync(dir + "/harbour-street-verify.json", "utf8").replace("Solar", "Wind"),
      { signature: readFileSync(dir + "/harbour-street-verify.json.minisig", "utf8"), publicKey: readFileSync(pub, "utf8") }); }
    catch (e) { refused = e.kind === "signature"; }
    if (!refused) throw new Error("a tampered list was accepted");
    engine.dispose();' "$E/site" "$tmp/p.pub") >"$tmp/out" 2>&1 || fail "e2e wasm: $(cat "$tmp/out")"
else
  fail "e2e: web/dist/factlens-core.wasm is missing (run the wasm build)"
fi

if [ "$failures" -gt 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "publisher tests passed"
