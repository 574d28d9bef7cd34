#!/usr/bin/env bash
# Builds one validation program (a single C++ file) against the ns-3 3.44 libraries of the PyPI
# wheel ns3==3.44.post0, installed in a Python venv (default: the project's .venv); each study's
# build.sh calls it.
#
#   bash validation/ns3-build.sh SOURCE.cc BINARY
#
#   NS3_PY   python of the venv holding the ns3 wheel (default: <repo>/.venv/bin/python, else
#            <repo>/.venv-ns3/bin/python, else python3)
#   CXX      C++ compiler (default g++)
#   FORCE=1  rebuild even when the binary is newer than the source
set -euo pipefail

SRC="${1:?usage: ns3-build.sh SOURCE.cc BINARY}"
BIN="${2:?usage: ns3-build.sh SOURCE.cc BINARY}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${NS3_PY:-$REPO/.venv/bin/python}"
[ -x "$PY" ] || PY="$REPO/.venv-ns3/bin/python"
[ -x "$PY" ] || PY="$(command -v python3)"
CXX="${CXX:-g++}"

fail() { echo "ns3-build.sh: $*" >&2; exit 1; }

if ! "$PY" -m pip show ns3 >/dev/null 2>&1; then
    echo "ns3-build.sh: installing ns3==3.44.post0 into $("$PY" -c 'import sys; print(sys.prefix)')" >&2
    "$PY" -m pip install -q "ns3==3.44.post0" || fail "pip install ns3==3.44.post0 failed"
fi
ROOT="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/ns3"
INC="$ROOT/include"
LIB=""
for d in "$ROOT/lib64" "$ROOT/lib"; do
    if ls "$d"/libns3.44-core*.so >/dev/null 2>&1; then LIB="$d"; break; fi
done
[ -f "$INC/ns3/core-module.h" ] || fail "no ns-3 headers under $INC"
[ -n "$LIB" ] || fail "no libns3.44-core*.so under $ROOT"

LINK=()
for m in core network internet applications point-to-point traffic-control stats mobility bridge; do
    so=""
    for c in "$LIB/libns3.44-$m.so" "$LIB/libns3.44-$m-optimized.so" "$LIB/libns3.44-$m-release.so" \
            "$LIB/libns3.44-$m-default.so"; do
        if [ -f "$c" ]; then so="$c"; break; fi
    done
    [ -n "$so" ] || fail "no library for module $m in $LIB"
    LINK+=("-l:$(basename "$so")")
done

mkdir -p "$(dirname "$BIN")"
if [ "${FORCE:-0}" != 1 ] && [ -x "$BIN" ] && [ "$BIN" -nt "$SRC" ] && [ "$BIN" -nt "${BASH_SOURCE[0]}" ]; then
    echo "ns3-build.sh: $BIN is up to date" >&2
    exit 0
fi
echo "ns3-build.sh: compiling $SRC" >&2
# The wheel's libraries are a release build with logging and asserts compiled in.
"$CXX" -std=c++20 -O2 -DNDEBUG -DNS3_BUILD_PROFILE_RELEASE -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE \
    -I"$INC" "$SRC" -o "$BIN.tmp" -L"$LIB" "${LINK[@]}" -Wl,-rpath,"$LIB" || fail "compile failed"
mv "$BIN.tmp" "$BIN"
echo "ns3-build.sh: built $BIN" >&2
