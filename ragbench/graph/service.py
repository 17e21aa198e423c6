"""The workspace's context graph kept in step with the catalog.

`GraphService.current()` is the one entry point: it loads `<workspace>/graph/`, compares the
graph's chunks with the catalog's indexed chunks and applies the difference incrementally
(new chunks added, deleted ones removed), or builds from scratch when there is no graph yet,
the graph settings changed, the saved files are torn (see `ContextGraph.load`) or the changes
since the last full build exceed `REBUILD_FRACTION` of the corpus (`graph_mode = "spec"`, the
specs/002 construction, is rebuilt from every chunk after each change, as that spec says).
Ingest, delete, reprocess and clear therefore need no graph code of their own: whoever asks
next gets a graph that matches the catalog. Vectors come from the vector store, so nothing is
re-embedded. On PostgreSQL each save is also stored in the database (`PgGraphSaves`) and
every host reads that save, `graph/` being its local copy: one graph for all hosts, built by
whichever host first finds it behind the catalog (docs/team.md).
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ragbench.config import Settings
from ragbench.fileio import write_atomic
from ragbench.graph.base import GRAPH_DIR
from ragbench.graph.model import ContextGraph, GraphError, GraphNode, GraphParams
from ragbench.models import GraphUpdate
from ragbench.store.catalog import Catalog
from ragbench.store.pggraph import GraphSave, PgGraphSaves

logger = logging.getLogger(__name__)

REBUILD_FRACTION = 0.1
"""An update builds from scratch once the chunks added or removed since the last full build
exceed this share of the corpus. Incremental updates rank a new chunk's key terms against the
corpus as it is then and never re-rank older chunks, so a graph grown in steps drifted from a
rebuilt one (176 vs 175 edges after `load-samples`); bounded this way, the drift is at most
this share, and a bulk load (each lens of the demo) ends with the graph `graph build` makes.
Updates below it stay incremental (one document into a large corpus stays cheap)."""

Progress = Callable[[str, int, int], None]

def params_from(settings: Settings) -> GraphParams:
    """Graph construction parameters from the settings."""
    return GraphParams(
        mode=settings.graph_mode,
        similarity_threshold=settings.graph_similarity_threshold,
        min_shared_terms=settings.graph_min_shared_terms,
        degree_cap=settings.graph_degree_cap,
        same_lens_max_group=settings.graph_same_lens_max_group,
    )


class GraphService:
    """Loads, updates and saves one workspace's graph; caches it while the catalog agrees."""

    def __init__(self, workspace: Path, catalog: Catalog, vectors: Callable[[], Any],
                 settings: Settings, shared: PgGraphSaves | None = None) -> None:
        self.directory = workspace / GRAPH_DIR
        self.catalog = catalog
        self.shared = shared
        """PostgreSQL: the one graph every host reads (the local files are its cache)."""
        self._vectors = vectors
        self.params = params_from(settings)
        self._graph: ContextGraph | None = None
        self.last_update: dict[str, Any] = {}
        self.updates = 0
        """Saves made by this service (a caller compares it before and after a change)."""
        self._lock = threading.RLock()  # the app shares one Workbench between sessions
        self._synced = ""  # catalog fingerprint at the last comparison with the graph
        self._building_from = ""  # catalog fingerprint the graph being saved was made from

    def current(self, progress: Progress | None = None) -> ContextGraph:
        """The graph, updated to the catalog's chunks (built on first use)."""
        with self._lock:
            return self._current(progress)

    def _current(self, progress: Progress | None, fresh: bool = False) -> ContextGraph:
        graph = self._graph
        shared_id = self.shared.save_id() if self.shared is not None else None
        if graph is not None and self.shared is not None and graph.save_id != shared_id:
            graph = None  # another host saved (or cleared) the graph since: read its save
        fingerprint = self.catalog.fingerprint()
        if graph is not None and fingerprint == self._synced:
            return graph  # the catalog has not changed since the last comparison: no id scan
        if graph is None and not fresh:
            graph = self._load(shared_id)
        self._building_from = fingerprint
        stored = self.catalog.chunk_ids()
        started = time.perf_counter()
        if graph is None:
            graph = ContextGraph(self.params).build(*self._nodes(sorted(stored)))
            self._save(graph, {"action": "build", "added": len(graph), "removed": 0,
                               **graph.last_change}, started)
        else:
            have = set(graph.index)
            added, removed = sorted(stored - have), sorted(have - stored)
            changed = graph.changed_since_build + len(added) + len(removed)
            if (added or removed) and (self.params.mode == "spec"
                                       or changed > REBUILD_FRACTION * max(len(stored), 1)):
                # key terms were ranked against a corpus that has since changed a lot: a full
                # build re-ranks them all, so the graph is the one `graph build` makes (the
                # spec's construction is always rebuilt from every chunk, as specs/002 says)
                before = graph.snapshot()
                graph = ContextGraph(self.params).build(*self._nodes(sorted(stored)))
                edges = graph.inherit(before)  # edges it had keep their created_at
                self._save(graph, {"action": "build", "added": len(added),
                                   "removed": len(removed), **edges}, started)
            elif added or removed:
                if progress:
                    progress("graph", 0, 1)
                before = graph.snapshot()
                graph.remove(removed)
                nodes, emb = self._nodes(added)
                graph.add(nodes, emb)
                edges = graph.inherit(before)  # counted once over both steps
                graph.changed_since_build = changed
                self._save(graph, {"action": "update", "added": len(added),
                                   "removed": len(removed), **edges}, started)
        if progress:
            progress("graph", 1, 1)
        self._graph = graph
        self._synced = fingerprint
        return graph

    def rebuild(self) -> ContextGraph:
        """Build from scratch (fresh key-term frequencies), replacing the saved graph (on
        PostgreSQL the one every host reads, when the build is saved).
        """
        with self._lock:
            self._graph = None
            self._synced = ""
            shutil.rmtree(self.directory, ignore_errors=True)
            return self._current(None, fresh=True)

    def clear(self) -> None:
        """Forget the graph (used when the workspace is cleared; on PostgreSQL for every host)."""
        with self._lock:
            self._graph = None
            self._synced = ""
            shutil.rmtree(self.directory, ignore_errors=True)
            if self.shared is not None:
                self.shared.delete()

    def _load(self, shared_id: str | None) -> ContextGraph | None:
        """The saved graph if it can be used (None: build one).

        Embedded: the files under `graph/`. PostgreSQL: the database's save (`shared_id`),
        read from the local files when they hold that save, else fetched and written there
        first; with no save in the database nothing local is trusted (another host cleared it).
        """
        if self.shared is not None and shared_id is None:
            return None
        try:
            graph: ContextGraph | None = None
            if (self.directory / "nodes.json").exists():
                graph = ContextGraph.load(self.directory)
            if self.shared is not None and (graph is None or graph.save_id != shared_id):
                graph = self._fetch()
            if graph is None:
                return None
        except GraphError as e:
            logger.warning("saved context graph not used, rebuilding: %s", e)
            return None
        return graph if graph.params == self.params else None  # settings changed: rebuild

    def _fetch(self) -> ContextGraph | None:
        """The database's graph, written to the local files (its cache) and loaded."""
        assert self.shared is not None
        save = self.shared.fetch()
        if save is None:
            return None
        self.directory.mkdir(parents=True, exist_ok=True)
        write_atomic(self.directory / "arrays.npz", save.arrays, mode=0o600)
        write_atomic(self.directory / "nodes.json", save.nodes, mode=0o600)
        return ContextGraph.load(self.directory)

    def _save(self, graph: ContextGraph, what: dict[str, Any], started: float) -> None:
        graph.save(self.directory)
        if self.shared is not None and graph.save_id is not None:
            self.shared.put(GraphSave(
                save_id=graph.save_id, catalog_state=self._building_from,
                arrays=(self.directory / "arrays.npz").read_bytes(),
                nodes=(self.directory / "nodes.json").read_bytes()))
        what["edges"] = graph.edge_count()
        self.updates += 1
        what["seconds"] = round(time.perf_counter() - started, 3)
        self.last_update = what
        (self.directory / "last_update.json").write_text(json.dumps(what), encoding="utf-8")

    def _nodes(self, chunk_ids: list[str]) -> tuple[list[GraphNode], np.ndarray]:
        """Graph inputs for chunks: attributes from the catalog, vectors from Chroma."""
        rows = self.catalog.graph_rows(chunk_ids)
        ids = [c for c in chunk_ids if c in rows]
        vectors = self._vectors().get_vectors(ids) if ids else np.zeros((0, 1), np.float32)
        nodes = []
        for cid in ids:
            r = rows[cid]
            meta = json.loads(r["metadata"] or "{}")
            nodes.append(GraphNode(
                id=cid, lens=r["lens"], source_path=r["source_id"] or r["file_name"],
                group=r["doc_id"], chunk_index=r["chunk_index"], total_chunks=r["total_chunks"],
                token_count=r["token_count"], text=r["text"], created_at=r["created_at"],
                doc_date=meta.get("date") if isinstance(meta.get("date"), str) else None,
            ))
        return nodes, vectors


def graph_update(last_update: dict[str, Any]) -> GraphUpdate:
    """`GraphService.last_update` as the `GraphUpdate` of an ingest report."""
    return GraphUpdate(action=last_update["action"], relationships=last_update["edges"],
                       added=last_update.get("edges_added", 0),
                       removed=last_update.get("edges_removed", 0))


def graph_dir(workspace: str | Path) -> Path:
    """Where a workspace keeps its graph."""
    return Path(workspace) / GRAPH_DIR
