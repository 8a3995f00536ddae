"""Tests of hlox.datasets: the shipped examples and the corpus listed under stable names,
manifest fields, load(name), and a missing corpus listed empty with a reason (a skip outside
CI, a failure under CI=true, as for every corpus test)."""
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import corpus_dir, run, skip, test  # noqa: E402

import hlox  # noqa: E402
from hlox import datasets  # noqa: E402

SOURCE = os.path.realpath(os.environ.get("HLOX_SOURCE_DIR",
                                         os.path.join(os.path.dirname(__file__), "..", "..")))


@test
def examples_are_listed_by_stable_name():
    entries = datasets.examples()
    files = sorted(glob.glob(os.path.join(SOURCE, "examples", "*.hlo")))
    assert files and [e.path for e in entries] == files, (entries, files)
    assert "examples/mlp_train_small" in [e.name for e in entries]
    assert all(e.family == "pytorch-export" and e.source for e in entries)
    m = datasets.load("examples/mlp_train_small")
    assert m.text == hlox.load_module(os.path.join(SOURCE, "examples", "mlp_train_small.hlo")).text
    assert datasets.load("mlp_train_small").hash == m.hash  # a unique bare stem works too


@test
def module_from_accepts_names_paths_text_and_modules():
    path = os.path.join(SOURCE, "examples", "gpt2_block_small.hlo")
    m = hlox.load_module(path)
    for given in ("examples/gpt2_block_small", "gpt2_block_small", path, m.text, m):
        assert datasets.module_from(given).hash == m.hash, given if isinstance(given, str) else m
    try:
        datasets.module_from("examples/no_such_module")
    except ValueError as err:
        assert "no_such_module" in str(err), str(err)
    else:
        raise AssertionError("a missing module loaded")


@test
def unknown_name_is_a_key_error_with_hints():
    try:
        datasets.find("examples/mlp")
    except KeyError as err:
        assert "examples/mlp_train_small" in str(err), str(err)
    else:
        raise AssertionError("a partial name matched")


@test
def corpus_is_listed_with_manifest_fields():
    root = corpus_dir()
    if not root:
        skip("corpus not found (set HLOX_CORPUS)")
    entries = datasets.corpus()
    assert entries.root == os.path.realpath(root) and not entries.reason
    files = sorted(glob.glob(os.path.join(root, "*.hlo")))
    assert [os.path.basename(e.path) for e in entries] == [os.path.basename(f) for f in files]
    by_name = {e.name: e for e in entries}
    with open(os.path.join(root, "manifest.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    for row in rows:  # columns: file, repo, path, commit, license, description, ...
        e = by_name["corpus/" + os.path.splitext(row[0])[0]]
        assert e.source == row[1] and e.description == row[5], (e, row[:6])
        assert e.family == row[0].split("_", 1)[0]
    smallest = min(files, key=os.path.getsize)
    name = "corpus/" + os.path.splitext(os.path.basename(smallest))[0]
    assert datasets.load(name).hash == hlox.load_module(smallest).hash
    assert len(datasets.all_entries()) == len(entries) + len(datasets.examples())


@test
def missing_corpus_lists_empty_with_reason():
    saved = os.environ.get("HLOX_CORPUS")
    try:
        os.environ["HLOX_CORPUS"] = os.path.join(SOURCE, "no-such-corpus")
        entries = datasets.corpus()
        assert list(entries) == [] and "no-such-corpus" in entries.reason, entries.reason
        assert [e.name for e in datasets.all_entries()] == [e.name for e in datasets.examples()]
    finally:
        if saved is None:
            del os.environ["HLOX_CORPUS"]
        else:
            os.environ["HLOX_CORPUS"] = saved


if __name__ == "__main__":
    run()
