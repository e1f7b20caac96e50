#!/usr/bin/env python3
"""docs/errors.md and src/util/errors.def list the same error codes.

    python3 tests/errors_doc.py ROOT            check (a ctest test)
    python3 tests/errors_doc.py ROOT --update   rewrite the table in docs/errors.md

The table sits between the markers `<!-- codes:begin -->` and
`<!-- codes:end -->` in docs/errors.md, one row per code:
`| E-AREA-NNN | title | what it means |`. The check fails when a code is in
one list and not the other, or when a title differs; --update regenerates
the rows (code, title and the explanation `sexpgpu help CODE` prints) from
errors.def.
"""
import re
import sys
from pathlib import Path

BEGIN, END = "<!-- codes:begin -->", "<!-- codes:end -->"
ENTRY = re.compile(
    r'SX_ERROR\(\s*(\w+)\s*,\s*"((?:[^"\\]|\\.)*)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)')
ROW = re.compile(r"^\|\s*`?(E-[A-Z0-9]+-\d+)`?\s*\|\s*(.*?)\s*\|\s*(.*?)\s*\|\s*$")


def unescape(s):
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)


def codes_in_def(root):
    text = (root / "src/util/errors.def").read_text(encoding="utf-8")
    out = []
    for line in text.splitlines():
        if line.lstrip().startswith("//") or "SX_ERROR(" not in line:
            continue
        m = ENTRY.search(line)
        if not m:
            sys.exit(f"errors_doc: cannot parse this errors.def line:\n  {line}")
        out.append((m.group(2), unescape(m.group(3)), unescape(m.group(4))))
    return out


def cell(s):
    return s.replace("\n", " ").replace("|", "\\|")


def table(entries):
    rows = ["| code | title | what it means |", "| --- | --- | --- |"]
    rows += [f"| `{c}` | {cell(t)} | {cell(x)} |" for c, t, x in entries]
    return "\n".join(rows)


def split_doc(path):
    text = path.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        sys.exit(f"errors_doc: {path} lacks the markers {BEGIN} and {END}")
    head, rest = text.split(BEGIN, 1)
    body, tail = rest.split(END, 1)
    return head, body, tail


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = Path(sys.argv[1])
    doc = root / "docs/errors.md"
    entries = codes_in_def(root)
    head, body, tail = split_doc(doc)
    if "--update" in sys.argv[2:]:
        doc.write_text(head + BEGIN + "\n" + table(entries) + "\n" + END + tail, encoding="utf-8")
        print(f"errors_doc: wrote {len(entries)} codes into {doc}")
        return 0

    in_def = {c: t for c, t, _ in entries}
    in_doc = {}
    for line in body.splitlines():
        m = ROW.match(line)
        if m and m.group(1) != "code":
            in_doc[m.group(1)] = m.group(2).replace("\\|", "|")
    problems = []
    for c in in_def:
        if c not in in_doc:
            problems.append(f"{c} is in src/util/errors.def but not in docs/errors.md")
        elif in_doc[c] != in_def[c]:
            problems.append(f"{c}: errors.def says \"{in_def[c]}\", docs/errors.md says \"{in_doc[c]}\"")
    for c in in_doc:
        if c not in in_def:
            problems.append(f"{c} is in docs/errors.md but not in src/util/errors.def")
    if len(set(c for c, _, _ in entries)) != len(entries):
        problems.append("src/util/errors.def lists a code twice")
    if problems:
        print("docs/errors.md and src/util/errors.def disagree:")
        for p in problems:
            print("  " + p)
        print("fix: python3 tests/errors_doc.py . --update (regenerates the table from errors.def)")
        return 1
    print(f"errors_doc: {len(entries)} codes agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
