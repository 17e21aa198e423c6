"""Stable, content-addressed identifiers (specs/004, Phase 3).

The same file ingested from the same relative path yields the same ids on any machine:
`source_id` is the posix path relative to the ingest root, lower-cased; `doc_id` hashes the
source id with the file's sha256; `chunk_id` hashes the doc id with the chunk's offsets.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ragbench.errors import IdCollisionError  # noqa: F401 (re-exported)


def file_hash(data: bytes) -> str:
    """Full sha256 hex digest of a file's bytes."""
    return hashlib.sha256(data).hexdigest()


def text_hash(text: str) -> str:
    """sha256 hex digest of a text (UTF-8), used as the embedding cache key."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def normalize_source_id(file_path: str | Path, ingest_root: str | Path) -> str:
    """Posix path of `file_path` relative to `ingest_root`, lower-cased.

    A file outside the root keeps its absolute posix path (still lower-cased), as in the spec.
    """
    abs_path = Path(file_path).resolve()
    try:
        rel = abs_path.relative_to(Path(ingest_root).resolve())
    except ValueError:
        rel = abs_path
    return rel.as_posix().lower()


def compute_doc_id(source_id: str, file_sha256: str) -> str:
    """`sha256(f"{source_id}:{file_hash}")[:16]`."""
    return hashlib.sha256(f"{source_id}:{file_sha256}".encode()).hexdigest()[:16]


def compute_chunk_id(doc_id: str, start_char: int, end_char: int) -> str:
    """`sha256(f"{doc_id}:{start}:{end}")[:12]`."""
    return hashlib.sha256(f"{doc_id}:{start_char}:{end_char}".encode()).hexdigest()[:12]
