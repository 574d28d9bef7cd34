#!/usr/bin/env bash
# Times `aqmlab reproduce codel2012` from scratch (a fresh results root, no run reused).
#   bench/codel2012.sh [--quick] [extra aqmlab reproduce options, e.g. --jobs 2]
# AQMLAB may point at the CLI (default: aqmlab on PATH).
set -euo pipefail
AQMLAB=${AQMLAB:-aqmlab}
OUT=$(mktemp -d /tmp/aqmlab-bench-codel.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
echo "cores: $(nproc)   load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s.%N)
/usr/bin/time -f "cpu: user %U s, system %S s, max RSS %M KB" \
    "$AQMLAB" reproduce codel2012 --out "$OUT" "$@" > "$OUT/stdout.txt"
end=$(date +%s.%N)
grep -E "runs \(" "$OUT/stdout.txt" || true
echo "wall: $(echo "$end - $start" | bc) s (whole command: sweep, aggregation, figures, report)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
