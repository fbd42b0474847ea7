#!/usr/bin/env bash
# `npm run demo:cli`: builds what is missing, signs the demo list with the demo key,
# then checks the demo posts against the verified list with the native CLI and prints
# a verdict for each matching post.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --native-only >&2
bash scripts/sign-demo.sh
echo "factlens: checking rules/examples/demo-posts.txt against the signed demo list" >&2
exec build/bin/factlens check --list build/demo/demo.json -p rules/keys/demo.pub \
  rules/examples/demo-posts.txt "$@"
