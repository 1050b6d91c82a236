#!/usr/bin/env python3
"""Fails (exit 1) when the units of the library include each other in a cycle; docs/design.md, "Layers".

A unit is a header and its source (x.h + x.cc). An include arrow u -> v exists when any file of u includes
a file of v with #include "...". Two checks:
  1. no cycle among the units of the given folders (strongly connected components of the arrow graph);
  2. no arrow runs up the layers core <- data <- models <- sim <- apps <- python (a folder may include its
     own folder and any folder to its left only).
Usage: scripts/check-include-cycles.py [ROOT]   (ROOT defaults to the repository holding this script)
"""
import os
import re
import sys

LAYERS = ["core", "data", "models", "sim", "apps", "python"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def units_and_arrows(root):
    units, arrows = set(), {}
    for layer in LAYERS:
        for directory, _, names in os.walk(os.path.join(root, layer)):
            for name in names:
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.relpath(os.path.join(directory, name), root)
                unit = os.path.splitext(path)[0]
                units.add(unit)
                with open(os.path.join(root, path), errors="replace") as f:
                    for line in f:
                        m = INCLUDE.match(line)
                        if m:
                            target = os.path.splitext(m.group(1))[0]
                            if target != unit:
                                arrows.setdefault(unit, set()).add(target)
    return units, {u: {t for t in ts if t in units} for u, ts in arrows.items()}


def cycles(units, arrows):
    """Tarjan's strongly connected components (iterative), those with more than one unit."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], 0
    for start in sorted(units):
        if start in index:
            continue
        work = [(start, iter(sorted(arrows.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(arrows.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def upward_arrows(arrows):
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    bad = []
    for unit, targets in sorted(arrows.items()):
        for target in sorted(targets):
            if rank[target.split("/")[0]] > rank[unit.split("/")[0]]:
                bad.append((unit, target))
    return bad


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    units, arrows = units_and_arrows(root)
    found = cycles(units, arrows)
    upward = upward_arrows(arrows)
    for component in found:
        print(f"include cycle ({len(component)} units): {' '.join(component)}")
    for unit, target in upward:
        print(f"include runs up the layers: {unit} -> {target}")
    if found or upward:
        return 1
    print(f"check-include-cycles: {len(units)} units, {sum(map(len, arrows.values()))} include arrows, no cycle, "
          "layers respected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
