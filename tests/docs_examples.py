#!/usr/bin/env python3
"""Runs the console examples of docs/*.md and README.md and compares their output.

    python3 tests/docs_examples.py ROOT SEXPGPU            check (a ctest test)
    python3 tests/docs_examples.py ROOT SEXPGPU --update [FILE.md ...]
                                                    rewrite the outputs in place (of the files
                                                    named, relative to ROOT; default all)

A fenced ```console block whose first line is `$ sexpgpu ...` (optionally
after VAR=value assignments: `$ SEXPGPU_EVAL_LIMIT=1000 sexpgpu check x.sx`)
is an example: every `$ ` line in it is a command, and the lines after it, up
to the next `$ ` line or the end of the block, are its output, standard
output and standard error together as a terminal shows them. Each command
runs under bash from the repository root, with `sexpgpu` the binary under
test (first on PATH) and an environment holding only PATH, HOME and the
command's own assignments. Trailing blanks on a line are not compared.
Other console blocks (`$ scripts/test.sh`) are not run.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

FENCE = re.compile(r"^(\s*)```+\s*console\s*$")
FIRST = re.compile(r"^\$ (?:[A-Z_][A-Z0-9_]*=\S*\s+)*sexpgpu(\s|$)")


def blocks(text):
    """(start line index of the body, body lines) of every console block."""
    lines = text.split("\n")
    k = 0
    while k < len(lines):
        if FENCE.match(lines[k]):
            start = k + 1
            end = start
            while end < len(lines) and not lines[end].strip().startswith("```"):
                end += 1
            yield start, lines[start:end]
            k = end + 1
        else:
            k += 1


def examples(body):
    """(command, expected output lines) pairs of one block."""
    out = []
    for line in body:
        if line.startswith("$ "):
            out.append([line[2:], []])
        elif out:
            out[-1][1].append(line)
    return out


def run(cmd, root, bindir):
    env = {"PATH": f"{bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
           "HOME": os.environ.get("HOME", "/root")}
    for v in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
        if v in os.environ:
            env[v] = os.environ[v]
    p = subprocess.run(["bash", "-c", cmd], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=120)
    text = p.stdout.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [l.rstrip() for l in lines]


# The graph's node count and the plan's bytes change whenever the compiler
# gets better; the slug, the parameter count and everything else must not.
PLAN_NUMBERS = re.compile(r"\b\d+ nodes, plan \d+\b")


def comparable(lines):
    return [PLAN_NUMBERS.sub("N nodes, plan B", l) for l in lines]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    root = Path(sys.argv[1]).resolve()
    binary = Path(sys.argv[2]).resolve()
    update = "--update" in sys.argv[3:]
    only = {(root / f).resolve() for f in sys.argv[3:] if f != "--update"}
    # The binary is run as `sexpgpu`, whatever the build called it.
    bindir = Path(os.environ.get("TMPDIR", "/tmp")) / f"sexpgpu-docs-bin-{os.getpid()}"
    bindir.mkdir(parents=True, exist_ok=True)
    link = bindir / "sexpgpu"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(binary)

    failures, count = 0, 0
    try:
        for doc in sorted((root / "docs").glob("*.md")) + [root / "README.md"]:
            if not doc.exists():
                continue
            text = doc.read_text(encoding="utf-8")
            lines = text.split("\n")
            edits = []  # (start, end, new body) in line indices, applied back to front
            for start, body in blocks(text):
                if not body or not FIRST.match(body[0]):
                    continue
                new_body = []
                for cmd, expected in examples(body):
                    count += 1
                    actual = run(cmd, root, bindir)
                    want = [l.rstrip() for l in expected]
                    while want and want[-1] == "":
                        want.pop()
                    if comparable(actual) != comparable(want) and not update:
                        failures += 1
                        print(f"{doc.relative_to(root)}:{start + 1}: `$ {cmd}` printed something else")
                        import difflib
                        for d in difflib.unified_diff(want, actual, "docs", "actual", lineterm=""):
                            print("    " + d)
                    new_body += ["$ " + cmd] + actual
                edits.append((start, start + len(body), new_body))
            if update and edits and (not only or doc.resolve() in only):
                for s, e, new in reversed(edits):
                    lines[s:e] = new
                new_text = "\n".join(lines)
                if new_text != text:
                    doc.write_text(new_text, encoding="utf-8")
                    print(f"docs_examples: updated {doc.relative_to(root)}")
    finally:
        link.unlink()
        bindir.rmdir()
    if failures:
        print(f"docs_examples: {failures} of {count} examples differ; "
              "python3 tests/docs_examples.py . build/sexpgpu --update rewrites them (review the diff)")
        return 1
    print(f"docs_examples: {count} examples agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
