#!/usr/bin/env bash
# Convolution epilogues (output-fusion's conv_epilogue sites, runtime/kernels/output_fusion.h) on
# three batch-norm'd convolution blocks (conv + per-feature scale and shift + relu6, NHWC):
# pointwise 1x1 [16,56,56,64] -> 256, depthwise 3x3 [16,56,56,256], 3x3 im2col [16,28,28,64] -> 256.
# Each block is written twice: as the kOutput fusion the pass builds, and as the convolution
# followed by the same epilogue in its own kLoop fusion (the baseline). The two modules alternate
# in one run, ROUNDS times (default 5) at each thread count, each run `hlox run --repeat 5`; the
# table gives each side's fastest call and fused/plain (< 1: the output fusion is faster), and
# whether the output checksums agree (they must: the epilogue is applied to the same bits).
# Usage: bash bench/passes/conv_epilogue_blocks.sh [--threads 1,2] [--rounds 5]
set -euo pipefail
cd "$(dirname "$0")/../.."
threads="1,2"; rounds=5
while [[ $# -gt 0 ]]; do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
hlox="$PWD/build/bin/hlox"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT

# block NAME CONV_ATTRS IN KERNEL OUT
block() {
  local name="$1" attrs="$2" in="$3" k="$4" out="$5"
  local epi="  bs = f32[$out] broadcast(s), dimensions={3}
  bt = f32[$out] broadcast(t), dimensions={3}
  m = f32[$out] multiply(c, bs)
  a = f32[$out] add(m, bt)
  z = f32[] constant(0)
  bz = f32[$out] broadcast(z), dimensions={}
  six = f32[] constant(6)
  b6 = f32[$out] broadcast(six), dimensions={}
  mx = f32[$out] maximum(a, bz)
  ROOT r = f32[$out] minimum(mx, b6)"
  local params="  x = f32[$in] parameter(0)
  w = f32[$k] parameter(1)
  s = f32[256] parameter(2)
  t = f32[256] parameter(3)"
  cat > "$dir/${name}_fused.hlo" <<HLO
HloModule ${name}_fused
fused {
$params
  c = f32[$out] convolution(x, w), $attrs
$epi
}
ENTRY main {
$params
  ROOT f = f32[$out] fusion(x, w, s, t), kind=kOutput, calls=fused
}
HLO
  cat > "$dir/${name}_plain.hlo" <<HLO
HloModule ${name}_plain
epilogue {
  c = f32[$out] parameter(0)
  s = f32[256] parameter(1)
  t = f32[256] parameter(2)
$epi
}
ENTRY main {
$params
  c = f32[$out] convolution(x, w), $attrs
  ROOT f = f32[$out] fusion(c, s, t), kind=kLoop, calls=epilogue
}
HLO
}
nhwc="dim_labels=b01f_01io->b01f"
block pointwise "window={size=1x1}, $nhwc" "16,56,56,64" "1,1,64,256" "16,56,56,256"
block depthwise "window={size=3x3 pad=1_1x1_1}, $nhwc, feature_group_count=256" "16,56,56,256" "3,3,1,256" "16,56,56,256"
block im2col "window={size=3x3 pad=1_1x1_1}, $nhwc" "16,28,28,64" "3,3,64,256" "16,28,28,256"

echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $($hlox cpu | tr '\n' ' '), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| %-10s | %7s | %12s | %12s | %11s | %s |\n' block threads "fused (ms)" "plain (ms)" "fused/plain" "same checksums"
printf '|---|---:|---:|---:|---:|---|\n'
for name in pointwise depthwise im2col; do
  for t in ${threads//,/ }; do
    times_f=""; times_p=""; sum_f=""; sum_p=""
    for ((r = 0; r < rounds; ++r)); do
      for side in fused plain; do
        o="$("$hlox" run "$dir/${name}_$side.hlo" --repeat 5 --threads "$t" 2>&1)"
        v="$(sed -n 's/^time per run: min \([0-9.e-]*\) s.*/\1/p' <<<"$o")"
        c="$(grep -o 'checksum=[0-9a-f]*' <<<"$o" | head -1)"
        if [[ $side == fused ]]; then times_f="$times_f $v"; sum_f="$c"; else times_p="$times_p $v"; sum_p="$c"; fi
      done
    done
    same="$([[ $sum_f == "$sum_p" ]] && echo yes || echo NO)"
    awk -v n="$name" -v t="$t" -v f="$times_f" -v p="$times_p" -v same="$same" 'BEGIN {
      k = split(f, a, " "); bf = a[1]; for (i = 2; i <= k; ++i) if (a[i] < bf) bf = a[i];
      k = split(p, b, " "); bp = b[1]; for (i = 2; i <= k; ++i) if (b[i] < bp) bp = b[i];
      printf "| %-10s | %7s | %12.2f | %12.2f | %11.3f | %s |\n", n, t, bf * 1000, bp * 1000, bf / bp, same }'
  done
done
