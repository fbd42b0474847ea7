#!/usr/bin/env bash
# Signs the demo list with the demo key (rules/keys/README.md: a published,
# untrusted key) into build/demo/: demo.json and demo.json.minisig, as a publisher
# would serve them. Used by npm start and the tests; needs build/bin/factlens.
#
# --update-committed also rewrites rules/examples/demo.json.minisig, the signature
# kept in the repository. Its trusted comment is fixed, and Ed25519 is
# deterministic, so the same list always gives the same bytes; the CLI test fails
# when demo.json changed without this being run.
set -euo pipefail
cd "$(dirname "$0")/.."
KEY=rules/keys/demo-secret-DEMO-ONLY-UNTRUSTED.key
COMMENT="factlens demo list, signed with the untrusted demo key"
if [ "${1:-}" = "--update-committed" ]; then
  build/bin/factlens sign -s "$KEY" -m rules/examples/demo.json -t "$COMMENT"
  build/bin/factlens verify -q -p rules/keys/demo.pub -m rules/examples/demo.json
fi
mkdir -p build/demo
cp rules/examples/demo.json build/demo/demo.json.tmp
mv build/demo/demo.json.tmp build/demo/demo.json
build/bin/factlens sign -s "$KEY" -m build/demo/demo.json -t "$COMMENT"
build/bin/factlens verify -q -p rules/keys/demo.pub -m build/demo/demo.json
