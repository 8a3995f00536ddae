"""hlox: Python side. `hlox.export` turns PyTorch models into HLO; `hlox.zoo` holds example models.

With the native core: modules, decision points, the runtime and evaluation (hlox._hlox), plus
equal_outputs / outputs_mismatch (hlox.compare), compose_pipeline (hlox.compose), the
environments (hlox.env legacy, hlox.gym Gymnasium-shaped), hlox.datasets and the HloEnv-style API
(hlox.compat.hloenv), and hlox.Client, the native agent client with the pure-Python
hlox.client.Client's API."""

# The native core (hlox._hlox, built by CMake into build/python/hlox) when present; the pure-Python
# parts (export, zoo, client, datasets listing) work without it.
try:
    from ._hlox import *  # noqa: F401,F403
    HAVE_NATIVE = True
except ImportError:
    HAVE_NATIVE = False

if HAVE_NATIVE:
    from .native_client import Client  # noqa: F401  (the API of hlox.client.Client, natively)
    from .compare import equal_outputs, outputs_mismatch  # noqa: F401
    from .compose import ComposedPipeline, compose_pipeline  # noqa: F401
