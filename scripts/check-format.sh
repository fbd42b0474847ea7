#!/usr/bin/env bash
# Fails if any C++ source differs from clang-format's output (.clang-format: Google).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files 'wasm/*.cc' 'wasm/*.h' 'tests/*.cpp' 'tests/*.cc' 'tests/*.h')
clang-format --dry-run --Werror "${files[@]}"
echo "check-format: ${#files[@]} files formatted"
