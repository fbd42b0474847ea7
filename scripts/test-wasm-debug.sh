#!/usr/bin/env bash
# The node tests of the wasm module (tests/js/) against the debug build: Emscripten's
# runtime checks on (-sASSERTIONS=2 -sSAFE_HEAP=1: every load and store checked for
# alignment and bounds, heap and stack corruption detected), built by
# `scripts/build.sh --debug-wasm` into build/wasm-debug/dist. web/index.js loads that
# build instead of web/dist when FACTLENS_WASM_DIST names it (a test-only switch).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh               # the CLI some tests compare with, and web/dist
bash scripts/build.sh --debug-wasm  # build/wasm-debug/dist
bash scripts/sign-demo.sh >/dev/null
FACTLENS_WASM_DIST=build/wasm-debug/dist node --test tests/js/
