#!/bin/bash
# Runs the corpus property test over every module, smallest first, one process per module with a
# time limit, and writes one summary line per module (exit status, wall seconds, load, the test's
# own counts) to LOGDIR/summary.txt, the full output to LOGDIR/<module>.log.
#
# usage: tests/passes/property_corpus.sh BUILD_DIR LOGDIR [MODULE.hlo ...]
# env:   PER_MODULE_TIMEOUT (seconds, default 1800), HLOX_PROPERTY_VERIFY_ONLY (default: the
#        modules the runtime is still too slow for), HLOX_CORPUS (default ../shared/hlo).
set -u
build=${1:?usage: property_corpus.sh BUILD_DIR LOGDIR [MODULE.hlo ...]}
log=${2:?usage: property_corpus.sh BUILD_DIR LOGDIR [MODULE.hlo ...]}
shift 2
corpus=${HLOX_CORPUS:-$(dirname "$0")/../../../shared/hlo}
export HLOX_PROPERTY_VERIFY_ONLY=${HLOX_PROPERTY_VERIFY_ONLY:-hloenv_efficientnet_forward.hlo}
mkdir -p "$log"
if [ $# -gt 0 ]; then modules=("$@"); else mapfile -t modules < <(ls -Sr "$corpus"/*.hlo | xargs -n1 basename); fi
for m in "${modules[@]}"; do
  start=$(date +%s.%N)
  HLOX_PROPERTY_FILTER=$m timeout "${PER_MODULE_TIMEOUT:-1800}" "$build/bin/passes_property_test" \
    --gtest_filter='Corpus/*' > "$log/${m%.hlo}.log" 2>&1
  rc=$?
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  counts=$(grep '^\[property\]' "$log/${m%.hlo}.log" | sed 's/^[^:]*: //')
  echo "$m rc=$rc wall=$wall load=$(cut -d' ' -f1 /proc/loadavg) $counts" >> "$log/summary.txt"
done
awk '$2 ~ /rc=/ {split($3, w, "="); t += w[2]; n++; if ($2 != "rc=0") f++}
     END {printf "%d modules, %d failed or timed out, %.1f s\n", n, f, t}' "$log/summary.txt"
