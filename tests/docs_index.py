#!/usr/bin/env python3
"""README.md links every page of docs/.

    python3 tests/docs_index.py ROOT     check (a ctest test)

A page is linked when README.md holds `(docs/NAME.md` (a Markdown link, with
or without an anchor). Fails naming each page that is not, and each link to
a page that does not exist.
"""
import re
import sys
from pathlib import Path


def main():
    root = Path(sys.argv[1])
    readme = (root / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in (root / "docs").glob("*.md"))
    linked = set(re.findall(r"\(docs/([A-Za-z0-9_.-]+\.md)(?:#[^)]*)?\)", readme))
    missing = [p for p in pages if p not in linked]
    dangling = sorted(l for l in linked if l not in pages)
    for p in missing:
        print(f"docs_index: README.md does not link docs/{p}")
    for l in dangling:
        print(f"docs_index: README.md links docs/{l}, which does not exist")
    if missing or dangling:
        return 1
    print(f"docs_index: README.md links all {len(pages)} pages of docs/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
