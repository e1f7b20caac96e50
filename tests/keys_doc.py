#!/usr/bin/env python3
"""docs/declarations.md shows exactly the evaluator's table of declaration keys.

    python3 tests/keys_doc.py ROOT SEXPGPU            check (a ctest test)
    python3 tests/keys_doc.py ROOT SEXPGPU --update   rewrite the reference in docs/declarations.md

`sexpgpu help --keys` (hidden) prints the table the evaluator refuses unknown
keys with (src/lang/keys.cpp): a `form` line per declaration, then a `key`
line per key, tab-separated. The reference sits between the markers
`<!-- keys:begin -->` and `<!-- keys:end -->` of docs/declarations.md; the
check fails when it differs from what the table gives, so the page cannot
drift from the code, and when tests/golden/good-every-key.sx, which the
evaluator must accept, leaves a key of the table out.
"""
import subprocess
import sys
from pathlib import Path

BEGIN, END = "<!-- keys:begin -->", "<!-- keys:end -->"


def table(exe):
    out = subprocess.run([exe, "help", "--keys"], capture_output=True, text=True, timeout=60, check=True).stdout
    forms = []
    for line in out.splitlines():
        kind, *cells = line.split("\t")
        if kind == "form":
            name, syntax, what = cells
            forms.append((name, syntax, what, []))
        elif kind == "key":
            forms[-1][3].append(cells)
        else:
            sys.exit(f"keys_doc: cannot read this line of `sexpgpu help --keys`: {line!r}")
    if not forms:
        sys.exit("keys_doc: `sexpgpu help --keys` printed no table")
    return forms


def uses_every_key(root, forms):
    """tests/golden/good-every-key.sx (which `check` must accept) gives every key of the table a value."""
    text = (root / "tests/golden/good-every-key.sx").read_text(encoding="utf-8")
    missing = [f"{name} :{k[0]}" for name, _, _, keys in forms for k in keys if f":{k[0]} " not in text]
    for m in missing:
        print(f"keys_doc: tests/golden/good-every-key.sx does not use {m}")
    return not missing


def cell(s):
    return s.replace("|", "\\|")


def reference(forms):
    parts = []
    for name, syntax, what, keys in forms:
        parts.append(f"### `{name}`\n\n`{syntax}`: {what}.\n")
        if keys:
            rows = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
            rows += [f"| `:{k}` | {cell(t)} | {cell(d)} | {cell(m)} |" for k, t, d, m in keys]
            parts.append("\n".join(rows) + "\n")
        else:
            parts.append("No keys of its own.\n")
    return "\n" + "\n".join(parts) + "\n"


def main():
    root, exe = Path(sys.argv[1]), sys.argv[2]
    update = "--update" in sys.argv[3:]
    doc = root / "docs/declarations.md"
    text = doc.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        sys.exit(f"keys_doc: {doc} lacks the markers {BEGIN} and {END}")
    head, rest = text.split(BEGIN, 1)
    body, tail = rest.split(END, 1)
    forms = table(exe)
    if not uses_every_key(root, forms):
        return 1
    want = reference(forms)
    if body == want:
        print(f"keys_doc: {doc} shows the key table of every declaration")
        return 0
    if update:
        doc.write_text(head + BEGIN + want + END + tail, encoding="utf-8")
        print(f"keys_doc: rewrote the reference in {doc}")
        return 0
    import difflib
    sys.stdout.writelines(difflib.unified_diff(body.splitlines(True), want.splitlines(True), "docs/declarations.md",
                                               "sexpgpu help --keys"))
    print("keys_doc: docs/declarations.md differs from the evaluator's table; run with --update and read the diff")
    return 1


if __name__ == "__main__":
    sys.exit(main())
