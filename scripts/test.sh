#!/usr/bin/env bash
# Builds hlox (installing its Debian packages first if any is missing) and runs the whole test
# suite under CTest at the best instruction-set level this CPU supports, then the runtime's
# tests (CTest label "runtime": kernels, fused loops, dots, convolutions, the corpus runs) again
# at every lower level (HLOX_ISA=avx2, generic), so an AVX-512 host also checks the AVX2 and
# generic paths. The corpus is read from $HLOX_CORPUS or ../shared/hlo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
jobs="$(nproc)"
echo "test: $(bin/hlox cpu | tr '\n' ' ')"
# A suite that shrinks (a folder skipped, a test binary that registers nothing) fails here.
count_tests() { ctest -N "$@" | sed -n 's/^Total Tests: //p'; }
while read -r kind floor; do
  case "$kind" in all) have="$(count_tests)" ;; runtime) have="$(count_tests -L runtime)" ;; *) continue ;; esac
  if (( have < floor )); then
    echo "test: only $have tests registered ($kind), the floor in tests/test_count_floor is $floor" >&2
    exit 1
  fi
done < <(grep -v '^#' ../tests/test_count_floor)
ctest --output-on-failure -j "$jobs" --timeout 900
best="$(bin/hlox cpu --levels | tail -n 1)"
for level in $(bin/hlox cpu --levels); do
  [[ "$level" == "$best" ]] && continue
  echo "test: runtime tests again at HLOX_ISA=$level"
  HLOX_ISA="$level" ctest --output-on-failure -j "$jobs" --timeout 900 -L runtime
done
