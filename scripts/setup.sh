#!/usr/bin/env bash
# Installs everything hlox needs from Debian 12 packages (run as root) and builds it into build/.
# Safe to run again: apt-get skips what is installed, and the build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev libeigen3-dev libspdlog-dev libabsl-dev
  libcli11-dev libsqlite3-dev libcpp-httplib-dev nlohmann-json3-dev libpng-dev
  libgtest-dev libgmock-dev libbenchmark-dev libopenblas-dev libxbyak-dev
  pybind11-dev python3-pybind11 python3-dev python3-numpy python3-zmq python3-msgpack
  python3-torch python3-torchvision python3-optuna python3-matplotlib
  clang libclang-rt-14-dev
  iproute2 chromium python3-yaml
  prometheus  # promtool: tests/monitor/promtool_check.py lints /metrics and deploy/monitoring
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
  # Debian's prometheus package (wanted here for promtool) enables and starts a Prometheus
  # server on :9090. A machine that did not have it before needs none running: stop it.
  if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
    systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
fi

# The portable build (x86-64-v2, kernels picked at run time per instruction-set level) unless
# HLOX_NATIVE=ON asks for a binary tuned for this machine only.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DHLOX_NATIVE="${HLOX_NATIVE:-OFF}"
cmake --build build -j "$(nproc)"
