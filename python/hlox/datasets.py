"""Named HLO modules: the examples shipped with hlox and the real-HLO corpus.

Every module has a stable name "<collection>/<file stem>": "examples/mlp_train_small" for the
shipped examples (examples/*.hlo in the source tree), "corpus/hloenv_jaxrl_diag" for the corpus
($HLOX_CORPUS, else ../shared/hlo next to the source tree; its manifest.tsv gives each file's
source repository and description). A name stays the same as long as its file does, so scripts
and results can refer to modules by name instead of by path.

    hlox.datasets.examples()   -> Listing of Entry(name, path, source, family, description)
    hlox.datasets.corpus()     -> Listing; empty with `.reason` when the corpus is missing
    hlox.datasets.load(name)   -> native Module (a bare stem works when it is unambiguous)
    hlox.datasets.module_from(x) -> Module from a Module, a path, HLO text or an entry name

Listing never raises for a missing folder: a listing that finds nothing says why in `.reason`.
The source tree is found through $HLOX_SOURCE_DIR, then the path CMake recorded in the built
package (_build_info.py), then the package's own place in the source tree (python/hlox), then
an installed tree (P/share/hlox next to P/lib/python3.X/dist-packages).
"""
import collections
import csv
import glob
import os

Entry = collections.namedtuple("Entry", "name path source family description")

EXAMPLES_SOURCE = "hlox (PyTorch models exported by hlox.export; examples/regenerate.sh)"


class Listing(list):
    """A list of Entry; `root` is the folder listed ('' if none), `reason` why it is empty."""

    def __init__(self, entries=(), root="", reason=""):
        super().__init__(entries)
        self.root, self.reason = root, reason


def source_dir():
    """The hlox source tree (holding examples/), or '' when none is found."""
    candidates = [os.environ.get("HLOX_SOURCE_DIR", "")]
    try:
        from . import _build_info  # written by python/CMakeLists.txt into the built package
        candidates.append(_build_info.SOURCE_DIR)
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(here, "..", ".."))
    # Installed (cmake --install, the .deb): P/lib/python3.X/dist-packages/hlox next to
    # P/share/hlox/examples.
    candidates.append(os.path.join(here, "..", "..", "..", "..", "share", "hlox"))
    for c in candidates:
        if c and os.path.isdir(os.path.join(c, "examples")):
            return os.path.realpath(c)
    return ""


def corpus_dir():
    """($HLOX_CORPUS or <source>/../shared/hlo, reason): the folder, or '' and why not."""
    env = os.environ.get("HLOX_CORPUS")
    if env:
        if os.path.isdir(env):
            return os.path.realpath(env), ""
        return "", "HLOX_CORPUS=%s is not a folder" % env
    src = source_dir()
    if not src:
        return "", "corpus not found: HLOX_CORPUS is unset and no hlox source tree was found"
    d = os.path.realpath(os.path.join(src, "..", "shared", "hlo"))
    if os.path.isdir(d):
        return d, ""
    return "", "corpus not found: HLOX_CORPUS is unset and %s does not exist" % d


def examples():
    """The shipped examples, sorted by name."""
    src = source_dir()
    if not src:
        return Listing(reason="no hlox source tree found (set HLOX_SOURCE_DIR)")
    root = os.path.join(src, "examples")
    entries = [Entry("examples/" + _stem(p), p, EXAMPLES_SOURCE, "pytorch-export", "")
               for p in sorted(glob.glob(os.path.join(root, "*.hlo")))]
    return Listing(entries, root, "" if entries else "no .hlo files in " + root)


def corpus():
    """The corpus modules, sorted by name; source and description from manifest.tsv."""
    root, reason = corpus_dir()
    if not root:
        return Listing(reason=reason)
    manifest = _read_manifest(os.path.join(root, "manifest.tsv"))
    entries = []
    for p in sorted(glob.glob(os.path.join(root, "*.hlo"))):
        row = manifest.get(os.path.basename(p), {})
        stem = _stem(p)
        # The file prefix names where the module came from (hloenv_, alpa_, gh_, ...).
        family = stem.split("_", 1)[0]
        entries.append(Entry("corpus/" + stem, p, row.get("repo", "unknown"), family,
                             row.get("description", "")))
    if not entries:
        return Listing(root=root, reason="no .hlo files in " + root)
    return Listing(entries, root, "")


def all_entries():
    """examples() followed by corpus()."""
    return Listing(list(examples()) + list(corpus()))


def find(name):
    """The Entry called `name` ("examples/x", "corpus/x", or a bare stem matching exactly one
    entry); KeyError naming the near matches otherwise."""
    entries = all_entries()
    exact = [e for e in entries if e.name == name]
    if not exact and "/" not in name:
        exact = [e for e in entries if e.name.split("/", 1)[1] == name]
    if len(exact) == 1:
        return exact[0]
    if len(exact) > 1:
        raise KeyError("%r is ambiguous: %s" % (name, ", ".join(e.name for e in exact)))
    near = [e.name for e in entries if name.split("/")[-1] in e.name]
    hint = "; similar: " + ", ".join(near[:10]) if near else ""
    raise KeyError("no dataset module named %r%s (hlox.datasets.all_entries() lists them)" % (name, hint))


def load(name):
    """The native Module of the entry called `name` (see find())."""
    from . import _hlox
    return _hlox.load_module(find(name).path)


def module_from(module):
    """A native Module from a Module, an .hlo path, HLO text or an entry name."""
    from .env import as_module
    if isinstance(module, str) and "\n" not in module and not os.path.exists(module):
        try:
            return load(module)
        except KeyError:
            pass  # not an entry name either: as_module reports the missing path
    return as_module(module)


def _stem(path):
    return os.path.splitext(os.path.basename(path))[0]


def _read_manifest(path):
    """{file: row dict} from a tab-separated manifest with a header line; {} when absent."""
    if not os.path.isfile(path):
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        rows = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return {row["file"]: row for row in rows if row.get("file")}
