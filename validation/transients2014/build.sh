#!/usr/bin/env bash
# Builds validation/transients2014/out/transients against ns-3 3.44 (see ../ns3-build.sh for NS3_PY, CXX, FORCE).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec bash "$HERE/../ns3-build.sh" "$HERE/transients.cc" "$HERE/out/transients"
