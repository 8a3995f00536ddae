#!/usr/bin/env bash
# One host's check of the portable build at every instruction-set level it supports: the whole
# test suite at the best level, the runtime tests again at each lower one, the dot and fused-chain
# benches at the best level and at avx2, whole graphs against a baseline build and per level, and
# the corpus's per-level checksums. Used to check an AVX-512 host (docs/MEASUREMENTS.md "Instruction-set
# levels"); run it from the repository root after a build.
#
#   bash bench/runtime/isa_host_check.sh [OUTDIR]
#   BASE=DIR  a baseline build's bin folder (hlox, runtime_dot_bench, fusion_chain_bench), e.g. the
#             parent commit built with -march=native: timed in the same run, interleaved
#   MODELS="a.hlo b.hlo"  modules for the whole-graph comparisons (default: the shipped examples
#             and four corpus modules)
#   JOBS=N    corpus modules run at once (default: cores / 2)
# Writes logs under OUTDIR (default bench-isa-out) and prints a summary.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${1:-bench-isa-out}"
mkdir -p "$out"
corpus="${HLOX_CORPUS:-../shared/hlo}"
bin=build/bin
cores="$(nproc)"
jobs="${JOBS:-$(( cores / 2 > 0 ? cores / 2 : 1 ))}"
models="${MODELS:-examples/mlp_train_small.hlo examples/encoder_layer_train_small.hlo examples/basic_block_train_small.hlo \
  $corpus/gh_bert_fwd_bwd_tp1.hlo $corpus/plaidml_resnext50_tf.hlo $corpus/hloenv_nux_flow_loss.hlo $corpus/gh_llama_decode_tp2.hlo}"
say() { echo "=== $(date -u +%T): $*" | tee -a "$out/summary.txt"; }

say "cpu"
{ grep -m1 'model name' /proc/cpuinfo; grep -m1 '^flags' /proc/cpuinfo; "$bin/hlox" cpu; } > "$out/cpu.txt"
cat "$out/cpu.txt" | grep -v '^flags' | tee -a "$out/summary.txt"
levels="$("$bin/hlox" cpu --levels)"
best="$(echo "$levels" | tail -n 1)"

say "whole suite at $best"
(cd build && ctest --output-on-failure -j "$cores" --timeout 900 > "../$out/ctest_best.log" 2>&1)
grep -E "tests passed|tests failed|^\s+[0-9]+ - " "$out/ctest_best.log" | tee -a "$out/summary.txt"
for level in $levels; do
  [[ "$level" == "$best" ]] && continue
  say "runtime tests at HLOX_ISA=$level"
  (cd build && HLOX_ISA="$level" ctest --output-on-failure -j "$cores" --timeout 900 -L runtime > "../$out/ctest_$level.log" 2>&1)
  grep -E "tests passed|tests failed|^\s+[0-9]+ - " "$out/ctest_$level.log" | tee -a "$out/summary.txt"
done

say "dots and the fused chain"
for level in $best avx2; do
  echo "##### dots, HLOX_ISA=$level" >> "$out/bench.log"
  HLOX_ISA="$level" HLOX_BENCH_BUDGET="${HLOX_BENCH_BUDGET:-0.6}" "$bin/runtime_dot_bench" >> "$out/bench.log" 2>&1
  echo "##### chain, HLOX_ISA=$level" >> "$out/bench.log"
  HLOX_ISA="$level" "$bin/fusion_chain_bench" 16777216 5 >> "$out/bench.log" 2>&1
done
if [[ -n "${BASE:-}" ]]; then
  echo "##### dots, baseline $BASE" >> "$out/bench.log"
  HLOX_BENCH_BUDGET="${HLOX_BENCH_BUDGET:-0.6}" "$BASE/runtime_dot_bench" >> "$out/bench.log" 2>&1
  echo "##### chain, baseline $BASE" >> "$out/bench.log"
  "$BASE/fusion_chain_bench" 16777216 5 >> "$out/bench.log" 2>&1
fi

say "whole graphs"
py=/usr/bin/python3
if [[ -n "${BASE:-}" ]]; then
  $py bench/runtime/compare_builds.py --base "$BASE/hlox" --new "$bin/hlox" --pipeline default --rounds 5 --repeat 3 \
    --json "$out/compare_base.json" $models >> "$out/compare.log" 2>&1
fi
for level in $levels; do
  [[ "$level" == "$best" ]] && continue
  $py bench/runtime/compare_builds.py --base "$bin/hlox" --new "$bin/hlox" --new-env "HLOX_ISA=$level" \
    --pipeline default --rounds 3 --repeat 3 $models >> "$out/compare.log" 2>&1
done
grep -E "^# |^\| " "$out/compare.log" | tee -a "$out/summary.txt"

say "corpus checksums per level ($jobs modules at once)"
$py bench/runtime/corpus_levels.py --corpus "$corpus" --jobs "$jobs" --json "$out/corpus.json" > "$out/corpus.log" 2>&1
echo "corpus_levels exit $?" | tee -a "$out/summary.txt"
tail -n 1 "$out/corpus.log" | tee -a "$out/summary.txt"
say "done: logs in $out"
