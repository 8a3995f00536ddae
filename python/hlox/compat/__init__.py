"""Compatibility layers: other projects' Python APIs over hlox, so their scripts port with an
import change. `hlox.compat.hloenv` is HloEnv's (HloEnv, HloPass, Pass, Pipeline, AltPipeline)."""
