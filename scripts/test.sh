#!/usr/bin/env bash
# Builds and runs every test: Catch2 per component and the CLI (CTest), then the
# node tests of the wasm module, which run the same shared cases as the C++ tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
bash scripts/sign-demo.sh  # build/demo/: the signed demo list the e2e tests load
bash scripts/check-format.sh
ctest --test-dir build --output-on-failure
node --test tests/js/ tests/e2e/
