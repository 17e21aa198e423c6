"""Ingest versioning (specs/004 Phase 6): decisions, staleness and what re-processing needs.

Every stored document records how it was made: `content_version` (1, then +1 each time its
source's content changes), `ingest_version` (the parse/chunk/embed logic, see
`store.schema.INGEST_VERSIONS`, which says whether each version breaks older chunks) and
`ingest_settings` (the settings signature: chunk size and overlap, tokenizer, embedding model,
contextual embeddings). A document is **stale** when it was made by an older ingest version or
with another signature; `ragbench reprocess` re-runs exactly those.

The decision for an incoming file (`decide`) is a pure function of what the catalog holds, so
it is tested table-driven: insert a new source, update a source whose content changed, skip the
same content made by the current version and settings, reprocess it otherwise.

Re-processing needs the original bytes. They are looked up, in order, in the archive
(`archive_download_uri`), in `files/<doc_id>/`, and at the source path relative to the current
directory; a candidate counts only if its sha256 is the document's `file_hash` (otherwise the
file has changed: that is an update for `ragbench ingest`, not a re-process).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from ragbench.archive import Archive, ArchivePathError
from ragbench.config import Settings
from ragbench.ids import file_hash
from ragbench.models import DocumentRecord, FileResult, Scalar
from ragbench.store.catalog import Catalog
from ragbench.store.schema import CURRENT_INGEST_VERSION, INGEST_VERSIONS

Action = Literal["inserted", "updated", "skipped", "reprocessed"]


class IngestDecision(BaseModel):
    """What to do with an incoming file and why (specs/004 `IngestDecision`)."""

    action: Action
    reason: str


def model_id_of(settings: Settings) -> str:
    """The embedding model id stored with documents and used as the vector-cache key:
    `st:<name>` (torch), `st:<name>@onnx` / `st:<name>@onnx-int8`, or `openai:<url>:<name>`.
    Runtimes give slightly different vectors, so they never share cache rows.
    """
    if settings.embedding_backend == "openai":
        return f"openai:{settings.openai_base_url.rstrip('/')}:{settings.embedding_model}"
    if settings.embedding_runtime != "torch":
        return f"st:{settings.embedding_model}@{settings.embedding_runtime}"
    return f"st:{settings.embedding_model}"


def signature_of(settings: Settings) -> dict[str, Scalar]:
    """What a document made now would record as `ingest_settings`."""
    return {**settings.ingest_signature(), "model_id": model_id_of(settings)}


def recorded_signature(record: DocumentRecord) -> dict[str, Scalar]:
    """A document's signature; for rows made before signatures were stored, rebuilt from its
    columns (those predate contextual embeddings, so `contextual_embeddings` is False).
    """
    return signature_from_columns(record.ingest_settings, record.chunk_size,
                                  record.chunk_overlap, record.embedding_model)


def signature_from_columns(
    ingest_settings: dict[str, Scalar] | None, chunk_size: int, chunk_overlap: int,
    model_id: str,
) -> dict[str, Scalar]:
    """`recorded_signature` from a document row's columns."""
    if ingest_settings:
        # signatures recorded before `embedding_runtime` existed were made with torch
        return {"embedding_runtime": "torch", **ingest_settings}
    backend = "openai" if model_id.startswith("openai:") else "sentence-transformers"
    name = model_id.rsplit(":", 1)[-1] if ":" in model_id else model_id
    return {
        "chunk_size": chunk_size, "chunk_overlap": chunk_overlap,
        "tokenizer": "cl100k_base", "embedding_backend": backend, "embedding_model": name,
        "embedding_runtime": "torch", "contextual_embeddings": False, "model_id": model_id,
    }


def settings_changes(old: dict[str, Scalar], new: dict[str, Scalar]) -> list[str]:
    """`name old -> new` for every signature entry that differs (the model id is shown once)."""
    keys = [k for k in dict.fromkeys([*new, *old]) if old.get(k) != new.get(k)]
    if "model_id" in keys and {"embedding_model", "embedding_backend",
                               "embedding_runtime"} & set(keys):
        keys.remove("model_id")
    return [f"{k} {old.get(k)} -> {new.get(k)}" for k in keys]


def stale_reasons(
    record: DocumentRecord, signature: dict[str, Scalar], target_version: int | None = None
) -> list[str]:
    """Why `record` needs re-processing (empty when it is current).

    With `target_version` only the version counts: documents below it are stale.
    """
    if target_version is not None:
        if record.ingest_version < target_version:
            return [f"ingest logic upgraded (v{record.ingest_version} -> v{target_version})"]
        return []
    reasons = []
    if record.ingest_version < CURRENT_INGEST_VERSION:
        kind = "breaking" if breaking_between(record.ingest_version) else "non-breaking"
        reasons.append(f"ingest logic upgraded (v{record.ingest_version} -> "
                       f"v{CURRENT_INGEST_VERSION}, {kind})")
    changes = settings_changes(recorded_signature(record), signature)
    if changes:
        reasons.append(f"settings changed ({', '.join(changes)})")
    return reasons


def reachable_version(old: int) -> int:
    """The newest ingest version a document made by `old` reaches without re-parsing: the
    last one before the first breaking version after `old` (backfill moves it there).
    """
    reached = old
    for version, _, breaking in sorted(INGEST_VERSIONS):
        if version <= old:
            continue
        if breaking:
            break
        reached = version
    return reached


def breaking_between(old: int, new: int = CURRENT_INGEST_VERSION) -> bool:
    """True when a version after `old` up to `new` changed chunk texts or ids."""
    return any(breaking for v, _, breaking in INGEST_VERSIONS if old < v <= new)


def decide(
    existing: DocumentRecord | None,
    same_source: list[DocumentRecord],
    signature: dict[str, Scalar],
    lens: str | None = None,
) -> IngestDecision:
    """The specs/004 decision for a file whose doc id is `existing`'s (or not stored yet).

    `same_source` holds the indexed documents of the same source id (older contents).
    """
    if existing is not None:
        reasons = stale_reasons(existing, signature)
        if reasons:
            return IngestDecision(action="reprocessed", reason="; ".join(reasons))
        if lens and lens != existing.lens:
            return IngestDecision(action="reprocessed", reason=f"lens {existing.lens!r} -> "
                                  f"{lens!r}")
        return IngestDecision(action="skipped", reason="unchanged since the last ingest")
    if same_source:
        version = max(o.content_version for o in same_source) + 1
        return IngestDecision(action="updated", reason=f"content changed (version {version})")
    return IngestDecision(action="inserted", reason="new document")


# --- stale documents and their originals -----------------------------------------------------


class StaleDocument(BaseModel):
    """A top-level document that re-processing would redo (attachments come with it)."""

    doc_id: str
    source_id: str
    file_name: str
    lens: str
    ingest_version: int
    content_version: int
    chunks: int
    reasons: list[str]
    original: str | None = Field(None, description="where the original bytes were found")
    reprocessable: bool = True
    problem: str | None = Field(None, description="why it cannot be re-processed")


class ReprocessReport(BaseModel):
    """`Workbench.reprocess` result: what was stale, what was redone, what could not be."""

    dry_run: bool
    target_version: int
    stale: list[StaleDocument]
    results: list[FileResult] = Field(default_factory=list)
    not_reprocessable: list[StaleDocument] = Field(default_factory=list)
    totals: dict[str, int] = Field(default_factory=dict)
    embedded: int = Field(0, description="chunk texts the model embedded (the rest: cache)")
    cached: int = Field(0, description="chunk vectors taken from the embedding cache")
    seconds: float = 0.0


def find_original(
    record: DocumentRecord, archive: Archive, files_dir: Path,
    stored: Callable[[str], bytes | None] | None = None,
) -> tuple[bytes | None, str | None, str]:
    """(bytes, where, problem) for a document's original; bytes is None when none matches.

    `stored` (the PostgreSQL backend: `PgOriginals.get`) reads the original kept in the
    database by content hash, which every host can; it is tried first, then the archived
    original in `archive` (wherever `archive_dir` put it), the stored one under `files_dir`
    and the source path.
    """
    tried = []
    if stored is not None:
        data = stored(record.file_hash)
        if data is not None and file_hash(data) == record.file_hash:
            return data, f"database: originals/{record.file_hash[:12]}", ""
        tried.append("database: missing")
    candidates: list[tuple[str, Path]] = []
    archive_uri = getattr(record, "archive_download_uri", None)
    if isinstance(archive_uri, str) and archive_uri:
        try:
            candidates.append(("archive", archive.path_of(archive_uri)))
        except ArchivePathError:
            pass  # not a URI into the archive: nothing to read there
    candidates.append(("files", files_dir / record.doc_id / record.file_name))
    candidates.append(("source path", Path.cwd() / record.source_id))
    for label, path in candidates:
        try:
            if not path.is_file():
                tried.append(f"{label}: missing")
                continue
            data = path.read_bytes()
        except OSError as e:
            tried.append(f"{label}: {e.strerror or e}")
            continue
        if file_hash(data) == record.file_hash:
            return data, f"{label}: {path}", ""
        tried.append(f"{label}: content changed since ingest (run `ragbench ingest` to update)")
    return None, None, "original not available (" + "; ".join(tried) + ")"


def find_stale(
    catalog: Catalog, settings: Settings, target_version: int | None = None,
    archive: Archive | None = None, files_dir: Path | None = None,
    stored: Callable[[str], bytes | None] | None = None,
) -> list[StaleDocument]:
    """Top-level indexed documents that are stale (a stale attachment marks its root).

    With `archive`/`files_dir` each entry also says where its original is, or why it
    cannot be re-processed (`stored`: see `find_original`).
    """
    signature = signature_of(settings)
    roots: dict[str, list[str]] = {}
    records: dict[str, DocumentRecord] = {}
    for record in catalog.list_documents():
        reasons = stale_reasons(record, signature, target_version)
        if not reasons:
            continue
        root_id = record.root_doc_id or record.doc_id
        roots.setdefault(root_id, [])
        roots[root_id] += [r for r in reasons if r not in roots[root_id]]
        if record.doc_id == root_id:
            records[root_id] = record
    out = []
    for root_id, reasons in roots.items():
        root = records.get(root_id) or catalog.get_document(root_id)
        if root is None:
            continue
        chunks = root.chunk_count + sum(
            len(catalog.chunks_of(c)) for c in catalog.children(root_id)
        )
        item = StaleDocument(
            doc_id=root.doc_id, source_id=root.source_id, file_name=root.file_name,
            lens=root.lens, ingest_version=root.ingest_version,
            content_version=root.content_version, chunks=chunks, reasons=reasons,
        )
        if archive is not None and files_dir is not None:
            data, where, problem = find_original(root, archive, files_dir, stored)
            item.original = where
            item.reprocessable = data is not None
            item.problem = problem or None
        out.append(item)
    return sorted(out, key=lambda s: s.source_id)


def version_table(catalog: Catalog) -> list[dict[str, Any]]:
    """Every ingest version with its description, breaking flag and document count."""
    rows = catalog.ingest_versions()
    return [dict(r) | {"breaking_changes": bool(r["breaking_changes"]),
                       "current": r["version"] == CURRENT_INGEST_VERSION} for r in rows]
