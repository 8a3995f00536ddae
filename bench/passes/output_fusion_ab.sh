#!/usr/bin/env bash
# Output fusion (passes/fusion/output_fusion.cc) paired against the same pipeline without it:
# for each module, `hlox eval` measures the pipeline with the output-fusion step against the one
# without, interleaved in one process (paired verdict, 95% interval; > 1: output fusion faster).
# Both sides are `seq:` pipelines with the default's passes (its simplify fixpoint unrolled three
# times), so they differ only in that step. Usage:
#   bash bench/passes/output_fusion_ab.sh [--threads T] MODULE...
set -euo pipefail
cd "$(dirname "$0")/../.."
threads=1
if [[ "${1:-}" == "--threads" ]]; then threads="$2"; shift 2; fi
hlox=build/bin/hlox
simp="simplify,cse,constant-fold,tuple-simplify,dce"
front="seq:inline,$simp,$simp,$simp,fusion,sibling-fusion,fusion-merger"
with="$front,output-fusion,codegen,dce"
without="$front,codegen,dce"
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $($hlox cpu | tr '\n' ' '), threads $threads, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-40s %6s %12s  %s\n' module fused "median (s)" "with/without output fusion (paired)"
for m in "$@"; do
  n="$($hlox opt "$m" --pipeline "$with" -o /dev/stdout 2>/dev/null | grep -c 'kind=kOutput' || true)"
  out="$($hlox eval "$m" --pipeline "$with" --paired-against "$without" --in-process --threads "$threads" 2>&1)"
  med="$(sed -n 's/^median *\([^ ]*\) s.*/\1/p' <<<"$out")"
  verdict="$(sed -n "s/^paired *over '[^']*': //p" <<<"$out")"
  printf '%-40s %6s %12s  %s\n' "$(basename "$m" .hlo)" "$n" "$med" "${verdict:-$(tail -1 <<<"$out")}"
done
