#!/usr/bin/env bash
# Builds everything: the native engine, CLI (build/bin/factlens) and tests (build/),
# then the wasm module (build/wasm -> web/dist/factlens-core.{mjs,wasm}).
# Usage: scripts/build.sh [--native-only] [--debug-wasm]
set -euo pipefail
cd "$(dirname "$0")/.."
native_only=0; wasm_type=Release
for a in "$@"; do
  case $a in
    --native-only) native_only=1 ;;
    --debug-wasm) wasm_type=Debug ;;  # -sASSERTIONS=2 -sSAFE_HEAP=1
    *) echo "build.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
bash scripts/bootstrap.sh
# Emscripten's JS optimizer needs Debian's node modules (acorn).
export NODE_PATH=/usr/share/nodejs
jobs=$(nproc)

[ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"
[ "$native_only" = 1 ] && exit 0

wasm_dir=build/wasm
[ "$wasm_type" = Debug ] && wasm_dir=build/wasm-debug
dist_dir=$PWD/web/dist
[ "$wasm_type" = Debug ] && dist_dir=$PWD/build/wasm-debug/dist
[ -f "$wasm_dir/build.ninja" ] ||
  emcmake cmake -S . -B "$wasm_dir" -G Ninja -DCMAKE_BUILD_TYPE="$wasm_type" \
    -DFACTLENS_WEB_DIST="$dist_dir" >/dev/null
cmake --build "$wasm_dir" -j "$jobs"
