#!/usr/bin/env bash
# Signs the demo list with the demo key (rules/keys/README.md: a published,
# untrusted key) into build/demo/: demo.json and demo.json.minisig, as a publisher
# would serve them. Used by npm start and the tests; needs build/bin/factlens.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/demo
cp rules/examples/demo.json build/demo/demo.json.tmp
mv build/demo/demo.json.tmp build/demo/demo.json
build/bin/factlens sign -s rules/keys/demo-secret-DEMO-ONLY-UNTRUSTED.key \
  -m build/demo/demo.json -t "factlens demo list, signed with the untrusted demo key"
build/bin/factlens verify -q -p rules/keys/demo.pub -m build/demo/demo.json
