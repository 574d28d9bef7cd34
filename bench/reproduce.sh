#!/usr/bin/env bash
# Times one `aqmlab reproduce` experiment from scratch: a fresh results root, so no run is reused.
#   bench/reproduce.sh EXPERIMENT [extra aqmlab reproduce options, e.g. --jobs 2 --quick]
#   bench/reproduce.sh transients2014 --series 101
# AQMLAB may point at the CLI (default: aqmlab on PATH).
set -euo pipefail
EXPERIMENT=${1:?usage: bench/reproduce.sh EXPERIMENT [aqmlab reproduce options]}
shift
AQMLAB=${AQMLAB:-aqmlab}
OUT=$(mktemp -d "/tmp/aqmlab-bench-$EXPERIMENT.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
echo "cores: $(nproc)   load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s.%N)
/usr/bin/time -f "cpu: user %U s, system %S s, max RSS %M KB" \
    "$AQMLAB" reproduce "$EXPERIMENT" --out "$OUT" "$@" > "$OUT/stdout.txt"
end=$(date +%s.%N)
grep -E "runs \(" "$OUT/stdout.txt" || true
echo "wall: $(echo "$end - $start" | bc) s (whole command: sweep, aggregation, figures, report)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
