#!/usr/bin/env python3
"""The stages' libraries form no cycle, and a stage's code includes only the
stages its library links (CMakeLists.txt's `target_link_libraries(sx_<stage>
PUBLIC ...)`, followed through).

    python3 tests/stage_deps.py ROOT

Unit tests (`*_test.cpp`) and test-only headers (`*test_util.h`) may include
more: they link the test-support library (`src/testing/`, sx_testing) too, which
no stage links. `check` and `explain` open no
device: their files include the driver, never the runtime.
"""
import pathlib
import re
import sys


def link_graph(cmake_text):
    """{library: set of sx_ libraries it links}, for every sx_ library."""
    graph = {}
    for m in re.finditer(r"target_link_libraries\(\s*(sx_\w+)\s+PUBLIC([^)]*)\)", cmake_text):
        graph.setdefault(m.group(1), set()).update(re.findall(r"\bsx_\w+", m.group(2)))
    for m in re.finditer(r"sexpgpu_stage\(\s*([\w/]+)", cmake_text):
        graph.setdefault("sx_" + m.group(1).replace("/", "_"), set())
    return graph


def find_cycle(graph):
    """A list of libraries forming a cycle, or None."""
    state = {}  # 1: on the current path, 2: done

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def reachable(graph, start):
    seen, todo = set(), [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


# Files of a stage that must not include some stage it links.
NEVER_INCLUDE = {"cli/cmd_check.cpp": "runtime", "cli/cmd_explain.cpp": "runtime"}


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    graph = link_graph((root / "CMakeLists.txt").read_text())
    problems = []
    for lib, deps in sorted(graph.items()):
        if "sx_testing" in deps:
            problems.append(f"{lib} links sx_testing, the test-only code: only tests and the benchmark may")
    cycle = find_cycle(graph)
    if cycle:
        problems.append("the stage libraries link in a cycle: " + " -> ".join(cycle))
    # The folder of each stage: src/backend/cpu is sx_backend_cpu.
    stages = {lib[3:].replace("_", "/"): lib for lib in graph}
    stages = {d: lib for d, lib in stages.items() if (root / "src" / d).is_dir()}
    if len(stages) < 10:
        problems.append(f"found only {len(stages)} stages in CMakeLists.txt: {sorted(stages)}")

    def stage_of(rel):
        parts = pathlib.PurePosixPath(rel).parts
        for n in (2, 1):
            d = "/".join(parts[:n])
            if len(parts) > n and d in stages:
                return d
        return None

    for path in sorted((root / "src").rglob("*")):
        if path.suffix not in (".cpp", ".h", ".inc") or path.name.endswith(("_test.cpp", "test_util.h")):
            continue
        rel = path.relative_to(root / "src").as_posix()
        own = stage_of(rel)
        if own is None:
            continue
        allowed = reachable(graph, stages[own]) | {stages[own]}
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            dep = stage_of(m.group(1))
            if dep and dep == NEVER_INCLUDE.get(rel):
                problems.append(f"src/{rel}:{lineno}: includes {m.group(1)}; it must need only the driver, "
                                f"not the {dep} stage")
            elif dep and stages[dep] not in allowed:
                problems.append(f"src/{rel}:{lineno}: stage {own} includes {m.group(1)}, "
                                f"but {stages[own]} does not link {stages[dep]}")
    for rel in NEVER_INCLUDE:
        if not (root / "src" / rel).is_file():
            problems.append(f"src/{rel} is gone: update NEVER_INCLUDE in tests/stage_deps.py")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"ok: {len(stages)} stages, no cycle, every include is of a linked stage")
    return 0


if __name__ == "__main__":
    sys.exit(main())
