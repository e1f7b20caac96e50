#!/usr/bin/env python3
"""Every source file the project writes by hand is at most 500 lines, one
concept a file (the project's rule; golden and fixture files are data, not
checked).

    python3 tests/file_lengths.py ROOT
"""
import pathlib
import sys

LIMIT = 500
FOLDERS = ["src", "tests", "bench", "scripts", "examples"]
SUFFIXES = {".cpp", ".h", ".inc", ".def", ".cu", ".cuh", ".py", ".sh", ".sx", ".cmake"}
DATA = ("tests/golden", "tests/golden_kernels", "tests/fixtures", "tests/parity/fixtures")


def too_long(root):
    """(path, lines) of every file over LIMIT lines."""
    found = []
    for folder in FOLDERS:
        for f in sorted((root / folder).rglob("*")):
            rel = f.relative_to(root).as_posix()
            if not f.is_file() or rel.startswith(DATA):
                continue
            if f.suffix not in SUFFIXES and f.name != "CMakeLists.txt":
                continue
            lines = f.read_bytes().count(b"\n")
            if lines > LIMIT:
                found.append((rel, lines))
    return found


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    found = too_long(root)
    for rel, lines in found:
        print(f"{rel}: {lines} lines, more than {LIMIT}: split it by concept")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
