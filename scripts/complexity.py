"""Fail when a function is too complex to read: cyclomatic complexity above 25 (radon).

`make lint` runs it over ragbench/, app_pages/ and app.py. radon's own CLI cannot fail on a
threshold, and xenon's absolute ranks stop at D (30) or E (40); this asks radon's API for
each function's complexity and compares it with the number itself. Methods, functions nested
in functions (radon counts them apart from their parent) and methods of nested classes count.

    python scripts/complexity.py [--max 25] PATH...
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class, Function

DEFAULT_MAX = 25


def functions(blocks: Iterable[Function | Class]) -> Iterator[Function]:
    """Every function among radon's blocks: methods, closures and nested classes included."""
    for block in blocks:
        if isinstance(block, Class):
            yield from functions([*block.methods, *block.inner_classes])
        else:
            yield block
            yield from functions(block.closures)


def too_complex(path: Path, limit: int) -> list[str]:
    """`path:line name complexity` for each function of `path` above `limit`."""
    blocks = cc_visit(path.read_text(encoding="utf-8"))
    # radon lists a method both on its own and under its class: once each
    found = {(f.lineno, f.fullname): f.complexity for f in functions(blocks)}
    return [f"{path}:{line} {name} {cc}" for (line, name), cc in sorted(found.items())
            if cc > limit]


def sources(paths: Iterable[str]) -> list[Path]:
    """The Python files named or under the folders named."""
    out: list[Path] = []
    for name in paths:
        path = Path(name)
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def main(argv: list[str] | None = None) -> int:
    """Print each function above the limit; exit 1 if there is one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=DEFAULT_MAX,
                        help=f"highest complexity allowed (default {DEFAULT_MAX})")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    found = [line for path in sources(args.paths) for line in too_complex(path, args.max)]
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} functions above cyclomatic complexity {args.max}: split them "
              "into named steps", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
