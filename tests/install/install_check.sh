#!/usr/bin/env bash
# The install rules and the Debian package, checked on scratch directories (nothing is installed
# on this machine): `cmake --install` to a scratch prefix and the .deb from `cpack`, unpacked,
# must each give a working `hlox` binary and an importable `hlox` Python package that finds the
# shipped examples without HLOX_SOURCE_DIR, in the directories Debian's python3 searches for
# that prefix. Args: BUILD_DIR.
set -euo pipefail
build="$(cd "$1" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
unset HLOX_SOURCE_DIR PYTHONPATH HLOX_BIN
py=/usr/bin/python3
minor="$($py -c 'import sys; print(sys.version_info.minor)')"
pydir="lib/python3.$minor/dist-packages"
fail() { echo "install_check: $*" >&2; exit 1; }

# The package directory is one Debian's python3 searches for /usr and for /usr/local.
for prefix in /usr /usr/local; do
  $py -c "import sys; sys.exit(0 if '$prefix/$pydir' in sys.path else 1)" ||
    fail "$prefix/$pydir is not on /usr/bin/python3's sys.path"
done

# Checks one installed tree rooted at PREFIX.
check_tree() {
  local prefix="$1" what="$2"
  [[ -x "$prefix/bin/hlox" ]] || fail "$what: no $prefix/bin/hlox"
  "$prefix/bin/hlox" --version >/dev/null || fail "$what: hlox --version failed"
  local example="$prefix/share/hlox/examples/mlp_train_small.hlo"
  [[ -f "$example" ]] || fail "$what: no $example"
  "$prefix/bin/hlox" run "$example" >/dev/null || fail "$what: hlox run failed on the installed example"
  [[ -f "$prefix/share/doc/hlox/README.md" ]] || fail "$what: no README in share/doc/hlox"
  [[ ! -e "$prefix/$pydir/hlox/_build_info.py" ]] || fail "$what: the build's _build_info.py was installed"
  (cd / && PYTHONPATH="$prefix/$pydir" $py - "$prefix" <<'PY'
import os, sys
import hlox
prefix = os.path.realpath(sys.argv[1])
assert hlox.HAVE_NATIVE, "the native extension did not load"
assert os.path.realpath(hlox.__file__).startswith(prefix), hlox.__file__
from hlox import datasets, compat  # noqa: F401  (subpackages are installed too)
ex = datasets.examples()
assert len(ex) >= 4, ex.reason
assert os.path.realpath(ex.root).startswith(prefix), ex.root
m = datasets.load("examples/mlp_train_small")
out = hlox.run(m, hlox.seeded_inputs(m, seed=0))
print("installed package OK:", len(ex), "examples,", type(out).__name__)
PY
  ) || fail "$what: the Python package does not work"
}

cmake --install "$build" --prefix "$scratch/local" >/dev/null
check_tree "$scratch/local" "cmake --install"

(cd "$build" && cpack -G DEB -B "$scratch/pkg" >/dev/null) || fail "cpack failed"
deb="$(ls "$scratch"/pkg/hlox_*.deb 2>/dev/null | head -n 1)"
[[ -n "$deb" ]] || fail "cpack made no hlox_*.deb"
depends="$(dpkg-deb -f "$deb" Depends)"
for dep in libzmq5 python3-numpy libpng16-16; do
  grep -q "$dep" <<<"$depends" || fail ".deb Depends lacks $dep: $depends"
done
dpkg-deb -x "$deb" "$scratch/root"
check_tree "$scratch/root/usr" ".deb"
# Would apt-get install it here? (-s: simulate; nothing is installed.)
if apt-get install -s "$deb" 2>&1 | grep -qi "unmet dependencies"; then
  apt-get install -s "$deb" >&2 || true
  fail "apt-get install of the .deb has unmet dependencies"
fi
echo "install_check: cmake --install and $(basename "$deb") OK (Depends: $depends)"
