"""The facade every face (CLI, app, later HTTP) calls: ingest, search, show, stats, doctor...

A workspace directory holds `catalog.sqlite` (the truth), `chroma/` (vectors, derived),
`files/<doc_id>/<name>` (originals for view and download) and `settings.toml`. Heavy parts
(the embedding model, Chroma) load on first use, so `stats` and `show` stay instant.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragbench.answer.answerer import Answerer, ChatResponse, Source
from ragbench.archive.folder import ARCHIVE_DIR, Archive, ArchiveError
from ragbench.config import Settings, load_settings
from ragbench.contradictions.detector import Finding
from ragbench.embeddings.embedders import CachedEmbedder, make_embedder
from ragbench.graph.model import ContextGraph, GraphError
from ragbench.graph.service import GraphService
from ragbench.graph.terms import spec_key_terms
from ragbench.ids import compute_doc_id, file_hash, normalize_source_id
from ragbench.ingest.ingestor import Ingestor, Planned, Progress
from ragbench.answer.llm import LLMError
from ragbench.models import FileResult, IngestReport, RetrievalResult, SearchFilters
from ragbench.retrieval.retriever import MODES, RetrievalError, Retriever
from ragbench.maintenance.status import (
    BackendStatus,
    ConnectionCheck,
    StaleReport,
    check_endpoint,
    embedding_status,
    llm_status,
    stale_report,
)
from ragbench.store.catalog import Catalog
from ragbench.store.schema import CURRENT_INGEST_VERSION
from ragbench.store.vectors import ChromaVectors
from ragbench.ingest.versioning import (
    ReprocessReport,
    StaleDocument,
    find_original,
    find_stale,
    version_table,
)

if TYPE_CHECKING:
    from ragbench.maintenance.backfill import BackfillReport

SEARCH_MODES = MODES

FileProgress = Callable[[str, int, int], None]
logger = logging.getLogger(__name__)
ALL_PAIRS_LIMIT = 2000
"""Up to this many chunks, contradiction search compares every pair."""
"""file_progress(path, done, total) — called after each top-level file."""


class WorkbenchError(ValueError):
    """A request the workbench cannot serve (unknown document, bad mode...)."""


def collect_files(paths: Sequence[str | Path]) -> tuple[list[Path], list[FileResult]]:
    """Expand files and directories (recursively, sorted, hidden entries skipped)."""
    files: list[Path] = []
    missing: list[FileResult] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files += sorted(
                p for p in path.rglob("*")
                if p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        elif path.is_file():
            files.append(path)
        else:
            missing.append(FileResult(path=str(raw), status="failed",
                                      error=f"no such file or directory: {raw}"))
    return files, missing


class Workbench:
    """One workspace: catalog, vectors, embedder and settings."""

    def __init__(self, workspace: str | Path = "data", settings: Settings | None = None) -> None:
        self.workspace = Path(workspace)
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.settings = settings or load_settings(self.workspace)
        self.catalog = Catalog(self.workspace / "catalog.sqlite")
        self.files_dir = self.workspace / "files"
        self.archive = Archive(self.workspace / ARCHIVE_DIR)
        self.ingestor = Ingestor(
            self.catalog, lambda: self.vectors, lambda: self.embedder, self.settings,
            self.files_dir, archive=self.archive,
        )
        self._sweep_files()
        self.archive.sweep(self.catalog.all_doc_ids(), min_age=600)  # crash leftovers only
        self.retriever = Retriever(
            self.catalog, lambda: self.vectors, lambda: self.embedder, self.settings
        )
        self.graph_service = GraphService(
            self.workspace, self.catalog, lambda: self.vectors, self.settings
        )
        self.retriever.graph = self._graph_if_any
        self.answerer = Answerer(self.retriever, self.settings)

    def _stray_file_dirs(self) -> list[str]:
        """Folders under files/ whose document is not in the catalog (a crash leftover)."""
        if not self.files_dir.exists():
            return []
        known = self.catalog.all_doc_ids()
        return sorted(p.name for p in self.files_dir.iterdir() if p.name not in known)

    def _sweep_files(self) -> None:
        for name in self._stray_file_dirs():
            shutil.rmtree(self.files_dir / name, ignore_errors=True)

    @cached_property
    def vectors(self) -> ChromaVectors:
        """The Chroma collection (opened on first use; drift from a crash is repaired then)."""
        store = ChromaVectors(self.workspace / "chroma")
        if store.count() != self.catalog.chunk_count():
            self._sync_vectors(store)
        return store

    @cached_property
    def embedder(self) -> CachedEmbedder:
        """The configured embedding backend behind the catalog's cache."""
        return CachedEmbedder(make_embedder(self.settings), self.catalog)

    # --- ingest ------------------------------------------------------------------------------

    def ingest(
        self,
        paths: Sequence[str | Path],
        lens: str | None = None,
        root: str | Path | None = None,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> IngestReport:
        """Ingest files and folders. `source_id` is each path relative to `root`.

        `root` defaults to the current directory for paths under it, else the file's folder.
        """
        started = time.perf_counter()
        files, results = collect_files(paths)
        own = self.workspace.resolve()  # never ingest the workspace's own database files
        files = [f for f in files if not f.resolve().is_relative_to(own)]
        def load(path: Path) -> tuple[bytes, str, str, str] | FileResult:
            base = Path(root) if root else _default_root(path)
            try:
                data = path.read_bytes()
            except OSError as e:
                return FileResult(path=str(path), status="failed",
                                  error=f"cannot read file: {e.strerror or e}")
            return data, path.name, normalize_source_id(path, base), str(path)

        results += self._ingest_items(
            [load(p) for p in files], lens, progress, file_progress
        )
        return _report(results, started)

    def _ingest_items(
        self,
        items: Sequence[tuple[bytes, str, str, str] | FileResult],
        lens: str | None,
        progress: Progress | None,
        file_progress: FileProgress | None,
        group: int = 32,
    ) -> list[FileResult]:
        """Plan files in groups, embed each group's chunks in one batch, then store each file."""
        results: list[FileResult] = []
        seen: set[tuple[str, str]] = set()
        plans: list[Planned | list[FileResult]] = []
        sources: set[str] = set()
        done: list[str] = []
        total = len(items)

        def flush() -> None:
            self.ingestor.warm([p for p in plans if isinstance(p, Planned)], progress)
            for plan in plans:
                out = plan if isinstance(plan, list) else self.ingestor.finish(plan, progress)
                results.extend(out)
                done.append(out[0].path)
                if progress:
                    progress("index", len(done), total)
                if file_progress:
                    file_progress(out[0].path, len(done), total)
            plans.clear()
            sources.clear()

        for planned, item in enumerate(items, 1):
            if progress:  # stage events: parse (parsed and chunked), embed, index, per file
                progress("parse", planned - 1, total)
            if isinstance(item, FileResult):
                plans.append([item])
                continue
            data, name, source_id, shown = item
            key = (source_id, file_hash(data))
            if key in seen:  # the same file twice in one call
                plans.append([FileResult(path=shown, status="skipped", source_id=source_id,
                                         doc_id=compute_doc_id(*key),
                                         reason="duplicate in this batch")])
                continue
            if source_id in sources or len(plans) >= group:
                flush()  # a new version of a source planned in this group: store that first
            seen.add(key)
            sources.add(source_id)
            plans.append(self.ingestor.plan(data, name, source_id, lens, shown))
        if progress and total:
            progress("parse", total, total)
        flush()
        if any(r.status in ("inserted", "updated", "reprocessed") for r in results):
            self._update_graph(progress)
        return results

    # --- context graph -----------------------------------------------------------------------

    def _update_graph(self, progress: Progress | None = None) -> None:
        """Bring the graph up to the catalog; a failure is logged, never fails the ingest."""
        try:
            self.graph_service.current(progress)
        except Exception:  # the graph is derived data: the next use retries
            logger.exception("context graph update failed")

    def _graph_if_any(self) -> ContextGraph | None:
        return self.graph_service.current() if self.catalog.chunk_count() else None

    def graph(self) -> ContextGraph:
        """The context graph, updated to the catalog (built on first use)."""
        return self.graph_service.current()

    def graph_build(self) -> dict[str, Any]:
        """Rebuild the graph from scratch; returns its stats."""
        return self.graph_service.rebuild().stats()

    def graph_stats(self) -> dict[str, Any]:
        """Nodes, edges, per type, density, components, degree distribution."""
        return self.graph().stats()

    def graph_neighbors(self, chunk_id: str, edge_types: Sequence[str] | None = None,
                        ) -> list[dict[str, Any]]:
        """Direct neighbours of a chunk grouped by edge type (with previews and lenses)."""
        graph = self.graph()
        try:
            found = graph.neighbors(chunk_id, edge_types)
        except GraphError as e:
            raise WorkbenchError(str(e)) from e
        for item in found:
            node = graph.node(item["id"])
            item.update(lens=node["lens"], source_name=node["source_name"],
                        chunk_index=node["chunk_index"], preview=node["content_preview"])
        return found

    def graph_ego(self, chunk_id: str, hops: int = 1, edge_types: Sequence[str] | None = None,
                  limit: int = 50) -> dict[str, Any]:
        """The neighbourhood of a chunk for the graph view (nodes and edges, `limit` nodes)."""
        try:
            return self.graph().ego(chunk_id, hops, edge_types, limit)
        except GraphError as e:
            raise WorkbenchError(str(e)) from e

    def graph_path(self, a: str, b: str, edge_types: Sequence[str] | None = None) -> list[str]:
        """Chunk ids on a shortest path between two chunks (empty when unconnected)."""
        try:
            return self.graph().shortest_path(a, b, edge_types)
        except GraphError as e:
            raise WorkbenchError(str(e)) from e

    def contradictions(
        self, topic: str | None = None, chunk_ids: Sequence[str] | None = None,
        include_spec: bool = False,
    ) -> list[Finding]:
        """Potential contradictions among `chunk_ids` (default: the whole workspace).

        Every pair of chunks is compared up to `ALL_PAIRS_LIMIT` chunks; beyond that only
        pairs the context graph links by similarity, topic or period.
        """
        from ragbench.contradictions import detector as cx

        ids = list(chunk_ids) if chunk_ids is not None else sorted(self.catalog.chunk_ids())
        rows = self.catalog.contradiction_rows(ids)
        pairs = None
        graph = self.graph() if len(rows) > ALL_PAIRS_LIMIT else None
        if len(rows) > ALL_PAIRS_LIMIT and graph is not None:
            wanted = set(rows)
            linking = ["SIMILAR_TO", "TOPIC_OVERLAP", "TEMPORAL_OVERLAP"]
            ids_of = [n["id"] for n in graph.nodes]
            pairs = [(cid, ids_of[j]) for cid in rows if cid in graph
                     for j, _, _ in graph.edges_of(graph.index[cid], linking)
                     if ids_of[j] in wanted and cid < ids_of[j]]
        found = cx.conflicts(list(rows.values()), pairs=pairs, topic=topic)
        if include_spec:  # topics by the spec's own key-term function, as specs/002 does
            terms = {c: spec_key_terms(r["text"]) for c, r in rows.items()}
            spec = cx.spec_findings(list(rows.values()), terms)
            found += [f for f in spec if topic is None or topic.lower() in f.topic]
        return found

    def graph_export(self, path: str | Path, fmt: str = "json") -> Path:
        """Write the graph as node-link JSON or GraphML."""
        if fmt not in ("json", "graphml"):
            raise WorkbenchError(f"unknown graph export format {fmt!r}; use json or graphml")
        return self.graph().export(path, "json" if fmt == "json" else "graphml")

    def ingest_bytes(
        self,
        items: Sequence[tuple[str, bytes]],
        lens: str | None = None,
        prefix: str = "uploads",
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> IngestReport:
        """Ingest in-memory files (uploads); source_id is `prefix/name`, lower-cased."""
        started = time.perf_counter()
        loaded: list[tuple[bytes, str, str, str] | FileResult] = []
        for name, data in items:
            clean = Path(name.replace("\\", "/")).name or "upload"
            loaded.append((data, clean, f"{prefix}/{clean}".strip("/").lower(), clean))
        results = self._ingest_items(loaded, lens, progress, file_progress)
        return _report(results, started)

    def ingest_uploads(
        self,
        items: Sequence[tuple[str, bytes]],
        lens: str | None = None,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> IngestReport:
        """Ingest browser uploads: size limit (max_upload_mb), safe names, duplicates by
        content reported as skipped; the rest of the batch goes through `ingest_bytes`.
        """
        from ragbench.ingest.uploads import screen_uploads

        started = time.perf_counter()
        accepted, screened = screen_uploads(items, self.settings.max_upload_mb, self.catalog)
        report = self.ingest_bytes(accepted, lens=lens, progress=progress,
                                   file_progress=file_progress)
        return _report([*screened, *report.files], started)

    # --- status (app sidebar, dashboard, settings) -------------------------------------------

    def stale_report(self, settings: Settings | None = None) -> StaleReport:
        """Stored documents the current (or the given, not yet saved) settings would
        re-process: older ingest version, other chunk size/overlap or embedding model.
        """
        return stale_report(self.catalog, settings or self.settings)

    def backend_status(self, llm_timeout: float = 1.5) -> dict[str, BackendStatus]:
        """Embedding and LLM backend status without loading the model (LLM: GET /models)."""
        return {"embedding": embedding_status(self.settings, "embedder" in self.__dict__),
                "llm": llm_status(self.settings, llm_timeout)}

    def test_connection(
        self, base_url: str | None = None, api_key: str | None = None, timeout: float = 3.0
    ) -> ConnectionCheck:
        """Probe an OpenAI-compatible endpoint (default: the configured one) with GET /models."""
        url = self.settings.openai_base_url if base_url is None else base_url
        key = self.settings.openai_api_key if api_key is None else api_key
        return check_endpoint(url, key, timeout)

    # --- reading -----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts per lens and chunk type, plus failed files."""
        out = self.catalog.stats()
        out["failed_files"] = len(self.catalog.list_documents(status="failed"))
        out["workspace"] = str(self.workspace)
        return out

    def show(self, doc_id: str) -> dict[str, Any]:
        """A document: metadata, plaintext, chunks with offsets, attachments."""
        record = self.catalog.get_document(doc_id, include_failed=True)
        if record is None:
            raise WorkbenchError(f"no document with id {doc_id!r} (see `ragbench stats`)")
        chunks = self.catalog.chunks_of(doc_id)
        links = {"archive_browse_uri": record.archive_browse_uri,
                 "archive_download_uri": record.archive_download_uri}
        return {
            "document": record.model_dump(),
            "text": self.catalog.document_text(doc_id) or "",
            "chunks": [
                {**{k: v for k, v in c.items() if k not in ("rowid", "embedding_text")}, **links}
                for c in chunks
            ],
            "children": self.catalog.children(doc_id),
        }

    def search(
        self,
        query: str,
        mode: str | None = None,
        top_k: int | None = None,
        lens: str | None = None,
        filters: SearchFilters | None = None,
        fts_level: str | None = None,
    ) -> list[RetrievalResult]:
        """Ranked chunks for `query` in any retrieval mode (see `ragbench.retrieval.retriever`)."""
        if lens:
            filters = (filters or SearchFilters()).model_copy(
                update={"lenses": [*((filters.lenses or []) if filters else []), lens]}
            )
        try:
            return self.retriever.search(query, mode, top_k, filters, fts_level)
        except RetrievalError as e:
            raise WorkbenchError(str(e)) from e

    def ask(
        self,
        question: str,
        mode: str | None = None,
        top_k: int | None = None,
        filters: SearchFilters | None = None,
        llm: str | None = None,
        save: bool = False,
    ) -> ChatResponse:
        """A grounded answer with validated citations, sources and references."""
        if not question.strip():
            raise WorkbenchError("the question is empty")
        try:
            response = self.answerer.ask(question, mode, top_k, filters, llm)
        except RetrievalError as e:
            raise WorkbenchError(str(e)) from e
        except LLMError as e:
            raise WorkbenchError(f"LLM failed and llm_fallback is off: {e}") from e
        if self.settings.answer_contradictions:
            self._add_contradictions(response)
        if save:
            self.save_answer(response)
        return response

    def _add_contradictions(self, response: ChatResponse) -> None:
        """Potential contradictions among the answer's sources, as a synthesized source."""
        ids = [s.id for s in response.sources if s.id]
        findings = self.contradictions(chunk_ids=ids) if len(ids) > 1 else []
        if not findings:
            return
        response.contradictions = [f.model_dump() for f in findings]
        lines = []
        for f in findings:
            sides = " vs ".join(f"{c['lens']}: \"{(c.get('span') or '')[:120]}\""
                                for c in f.chunks[:3])
            lines.append(f"- [{f.type}] {f.topic}: {sides}")
        response.sources.append(Source(
            label="synthesized", title="Potential contradictions",
            sourceName="Potential contradictions", chunkText="\n".join(lines)))

    def save_answer(self, response: ChatResponse) -> str:
        """Store an answer (question, text, sources with their passages, references)."""
        if response.answer_id is None:
            key = f"{response.question}\n{time.time_ns()}"
            response.answer_id = hashlib.sha256(key.encode()).hexdigest()[:12]
        self.catalog.save_answer(
            response.answer_id, response.question, response.model_dump_json(),
            json.dumps(self.settings.model_dump(exclude={"openai_api_key"})),
        )
        return response.answer_id

    def regenerate_answer(self, answer_id: str, llm: str | None = None) -> ChatResponse:
        """Answer a saved question again and replace the saved answer and its references."""
        row = self.catalog.get_answer(answer_id)
        if row is None:
            raise WorkbenchError(f"no saved answer {answer_id!r} (see `ragbench answers`)")
        old = ChatResponse.model_validate_json(row["response"])
        mode = old.mode if old.mode in SEARCH_MODES else None
        response = self.ask(old.question, mode=mode, llm=llm)
        response.answer_id = answer_id
        self.save_answer(response)
        return response

    def saved_answers(self, limit: int = 100) -> list[ChatResponse]:
        """Saved answers, newest first."""
        return [ChatResponse.model_validate_json(r["response"])
                for r in self.catalog.list_answers(limit)]

    def resolve_citation(self, chunk_id: str) -> dict[str, Any]:
        """A cited chunk: live from the catalog, else the passage archived with a saved answer.

        Re-ingesting a changed document replaces its chunks; saved answers keep resolving
        because each stores its sources' passages (text, document, offsets) when saved.
        """
        rows = self.catalog.get_chunks([chunk_id])
        if chunk_id in rows:
            row = rows[chunk_id]
            return {"status": "live", "chunk_id": chunk_id, "doc_id": row["doc_id"],
                    "text": row["text"], "start_char": row["start_char"],
                    "end_char": row["end_char"], "source_id": row["source_id"],
                    "archive_browse_uri": row["archive_browse_uri"],
                    "archive_download_uri": row["archive_download_uri"]}
        for answer in self.saved_answers(limit=10_000):
            for source in answer.sources:
                if source.id == chunk_id:
                    return {"status": "archived", "chunk_id": chunk_id,
                            "doc_id": source.documentId, "text": source.chunkText,
                            "start_char": source.startChar, "end_char": source.endChar,
                            "source_id": source.sourceId, "answer_id": answer.answer_id,
                            "archive_browse_uri": source.archiveBrowseUri,
                            "archive_download_uri": source.archiveDownloadUri}
        raise WorkbenchError(f"unknown chunk id {chunk_id!r}")

    # --- maintenance -------------------------------------------------------------------------

    def delete(self, doc_id: str) -> int:
        """Delete a document and its attachments; returns the number of chunks removed."""
        if self.catalog.get_document(doc_id, include_failed=True) is None:
            raise WorkbenchError(f"no document with id {doc_id!r}")
        doc_ids = [doc_id, *self.catalog.children(doc_id)]
        record = self.catalog.get_document(doc_id, include_failed=True)
        with self.catalog.transaction() as tx:
            removed = self.catalog.delete_documents(tx, doc_ids)
        self.vectors.delete(removed)
        for d in doc_ids:
            shutil.rmtree(self.files_dir / d, ignore_errors=True)
        self.archive.remove([doc_id])
        if record is not None and record.root_doc_id:  # an attachment: redo its thread's entry
            self.archive_build(roots=[record.root_doc_id])
        self._update_graph()
        return len(removed)

    def clear(self) -> dict[str, int]:
        """Remove every document, chunk, vector and stored original (keeps the cache)."""
        stats = self.catalog.stats()
        self.catalog.clear()
        self.vectors.reset()
        shutil.rmtree(self.files_dir, ignore_errors=True)
        self.archive.clear()
        self.graph_service.clear()
        return {"documents": stats["documents"], "chunks": stats["chunks"]}

    # --- archive (specs/004 Phase 2; see ragbench.archive.folder) -----------------------------------

    def archive_check(self) -> dict[str, Any]:
        """Archive links whose file is missing, documents without an entry, broken view links."""
        from ragbench.archive.ops import check

        return check(self.catalog, self.archive)

    def archive_build(
        self, force: bool = False, roots: list[str] | None = None
    ) -> dict[str, Any]:
        """Write archive entries for stored documents without a complete one (all: `force`),
        from the originals under files/; `roots` limits it to these threads.
        """
        from ragbench.archive.ops import build

        return build(self.catalog, self.archive, self.files_dir, force, roots)

    def archive_tree(self) -> list[dict[str, Any]]:
        """Archived documents as a forest (email threads with attachments as children)."""
        from ragbench.archive.ops import tree

        return tree(self.catalog)

    def archive_text(self, uri: str) -> str:
        """A Markdown view by its `archive_browse_uri` (confined to the archive)."""
        try:
            return self.archive.read_text(uri)
        except ArchiveError as e:
            raise WorkbenchError(str(e)) from e

    def archive_bytes(self, uri: str) -> bytes:
        """An archived original by its `archive_download_uri` (confined to the archive)."""
        try:
            return self.archive.read_bytes(uri)
        except ArchiveError as e:
            raise WorkbenchError(str(e)) from e

    def doctor(self, repair: bool = True) -> dict[str, Any]:
        """Check catalog, FTS, Chroma, stored files and the archive agree; repair drift when
        `repair` (the archive: missing entries rebuilt, see `archive_build`).
        """
        store = ChromaVectors(self.workspace / "chroma")
        catalog_ids = self.catalog.chunk_ids()
        vector_ids = store.ids()
        orphans = sorted(vector_ids - catalog_ids)
        missing = sorted(catalog_ids - vector_ids)
        fts_ok = self.catalog.fts_integrity()
        stray_files = self._stray_file_dirs()
        report: dict[str, Any] = {
            "catalog_chunks": len(catalog_ids),
            "vectors": len(vector_ids),
            "orphan_vectors": len(orphans),
            "missing_vectors": len(missing),
            "fts_ok": fts_ok,
            "stray_file_dirs": len(stray_files),
        }
        archive = self.archive_check()
        report["archive_problems"] = sum(
            len(archive[k]) for k in ("missing", "not_built", "broken_links"))
        report["consistent"] = not (orphans or missing or stray_files) and fts_ok \
            and archive["ok"]
        if repair and not report["consistent"]:
            self._sync_vectors(store, orphans, missing)
            if not fts_ok:
                self.catalog.fts_rebuild()
            self._sweep_files()
            if not archive["ok"]:
                self.archive_build()
            report["repaired"] = True
            report["consistent_after"] = (
                store.ids() == self.catalog.chunk_ids() and self.catalog.fts_integrity()
                and self.archive_check()["ok"]
            )
        return report

    def _sync_vectors(
        self, store: ChromaVectors, orphans: list[str] | None = None,
        missing: list[str] | None = None,
    ) -> None:
        """Make Chroma hold exactly the catalog's chunk ids (vectors come from the cache)."""
        if orphans is None or missing is None:
            catalog_ids, vector_ids = self.catalog.chunk_ids(), store.ids()
            orphans = sorted(vector_ids - catalog_ids)
            missing = sorted(catalog_ids - vector_ids)
        if orphans:
            store.delete(orphans)
        if missing:
            from ragbench.ingest.ingestor import vector_meta

            rows = self.catalog.get_chunks(missing)
            texts = [rows[c]["embedding_text"] for c in missing if c in rows]
            ids = [c for c in missing if c in rows]
            vectors = self.embedder.embed(texts)
            metas = [
                vector_meta(rows[c]["doc_id"], rows[c]["lens"], rows[c]["chunk_index"],
                            rows[c]["chunk_type"], rows[c]["page_number"],
                            rows[c]["embedding_text"])
                for c in ids
            ]
            store.upsert(ids, vectors, metas)


    # --- versions: stale documents, re-processing, backfill (ragbench.ingest.versioning) -------------

    def stale(
        self, target_version: int | None = None, check_originals: bool = True
    ) -> list[StaleDocument]:
        """Top-level documents made by an older ingest version or other ingest settings.

        Each entry has the reasons and its chunk count and, with `check_originals` (reads and
        hashes each original), where its original is and whether it can be re-processed
        (`reprocessable`, else `problem`). With `target_version` only documents below that
        version count. No model is loaded.
        """
        if not check_originals:
            return find_stale(self.catalog, self.settings, target_version)
        return find_stale(self.catalog, self.settings, target_version, self.workspace,
                          self.files_dir)

    def ingest_versions(self) -> list[dict[str, Any]]:
        """The ingest versions table: version, description, breaking flag, documents, current."""
        return version_table(self.catalog)

    def reprocess(
        self,
        target_version: int | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
        file_progress: FileProgress | None = None,
    ) -> ReprocessReport:
        """Re-run parse, chunk, context and embed for every stale document from its original.

        Each document (with its attachments) is stored in its own transaction, so an
        interrupted run leaves finished documents current and a second run does the rest.
        Unchanged embedding texts come from the embedding cache. Chunk ids are content
        addressed (doc id + offsets), so unchanged chunks keep their ids and citations.
        """
        started = time.perf_counter()
        if target_version is not None and not 1 <= target_version <= CURRENT_INGEST_VERSION:
            raise WorkbenchError(f"target version {target_version} is not between 1 and "
                                 f"the current ingest version {CURRENT_INGEST_VERSION}")
        stale = self.stale(target_version)
        report = ReprocessReport(dry_run=dry_run, stale=stale,
                                 target_version=target_version or CURRENT_INGEST_VERSION,
                                 not_reprocessable=[s for s in stale if not s.reprocessable])
        todo = [s for s in stale if s.reprocessable]
        if not dry_run and todo:
            items: list[tuple[bytes, str, str, str] | FileResult] = []
            for item in todo:
                record = self.catalog.get_document(item.doc_id)
                data = find_original(record, self.workspace, self.files_dir)[0] if record else None
                if data is None:  # vanished since the listing
                    items.append(FileResult(path=item.source_id, status="failed",
                                            doc_id=item.doc_id, source_id=item.source_id,
                                            error="original no longer available"))
                    continue
                items.append((data, item.file_name, item.source_id, item.source_id))
            misses = self.embedder.misses
            report.results = self._ingest_items(items, None, progress, file_progress)
            report.embedded = self.embedder.misses - misses
            stored = sum(r.chunks for r in report.results if r.status == "reprocessed")
            report.cached = max(stored - report.embedded, 0)
        report.totals = dict(Counter(r.status for r in report.results))
        report.totals["stale"] = len(stale)
        report.totals["not_reprocessable"] = len(report.not_reprocessable)
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    def backfill(self, dry_run: bool = False) -> BackfillReport:
        """Fill chunk metadata derivable without re-parsing (see `ragbench.maintenance.backfill`)."""
        from ragbench.maintenance.backfill import Backfiller

        return Backfiller(self).run(dry_run=dry_run)

def _default_root(path: Path) -> Path:
    cwd = Path.cwd().resolve()
    resolved = path.resolve()
    return cwd if resolved.is_relative_to(cwd) else resolved.parent


def _report(results: list[FileResult], started: float) -> IngestReport:
    totals = {s: 0 for s in ("inserted", "updated", "skipped", "reprocessed", "failed")}
    for r in results:
        totals[r.status] += 1
    totals["files"] = len(results)
    totals["chunks"] = sum(r.chunks for r in results if r.status != "skipped")
    seconds = round(time.perf_counter() - started, 3)
    return IngestReport(files=results, totals=totals, seconds=seconds)
