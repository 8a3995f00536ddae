#!/usr/bin/python3
"""Checks hlox's layering: no folder includes a header of, or links the library of, a folder it
may not depend on. The allowed dependencies are the table LAYERS below, the same diagram as in
docs/ARCHITECTURE.md; anything not listed there is an error, and there are no exceptions.

Two sources are checked:
  * every `#include "folder/..."` line in a library folder's .h and .cc files, and
  * every hlox_* library named in a library folder's CMakeLists.txt target_link_libraries.

`hlox_cost` is two libraries: hlox_cost_core (records, statistics, analytical models; IR only)
and hlox_cost (evaluation: cost/evaluate*.cc, which runs passes and the runtime). Folders that
may use only the core ("cost-core" below) may not include cost/evaluate*.h, and cost's own core
files may not include runtime/ or passes/.

Usage: check_layers.py [ROOT]          check the tree at ROOT (default: this repository)
       check_layers.py --self-test     show that a violation is caught (a check that can fail)
"""
import os
import re
import sys
import tempfile

# layer -> layers it may depend on (a layer may always use itself). Lowest layer first. A layer is
# a folder, except that cost/ is two: cost-core (its files other than evaluate*) and cost.
LAYERS = {
    "common": [],
    "ir": ["common"],
    "runtime": ["ir", "common"],
    "passes": ["runtime", "ir", "common"],
    "cost-core": ["ir", "common"],
    "cost": ["cost-core", "passes", "runtime", "ir", "common"],
    "protocol": ["cost-core", "ir", "common"],
    "broker": ["protocol", "cost-core", "ir", "common"],
    "worker": ["protocol", "cost", "cost-core", "passes", "runtime", "ir", "common"],
    "client": ["broker", "protocol", "cost-core", "ir", "common"],
    "agent": ["client", "protocol", "cost-core", "passes", "ir", "common"],
    "local": ["agent", "client", "protocol", "cost", "cost-core", "passes", "ir", "common"],
    "monitor": ["client", "broker", "protocol", "common"],
}
FOLDERS = sorted({"cost" if layer == "cost-core" else layer for layer in LAYERS})
# Folders above every library (they may use any of them): nothing is checked there, and no
# library may include from them.
TOP = {"tools", "python", "tests", "bench", "fuzz", "examples", "scripts", "docs", "deploy"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"', re.M)
LINK = re.compile(r"target_link_libraries\s*\(\s*(\S+)([^)]*)\)", re.S)


def layer_of(folder, file_name):
    """The layer a file belongs to: its folder, or cost-core for cost/ files but evaluate*."""
    if folder == "cost" and not os.path.basename(file_name).startswith("evaluate"):
        return "cost-core"
    return folder


def library_layer(lib):
    """hlox_cost_core -> cost-core, hlox_runtime -> runtime; None for other libraries."""
    if not lib.startswith("hlox_"):
        return None
    name = lib[len("hlox_"):]
    return "cost-core" if name == "cost_core" else name


def may_use(source, target):
    return source == target or target in LAYERS.get(source, [])


def check(root):
    errors = []
    for folder in FOLDERS:
        path = os.path.join(root, folder)
        if not os.path.isdir(path):
            errors.append(f"{folder}/: missing (the layer table names it)")
            continue
        for dirpath, _, files in os.walk(path):
            for f in sorted(files):
                if not f.endswith((".h", ".cc", ".inc")):
                    continue
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, root)
                with open(full, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                source = layer_of(folder, f)
                for m in INCLUDE.finditer(text):
                    target_folder, target_file = m.group(1), m.group(2)
                    if target_folder not in FOLDERS and target_folder not in TOP:
                        continue  # a third-party header ("absl/...", "nlohmann/...")
                    target = layer_of(target_folder, target_file)
                    if target_folder in TOP or not may_use(source, target):
                        line = text.count("\n", 0, m.start()) + 1
                        errors.append(f"{rel}:{line}: {source} may not include "
                                      f"{target_folder}/{target_file} ({target})")
        cmake = os.path.join(path, "CMakeLists.txt")
        if not os.path.exists(cmake):
            continue
        with open(cmake, encoding="utf-8") as fh:
            text = re.sub(r"#[^\n]*", "", fh.read())
        for m in LINK.finditer(text):
            own = library_layer(m.group(1))
            for lib in m.group(2).split():
                dep = library_layer(lib)
                if own is not None and dep is not None and not may_use(own, dep):
                    errors.append(f"{os.path.relpath(cmake, root)}: {m.group(1)} may not link {lib}")
    return errors


def self_test():
    """Plants an upward include and an upward link in a copy of the table's folders."""
    with tempfile.TemporaryDirectory() as tmp:
        for folder in FOLDERS:
            os.makedirs(os.path.join(tmp, folder))
        with open(os.path.join(tmp, "broker", "bad.cc"), "w") as fh:
            fh.write('#include "runtime/executor.h"\n#include "cost/evaluate.h"\n')
        with open(os.path.join(tmp, "cost", "stats.cc"), "w") as fh:
            fh.write('#include "passes/pass.h"\n#include "cost/stats.h"\n')
        with open(os.path.join(tmp, "cost", "evaluate.cc"), "w") as fh:
            fh.write('#include "passes/pass.h"\n')
        with open(os.path.join(tmp, "protocol", "CMakeLists.txt"), "w") as fh:
            fh.write("target_link_libraries(hlox_protocol PUBLIC hlox_cost hlox_ir)\n")
        with open(os.path.join(tmp, "worker", "ok.cc"), "w") as fh:
            fh.write('#include "runtime/executor.h"\n#include "broker/broker.h"\n')
        errors = check(tmp)
        expected = ["broker/bad.cc:1", "broker/bad.cc:2", "cost/stats.cc:1", "worker/ok.cc:2",
                    "hlox_protocol may not link hlox_cost"]
        missing = [e for e in expected if not any(e in x for x in errors)]
        extra = [x for x in errors if not any(e in x for e in expected)]
        if missing or extra:
            print("self-test failed: missing", missing, "unexpected", extra)
            return 1
    print(f"self-test: {len(expected)} planted violations caught, nothing else reported")
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    errors = check(root)
    for e in errors:
        print(e)
    if errors:
        print(f"layering: {len(errors)} violation(s); the allowed dependencies are in "
              "scripts/check_layers.py (LAYERS) and docs/ARCHITECTURE.md")
        return 1
    print(f"layering: {len(FOLDERS)} library folders, no violations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
