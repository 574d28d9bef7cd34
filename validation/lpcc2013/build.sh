#!/usr/bin/env bash
# Builds validation/lpcc2013/out/lpcc against ns-3 3.44 (see ../ns3-build.sh for NS3_PY, CXX, FORCE).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$HERE/../ns3-build.sh" "$HERE/lpcc.cc" "$HERE/out/lpcc"
