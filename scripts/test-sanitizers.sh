#!/usr/bin/env bash
# The Catch2 suite and the CLI tests under AddressSanitizer + UndefinedBehaviorSanitizer
# (build/asan), any finding fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
[ -f build/asan/build.ninja ] ||
  cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFACTLENS_SANITIZE=ON >/dev/null
cmake --build build/asan -j "$(nproc)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir build/asan --output-on-failure
