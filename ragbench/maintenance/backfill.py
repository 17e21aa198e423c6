"""Backfill (specs/003 stage 5): bring stored chunks up to the current metadata without re-parsing.

Chunks written by an older ingest version (or by a crash-free but older build) can miss fields
the current pipeline sets. Everything derivable from what the catalog already holds is filled
in; nothing is parsed again:

* offsets: `start_char`/`end_char` must satisfy `document.text[start:end] == chunk.text`; when
  they do not, the chunk text is located in the document text: the occurrence whose offsets
  hash to the chunk's id (ids are content-addressed), else the first after the previous chunk;
* `line_from`/`line_to` from the offsets, `total_chunks` from the document's chunk count;
* `chunk_type` when missing: heuristically from the text (table rows, code fences, list items);
* `section_path` when empty: from the chunk's stored `ancestry_titles`;
* `context_header`, the document's `context_summary` and `embedding_text` as the current
  settings make them (`ragbench.ingest.context`); a chunk whose embedding text changes gets a new
  vector (from the embedding cache when the text was embedded before) in Chroma first, then
  the catalog row is updated, in one transaction per document;
* `ingest_settings` for rows made before it was stored.

A document whose chunks all have valid offsets is then moved to the newest ingest version it
reaches without a breaking version in between (`store.schema.INGEST_VERSIONS`,
`versioning.reachable_version`): a non-breaking upgrade needs no re-processing; a breaking one
(new chunk texts) only `reprocess` brings. Page numbers are not
derivable without the parsed blocks and are only reported.

Idempotent: a second run plans nothing. `dry_run` plans and reports without writing. The report
gives the share of chunks having each field before and after.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from ragbench.config import Settings
from ragbench.embeddings import CachedEmbedder
from ragbench.ids import compute_chunk_id, text_hash
from ragbench.ingest.context import Summarizer, apply_context, document_date, document_header
from ragbench.ingest.versioning import reachable_version, recorded_signature, signature_of
from ragbench.models import CHUNK_TYPES, Chunk, DocumentRecord
from ragbench.store.catalog import Catalog
from ragbench.store.catalog_base import UPDATABLE_CHUNK_FIELDS
from ragbench.store.vectors import VectorStore

FIELDS = ("chunk_type", "section_path", "offsets", "line_from", "line_to", "page_number",
          "total_chunks", "context_header", "embedding_text", "ingest_settings")
"""Metadata fields whose coverage the report gives (share of chunks having a valid value)."""

_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")


class BackfillReport(BaseModel):
    """What a backfill changed (or, with `dry_run`, would change)."""

    dry_run: bool
    documents: int
    chunks: int
    changes: dict[str, int] = Field(description="chunks (or documents) changed per field")
    not_derivable: dict[str, int] = Field(description="chunks still missing a field after it")
    documents_upgraded: int = Field(description="documents moved to the newest ingest version "
                                    "reachable without re-parsing (all offsets valid)")
    re_embedded: int = Field(0, description="chunks that got a new vector")
    coverage_before: dict[str, float]
    coverage_after: dict[str, float]
    planned: list[dict[str, Any]] = Field(default_factory=list,
                                          description="the first 50 planned chunk changes")
    seconds: float = 0.0


META_FIELDS = frozenset({"chunk_type", "page_number", "start_char", "end_char", "total_chunks",
                         "section_path", "context_header"})
"""Backfilled fields that are also vector metadata (`ragbench.ingest.metadata.vector_meta`)."""


def guess_chunk_type(text: str) -> str:
    """`table`, `code`, `list` or `text` from the chunk's lines (specs/003 heuristic)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return "text"
    if text.lstrip().startswith("```") or sum(line.startswith(("    ", "\t"))
                                               for line in lines) > len(lines) / 2:
        return "code"
    if sum(bool(_TABLE_ROW.match(line)) for line in lines) > len(lines) / 2:
        return "table"
    if sum(bool(_LIST_ITEM.match(line)) for line in lines) > len(lines) / 2:
        return "list"
    return "text"


def _has(field: str, row: dict[str, Any], doc_text: str, expected_embedding: str,
         doc: DocumentRecord) -> bool:
    if field == "offsets":
        s, e = row["start_char"], row["end_char"]
        return (isinstance(s, int) and isinstance(e, int) and 0 <= s < e <= len(doc_text)
                and doc_text[s:e] == row["text"])
    if field == "chunk_type":
        return row["chunk_type"] in CHUNK_TYPES
    if field == "section_path":
        return bool(row["section_path"])
    if field == "embedding_text":
        return row["embedding_text"] == expected_embedding
    if field == "ingest_settings":
        return doc.ingest_settings is not None
    if field == "total_chunks":
        return row["total_chunks"] is not None and row["total_chunks"] > 0
    return row.get(field) is not None


def _locate(doc_text: str, text: str, after: int, doc_id: str, chunk_id: str
            ) -> tuple[int, int] | None:
    """Where `text` sits in the document: the occurrence whose offsets give back `chunk_id`
    (chunk ids are sha256(doc_id:start:end), specs/004), else the first one after `after`.
    """
    if not text:
        return None
    first = None
    pos = doc_text.find(text)
    while pos >= 0:
        if compute_chunk_id(doc_id, pos, pos + len(text)) == chunk_id:
            return pos, pos + len(text)
        if first is None and pos >= after:
            first = pos
        pos = doc_text.find(text, pos + 1)
    return (first, first + len(text)) if first is not None else None


def _fixed_rows(rows: list[dict[str, Any]], text: str,
                doc: DocumentRecord) -> list[dict[str, Any]]:
    """Each chunk row with what can be repaired from the text alone: offsets that slice the
    chunk (looked for after the previous chunk), line numbers, `total_chunks`, a missing
    `chunk_type` (guessed) and an empty `section_path` (from the stored ancestry titles).
    """
    fixed: list[dict[str, Any]] = []
    prev_end = 0
    for row in rows:
        new = dict(row)
        if not _has("offsets", row, text, "", doc):
            span = _locate(text, row["text"], prev_end - len(row["text"]), doc.doc_id,
                           row["chunk_id"])
            if span:
                new["start_char"], new["end_char"] = span
        valid = _has("offsets", new, text, "", doc)
        if valid:
            s, e = new["start_char"], new["end_char"]
            new["line_from"] = 1 + text.count("\n", 0, s)
            new["line_to"] = new["line_from"] + text.count("\n", s, e - 1)
            prev_end = e
        new["total_chunks"] = len(rows)
        if new["chunk_type"] not in CHUNK_TYPES:
            new["chunk_type"] = guess_chunk_type(row["text"])
        if not new["section_path"]:
            meta = json.loads(row.get("metadata") or "{}")
            titles = meta.get("ancestry_titles") or []
            if titles:
                new["section_path"] = " > ".join(str(t) for t in titles)
        fixed.append(new)
    return fixed


def _chunk_updates(rows: list[dict[str, Any]], fixed: list[dict[str, Any]],
                   chunks: list[Chunk], doc_id: str) -> list[dict[str, Any]]:
    """The rows that change (with the context header and embedding text of `chunks`), each
    with its changed fields as (before, after).
    """
    updates: list[dict[str, Any]] = []
    for row, new, chunk in zip(rows, fixed, chunks, strict=True):
        new["context_header"] = chunk.context_header
        new["embedding_text"] = chunk.embedding_text
        changed = {k: (row[k], new[k]) for k in (
            "start_char", "end_char", "line_from", "line_to", "total_chunks", "chunk_type",
            "section_path", "context_header", "embedding_text") if row[k] != new[k]}
        if changed:
            updates.append({"chunk_id": row["chunk_id"], "doc_id": doc_id,
                            "changed": changed, "row": new})
    return updates


class Backfiller:
    """Plans and applies the backfill of one workspace (see the module docstring)."""

    def __init__(
        self,
        catalog: Catalog,
        settings: Settings,
        summarizer: Callable[[], Summarizer | None],
        embedder: Callable[[], CachedEmbedder],
        vectors: Callable[[], VectorStore],
    ) -> None:
        self.catalog = catalog
        self.settings = settings
        self._summarizer = summarizer
        self._embedder = embedder
        self._vectors = vectors

    def _plan_document(
        self, doc: DocumentRecord, dry_run: bool = False
    ) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]], list[str]]:
        """(chunk updates, document updates, rows before, expected embedding texts).

        A dry run never asks a model: a missing model summary is shown as a placeholder.
        """
        text = self.catalog.document_text(doc.doc_id) or ""
        rows = self.catalog.chunks_of(doc.doc_id)
        fixed = _fixed_rows(rows, text, doc)
        # context: header per chunk, summary per document, embedding text per current settings
        chunks = [Chunk.model_construct(
            chunk_id=r["chunk_id"], doc_id=r["doc_id"], chunk_index=r["chunk_index"],
            total_chunks=r["total_chunks"], start_char=r["start_char"], end_char=r["end_char"],
            token_count=r["token_count"], chunk_type=r["chunk_type"], text=r["text"],
            section_path=r["section_path"] or "", embedding_text=r["embedding_text"],
            table_header=json.loads(r.get("metadata") or "{}").get("table_header"),
        ) for r in fixed]
        header = document_header(doc.title, doc.source_id, document_date(dict(doc.metadata)),
                                 doc.lens)
        summary = ""
        summarizer = self._summarizer() if self.settings.contextual_embeddings else None
        if summarizer is not None and len(chunks) > 1:
            summary = doc.context_summary or (
                f"<summary by {summarizer.name}>" if dry_run and summarizer.name != "extractive"
                else summarizer.summarize(text, doc.title)
            )
        apply_context(chunks, header, summary, enabled=summarizer is not None)
        expected = [c.embedding_text for c in chunks]
        updates = _chunk_updates(rows, fixed, chunks, doc.doc_id)
        doc_updates: dict[str, Any] = {}
        if (summary or None) != doc.context_summary and summarizer is not None:
            doc_updates["context_summary"] = summary or None
        doc_updates.update(self._version_updates(doc, fixed, text))
        return updates, doc_updates, rows, expected

    def _version_updates(self, doc: DocumentRecord, fixed: list[dict[str, Any]],
                         text: str) -> dict[str, Any]:
        """The document's ingest signature for the current context settings, and the ingest
        version it reaches when every chunk's offsets slice its text.
        """
        doc_updates: dict[str, Any] = {}
        signature = recorded_signature(doc)
        current = signature_of(self.settings)
        for key in ("contextual_embeddings", "context_model"):
            if current.get(key) is None:
                signature.pop(key, None)
            else:
                signature[key] = current[key]
        if doc.ingest_settings != signature:
            doc_updates["ingest_settings"] = signature
        all_valid = all(_has("offsets", r, text, "", doc) for r in fixed)
        target = reachable_version(doc.ingest_version)
        if target > doc.ingest_version and all_valid:
            doc_updates["ingest_version"] = target
        return doc_updates

    def coverage(self, plans: list[tuple[DocumentRecord, list[dict[str, Any]], str,
                                         list[str], bool]]) -> dict[str, float]:
        """Share of chunks having each field, over (doc, rows, text, expected, has_settings)."""
        counts: Counter[str] = Counter()
        total = 0
        for doc, rows, text, expected, has_settings in plans:
            probe = doc.model_copy(update={"ingest_settings": {} if has_settings else None})
            for row, emb in zip(rows, expected, strict=True):
                total += 1
                for field in FIELDS:
                    counts[field] += _has(field, row, text, emb, probe)
        return {f: round(counts[f] / total, 4) if total else 1.0 for f in FIELDS}

    def run(self, dry_run: bool = False) -> BackfillReport:
        """Plan every indexed document; apply unless `dry_run`."""
        started = time.perf_counter()
        docs = self.catalog.list_documents()
        before, after = [], []
        changes: Counter[str] = Counter()
        planned: list[dict[str, Any]] = []
        upgraded = re_embedded = 0
        chunk_total = 0
        for doc in docs:
            updates, doc_updates, rows, expected = self._plan_document(doc, dry_run)
            text = self.catalog.document_text(doc.doc_id) or ""
            chunk_total += len(rows)
            before.append((doc, rows, text, expected, doc.ingest_settings is not None))
            by_id = {u["chunk_id"]: u["row"] for u in updates}
            after.append((doc, [by_id.get(r["chunk_id"], r) for r in rows], text, expected,
                          doc.ingest_settings is not None or "ingest_settings" in doc_updates))
            for u in updates:
                for key in u["changed"]:
                    changes[key] += 1
                if len(planned) < 50:
                    planned.append({"chunk_id": u["chunk_id"], "doc_id": u["doc_id"],
                                    "fields": sorted(u["changed"])})
            for key in doc_updates:
                changes[f"document.{key}"] += 1
            upgraded += "ingest_version" in doc_updates
            if not dry_run and (updates or doc_updates):
                re_embedded += self._apply(doc, updates, doc_updates)
        cov_after = self.coverage(after)
        return BackfillReport(
            dry_run=dry_run, documents=len(docs), chunks=chunk_total, changes=dict(changes),
            not_derivable={f: round((1 - cov_after[f]) * chunk_total) for f in FIELDS
                           if cov_after[f] < 1.0},
            documents_upgraded=upgraded, re_embedded=re_embedded,
            coverage_before=self.coverage(before), coverage_after=cov_after,
            planned=planned, seconds=round(time.perf_counter() - started, 3),
        )

    def _apply(self, doc: DocumentRecord, updates: list[dict[str, Any]],
               doc_updates: dict[str, Any]) -> int:
        """Vectors first (new embedding texts), then one transaction for the document."""
        from ragbench.ingest.metadata import vector_meta

        embed = [u for u in updates if "embedding_text" in u["changed"]]
        summary = doc_updates.get("context_summary", doc.context_summary)
        if embed:
            vectors = self._embedder().embed([u["row"]["embedding_text"] for u in embed])
            metas = [vector_meta({**u["row"], "context_summary": summary}, doc.file_name)
                     for u in embed]
            self._vectors().upsert([u["chunk_id"] for u in embed], vectors, metas)
        with self.catalog.transaction() as tx:
            for u in updates:
                r = u["row"]
                self.catalog.update_chunk(tx, u["chunk_id"], {
                    **{k: r[k] for k in UPDATABLE_CHUNK_FIELDS if k != "embedding_hash"},
                    "embedding_hash": text_hash(r["embedding_text"])})
            fields = {k: v for k, v in doc_updates.items()
                      if k in ("context_summary", "ingest_settings", "ingest_version")}
            if "ingest_settings" in fields:
                fields["ingest_settings"] = json.dumps(fields["ingest_settings"],
                                                       sort_keys=True)
            if fields:
                self.catalog.update_document(tx, doc.doc_id, fields)
        # Chroma filters on chunk_type (and the other vector_meta fields): a change the catalog
        # got must reach the vectors too, or `--chunk-type` searches return the old answer.
        # After the commit: a kill in between is drift `doctor` finds and repairs.
        retag = [u for u in updates if "embedding_text" not in u["changed"]
                 and META_FIELDS & set(u["changed"])]
        update = getattr(self._vectors(), "update_metadata", None) if retag else None
        if update is not None:
            update([u["chunk_id"] for u in retag],
                   [vector_meta({**u["row"], "context_summary": summary}, doc.file_name)
                    for u in retag])
        return len(embed)
