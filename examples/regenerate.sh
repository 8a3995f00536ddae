#!/usr/bin/env bash
# Regenerates the shipped example modules with the project's own exporter (python/hlox/export.py)
# from the model zoo (python/hlox/zoo.py). Run from anywhere; needs Debian's python3-torch.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
export PYTHONPATH="$root/python"
for spec in "mlp_train_small:--input-shape 16,32 --train" \
            "basic_block_train_small:--input-shape 2,8,8,8 --train" \
            "encoder_layer_train_small:--input-shape 2,8,32 --train" \
            "gpt2_block_small:--input-shape 2,8,32"; do
  name="${spec%%:*}"
  flags="${spec#*:}"
  # shellcheck disable=SC2086
  /usr/bin/python3 -m hlox.export --model "hlox.zoo:$name" $flags -o "$root/examples/$name.hlo"
done
