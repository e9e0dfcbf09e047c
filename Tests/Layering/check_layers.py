#!/usr/bin/env python3
"""The layering check: every module imports only modules below it.

Reads the allowed graph from Tests/Layering/layers.txt, every target (its path and named
dependencies) from Package.swift and Server/Package.swift, and every `import` line of every Swift
file of every target. Fails (exit 1) on an import or a dependency the graph does not allow, on a
target the graph does not list, and on a graph line that names a module not listed above it.

    python3 Tests/Layering/check_layers.py            # check; prints 'N passed, N failed'
    python3 Tests/Layering/check_layers.py --graph    # print the modules' imports as found
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMPORT = re.compile(r"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:public\s+|package\s+|internal\s+|private\s+|fileprivate\s+)?import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)")
TARGET = re.compile(r"\.(target|testTarget|executableTarget|systemLibrary)\(\s*name:\s*\"([^\"]+)\"(.*?)\)\s*,?\s*$", re.S)


def read_layers(path):
    """The graph: target -> (allowed project modules, foundation allowed), in file order."""
    order, allowed, no_foundation, problems = [], {}, set(), []
    for n, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, _, rest = line.partition(":")
        name = name.strip()
        words = rest.split()
        if "no-foundation" in words:
            no_foundation.add(name)
            words.remove("no-foundation")
        for w in words:
            if w not in allowed:
                problems.append(f"layers.txt:{n}: {name} may import {w}, which is not listed above it")
        order.append(name)
        allowed[name] = set(words)
    return order, allowed, no_foundation, problems


def targets_of(package_swift, base):
    """target name -> (source folder, declared dependencies) for one Package.swift."""
    text = open(package_swift).read()
    # A dependency on a platform's condition (`.target(name: "X", condition: .when(...))`) is
    # the dependency "X": written so, it is not read as a target of its own.
    text = re.sub(r'\.target\(name:\s*("[^"]+"),\s*condition:\s*\.when\([^)]*\)\)', r"\1", text)
    found = {}
    # Each target call starts at `.target(` etc.; cut the text there and read its arguments.
    starts = [m.start() for m in re.finditer(r"\.(?:target|testTarget|executableTarget|systemLibrary)\(\s*name:", text)]
    for i, s in enumerate(starts):
        chunk = text[s: starts[i + 1] if i + 1 < len(starts) else len(text)]
        kind = re.match(r"\.(\w+)\(", chunk).group(1)
        name = re.search(r'name:\s*"([^"]+)"', chunk).group(1)
        deps_m = re.search(r"dependencies:\s*\[(.*?)\]\s*[,)]", chunk, re.S)
        deps = set()
        if deps_m:
            body = deps_m.group(1)
            deps |= set(re.findall(r'\.product\(name:\s*"([^"]+)"', body))
            body = re.sub(r"\.product\([^)]*\)", "", body)
            deps |= set(re.findall(r'"([^"]+)"', body))
        path_m = re.search(r'path:\s*"([^"]+)"', chunk)
        default = {"testTarget": "Tests"}.get(kind, "Sources")
        folder = os.path.join(base, path_m.group(1) if path_m else os.path.join(default, name))
        found[name] = (folder, deps)
    return found


def imports_of(folder):
    """module -> [file:line] of every import in the folder's Swift files."""
    out = {}
    for dirpath, _, files in os.walk(folder):
        for f in sorted(files):
            if not f.endswith(".swift"):
                continue
            p = os.path.join(dirpath, f)
            in_comment = False
            for n, line in enumerate(open(p, encoding="utf-8"), 1):
                if "/*" in line and "*/" not in line:
                    in_comment = True
                if in_comment:
                    in_comment = "*/" not in line
                    continue
                m = IMPORT.match(line)
                if m:
                    out.setdefault(m.group(1), []).append(f"{os.path.relpath(p, ROOT)}:{n}")
    return out


def main():
    order, allowed, no_foundation, problems = read_layers(os.path.join(ROOT, "Tests/Layering/layers.txt"))
    targets = targets_of(os.path.join(ROOT, "Package.swift"), ROOT)
    targets.update(targets_of(os.path.join(ROOT, "Server/Package.swift"), os.path.join(ROOT, "Server")))
    project = set(targets)
    passed = 0
    graph = {}
    for name, (folder, deps) in sorted(targets.items()):
        if name not in allowed:
            problems.append(f"{name}: a target of Package.swift that Tests/Layering/layers.txt does not list")
            continue
        ok = True
        found = imports_of(folder)
        mine = {m for m in found if m in project and m != name}
        graph[name] = sorted(mine)
        for m in sorted(mine - allowed[name]):
            problems.append(f"{name} imports {m}, which is not below it ({found[m][0]})")
            ok = False
        if name in no_foundation:
            for m in ("Foundation", "FoundationEssentials", "Dispatch"):
                if m in found:
                    problems.append(f"{name} imports {m} ({found[m][0]}), and must not")
                    ok = False
        for d in sorted(d for d in deps if d in project and d not in allowed[name]):
            problems.append(f"{name} depends on {d} in its Package.swift, which is not below it")
            ok = False
        # An import SwiftPM resolves only because another target built the module first.
        for m in sorted(mine - deps):
            problems.append(f"{name} imports {m} without naming it among its dependencies ({found[m][0]})")
            ok = False
        passed += ok
    for name in order:
        if name not in targets:
            problems.append(f"layers.txt lists {name}, which no Package.swift declares")
    if "--graph" in sys.argv:
        for name in order:
            if name in graph:
                print(f"{name}: {' '.join(graph[name])}")
    for p in problems:
        print("layering:", p)
    failed = len(problems)
    print(f"layering: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
