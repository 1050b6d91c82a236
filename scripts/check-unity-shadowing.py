#!/usr/bin/env python3
"""Fails (exit 1) when a unity batch lets one file's private helper capture another file's call.

Every target compiles in unity batches (CMakeLists.txt, ASYNCDP_UNITY): the .cc files of a batch are
#included into one translation unit, so a function one file defines in its anonymous namespace is visible to
the files after it. When a later file calls a function of the same name that it means to take from a header
(say accounting::GaussianDelta), unqualified lookup finds the helper first and the call silently changes
meaning: a wrong number, no compiler message. (It happened: a test's GaussianDelta(mu, eps) captured
another test's call to accounting::GaussianDelta(eps, s) when the batches grew from 6 to 12 files.) It
also hides a missing definition: a file that calls another file's helper compiles only inside the batch.

The check reads the batches the build generated (BUILD/**/Unity/unity_*_cxx.cxx) and reports each name a
file of a batch defines at namespace scope inside `namespace {` and a later file of the same batch calls,
even when that later file defines a helper of the same name: the two are then overloads, and overload
resolution may pick the other file's (a redefinition of the same signature is already a compiler error).
Names a batch shares must be unique, or the helper must live in one header.
Usage: scripts/check-unity-shadowing.py [BUILD]   (BUILD defaults to build/release)
"""
import glob
import os
import re
import sys

DEFINITION = re.compile(r"^(?:static |inline |constexpr |template <[^>]*> )*[A-Za-z_][\w:<>,\s*&]*?[\s*&]+(\w+)\(")
NOT_NAMES = {"if", "for", "while", "switch", "return", "TEST", "TEST_F", "TEST_P", "operator"}


def anonymous_definitions(path):
    """Function names defined at the top level of `namespace {` blocks (one level, as the code writes them)."""
    names, inside = set(), False
    with open(path, errors="replace") as f:
        for line in f:
            if re.match(r"^namespace\s*\{", line):
                inside = True
            elif re.match(r"^\}\s*//\s*namespace\s*$", line):
                inside = False
            elif inside:
                m = DEFINITION.match(line)
                if m and m.group(1) not in NOT_NAMES:
                    names.add(m.group(1))
    return names


def current_batches(build):
    """The batches of the build's present configuration: a reconfiguration with fewer batches leaves the old
    files behind, and build.ninja names only those it compiles."""
    batches = sorted(glob.glob(os.path.join(build, "**", "Unity", "unity_*_cxx.cxx"), recursive=True))
    ninja = os.path.join(build, "build.ninja")
    if not os.path.exists(ninja):
        return batches
    with open(ninja, errors="replace") as f:
        named = set(re.findall(r"[^\s$]*Unity/unity_\d+_cxx\.cxx", f.read()))
    return [b for b in batches if b in named or os.path.abspath(b) in named]


def findings(build):
    found = []
    for batch in current_batches(build):
        with open(batch, errors="replace") as f:
            files = re.findall(r'#include "([^"]+\.cc)"', f.read())
        earlier = {}  # helper name -> the earlier file defining it
        for path in files:
            if not os.path.exists(path):
                continue  # a batch file left over from an older configuration
            own = anonymous_definitions(path)
            with open(path, errors="replace") as f:
                text = f.read()
            for name, where in earlier.items():
                if re.search(r"(?<![\w:.>])" + re.escape(name) + r"\(", text):
                    found.append(f"{path}: calls {name}(), which {where} defines in its anonymous namespace "
                                 f"(same unity batch: {os.path.relpath(batch, build)})")
            for name in own:
                earlier.setdefault(name, path)
    return found


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
    if not glob.glob(os.path.join(build, "**", "Unity"), recursive=True):
        print(f"check-unity-shadowing: no unity batches under {build} (build it first)", file=sys.stderr)
        return 2
    problems = sorted(set(findings(build)))
    for p in problems:
        print(p)
    print(f"check-unity-shadowing: {len(problems)} call(s) captured by another file's helper"
          + ("" if problems else "; none"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
