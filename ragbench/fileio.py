"""Atomic file writes: a reader sees the old file or the new one, never a half-written one.

`atomic_writer(path)` yields a binary file open on a fresh temporary name beside `path` (so the
rename stays on one file system); when the block ends without an error the file is renamed over
`path` with `os.replace`, else it is removed. `atomic_path(path)` does the same for a writer
that wants a file name, not a file (an exporter that writes to a path). `write_atomic(path,
data)` does it for bytes or text. The temporary file is created with `mode` (less the umask),
like a plain `open` by default; pass 0o600 for owner-only files. Temporary names are
`.<name>.<random>.tmp`, unique across processes and threads.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

__all__ = ["atomic_path", "atomic_writer", "is_atomic_temp", "write_atomic"]

_TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")


def is_atomic_temp(name: str) -> bool:
    """Whether `name` is the temporary name of an atomic write (`.<name>.<random>.tmp`): what a
    writer that stopped mid-write leaves beside the file, to be told from the files themselves.
    """
    return _TEMP_NAME.fullmatch(name) is not None


def _temp_name(path: Path) -> Path:
    return path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")  # see is_atomic_temp


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A fresh temporary name beside `path` for the block to write; renamed over `path` when
    the block ends without an error, removed (if written) when it raises.
    """
    path = Path(path)
    tmp = _temp_name(path)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_writer(path: Path, mode: int = 0o666) -> Iterator[BinaryIO]:
    """A binary file that replaces `path` atomically when the block ends without an error."""
    path = Path(path)
    tmp = _temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: Path, data: bytes | str, mode: int = 0o666,
                 encoding: str = "utf-8") -> None:
    """Write `data` (text is encoded with `encoding`) to `path` atomically."""
    with atomic_writer(path, mode) as handle:
        handle.write(data.encode(encoding) if isinstance(data, str) else data)
