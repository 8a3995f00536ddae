"""hlox: Python side. `hlox.export` turns PyTorch models into HLO; `hlox.zoo` holds example models."""

# The native core (hlox._hlox, built by CMake into build/python/hlox) when present; the pure-Python
# parts (export, zoo, client) work without it.
try:
    from ._hlox import *  # noqa: F401,F403
    HAVE_NATIVE = True
except ImportError:
    HAVE_NATIVE = False
