#!/usr/bin/env bash
# `npm start`: builds what is missing (bootstrap, native CLI, wasm), signs the demo
# list with the demo key (build/demo/, served as /signed/ for the playground's "load
# a signed list"), then serves the demo and rule playground (web/) on localhost and
# prints its URL.
#   npm start                          # serve until Ctrl-C (PORT=8719 by default)
#   npm start -- --port 9000
#   npm start -- --screenshot FILE     # render the demo in headless Chromium, exit
# The command-line demo is `npm run demo:cli` (scripts/demo-cli.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >&2
bash scripts/sign-demo.sh >&2
exec node scripts/serve.mjs "$@"
