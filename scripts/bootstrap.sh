#!/usr/bin/env bash
# Installs what a fresh machine lacks for building and testing factlens, and is quick
# (a few checks, no network) when everything is already there.
#   - Debian packages through apt-get (only those missing);
#   - npm packages (npm ci, only when package-lock.json changed);
#   - pinned third-party sources, each checked by SHA-256 (scripts/deps.lock).
# Usage: scripts/bootstrap.sh            # everything the build and tests need
#        scripts/bootstrap.sh PACKAGE...  # and these Debian packages too (a tool's own:
#                                         # valgrind for npm run bench:instructions,
#                                         # clang's runtimes for scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEPS=$ROOT/.deps
log() { printf 'bootstrap: %s\n' "$*" >&2; }

# Runs "$@", and again (3 attempts in all, 10 s apart) if it fails: a registry's
# connection here sometimes drops mid-download (a fresh clone's npm ci once stopped
# on ECONNRESET), and such a failure says nothing about the change being tested.
# Only for steps that are whole again when re-run (npm ci starts from an empty
# node_modules; apt and npm pack write their files complete or not at all).
retry() {
  local attempt
  for attempt in 1 2 3; do
    "$@" && return 0
    [ "$attempt" = 3 ] && break
    log "attempt $attempt failed: $*; again in 10 s"
    sleep 10
  done
  log "failed 3 times: $*"
  return 1
}

# --- Debian packages -------------------------------------------------------------
# chromium: the e2e tests and `npm start -- --screenshot` (driven by npm playwright-core);
# firefox-esr: the extension's e2e tests in Firefox (driven by npm puppeteer-core, which
# never downloads a browser); zip/unzip: `npm run package` writes the extension's zips.
# openssl: the throwaway certificate of the site fixtures' https server (tests/e2e/sites.mjs).
PACKAGES=(cmake ninja-build g++ clang-format emscripten nlohmann-json3-dev catch2 dpkg-dev
          libsodium-dev minisign autoconf automake libtool chromium openssl firefox-esr zip unzip
          "$@")
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  retry $SUDO apt-get update -qq
  retry env DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# --- npm packages ------------------------------------------------------------------
stamp=node_modules/.factlens-lock.sha256
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing npm packages (npm ci)"
  # puppeteer-core downloads nothing; the variable guards against a future dependency
  # that would (no browser download works here, nor is one wanted).
  retry env PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
  echo "$want" >"$stamp"
fi

# --- pinned third-party sources ----------------------------------------------------
mkdir -p "$DEPS/downloads" "$DEPS/src"

verify() {  # verify FILE SHA256
  local got; got=$(sha256sum "$1" | cut -d' ' -f1)
  if [ "$got" != "$2" ]; then
    log "SHA-256 mismatch for $1: expected $2, got $got"; rm -f "$1"; return 1
  fi
}

# Debian source packages: apt-get source with a deb-src entry given for this call only,
# so the machine's apt configuration is left untouched.
debian_source() {  # debian_source PACKAGE ORIG_TARBALL SHA256
  local pkg=$1 file=$2 sha=$3 dl=$DEPS/downloads
  [ -f "$dl/$file" ] && verify "$dl/$file" "$sha" && return 0
  local apt=$DEPS/apt
  mkdir -p "$apt/lists/partial"
  local mirror
  mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
  cat >"$apt/deb-src.sources" <<SRC
Types: deb-src
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  local opts=(-o "Dir::Etc::SourceList=$apt/deb-src.sources" -o Dir::Etc::SourceParts=/dev/null
              -o "Dir::State::Lists=$apt/lists" -o APT::Sandbox::User=root)
  log "fetching Debian source package $pkg"
  retry apt-get "${opts[@]}" update -qq
  (cd "$dl" && retry apt-get "${opts[@]}" source --download-only -qq "$pkg" >/dev/null)
  verify "$dl/$file" "$sha"
}

npm_tarball() {  # npm_tarball SPEC FILE SHA256
  local spec=$1 file=$2 sha=$3 dl=$DEPS/downloads
  [ -f "$dl/$file" ] && verify "$dl/$file" "$sha" && return 0
  log "fetching npm tarball $spec"
  (cd "$dl" && retry npm pack "$spec" --silent >/dev/null)
  verify "$dl/$file" "$sha"
}

extract() {  # extract TARBALL DEST [STRIP-PATH]: unpack once into .deps/src/DEST
  local tarball=$1 dest=$DEPS/src/$2
  [ -f "$dest/.complete" ] && return 0
  rm -rf "$dest.tmp" "$dest"; mkdir -p "$dest.tmp"
  tar -xzf "$DEPS/downloads/$tarball" -C "$dest.tmp" --strip-components=1
  touch "$dest.tmp/.complete"; mv "$dest.tmp" "$dest"
}

# shellcheck source=deps.lock
source scripts/deps.lock
npm_tarball "re2@$RE2_NPM_VERSION" "re2-$RE2_NPM_VERSION.tgz" "$RE2_NPM_SHA256"
extract "re2-$RE2_NPM_VERSION.tgz" "re2-npm-$RE2_NPM_VERSION"
debian_source utf8proc "utf8proc_$UTF8PROC_VERSION.orig.tar.gz" "$UTF8PROC_SHA256"
extract "utf8proc_$UTF8PROC_VERSION.orig.tar.gz" "utf8proc-$UTF8PROC_VERSION"
debian_source snowball "snowball_$SNOWBALL_VERSION.orig.tar.gz" "$SNOWBALL_SHA256"
extract "snowball_$SNOWBALL_VERSION.orig.tar.gz" "snowball-$SNOWBALL_VERSION"
# Generate the C stemmers (the languages similar.cc stems) with Snowball's own compiler,
# built for the host. The list must match SNOWBALL_LANGUAGES in CMakeLists.txt.
SNOWBALL_LANGUAGES=(english german french spanish italian portuguese dutch)
sb=$DEPS/src/snowball-$SNOWBALL_VERSION
if [ ! -f "$sb/.generated" ]; then
  log "generating Snowball stemmers (${SNOWBALL_LANGUAGES[*]})"
  targets=(); for l in "${SNOWBALL_LANGUAGES[@]}"; do targets+=("src_c/stem_UTF_8_$l.c"); done
  make -C "$sb" -s -j2 "${targets[@]}" >/dev/null
  for l in "${SNOWBALL_LANGUAGES[@]}"; do [ -f "$sb/src_c/stem_UTF_8_$l.c" ] || { log "missing $l stemmer"; exit 1; }; done
  touch "$sb/.generated"
fi

debian_source libsodium "libsodium_$LIBSODIUM_VERSION.orig.tar.gz" "$LIBSODIUM_SHA256"
extract "libsodium_$LIBSODIUM_VERSION.orig.tar.gz" "libsodium-$LIBSODIUM_VERSION"

# libsodium for wasm: built once from the pinned source into .deps/libsodium-wasm
# (natively the build links Debian's libsodium-dev, the same version).
SODIUM_WASM=$DEPS/libsodium-wasm
if [ ! -f "$SODIUM_WASM/.complete" ]; then
  log "building libsodium $LIBSODIUM_VERSION for wasm (about 1 minute)"
  src=$DEPS/src/libsodium-$LIBSODIUM_VERSION
  work=$DEPS/build-libsodium-wasm
  rm -rf "$work" "$SODIUM_WASM"; cp -a "$src" "$work"
  (
    cd "$work"
    export NODE_PATH=/usr/share/nodejs
    ./autogen.sh -s >/dev/null 2>&1
    emconfigure ./configure --prefix="$SODIUM_WASM" --host=wasm32-unknown-emscripten \
      --disable-shared --enable-static --without-pthreads --disable-ssp --disable-asm \
      --enable-minimal --disable-pie >/dev/null
    emmake make -j"$(nproc)" install >/dev/null 2>&1
  ) || { log "libsodium wasm build failed (see $work)"; exit 1; }
  rm -rf "$work"
  touch "$SODIUM_WASM/.complete"
fi

# nlohmann/json for the wasm build: a folder that holds only that library, since
# host include paths (/usr/include) break Emscripten's libc headers.
if [ ! -e "$DEPS/include-json/nlohmann/json.hpp" ]; then
  mkdir -p "$DEPS/include-json" && ln -sfn /usr/include/nlohmann "$DEPS/include-json/nlohmann"
fi
