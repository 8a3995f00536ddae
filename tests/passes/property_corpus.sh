#!/bin/bash
# Runs the corpus property test over every module, smallest first, one process per module with a
# time limit, and writes one summary line per module (exit status, wall seconds, load, the test's
# own counts) to LOGDIR/summary.txt, the full output to LOGDIR/<module>.log.
#
# usage: tests/passes/property_corpus.sh BUILD_DIR LOGDIR [MODULE.hlo ...]
# env:   PER_MODULE_TIMEOUT (seconds, default 1800), HLOX_PROPERTY_SEEDS (default 3),
#        HLOX_PROPERTY_SLOW (default hloenv_efficientnet_forward.hlo: minutes per execution, so
#        SLOW_SEEDS seeds per pipeline, default 1, under SLOW_TIMEOUT seconds, default 5400),
#        HLOX_PROPERTY_VERIFY_ONLY (default none), HLOX_CORPUS (default ../shared/hlo).
#        Each run's planned peak (cost/peak_memory.h, about 20% above the real peak on
#        efficientnet) must fit in MemAvailable (HLOX_PROPERTY_MAX_PEAK_GB
#        overrides); a module that does not is verified only, a candidate is counted as skipped.
#        Every process also runs under `ulimit -v` of HLOX_PROPERTY_VMEM_KB (default 95% of
#        MemAvailable at start), so a run that still outgrows memory fails alone (bad_alloc).
set -u
build=${1:?usage: property_corpus.sh BUILD_DIR LOGDIR [MODULE.hlo ...]}
log=${2:?usage: property_corpus.sh BUILD_DIR LOGDIR [MODULE.hlo ...]}
shift 2
corpus=${HLOX_CORPUS:-$(dirname "$0")/../../../shared/hlo}
export HLOX_PROPERTY_VERIFY_ONLY=${HLOX_PROPERTY_VERIFY_ONLY:-}
slow=${HLOX_PROPERTY_SLOW:-hloenv_efficientnet_forward.hlo}
vmem=${HLOX_PROPERTY_VMEM_KB:-$(awk '/^MemAvailable:/ {printf "%d", $2 * 0.95}' /proc/meminfo)}
mkdir -p "$log"
if [ $# -gt 0 ]; then modules=("$@"); else mapfile -t modules < <(ls -Sr "$corpus"/*.hlo | xargs -n1 basename); fi
for m in "${modules[@]}"; do
  start=$(date +%s.%N)
  seeds=${HLOX_PROPERTY_SEEDS:-3}
  limit=${PER_MODULE_TIMEOUT:-1800}
  case ",$slow," in *",$m,"*) seeds=${SLOW_SEEDS:-1}; limit=${SLOW_TIMEOUT:-5400} ;; esac
  (ulimit -v "$vmem"; HLOX_PROPERTY_SEEDS=$seeds HLOX_PROPERTY_FILTER=$m exec timeout "$limit" \
    "$build/bin/passes_property_test" --gtest_filter='Corpus/*') > "$log/${m%.hlo}.log" 2>&1
  rc=$?
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  counts=$(grep '^\[property\]' "$log/${m%.hlo}.log" | sed 's/^[^:]*: //')
  echo "$m rc=$rc wall=$wall load=$(cut -d' ' -f1 /proc/loadavg) $counts" >> "$log/summary.txt"
done
awk '$2 ~ /rc=/ {split($3, w, "="); t += w[2]; n++; if ($2 != "rc=0") f++}
     END {printf "%d modules, %d failed or timed out, %.1f s\n", n, f, t}' "$log/summary.txt"
