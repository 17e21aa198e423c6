"""Chroma vector index keyed by chunk id (derived from the catalog, rebuildable from it).

Collections are created with `embedding_function=None` (Chroma's default function downloads a
model) and cosine space; vectors are always passed explicitly.

HNSW is tuned for recall, not for the last millisecond: with Chroma's default `ef_search` the
approximate search missed part of the exact top 100 and rankings could differ between
processes, so `EF_SEARCH` is raised until the search matches exact search on SciFact
(measurement: docs/benchmarks.md, "Vector index"); collections made before are raised to it
when opened.

Metadata is flat JSON-safe scalars only (None values are dropped); everything else lives in
SQLite.

Several processes share one `chroma/` (the app or `ragbench serve` open while the CLI ingests).
A Chroma client keeps its HNSW index in memory and never reloads it, so a process kept
answering from the index it loaded and never returned another process's new vectors (and a
write from that stale index could drop them). Every write therefore replaces the token in
`chroma/GENERATION_FILE` (after the write), and before each read or write a `ChromaVectors`
compares the token with the one it last saw and, when it differs, reopens its client
(`refresh`). Checking costs one small file read (~20 µs); a reopen about 0.1 s plus the
reload of the index on the next query, paid only after another process wrote.
"""

from __future__ import annotations

import errno
import logging
import shutil
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ragbench.errors import DamagedIndexError, StoreError
from ragbench.fileio import write_atomic
from ragbench.store.catalog import looks_damaged

if TYPE_CHECKING:  # chromadb itself loads on first use (it takes seconds to import)
    from chromadb.api.collection_configuration import CreateHNSWConfiguration

logger = logging.getLogger(__name__)

COLLECTION = "chunks"
EF_SEARCH = 1000
"""HNSW candidate list size at query time (why: the module docstring)."""
GENERATION_FILE = ".ragbench-generation"
"""A token replaced after every write, so other processes know to reopen (module docstring)."""
HNSW_CONFIG: CreateHNSWConfiguration = {
    "space": "cosine", "ef_construction": 200, "ef_search": EF_SEARCH}


class VectorStore(Protocol):
    """What the workbench needs from a vector index."""

    def upsert(
        self, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[Mapping[str, Any]]
    ) -> None:
        """Insert or replace vectors."""
        ...

    def delete(self, ids: Sequence[str]) -> None:
        """Remove vectors (missing ids are ignored)."""
        ...

    def query(
        self, vector: np.ndarray, k: int, where: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the `k` nearest vectors."""
        ...

    def ids(self) -> set[str]:
        """Every stored id."""
        ...

    def count(self) -> int:
        """Number of stored vectors."""
        ...

    def get_vectors(self, ids: Sequence[str]) -> np.ndarray:
        """The stored vectors of `ids`, in that order (KeyError naming a missing id)."""
        ...

    def reset(self) -> None:
        """Drop every vector (the collection stays usable)."""
        ...


def flat_metadata(meta: Mapping[str, Any]) -> dict[str, str | int | float | bool]:
    """Keep JSON-safe scalars, drop None, stringify anything else."""
    out: dict[str, str | int | float | bool] = {}
    for key, value in meta.items():
        if value is None:
            continue
        if isinstance(value, str | int | float | bool):
            out[key] = value
        else:
            out[key] = str(value)
    return out


class ChromaVectors:
    """A Chroma `PersistentClient` collection on disk."""

    def __init__(self, path: str | Path, collection: str = COLLECTION) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.name = collection
        self.reopens = 0
        self.client: Any = None
        self.collection: Any = None
        self._seen = self._generation()
        self.batch = 1
        self._connect(fresh=False)

    def _connect(self, fresh: bool) -> None:
        """Open the client and collection; `fresh` drops Chroma's cached system for the path.

        Chroma caches one system per path and process (`SharedSystemClient`), so a new
        `PersistentClient` alone would return the stale index; only this path's entry is
        dropped (clients of other paths keep theirs).
        """
        import chromadb
        from chromadb.api.shared_system_client import SharedSystemClient
        from chromadb.config import Settings as ChromaSettings

        if fresh:
            ident = getattr(self.client, "_identifier", str(self.path))
            SharedSystemClient._identifier_to_system.pop(ident, None)
            SharedSystemClient._identifier_to_refcount.pop(ident, None)
        self.client = chromadb.PersistentClient(
            path=str(self.path), settings=ChromaSettings(anonymized_telemetry=False)
        )
        self.collection = self._open(self.name)
        self.batch = max(1, min(self.client.get_max_batch_size(), 2000))

    def _generation(self) -> str:
        try:
            return (self.path / GENERATION_FILE).read_text(encoding="utf-8")
        except OSError:
            return ""

    def refresh(self) -> bool:
        """Reopen when another process wrote since this one last looked; True if reopened."""
        current = self._generation()
        if current == self._seen:
            return False
        self._connect(fresh=True)
        self._seen = current
        self.reopens += 1
        logger.debug("vector store %s changed in another process: reopened", self.path)
        return True

    def _wrote(self) -> None:
        """Replace the generation token (atomically) so other processes reopen."""
        token = uuid.uuid4().hex
        try:
            write_atomic(self.path / GENERATION_FILE, token)
        except OSError:  # the vectors are written; other processes see them after a restart
            logger.warning("could not update %s", self.path / GENERATION_FILE, exc_info=True)
            return
        self._seen = token

    def upsert(
        self, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[Mapping[str, Any]]
    ) -> None:
        """Insert or replace vectors in batches Chroma accepts."""
        self.refresh()
        try:
            for i in range(0, len(ids), self.batch):
                self.collection.upsert(
                    ids=list(ids[i : i + self.batch]),
                    embeddings=np.asarray(vectors[i : i + self.batch], dtype=np.float32),
                    metadatas=[flat_metadata(m) for m in metadatas[i : i + self.batch]],
                )
        except Exception as e:
            raise self._write_error("store vectors in", e) from e
        finally:
            self._wrote()

    def _write_error(self, action: str, e: Exception) -> StoreError:
        """One clear error for a failed Chroma write (a full disk said as such).

        Chroma raises its own and SQLite's errors with a traceback's worth of context; the
        caller (one document's store step) needs a line it can report while the batch goes on.
        Vectors a failed write left behind belong to no catalog row and are removed by the
        drift repair the next time the workspace opens.
        """
        if isinstance(e, StoreError):
            return e
        text = str(e) or type(e).__name__
        full = (isinstance(e, OSError) and e.errno == errno.ENOSPC) or any(
            s in text.lower() for s in ("disk is full", "no space left"))
        return StoreError(f"could not {action} the vector store at {self.path}: "
                          + ("the disk is full" if full else text))

    def update_metadata(self, ids: Sequence[str], metadatas: Sequence[Mapping[str, Any]]) -> None:
        """Replace the metadata of stored vectors (the vectors themselves stay)."""
        self.refresh()
        try:
            for i in range(0, len(ids), self.batch):
                self.collection.update(
                    ids=list(ids[i : i + self.batch]),
                    metadatas=[flat_metadata(m) for m in metadatas[i : i + self.batch]],
                )
        except Exception as e:
            raise self._write_error("update metadata in", e) from e
        finally:
            self._wrote()

    def get_metadata(self, ids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """Stored metadata by id (every vector when `ids` is None)."""
        self.refresh()
        out: dict[str, dict[str, Any]] = {}
        if ids is None:
            offset = 0
            while True:
                page = self.collection.get(include=["metadatas"], limit=self.batch,
                                           offset=offset)
                out.update(zip(page["ids"], (dict(m or {}) for m in page["metadatas"] or []),
                               strict=True))
                if len(page["ids"]) < self.batch:
                    return out
                offset += self.batch
        for i in range(0, len(ids), self.batch):
            page = self.collection.get(ids=list(ids[i : i + self.batch]), include=["metadatas"])
            out.update(zip(page["ids"], (dict(m or {}) for m in page["metadatas"] or []),
                           strict=True))
        return out

    def delete(self, ids: Sequence[str]) -> None:
        """Remove vectors by id."""
        if not ids:
            return
        self.refresh()
        try:
            for i in range(0, len(ids), self.batch):
                self.collection.delete(ids=list(ids[i : i + self.batch]))
        except Exception as e:
            raise self._write_error("delete vectors from", e) from e
        finally:
            self._wrote()

    def query(
        self, vector: np.ndarray, k: int, where: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """Nearest ids with cosine similarity (1 - cosine distance)."""
        self.refresh()
        total = self.count()
        if total == 0:
            return []
        result = self.collection.query(
            query_embeddings=[np.asarray(vector, dtype=np.float32).tolist()],
            n_results=min(k, total),
            where=dict(where) if where else None,
            include=["distances"],
        )
        ids = result["ids"][0]
        distances = (result["distances"] or [[]])[0]
        return [(i, 1.0 - float(d)) for i, d in zip(ids, distances, strict=True)]

    def ids(self) -> set[str]:
        """Every id in the collection."""
        self.refresh()
        out: set[str] = set()
        offset = 0
        while True:
            page = self.collection.get(include=[], limit=self.batch, offset=offset)["ids"]
            out.update(page)
            if len(page) < self.batch:
                return out
            offset += self.batch

    def count(self) -> int:
        """Number of vectors."""
        self.refresh()
        return int(self.collection.count())

    def get_vectors(self, ids: Sequence[str]) -> np.ndarray:
        """The stored vectors of `ids`, in that order (KeyError naming a missing id)."""
        self.refresh()
        found: dict[str, np.ndarray] = {}
        for i in range(0, len(ids), self.batch):
            page = self.collection.get(ids=list(ids[i : i + self.batch]), include=["embeddings"])
            found.update(zip(page["ids"], np.asarray(page["embeddings"], np.float32), strict=True))
        missing = [i for i in ids if i not in found]
        if missing:
            raise KeyError(f"no vector stored for chunk {missing[0]} ({len(missing)} missing)")
        return np.stack([found[i] for i in ids]) if ids else np.zeros((0, 0), np.float32)

    def reset(self) -> None:
        """Drop and recreate the collection."""
        self.refresh()
        try:
            self.client.delete_collection(self.name)
            self.collection = self._open(self.name)
        finally:
            self._wrote()

    def _open(self, name: str) -> Any:
        """Get or create the collection with `HNSW_CONFIG`, raising an older `ef_search`."""
        collection = self.client.get_or_create_collection(
            name, embedding_function=None, configuration={"hnsw": HNSW_CONFIG.copy()}
        )
        hnsw = (collection.configuration_json or {}).get("hnsw") or {}
        if int(hnsw.get("ef_search") or 0) < EF_SEARCH:
            try:
                collection.modify(configuration={"hnsw": {"ef_search": EF_SEARCH}})
            except Exception:  # a read-only workspace still answers, with Chroma's default
                logger.warning("could not raise ef_search of collection %s", name, exc_info=True)
        return collection


def open_vectors(path: Path) -> ChromaVectors:
    """The Chroma store at `path`; a damaged one (a truncated `chroma.sqlite3`) raises
    `DamagedIndexError` naming it, since it is derived data that `ragbench doctor` rebuilds.
    """
    try:
        return ChromaVectors(path)
    except Exception as e:
        forget_client(path)  # Chroma caches the half-started client: the next open retries
        if not looks_damaged(e):
            raise
        raise DamagedIndexError(
            f"the vector index {path / 'chroma.sqlite3'} is damaged ({e}); it is derived from "
            "the catalog: run `ragbench doctor` to rebuild it") from e


def remove_vectors(path: Path) -> None:
    """Delete the Chroma store at `path` (the next `ChromaVectors(path)` starts empty)."""
    forget_client(path)
    shutil.rmtree(path, ignore_errors=True)


def forget_client(path: Path) -> None:
    """Drop this process's cached Chroma system of `path` (Chroma keeps one per path)."""
    from chromadb.api.shared_system_client import SharedSystemClient

    for ident in {str(path), str(path.resolve())}:
        SharedSystemClient._identifier_to_system.pop(ident, None)
        SharedSystemClient._identifier_to_refcount.pop(ident, None)
