#!/usr/bin/env bash
# Times the full transients2014 experiment (7 qdiscs x 4 loads x 100 replications = 2800 runs,
# 11 ms series) from scratch: a fresh results root, so no run is reused.
#   bench/transients2014.sh [extra aqmlab reproduce options, e.g. --jobs 2 --series 101]
# AQMLAB may point at the CLI (default: aqmlab on PATH).
set -euo pipefail
AQMLAB=${AQMLAB:-aqmlab}
OUT=$(mktemp -d /tmp/aqmlab-bench-t14.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
echo "cores: $(nproc)   load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s.%N)
/usr/bin/time -f "cpu: user %U s, system %S s, max RSS %M KB" \
    "$AQMLAB" reproduce transients2014 --out "$OUT" "$@" > "$OUT/stdout.txt"
end=$(date +%s.%N)
grep -E "runs \(" "$OUT/stdout.txt" || true
echo "wall: $(echo "$end - $start" | bc) s (whole command: sweep, aggregation, figures, report)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
