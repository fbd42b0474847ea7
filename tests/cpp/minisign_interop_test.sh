#!/usr/bin/env bash
# Interop with the real minisign tool (Debian package minisign), both directions:
# keys and signatures written by one are read by the other, prehashed and legacy,
# unencrypted and password-protected keys; plus the list lifecycle in `verify`.
# Usage: minisign_interop_test.sh PATH/TO/factlens
set -uo pipefail
FACTLENS=$(realpath "$1")
cd "$(dirname "$0")/../.."
ROOT=$PWD
command -v minisign >/dev/null || { echo "minisign is not installed (scripts/bootstrap.sh installs it)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { "$@" >out.txt 2>err.txt || fail "$* -> exit $?: $(cat err.txt)"; }
refused() {  # refused CODE KIND command...: must exit CODE with [KIND] on stderr
  local code=$1 kind=$2; shift 2
  "$@" >out.txt 2>err.txt; local got=$?
  [ "$got" = "$code" ] || fail "$* -> exit $got, want $code: $(cat err.txt)"
  grep -q "\[$kind\]" err.txt || fail "$* -> want [$kind] in: $(cat err.txt)"
}

cp "$ROOT/rules/examples/demo.json" list.json
printf 'pw-for-tests\n' >pw.txt

# minisign keys and signatures -> factlens
minisign -G -W -p m.pub -s m.key >/dev/null 2>&1 || fail "minisign -G"
minisign -S -s m.key -m list.json -x m-prehashed.minisig >/dev/null 2>&1 || fail "minisign -S"
minisign -S -l -s m.key -m list.json -x m-legacy.minisig >/dev/null 2>&1 || fail "minisign -S -l"
ok "$FACTLENS" verify -p m.pub -m list.json -x m-prehashed.minisig
grep -q "List factlens-demo version 1" out.txt || fail "verify output: $(cat out.txt)"
ok "$FACTLENS" verify -p m.pub -m list.json -x m-legacy.minisig
ok "$FACTLENS" verify -P "$(tail -1 m.pub)" -m list.json -x m-prehashed.minisig
# factlens signs with a key minisign generated
ok "$FACTLENS" sign -s m.key -m list.json -x f-with-m-key.minisig
minisign -Vm list.json -p m.pub -x f-with-m-key.minisig >/dev/null 2>&1 || fail "minisign -V of factlens signature made with minisign's key"

# factlens keys and signatures -> minisign
ok "$FACTLENS" keygen -W -p f.pub -s f.key
ok "$FACTLENS" sign -s f.key -m list.json
minisign -Vm list.json -p f.pub >/dev/null 2>&1 || fail "minisign -V of factlens prehashed signature"
ok "$FACTLENS" sign -l -s f.key -m list.json -x f-legacy.minisig -t "custom trusted comment"
minisign -Vm list.json -p f.pub -x f-legacy.minisig >mv.txt 2>&1 || fail "minisign -V of factlens legacy signature"
grep -q "Trusted comment: custom trusted comment" mv.txt || fail "minisign shows the trusted comment: $(cat mv.txt)"
minisign -S -s f.key -m list.json -x m-with-f-key.minisig >/dev/null 2>&1 || fail "minisign -S with factlens's unencrypted key"
ok "$FACTLENS" verify -p f.pub -m list.json -x m-with-f-key.minisig

# Password-protected keys both ways (scrypt with minisign's parameters).
printf 'pw-for-tests\npw-for-tests\n' | minisign -G -p me.pub -s me.key >/dev/null 2>&1 || fail "minisign -G (encrypted)"
ok "$FACTLENS" sign -s me.key -m list.json -x fe.minisig --password-file pw.txt
minisign -Vm list.json -p me.pub -x fe.minisig >/dev/null 2>&1 || fail "minisign -V after factlens signed with minisign's encrypted key"
ok "$FACTLENS" keygen -p fe.pub -s fe.key --password-file pw.txt
printf 'pw-for-tests\n' | minisign -S -s fe.key -m list.json -x mfe.minisig >/dev/null 2>&1 || fail "minisign -S with factlens's encrypted key"
ok "$FACTLENS" verify -p fe.pub -m list.json -x mfe.minisig
printf 'wrong\n' >wrong.txt
"$FACTLENS" sign -s fe.key -m list.json -x x.minisig --password-file wrong.txt >/dev/null 2>err.txt &&
  fail "sign with a wrong password succeeded"
grep -q "wrong password" err.txt || fail "wrong password message: $(cat err.txt)"
# No terminal and no password file: stop at once, never wait on stdin.
timeout 10 "$FACTLENS" keygen -p n.pub -s n.key </dev/null >/dev/null 2>err.txt
[ $? = 2 ] && grep -q "no terminal" err.txt || fail "keygen without a terminal: $(cat err.txt)"
[ ! -e n.key ] || fail "keygen without a password wrote a key"
ok "$FACTLENS" keygen -W -p f.pub -s f.key -f  # -f overwrites; without it, refused
"$FACTLENS" keygen -W -p f.pub -s f.key >/dev/null 2>&1 && fail "keygen overwrote an existing key"

# Lifecycle checks in verify (exit 1 for a finding); f.key was just replaced.
ok "$FACTLENS" sign -s f.key -m list.json
refused 1 key "$FACTLENS" verify -p f.pub -m list.json -x m-prehashed.minisig
sed 's/"version": 1/"version": 2/' list.json >tampered.json
cp list.json.minisig tampered.json.minisig
refused 1 signature "$FACTLENS" verify -p f.pub -m tampered.json
refused 1 rollback "$FACTLENS" verify -p f.pub -m list.json --last-version 2
digest=$("$FACTLENS" verify -p f.pub -m list.json | sed -n 's/^Digest: //p')
ok "$FACTLENS" verify -p f.pub -m list.json --last-version 1 --last-digest "$digest"
refused 1 rollback "$FACTLENS" verify -p f.pub -m list.json --last-version 1 --last-digest "$(printf '0%.0s' {1..64})"
refused 1 expired "$FACTLENS" verify -p f.pub -m list.json --now 2031-01-01T00:00:00Z

# Key rotation: the old key announces the new one; lists signed by the new key then
# verify against the old pin with the statement, and never without it.
ok "$FACTLENS" keygen -W -p new.pub -s new.key
ok "$FACTLENS" sign -s new.key -m list.json -x new.minisig
refused 1 key "$FACTLENS" verify -p f.pub -m list.json -x new.minisig
ok "$FACTLENS" rotate -s f.key -p new.pub --list factlens-demo -o rotation.json
minisign -Vm rotation.json -p f.pub >/dev/null 2>&1 || fail "minisign -V of the rotation statement"
ok "$FACTLENS" verify -p f.pub -m list.json -x new.minisig --rotation rotation.json
grep -q "Key rotated: pin the new key $(tail -1 new.pub)" out.txt || fail "rotation output: $(cat out.txt)"
# Each statement is also written under its old key's id (16 hex digits; minisign
# prints the id without leading zeros), for readers pinned further back: rotate from
# minisign's own key, find the copy by the id minisign printed.
ok "$FACTLENS" rotate -s m.key -p new.pub --list factlens-demo -o m-rotation.json
m_id=$(sed -n '1s/.* //p' m.pub)
while [ ${#m_id} -lt 16 ]; do m_id="0$m_id"; done
cmp -s m-rotation.json "m-rotation.json.$m_id" || fail "no m-rotation.json.$m_id beside m-rotation.json"
minisign -Vm "m-rotation.json.$m_id" -p m.pub >/dev/null 2>&1 || fail "minisign -V of the keyed statement"
ok "$FACTLENS" rotate -s new.key -p f.pub --list other-list -o wrong-rotation.json
refused 1 key "$FACTLENS" verify -p new.pub -m list.json --rotation wrong-rotation.json

# check with a signed list, and the signature kept beside it.
printf '5G towers are spreading the coronavirus!!\n' >posts.txt
ok "$FACTLENS" check --list list.json -p f.pub posts.txt
grep -q "demote" out.txt || fail "check with a signed list: $(cat out.txt)"
refused 1 key "$FACTLENS" check --list list.json -p m.pub posts.txt

if [ "$failures" -gt 0 ]; then echo "$failures minisign interop check(s) failed"; exit 1; fi
echo "minisign interop tests passed"
