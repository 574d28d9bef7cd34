#!/usr/bin/env bash
# Build bench/ns3/out/dumbbell against the ns-3 3.44 libraries shipped in the
# PyPI wheel ns3==3.44.post0.  Idempotent: every step is skipped when its
# result is already there and up to date.
#
# Environment:
#   AQMLAB_NS3_VENV   venv to create/use        (default /tmp/aqmlab-ns3-venv)
#   PYTHON            interpreter for the venv  (default python3)
#   CXX               C++ compiler              (default g++)
#   AQMLAB_NS3_FORCE  1 = rebuild even if up to date
set -euo pipefail

NS3_VERSION="3.44.post0"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${AQMLAB_NS3_VENV:-/tmp/aqmlab-ns3-venv}"
PYTHON="${PYTHON:-python3}"
CXX="${CXX:-g++}"
OUT="$HERE/out"
SRC="$HERE/dumbbell.cc"
BIN="$OUT/dumbbell"

die() { echo "build.sh: error: $*" >&2; exit 1; }
log() { echo "build.sh: $*" >&2; }

command -v "$PYTHON" >/dev/null 2>&1 || die "'$PYTHON' not found (set PYTHON=...)"
command -v "$CXX" >/dev/null 2>&1 || die "C++ compiler '$CXX' not found (apt-get install g++)"
[ -f "$SRC" ] || die "missing source $SRC"

# 1. venv
if [ ! -x "$VENV/bin/python" ]; then
    log "creating venv $VENV"
    "$PYTHON" -m venv "$VENV" || die "cannot create venv at $VENV (apt-get install python3-venv?)"
fi

# 2. the ns3 wheel
have_ver="$("$VENV/bin/python" -m pip show ns3 2>/dev/null | sed -n 's/^Version: //p' || true)"
if [ "$have_ver" != "$NS3_VERSION" ]; then
    log "installing ns3==$NS3_VERSION into $VENV (large download, once)"
    "$VENV/bin/python" -m pip install --disable-pip-version-check -q "ns3==$NS3_VERSION" \
        || die "pip install ns3==$NS3_VERSION failed"
fi

# 3. locate headers and libraries inside the installed wheel
SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
NS3_ROOT="$SITE/ns3"
INC="$NS3_ROOT/include"
LIB=""
for d in "$NS3_ROOT/lib64" "$NS3_ROOT/lib"; do
    if ls "$d"/libns3.44-core*.so >/dev/null 2>&1; then LIB="$d"; break; fi
done
[ -f "$INC/ns3/core-module.h" ] || die "ns-3 headers not found under $INC"
[ -n "$LIB" ] || die "libns3.44-core*.so not found under $NS3_ROOT/lib64 or lib"

MODULES="core network internet applications internet-apps point-to-point traffic-control stats mobility bridge"
LIBS=()
for m in $MODULES; do
    f=""
    for cand in "$LIB/libns3.44-$m.so" "$LIB/libns3.44-$m-optimized.so" "$LIB/libns3.44-$m-default.so" "$LIB/libns3.44-$m-release.so"; do
        if [ -f "$cand" ]; then f="$cand"; break; fi
    done
    [ -n "$f" ] || die "missing library for ns-3 module '$m' in $LIB"
    LIBS+=("-l:$(basename "$f")")
done

# 4. compile (skip if binary newer than the source and this script)
mkdir -p "$OUT"
if [ "${AQMLAB_NS3_FORCE:-0}" != "1" ] && [ -x "$BIN" ] && [ "$BIN" -nt "$SRC" ] \
        && [ "$BIN" -nt "$HERE/build.sh" ] && [ -f "$OUT/.libdir" ] \
        && [ "$(cat "$OUT/.libdir")" = "$LIB" ]; then
    log "up to date: $BIN"
    exit 0
fi
log "compiling $SRC"
# The wheel's libraries are a release build (NS3_BUILD_PROFILE_RELEASE) with
# logging and asserts compiled in; match those definitions.
"$CXX" -std=c++20 -O2 -DNDEBUG \
    -DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE \
    -I"$INC" "$SRC" -o "$BIN.tmp" \
    -L"$LIB" "${LIBS[@]}" -Wl,-rpath,"$LIB"  \
    || die "compilation failed"
mv "$BIN.tmp" "$BIN"
echo "$LIB" > "$OUT/.libdir"
"$BIN" --help >/dev/null 2>&1 || die "built binary does not start (check ldd $BIN)"
log "built $BIN"
