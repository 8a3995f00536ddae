"""Tiny test harness for the hlox Python tests: @test registers a function, run() executes
them in order, prints one line per test and a final "N passed, N failed" line, and exits non-zero
on any failure. Skip raises Skipped (a failure under CI=true)."""
import glob
import os
import sys
import traceback

_TESTS = []


class Skipped(Exception):
    pass


def test(fn):
    _TESTS.append(fn)
    return fn


def skip(reason):
    if os.environ.get("CI") == "true":
        raise AssertionError("required under CI=true: " + reason)
    raise Skipped(reason)


def corpus_dir():
    """$HLOX_CORPUS, else <source>/../shared/hlo; '' when missing."""
    env = os.environ.get("HLOX_CORPUS")
    if env:
        return env if os.path.isdir(env) else ""
    src = os.environ.get("HLOX_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
    d = os.path.realpath(os.path.join(src, "..", "shared", "hlo"))
    return d if os.path.isdir(d) else ""


def corpus_files(smallest=None):
    """Corpus .hlo files, smallest first (the first `smallest` of them when given)."""
    d = corpus_dir()
    if not d:
        skip("corpus not found (set HLOX_CORPUS)")
    files = sorted(glob.glob(os.path.join(d, "*.hlo")), key=os.path.getsize)
    return files[:smallest] if smallest else files


def hlox_bin():
    path = os.environ.get("HLOX_BIN", "")
    if not path or not os.access(path, os.X_OK):
        skip("hlox binary not found (set HLOX_BIN)")
    return path


def run():
    passed = failed = skipped = 0
    for fn in _TESTS:
        try:
            fn()
            passed += 1
            print("[ OK   ]", fn.__name__, flush=True)
        except Skipped as e:
            skipped += 1
            print("[ SKIP ]", fn.__name__, "-", e, flush=True)
        except Exception:  # noqa: BLE001 - report every failure and go on
            failed += 1
            print("[ FAIL ]", fn.__name__, flush=True)
            traceback.print_exc()
    print("%d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else ""))
    sys.exit(1 if failed else 0)
