#!/usr/bin/env bash
# Builds hlox (installing its Debian packages first if any is missing) and runs the whole test
# suite under CTest. The corpus is read from $HLOX_CORPUS or ../shared/hlo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 900
