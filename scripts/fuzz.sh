#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/*_fuzzer.cc, clang, ASan + UBSan) and runs
# each for SECONDS (default 60), starting from seeds taken from the tests. A crash
# fails the run; its input is saved in build/fuzz/crashes/ - copy it into
# tests/fuzz/regressions/<target>/ so CTest replays it from then on.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 30 list match
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
# clang and its sanitizer and libFuzzer runtimes: bootstrap's missing-only install,
# with its retries (clang-14 itself comes with emscripten).
bash scripts/bootstrap.sh clang libclang-rt-14-dev
[ -f build/fuzz/build.ninja ] ||
  CC=clang CXX=clang++ cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DFACTLENS_FUZZ=ON >/dev/null
cmake --build build/fuzz -j "$(nproc)"
[ -x build/bin/factlens ] && bash scripts/sign-demo.sh >/dev/null 2>&1 || true

# Seeds: lists, posts and signature files the tests already use.
seeds=build/fuzz/seeds
rm -rf "$seeds"; mkdir -p "$seeds"/{list,normalize,verify,match,claimreview,compiled}
for f in tests/fixtures/lists/*/*.json tests/fixtures/cases/list.json rules/examples/*.json; do
  cp "$f" "$seeds/list/$(echo "$f" | tr / _)"
done
node -e '
  const fs = require("fs"), path = require("path");
  const [seeds] = process.argv.slice(1);
  const posts = JSON.parse(fs.readFileSync("tests/fixtures/cases/cases.json", "utf8")).map((c) => c.text);
  for (const r of JSON.parse(fs.readFileSync("rules/examples/demo.json", "utf8")).rules) {
    posts.push(...(r.examples?.match ?? []), ...(r.examples?.no_match ?? []), ...(r.match.patterns ?? []));
  }
  posts.forEach((p, i) => {
    fs.writeFileSync(path.join(seeds, "normalize", `post-${i}`), p);
    fs.writeFileSync(path.join(seeds, "match", `post-${i}`), "\x01" + p);
  });
  for (const f of fs.readdirSync("tests/fixtures/lists/valid"))
    fs.writeFileSync(path.join(seeds, "match", `list-${f}`), "\x00" + fs.readFileSync(path.join("tests/fixtures/lists/valid", f)));
' "$seeds"
cp rules/keys/*.pub rules/keys/*.key "$seeds/verify/"
[ -f build/demo/demo.json.minisig ] && cp build/demo/demo.json.minisig "$seeds/verify/"
cp tests/fixtures/claimreview/* "$seeds/claimreview/"
# Compiled forms of the lists the tests use, written by the native CLI.
for f in rules/examples/demo.json tests/fixtures/cases/list.json; do
  build/bin/factlens compile --list "$f" --allow-unsigned -o "$seeds/compiled/$(basename "$f" .json).flc" \
    >/dev/null 2>&1 || echo "fuzz: could not compile $f for a seed" >&2
done

mkdir -p build/fuzz/crashes
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(list normalize verify match claimreview compiled)
failed=0
for t in "${targets[@]}"; do
  corpus=build/fuzz/corpus/$t; mkdir -p "$corpus"
  echo "fuzz: ${t}_fuzzer for ${seconds}s" >&2
  if ! build/fuzz/${t}_fuzzer -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
      -max_len=65536 -print_final_stats=1 -artifact_prefix=build/fuzz/crashes/${t}- \
      "$corpus" "$seeds/$t" tests/fuzz/regressions/$t >build/fuzz/$t.log 2>&1; then
    echo "fuzz: ${t}_fuzzer FAILED; see build/fuzz/$t.log and build/fuzz/crashes/" >&2
    tail -40 build/fuzz/$t.log >&2
    failed=1
  else
    grep -E "stat::number_of_executed_units|cov:" build/fuzz/$t.log | tail -2 >&2
  fi
done
exit $failed
