# -*- Python -*-
"""LLVM lit configuration for the glow suite: `lit test/` runs the same files as glow-lit.

Settings come from test/lit.toml (and per-directory lit.local.toml files), so both runners
discover the same tests. Checker calls (`glow-filecheck`, `FileCheck`) go to LLVM's FileCheck;
the feature `glow-filecheck` is NOT set here, so tests that rely on our checker's extensions
(`REQUIRES: glow-filecheck`) are UNSUPPORTED, and `glow-lit` is not set either.

Environment: GLOW_BIN_DIR (default <repo>/target/debug), GLOW_FILECHECK (default LLVM 19's
FileCheck), GLOW_LIT_EXEC_ROOT (where %t files go; default <repo>/target/lit-llvm).
"""

import copy
import os
import re
import shutil

import lit.formats
import lit.util

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

SUITE_ROOT = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(SUITE_ROOT)


def load_toml(path):
    if tomllib is None or not os.path.isfile(path):
        return {}
    with open(path, "rb") as f:
        return tomllib.load(f)


suite = load_toml(os.path.join(SUITE_ROOT, "lit.toml"))
config.name = suite.get("name", "glow")
config.suffixes = suite.get("suffixes", [".gir", ".txt"])
config.excludes = suite.get("excludes", ["Inputs"])
config.test_source_root = SUITE_ROOT
config.test_exec_root = os.environ.get(
    "GLOW_LIT_EXEC_ROOT", os.path.join(REPO, "target", "lit-llvm")
)


class GlowShTest(lit.formats.ShTest):
    """ShTest that also honours glow-lit's lit.local.toml overrides (suffixes, excludes,
    features, unsupported) for the directory being scanned and its parents."""

    def getTestsInDirectory(self, testSuite, path_in_suite, litConfig, localConfig):
        local = localConfig
        overrides = []
        for i in range(len(path_in_suite) + 1):
            path = os.path.join(SUITE_ROOT, *path_in_suite[:i], "lit.local.toml")
            data = load_toml(path)
            if data:
                overrides.append(data)
        if overrides:
            local = copy.copy(localConfig)
            local.available_features = set(localConfig.available_features)
            local.excludes = set(localConfig.excludes)
            for data in overrides:
                if "suffixes" in data:
                    local.suffixes = set(data["suffixes"])
                local.excludes |= set(data.get("excludes", []))
                local.available_features |= set(data.get("features", []))
                if "unsupported" in data:
                    local.unsupported = bool(data["unsupported"])
        yield from super().getTestsInDirectory(testSuite, path_in_suite, litConfig, local)


# lit pickles the format for its worker processes, which needs an importable class: publish it
# in lit.formats (the forked workers inherit the attribute).
GlowShTest.__module__ = "lit.formats"
lit.formats.GlowShTest = GlowShTest

# execute_external=False: lit's internal shell, the closest to glow-lit's built-in shell.
config.test_format = GlowShTest(execute_external=False)

bin_dir = os.environ.get("GLOW_BIN_DIR", os.path.join(REPO, "target", "debug"))
filecheck = os.environ.get("GLOW_FILECHECK") or (
    "/usr/lib/llvm-19/bin/FileCheck"
    if os.path.isfile("/usr/lib/llvm-19/bin/FileCheck")
    else shutil.which("FileCheck")
)
if not filecheck:
    lit_config.fatal("LLVM FileCheck not found: apt-get install llvm-19-tools, or set GLOW_FILECHECK")


def tool(name, path):
    # Whole command words only: not inside file names like glow-filecheck.txt or paths.
    pattern = r"(?<![\w./-])" + re.escape(name) + r"(?![\w./-])"
    config.substitutions.append((pattern, path))


tool("glow-filecheck", filecheck)
tool("FileCheck", filecheck)
tool("llvm-filecheck", filecheck)
# lit's internal shell handles `not` itself but not `not --crash`: use LLVM's `not` tool for that.
not_tool = os.path.join(os.path.dirname(filecheck), "not")
if os.path.isfile(not_tool):
    tool("not --crash", not_tool + " --crash")
for name in ["glow-opt", "glow-lsp", "glow-run", "glow-import", "glow-memplan", "glow-lit", "glow-update-checks", "glow-reduce", "glow-train"]:
    tool(name, os.path.join(bin_dir, name))

# The out-of-tree pass example's tools, when built (cargo test --workspace builds them).
for name in ["custom-opt", "custom-run"]:
    path = os.path.join(bin_dir, name)
    if os.path.isfile(path):
        tool(name, path)
        config.available_features.add(name)

config.available_features.add("llvm-filecheck")
for feature in suite.get("features", []):
    config.available_features.add(feature)
if shutil.which("cc"):
    config.available_features.add("system-cc")
if shutil.which("dot"):
    config.available_features.add("graphviz")

# Tools the RUN lines call by name (sh, sleep, wc) come from the normal PATH.
config.environment["PATH"] = os.environ.get("PATH", "")
