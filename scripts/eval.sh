#!/usr/bin/env bash
# npm run eval: claim-retrieval figures on the CLEF 2020 CheckThat! dev split
# (../shared/data/clef2020, the only place factlens reads shared data from), natively
# with `factlens eval`, then the wasm build on the same list and posts: list
# preparation, search time per post, and rankings identical to native.
# Extra arguments go to `factlens eval` (e.g. --ablation, --thresholds).
set -euo pipefail
cd "$(dirname "$0")/.."
data=${FACTLENS_CLEF2020:-../shared/data/clef2020}
for f in verified_claims.tsv dev.queries.tsv dev.qrels train.queries.tsv train.qrels; do
  [ -f "$data/$f" ] || { echo "eval: $data/$f is missing" >&2; exit 2; }
done
bash scripts/build.sh
out=build/eval
mkdir -p "$out"
build/bin/factlens eval --claims "$data/verified_claims.tsv" \
  --queries "$data/dev.queries.tsv" --qrels "$data/dev.qrels" \
  --train-queries "$data/train.queries.tsv" --train-qrels "$data/train.qrels" \
  --write-list "$out/clef2020-claims.json" --write-rankings "$out/dev-rankings.jsonl" "$@"
node scripts/eval-wasm.mjs "$out/clef2020-claims.json" "$out/dev-rankings.jsonl"
