"""SQLite catalog: documents, chunks, FTS5, ingest versions and the embedding cache.

One connection per thread (WAL mode, so readers never block the writer). Every query binds its
parameters; FTS5 queries are built from quoted terms only. A document and all its chunks are
written in one transaction, which is the moment it becomes visible (see
`ragbench.ingest.ingestor` for
the order of catalog and Chroma writes). Files that failed are kept as `failed` rows with their
error and no chunks, so the user can see what went wrong; queries only read `indexed` rows.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ragbench.errors import StoreError
from ragbench.ids import text_hash
from ragbench.lexical import INDEX_WORD, STOPWORDS, index_text, query_words, stem
from ragbench.models import Chunk, DocumentRecord, SearchFilters
from ragbench.store.schema import INGEST_VERSIONS, fill_fts_text, migrate

_CHUNK_FIELDS = (
    "chunk_id", "doc_id", "chunk_index", "total_chunks", "start_char", "end_char", "token_count",
    "chunk_type", "section_path", "lens", "page_number", "line_from", "line_to", "text",
    "embedding_text", "embedding_hash", "metadata", "context_header",
)
"""The chunk columns callers read; `fts_text` (the index's copy of `text`, `index_text`) is
written with them and read by the full-text index only."""
_CHUNK_COLUMNS = ", ".join((*_CHUNK_FIELDS, "fts_text"))
_CHUNK_READ = ", ".join(f"c.{f}" for f in ("rowid", *_CHUNK_FIELDS))
CHUNK_META_FIELDS = (
    "ancestry_titles", "page_end", "slide_number", "sheet_name", "row_number", "column_number",
    "paragraph_number", "list_style", "code_language", "table_header", "start_timestamp_ms",
    "end_timestamp_ms", "bbox_quad",
)


def _filter_sql(
    filters: SearchFilters | None, lens: str | None, alias: str = "c"
) -> tuple[str, list[Any]]:
    """An `AND ...` clause over chunks `c` (or documents, `alias="d"`) and documents `d`.

    lens and doc_id live on both tables; chunk_type only on chunks (callers of the
    document-level search leave it out).
    """
    columns = {"lens": f"{alias}.lens", "chunk_type": "c.chunk_type",
               "doc_id": f"{alias}.doc_id", "source_id": "d.source_id"}
    clauses: list[str] = []
    params: list[Any] = []
    for field, values in (filters or SearchFilters()).fields(lens).items():
        clauses.append(f"{columns[field]} IN ({','.join('?' * len(values))})")
        params += values
    return "".join(f" AND {c}" for c in clauses), params


UPDATABLE_CHUNK_FIELDS = frozenset((
    "start_char", "end_char", "line_from", "line_to", "total_chunks", "chunk_type",
    "section_path", "context_header", "embedding_text", "embedding_hash"))
"""Chunk columns `update_chunk` may set (what backfill derives without re-parsing)."""
UPDATABLE_DOCUMENT_FIELDS = frozenset(("context_summary", "ingest_settings", "ingest_version"))
"""Document columns `update_document` may set."""


def check_fields(fields: dict[str, Any], allowed: frozenset[str]) -> None:
    """Refuse a column outside `allowed` (column names are built into the SQL)."""
    unknown = sorted(set(fields) - allowed)
    if unknown or not fields:
        raise ValueError(f"cannot update {unknown or 'no fields'}; allowed: {sorted(allowed)}")


def now_iso() -> str:
    """Current UTC time as ISO-8601 with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def fts_query(text: str, stemmed: bool = True) -> str:
    """An FTS5 MATCH expression OR-ing the quoted words of `text` (no operator injection).

    The words are `lexical.query_words`: function words of the query stop list left out
    (unless the query has nothing else), and a word said twice is there twice, so BM25 counts
    it twice, as Lucene and bm25s do: what a long request repeats ("... time sharing ...
    time-shared ...") is what it is about. `stemmed` gives each word's Snowball stem, the form
    the chunk index holds (`lexical.index_text`); without it the words go as written, for the
    document index, whose porter tokenizer stems them itself.
    """
    words = query_words(text)
    terms = [stem(w) for w in words] if stemmed else words
    counts = Counter(terms)  # first appearance order, each as often as it was said
    return " OR ".join(" OR ".join(['"' + t.replace('"', '""') + '"'] * n)
                       for t, n in counts.items())


DAMAGE_SIGNS = ("malformed", "not a database", "database corrupt")
"""Words of SQLite's messages for a damaged database file."""


def looks_damaged(error: BaseException) -> bool:
    """Whether `error` (an SQLite error, or one wrapping it) says its file is damaged."""
    text = str(error).lower()
    return any(sign in text for sign in DAMAGE_SIGNS)


def catalog_error(path: Path, error: sqlite3.Error) -> StoreError:
    """One clear error for an SQLite failure of the catalog at `path`; for damage, how to
    recover (the catalog is the workspace's truth: nothing in the workspace can rebuild it).
    """
    if not looks_damaged(error):
        return StoreError(f"the catalog {path} failed: {error}")
    return StoreError(
        f"the catalog {path} is damaged ({error}). To recover: stop every ragbench process "
        "on this workspace and keep a copy of the file; then either salvage what SQLite can "
        "still read with the sqlite3 shell's `.recover` command into a new file, put that in "
        "its place and run `ragbench doctor`, or move it away and ingest the documents again "
        f"from their sources (copies of the originals are under {path.parent / 'files'})")


class Catalog:
    """The SQLite catalog of one workspace."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        # the Alembic revisions of store/migrations_sqlite, all in one BEGIN IMMEDIATE
        # transaction (a catalog of the hand-written runner is stamped first); refuses a
        # catalog written by a newer ragbench (StoreError)
        migrate(self.conn)
        with self.transaction() as tx:
            tx.executemany(
                "INSERT OR IGNORE INTO ingest_versions(version, description, breaking_changes) "
                "VALUES (?, ?, ?)",
                [(v, d, int(b)) for v, d, b in INGEST_VERSIONS],
            )

    @property
    def conn(self) -> sqlite3.Connection:
        """The calling thread's connection (created on first use)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
        return conn

    def close(self) -> None:
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """`BEGIN IMMEDIATE` ... `COMMIT`, rolled back on any exception."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # --- documents -------------------------------------------------------------------------

    def _doc(self, row: sqlite3.Row) -> DocumentRecord:
        data = dict(row)
        data.pop("text", None)
        data["path"] = json.loads(data["path"])
        data["metadata"] = json.loads(data["metadata"])
        raw_settings = data.get("ingest_settings")
        data["ingest_settings"] = json.loads(raw_settings) if raw_settings else None
        return DocumentRecord(**data)

    def get_document(self, doc_id: str, include_failed: bool = False) -> DocumentRecord | None:
        """One document by id (indexed only unless `include_failed`)."""
        row = self.conn.execute(
            "SELECT d.*, (SELECT COUNT(*) FROM chunks c WHERE c.doc_id = d.doc_id) AS chunk_count "
            "FROM documents d WHERE doc_id = ? AND (status = 'indexed' OR ?)",
            (doc_id, include_failed),
        ).fetchone()
        return self._doc(row) if row else None

    def document_text(self, doc_id: str) -> str | None:
        """The plaintext of a document."""
        row = self.conn.execute("SELECT text FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return str(row[0]) if row else None

    def documents_by_source(self, source_id: str, status: str = "indexed") -> list[DocumentRecord]:
        """Documents with this source id and status (normally at most one indexed)."""
        rows = self.conn.execute(
            "SELECT d.*, 0 AS chunk_count FROM documents d WHERE source_id = ? AND status = ?",
            (source_id, status),
        ).fetchall()
        return [self._doc(r) for r in rows]

    def list_documents(
        self, lens: str | None = None, roots_only: bool = False, status: str = "indexed"
    ) -> list[DocumentRecord]:
        """Documents of a status, newest first, optionally of one lens or only top-level ones."""
        sql = (
            "SELECT d.*, (SELECT COUNT(*) FROM chunks c WHERE c.doc_id = d.doc_id) AS chunk_count "
            "FROM documents d WHERE status = ?"
        )
        params: list[Any] = [status]
        if lens:
            sql += " AND lens = ?"
            params.append(lens)
        if roots_only:
            sql += " AND parent_doc_id IS NULL"
        sql += " ORDER BY updated_at DESC, source_id"
        return [self._doc(r) for r in self.conn.execute(sql, params).fetchall()]

    def get_meta(self, key: str) -> str | None:
        """A workspace-level value from the `meta` table (None when unset)."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put_meta_once(self, key: str, value: str) -> str:
        """Store `value` under `key` unless a value is there already; return the stored value
        (the first writer wins when processes race).
        """
        with self.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", (key, value))
        return self.get_meta(key) or value

    def runtimes_in_use(self) -> dict[str, int]:
        """Indexed documents per `embedding_runtime` of their recorded signature."""
        rows = self.conn.execute(
            "SELECT coalesce(json_extract(ingest_settings, '$.embedding_runtime'), 'torch'), "
            "count(*) FROM documents WHERE status = 'indexed' GROUP BY 1").fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def all_doc_ids(self) -> set[str]:
        """Ids of every document row, indexed or failed."""
        return {r[0] for r in self.conn.execute("SELECT doc_id FROM documents").fetchall()}

    def children(self, doc_id: str) -> list[str]:
        """Ids of all documents below `doc_id` (attachments, recursively)."""
        rows = self.conn.execute(
            "WITH RECURSIVE below(doc_id) AS ("
            " SELECT doc_id FROM documents WHERE parent_doc_id = ?"
            " UNION SELECT d.doc_id FROM documents d JOIN below b ON d.parent_doc_id = b.doc_id"
            ") SELECT doc_id FROM below",
            (doc_id,),
        ).fetchall()
        return [r[0] for r in rows]

    def insert_document(
        self,
        conn: sqlite3.Connection,
        record: DocumentRecord,
        text: str,
        chunks: Sequence[Chunk],
    ) -> None:
        """Write a document with its chunks (inside the caller's transaction)."""
        stamp = now_iso()
        conn.execute(
            "INSERT INTO documents(doc_id, source_id, file_name, format, file_hash, size_bytes, "
            "title, source_uri, lens, parent_doc_id, root_doc_id, depth, path, content_version, "
            "ingest_version, chunk_size, chunk_overlap, embedding_model, status, error, "
            "metadata, text, created_at, updated_at, context_summary, ingest_settings) VALUES "
            "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                record.doc_id, record.source_id, record.file_name, record.format,
                record.file_hash, record.size_bytes, record.title, record.source_uri,
                record.lens, record.parent_doc_id, record.root_doc_id, record.depth,
                json.dumps(record.path), record.content_version, record.ingest_version,
                record.chunk_size, record.chunk_overlap, record.embedding_model, record.status,
                record.error, json.dumps(record.metadata), text, record.created_at or stamp, stamp,
                record.context_summary,
                json.dumps(record.ingest_settings, sort_keys=True)
                if record.ingest_settings is not None else None,
            ),
        )
        conn.executemany(
            f"INSERT INTO chunks({_CHUNK_COLUMNS}) VALUES ({','.join('?' * 19)})",  # noqa: S608
            [self._chunk_row(c) for c in chunks],
        )

    @staticmethod
    def _chunk_row(c: Chunk) -> tuple[Any, ...]:
        meta = {k: getattr(c, k) for k in CHUNK_META_FIELDS if getattr(c, k) not in (None, [])}
        return (
            c.chunk_id, c.doc_id, c.chunk_index, c.total_chunks, c.start_char, c.end_char,
            c.token_count, c.chunk_type, c.section_path, c.lens, c.page_number, c.line_from,
            c.line_to, c.text, c.embedding_text, text_hash(c.embedding_text), json.dumps(meta),
            c.context_header, index_text(c.text),
        )

    def delete_documents(self, conn: sqlite3.Connection, doc_ids: Sequence[str]) -> list[str]:
        """Delete documents and their chunks; returns the deleted chunk ids (for Chroma)."""
        removed: list[str] = []
        for doc_id in doc_ids:
            removed += [
                r[0]
                for r in conn.execute("SELECT chunk_id FROM chunks WHERE doc_id = ?", (doc_id,))
            ]
            conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
        return removed

    def set_archive_links(self, conn: sqlite3.Connection, record: DocumentRecord) -> None:
        """Store a record's archive fields (inside the caller's transaction)."""
        conn.execute(
            "UPDATE documents SET archive_path = ?, archive_browse_uri = ?, "
            "archive_download_uri = ? WHERE doc_id = ?",
            (record.archive_path, record.archive_browse_uri, record.archive_download_uri,
             record.doc_id),
        )

    def update_chunk(self, conn: sqlite3.Connection, chunk_id: str,
                     fields: dict[str, Any]) -> None:
        """Set `fields` (columns of `UPDATABLE_CHUNK_FIELDS`) of one chunk, inside the
        caller's transaction (backfill's corrections).
        """
        check_fields(fields, UPDATABLE_CHUNK_FIELDS)
        assignments = ", ".join(f"{name} = ?" for name in fields)  # names checked above
        conn.execute(f"UPDATE chunks SET {assignments} WHERE chunk_id = ?",  # noqa: S608
                     (*fields.values(), chunk_id))

    def update_document(self, conn: sqlite3.Connection, doc_id: str,
                        fields: dict[str, Any]) -> None:
        """Set `fields` (columns of `UPDATABLE_DOCUMENT_FIELDS`) of one document, inside the
        caller's transaction.
        """
        check_fields(fields, UPDATABLE_DOCUMENT_FIELDS)
        assignments = ", ".join(f"{name} = ?" for name in fields)  # names checked above
        conn.execute(f"UPDATE documents SET {assignments} WHERE doc_id = ?",  # noqa: S608
                     (*fields.values(), doc_id))

    # --- archive reads (documents in ingest order) -------------------------------------------

    def archive_rows(self) -> list[dict[str, Any]]:
        """Every document's place in its thread, status and archive links, in ingest order."""
        rows = self.conn.execute(
            "SELECT doc_id, parent_doc_id, root_doc_id, status, file_name, archive_path, "
            "archive_browse_uri, archive_download_uri FROM documents ORDER BY rowid"
        ).fetchall()
        return [dict(r) for r in rows]

    def thread_members(self, root_id: str) -> list[str]:
        """Ids of the documents below thread root `root_id` (not itself), in ingest order."""
        return [r[0] for r in self.conn.execute(
            "SELECT doc_id FROM documents WHERE root_doc_id = ? AND doc_id != ? ORDER BY rowid",
            (root_id, root_id))]

    def attachment_links(self, doc_id: str) -> list[tuple[str, str | None]]:
        """(file name, archive browse URI) of the documents directly below `doc_id`."""
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT file_name, archive_browse_uri FROM documents WHERE parent_doc_id = ? "
            "ORDER BY rowid", (doc_id,))]

    def mail_rows(self) -> list[dict[str, Any]]:
        """Top-level indexed e-mails (eml, msg) without their text, in ingest order."""
        rows = self.conn.execute(
            "SELECT doc_id, file_name, title, metadata, archive_browse_uri FROM documents "
            "WHERE format IN ('eml', 'msg') AND parent_doc_id IS NULL AND +status = 'indexed' "
            "ORDER BY rowid"
        ).fetchall()
        return [dict(r) for r in rows]

    # --- chunks ----------------------------------------------------------------------------

    def chunk_ids(self) -> set[str]:
        """Every chunk id in the catalog."""
        return {r[0] for r in self.conn.execute("SELECT chunk_id FROM chunks").fetchall()}

    def chunk_count(self) -> int:
        """Number of chunks in the catalog."""
        return int(self.conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def indexed_chunk_count(self, filters: SearchFilters | None = None) -> int:
        """Number of chunks of indexed documents that `filters` lets through (all without)."""
        where, params = _filter_sql(filters, None)
        row = self.conn.execute(
            "SELECT count(*) FROM chunks c JOIN documents d USING (doc_id) "  # noqa: S608
            f"WHERE d.status = 'indexed' {where}", params).fetchone()
        return int(row[0])

    def word_rarity(self, text: str) -> dict[str, float]:
        """Inverse chunk frequency, log((N + 1) / (df + 1)), of each content word of `text`
        across the whole workspace, keyed by its stem (`lexical.stem`): what tells a
        question's focus ("risks") from words every document shares ("roadmap", "2026").
        """
        total = self.chunk_count()
        out: dict[str, float] = {}
        for word in dict.fromkeys(INDEX_WORD.findall(text.lower())):
            key = stem(word)
            if word in STOPWORDS or key in out:
                continue
            query = '"' + key.replace('"', '""') + '"'  # the index holds stems
            df = int(self.conn.execute(
                "SELECT COUNT(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (query,)
            ).fetchone()[0])
            out[key] = float(np.log((total + 1) / (df + 1)))
        return out

    def _chunk_rows(self, columns: str, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """`columns` (of chunks c joined with documents d) for indexed chunks, by chunk id.

        `columns` is always a constant of this class, never user input.
        """
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(chunk_ids), 500):
            part = list(chunk_ids[i : i + 500])
            marks = ",".join("?" * len(part))
            rows = self.conn.execute(
                f"SELECT c.chunk_id, {columns} FROM chunks c "  # noqa: S608
                "JOIN documents d USING (doc_id) "
                f"WHERE +d.status = 'indexed' AND c.chunk_id IN ({marks})",
                part,
            ).fetchall()
            out.update({r["chunk_id"]: dict(r) for r in rows})
        return out

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Indexed chunk rows (with document fields) by id."""
        return self._chunk_rows(
            f"{_CHUNK_READ}, d.source_id, d.title AS source_title, d.file_name, "
            "d.archive_browse_uri, d.archive_download_uri", chunk_ids)

    def contradiction_rows(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Chunk text with lens, document, thread root and document date (e-mail Date)."""
        return self._chunk_rows(
            "c.doc_id, c.lens, c.text, d.root_doc_id, "
            "json_extract(d.metadata, '$.date') AS doc_date", chunk_ids)

    def graph_rows(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """What the context graph needs of each chunk (text, position, lens, document)."""
        return self._chunk_rows(
            "c.lens, c.doc_id, c.chunk_index, c.total_chunks, c.token_count, c.text, "
            "d.file_name, d.source_id, d.created_at, d.metadata", chunk_ids)

    def chunks_of(self, doc_id: str) -> list[dict[str, Any]]:
        """All chunk rows of a document in order."""
        rows = self.conn.execute(
            f"SELECT rowid, {', '.join(_CHUNK_FIELDS)} FROM chunks "  # noqa: S608
            "WHERE doc_id = ? ORDER BY chunk_index", (doc_id,)
        ).fetchall()
        return [dict(r) for r in rows]

    def fts_search(
        self,
        query: str,
        k: int,
        lens: str | None = None,
        filters: SearchFilters | None = None,
        level: str = "chunk",
    ) -> list[tuple[str, float]]:
        """(chunk_id, bm25 score, higher is better) of the best `k` chunks for `query`.

        `level="media"` ranks whole documents (specs/003 media-level FTS) and returns the best
        matching chunk of each, so results stay citable.
        """
        match = fts_query(query)
        if not match:
            return []
        if level == "media":
            doc_match = fts_query(query, stemmed=False)
            doc_filters = filters.model_copy(update={"chunk_types": None}) if filters else None
            where, params = _filter_sql(doc_filters, lens, alias="d")
            types = list(filters.chunk_types or []) if filters else []
            type_sql = f" AND c.chunk_type IN ({','.join('?' * len(types))})" if types else ""
            docs = self.conn.execute(
                "SELECT d.doc_id, -bm25(documents_fts) AS score FROM documents_fts "  # noqa: S608
                "JOIN documents d ON d.rowid = documents_fts.rowid "
                f"WHERE documents_fts MATCH ? AND +d.status = 'indexed' {where}"
                " ORDER BY bm25(documents_fts) LIMIT ?",
                [doc_match, *params, k],
            ).fetchall()
            out = []
            for doc_id, score in docs:
                best = self.conn.execute(
                    "SELECT c.chunk_id FROM chunks_fts JOIN chunks c "  # noqa: S608
                    "ON c.rowid = chunks_fts.rowid "
                    f"WHERE chunks_fts MATCH ? AND c.doc_id = ?{type_sql} "
                    "ORDER BY bm25(chunks_fts) LIMIT 1",
                    (match, doc_id, *types),
                ).fetchone()
                if best is None:  # the words span chunks: cite the first chunk
                    best = self.conn.execute(
                        f"SELECT c.chunk_id FROM chunks c WHERE c.doc_id = ?{type_sql} "  # noqa: S608
                        "ORDER BY c.chunk_index LIMIT 1",
                        (doc_id, *types),
                    ).fetchone()
                if best is not None:
                    out.append((str(best[0]), float(score)))
            return out
        where, params = _filter_sql(filters, lens)
        if not where:
            # fast path: FTS5 ranks and limits on its own; chunks only exist for indexed docs
            rows = self.conn.execute(
                "SELECT c.chunk_id, -f.score FROM (SELECT rowid, bm25(chunks_fts) AS score "
                "FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY bm25(chunks_fts) LIMIT ?) f "
                "JOIN chunks c ON c.rowid = f.rowid ORDER BY f.score",
                (match, k),
            ).fetchall()
            return [(r[0], float(r[1])) for r in rows]
        sql = (
            "SELECT c.chunk_id, -bm25(chunks_fts) AS score FROM chunks_fts "  # noqa: S608
            "JOIN chunks c ON c.rowid = chunks_fts.rowid JOIN documents d USING (doc_id) "
            f"WHERE chunks_fts MATCH ? AND +d.status = 'indexed' {where} "
            "ORDER BY bm25(chunks_fts) LIMIT ?"
        )
        rows = self.conn.execute(sql, [match, *params, k]).fetchall()
        return [(r[0], float(r[1])) for r in rows]

    def lenses(self) -> list[str]:
        """Lenses that have indexed chunks."""
        return [r[0] for r in self.conn.execute(
            "SELECT DISTINCT c.lens FROM chunks c JOIN documents d USING (doc_id) "
            "WHERE +d.status = 'indexed' ORDER BY c.lens"
        )]

    def fts_integrity(self) -> bool:
        """True when the FTS index matches the chunks table and every chunk is in it (a chunk
        written around the catalog has no `fts_text`, so full-text search cannot find it).
        """
        try:
            self.conn.execute(
                "INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)"
            )
        except sqlite3.DatabaseError:
            return False
        return self.conn.execute(
            "SELECT 1 FROM chunks WHERE fts_text IS NULL LIMIT 1").fetchone() is None

    def fts_rebuild(self) -> None:
        """Rebuild the FTS index from the chunks table (stemming chunks that lack `fts_text`)."""
        with self.transaction() as tx:
            fill_fts_text(tx)
            tx.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild')")

    # --- stats -----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts for `ragbench stats`: documents, chunks, tokens, per lens and chunk type."""
        conn = self.conn
        docs = conn.execute(
            "SELECT COUNT(*) FROM documents WHERE +status = 'indexed'"
        ).fetchone()[0]
        row = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(token_count), 0) FROM chunks c JOIN documents d "
            "USING (doc_id) WHERE +d.status = 'indexed'"
        ).fetchone()
        per_lens = {
            r[0]: {"documents": r[1], "chunks": r[2], "tokens": r[3]}
            for r in conn.execute(
                "SELECT d.lens, COUNT(DISTINCT d.doc_id), COUNT(c.chunk_id), "
                "COALESCE(SUM(c.token_count), 0) FROM documents d LEFT JOIN chunks c "
                "USING (doc_id) WHERE +d.status = 'indexed' GROUP BY d.lens ORDER BY d.lens"
            )
        }
        per_type = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT c.chunk_type, COUNT(*) FROM chunks c JOIN documents d USING (doc_id) "
                "WHERE +d.status = 'indexed' GROUP BY c.chunk_type ORDER BY c.chunk_type"
            )
        }
        per_format = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT format, COUNT(*) FROM documents WHERE +status = 'indexed' "
                "GROUP BY format ORDER BY format"
            )
        }
        chunks, tokens = int(row[0]), int(row[1])
        return {
            "documents": int(docs),
            "chunks": chunks,
            "tokens": tokens,
            "avg_tokens_per_chunk": round(tokens / chunks, 1) if chunks else 0.0,
            "per_lens": per_lens,
            "per_chunk_type": per_type,
            "per_format": per_format,
        }

    def signature_groups(self) -> list[dict[str, Any]]:
        """Indexed top-level documents grouped by what made them (ingest version, chunk size
        and overlap, embedding model, the recorded settings signature as JSON or None), with
        their chunk counts (attachments included).
        """
        per_root = dict(self.conn.execute(
            "SELECT COALESCE(x.root_doc_id, x.doc_id), COUNT(*) FROM chunks c "
            "JOIN documents x USING (doc_id) GROUP BY 1"
        ).fetchall())
        groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row in self.conn.execute(
            "SELECT doc_id, ingest_version, chunk_size, chunk_overlap, embedding_model, "
            "ingest_settings FROM documents WHERE +status = 'indexed' AND parent_doc_id IS NULL"
        ):
            key = tuple("" if v is None else v for v in tuple(row)[1:])
            group = groups.setdefault(key, {
                "ingest_version": row[1], "chunk_size": row[2], "chunk_overlap": row[3],
                "embedding_model": row[4], "ingest_settings": row[5], "documents": 0,
                "chunks": 0})
            group["documents"] += 1
            group["chunks"] += per_root.get(row[0], 0)
        return [groups[k] for k in sorted(groups)]

    def fingerprint(self) -> str:
        """Changes whenever documents, chunks, saved answers or archive entries change (a cache
        key for views).
        """
        row = self.conn.execute(
            "SELECT (SELECT COUNT(*) FROM documents), (SELECT MAX(updated_at) FROM documents), "
            "(SELECT MAX(rowid) FROM chunks), (SELECT COUNT(*) FROM chunks), "
            "(SELECT MAX(updated_at) FROM answers), "
            "(SELECT COUNT(archive_browse_uri) FROM documents)"
        ).fetchone()
        return ":".join(str(v) for v in row)

    def recent_documents(self, limit: int = 10) -> list[dict[str, Any]]:
        """The most recently stored top-level documents (indexed or failed), without text."""
        rows = self.conn.execute(
            "SELECT d.doc_id, d.source_id, d.lens, d.status, d.content_version, d.error, "
            "d.updated_at, (SELECT COUNT(*) FROM chunks c WHERE c.doc_id = d.doc_id) AS chunks "
            "FROM documents d WHERE d.parent_doc_id IS NULL ORDER BY d.updated_at DESC LIMIT ?",
            (limit,),
        ).fetchall()
        return [dict(r) for r in rows]

    def ingest_versions(self) -> list[dict[str, Any]]:
        """Known ingest versions with the number of indexed documents each one made."""
        rows = self.conn.execute(
            "SELECT v.version, v.description, v.breaking_changes, v.created_at, "
            "(SELECT COUNT(*) FROM documents d WHERE d.ingest_version = v.version "
            "AND +d.status = 'indexed') AS documents FROM ingest_versions v ORDER BY v.version"
        ).fetchall()
        return [dict(r) for r in rows]

    def documents_by_hash(self, file_hash: str) -> list[DocumentRecord]:
        """Indexed documents whose original file has this sha256 (duplicates by content)."""
        rows = self.conn.execute(
            "SELECT d.*, 0 AS chunk_count FROM documents d WHERE file_hash = ? "
            "AND +status = 'indexed'",
            (file_hash,),
        ).fetchall()
        return [self._doc(r) for r in rows]

    # --- saved answers -----------------------------------------------------------------------

    def save_answer(self, answer_id: str, question: str, response: str, settings: str) -> None:
        """Insert or replace a saved answer (JSON strings)."""
        stamp = now_iso()
        with self.transaction() as tx:
            tx.execute(
                "INSERT INTO answers(answer_id, question, response, settings, created_at, "
                "updated_at) VALUES (?,?,?,?,?,?) ON CONFLICT(answer_id) DO UPDATE SET "
                "response = excluded.response, settings = excluded.settings, "
                "updated_at = excluded.updated_at",
                (answer_id, question, response, settings, stamp, stamp),
            )

    def list_answers(self, limit: int = 100) -> list[dict[str, Any]]:
        """Saved answers, newest first."""
        rows = self.conn.execute(
            "SELECT * FROM answers ORDER BY updated_at DESC LIMIT ?", (limit,)
        ).fetchall()
        return [dict(r) for r in rows]

    def get_answer(self, answer_id: str) -> dict[str, Any] | None:
        """One saved answer."""
        row = self.conn.execute(
            "SELECT * FROM answers WHERE answer_id = ?", (answer_id,)
        ).fetchone()
        return dict(row) if row else None

    def answer_citing(self, chunk_id: str) -> tuple[str, str] | None:
        """The newest saved answer with a source of this chunk id: (answer_id, source JSON).

        SQLite's JSON functions look inside the stored responses, so resolving an old citation
        does not load every saved answer into Python.
        """
        row = self.conn.execute(
            "SELECT a.answer_id, s.value FROM answers a, json_each(a.response, '$.sources') s "
            "WHERE json_extract(s.value, '$.id') = ? ORDER BY a.updated_at DESC LIMIT 1",
            (chunk_id,),
        ).fetchone()
        return (row[0], row[1]) if row else None

    # --- context summaries (implements ragbench.ingest.context.SummaryCache) ---------------

    def get_summary(self, key: str) -> str | None:
        """A cached document summary (contextual chunking with a model)."""
        row = self.conn.execute(
            "SELECT summary FROM context_cache WHERE key = ?", (key,)
        ).fetchone()
        return str(row[0]) if row else None

    def put_summary(self, key: str, summary: str) -> None:
        """Cache a document summary (idempotent)."""
        self.conn.execute(
            "INSERT OR REPLACE INTO context_cache(key, summary) VALUES (?, ?)", (key, summary)
        )

    # --- embedding cache (implements ragbench.embeddings.embedders.EmbeddingCache) --------

    def get_embeddings(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for these text hashes."""
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(hashes), 500):
            part = list(hashes[i : i + 500])
            marks = ",".join("?" * len(part))
            for h, blob in self.conn.execute(
                f"SELECT text_hash, vector FROM embedding_cache "  # noqa: S608
                f"WHERE model_id = ? AND text_hash IN ({marks})",
                [model_id, *part],
            ):
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_embeddings(self, model_id: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Store vectors (idempotent)."""
        with self.transaction() as tx:
            tx.executemany(
                "INSERT OR REPLACE INTO embedding_cache(model_id, text_hash, dim, vector) "
                "VALUES (?, ?, ?, ?)",
                [
                    (model_id, h, int(v.shape[0]), np.asarray(v, np.float32).tobytes())
                    for h, v in items
                ],
            )

    def clear(self) -> None:
        """Delete every document and chunk (the embedding cache is kept)."""
        with self.transaction() as tx:
            tx.execute("DELETE FROM chunks")
            tx.execute("DELETE FROM documents")
        self.fts_rebuild()

