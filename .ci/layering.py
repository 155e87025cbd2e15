#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The launcher's architecture, checked: which folder may include which, no include cycle, sizes.

usage: .ci/layering.py [--report] [--root DIR]

launcher/ has one folder per subsystem and the command files on top. LAYERS below is the rule:
a file may include headers of its own folder and of the folders its row names, nothing above
or beside it, so a lower layer never depends on a higher one. Also refused: a header named
*_internal.h included from another folder, an include that names no file of the tree, an
include cycle between modules (a module is foo.c with foo.h; foo depends on bar when foo.c or
foo.h includes bar.h), a C file over MAX_FILE_LINES and a function over MAX_FUNCTION_LINES.
Exits 1 with one line per violation; --report prints the include graph and the largest file
and function as well. --root checks another tree (the self-test's, tests/selftest/layering).
"""
import os
import re
import sys

# Lowest first. "" is launcher/ itself: main.c and one file per command, above everything.
LAYERS = {
    "lib": [],
    "policy": ["lib"],
    "audit": ["lib", "policy"],
    "dns": ["lib", "policy", "audit"],
    "gateway": ["lib", "policy", "audit"],
    "sandbox": ["lib", "policy", "audit", "dns", "gateway"],
    "agent": ["lib", "policy", "audit", "gateway"],
    "": ["lib", "policy", "audit", "dns", "gateway", "sandbox", "agent"],
}
# Headers from outside launcher/ that any layer may include: the kernel programs' contract and
# what the build generates (the skeleton, versions, tables, the MCP runner).
SHARED = {"bpf/launch.h"}
GENERATED = {"launch.skel.h", "bpf_version.h", "release.h", "syscall_names.h", "mcp_runner.h"}
MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 120
SIZED = ("launcher", "bpf")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def source_files(top, roots):
    for root in roots:
        for d, _, names in os.walk(os.path.join(top, root)):
            for n in sorted(names):
                if n.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(d, n), top)


def folder_of(path):
    """launcher/audit/audit.c -> "audit"; launcher/main.c -> ""."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else ""


def resolve(top, path, name):
    """The tree path an include names, or None when it names no file of the tree."""
    for base in (os.path.dirname(path), "launcher", "."):
        cand = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(os.path.join(top, cand)):
            return cand
    return None


def check_layers(errors):
    order = {}

    def depth(f, seen=()):
        if f in seen:
            errors.append(f"LAYERS: cycle through {' -> '.join(seen + (f,))}")
            return 0
        if f not in order:
            order[f] = 1 + max((depth(g, seen + (f,)) for g in LAYERS[f]), default=0)
        return order[f]

    for f, below in LAYERS.items():
        for g in below:
            if g not in LAYERS:
                errors.append(f"LAYERS: {f or 'launcher'} names unknown folder {g}")
        depth(f)


def functions(lines):
    """(name, first line, length) of each function: kernel style puts its braces in column 0."""
    start = None
    for i, line in enumerate(lines):
        if line == "{" and i > 0:
            start = i - 1
            while start > 0 and lines[start - 1].strip() and not lines[start - 1].startswith(
                ("}", "#", "/*", " *", "//")) and not lines[start - 1].rstrip().endswith(
                    (";", "*/")):
                start -= 1
            m = re.search(r"([A-Za-z_]\w*)\s*\(", " ".join(lines[start:i]))
            name = m.group(1) if m else lines[i - 1].strip()
        elif line.startswith("}") and start is not None:
            yield name, start + 1, i - start + 1
            start = None


def tarjan(graph):
    index, low, stack, on, sccs = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                sccs.append(sorted(scc))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sccs


def main():
    args = sys.argv[1:]
    top = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    if "--root" in args:
        top = args[args.index("--root") + 1]
    report = "--report" in args
    errors = []
    check_layers(errors)
    modules = {}  # module -> set of modules it depends on
    folders = {}  # folder -> set of folders it includes
    for path in source_files(top, ["launcher"]):
        here = folder_of(path)
        if here not in LAYERS:
            errors.append(f"{path}: folder launcher/{here} is not in .ci/layering.py's LAYERS")
            continue
        mod = os.path.splitext(path)[0].removesuffix("_internal")
        deps = modules.setdefault(mod, set())
        with open(os.path.join(top, path), encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(1)
                if name in GENERATED:
                    continue
                target = resolve(top, path, name)
                if target in SHARED:
                    continue
                where = f"{path}:{no}: #include \"{name}\""
                if target is None or not target.startswith("launcher/"):
                    errors.append(f"{where}: names no header of launcher/ (nor {', '.join(SHARED)})")
                    continue
                there = folder_of(target)
                if there != here:
                    folders.setdefault(here, set()).add(there)
                    if there not in LAYERS.get(here, []):
                        allowed = ", ".join(LAYERS.get(here, [])) or "none"
                        errors.append(f"{where}: launcher/{here or '.'} may not include "
                                      f"launcher/{there or '.'} (allowed: {allowed})")
                    if target.endswith("_internal.h"):
                        errors.append(f"{where}: {target} is private to launcher/{there}")
                # foo_internal.h is the private half of module foo, shared by its .c files.
                tmod = os.path.splitext(target)[0].removesuffix("_internal")
                if tmod != mod:
                    deps.add(tmod)
    for scc in tarjan(modules):
        errors.append("include cycle between modules: " + " <-> ".join(
            m.removeprefix("launcher/") for m in scc))
    for scc in tarjan(folders):
        errors.append("include cycle between folders: " + " <-> ".join(scc))

    largest, longest = ("", 0), ("", "", 0)
    for path in source_files(top, SIZED):
        if not path.endswith(".c"):
            continue
        with open(os.path.join(top, path), encoding="utf-8") as f:
            lines = f.read().split("\n")
        n = len(lines) - (lines[-1] == "")
        largest = max(largest, (path, n), key=lambda t: t[1])
        if n > MAX_FILE_LINES:
            errors.append(f"{path}: {n} lines (at most {MAX_FILE_LINES})")
        for name, first, length in functions(lines):
            longest = max(longest, (f"{path}:{first}", name, length), key=lambda t: t[2])
            if length > MAX_FUNCTION_LINES:
                errors.append(f"{path}:{first}: {name}() is {length} lines "
                              f"(at most {MAX_FUNCTION_LINES})")
    if report:
        print("layering: folder include graph (launcher/):")
        for f in sorted(folders, key=lambda f: (f != "", f)):
            print(f"  {f or '.'} -> {', '.join(sorted(g or '.' for g in folders[f]))}")
        print(f"layering: {len(modules)} modules; largest C file {largest[0]} ({largest[1]} "
              f"lines); longest function {longest[1]}() at {longest[0]} ({longest[2]} lines)")
    for e in errors:
        print(f"layering: {e}")
    print(f"layering: {'clean' if not errors else f'{len(errors)} violations'}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
