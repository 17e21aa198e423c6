"""PostgreSQL catalog (the team tier, issue 30): the same catalog as `ragbench.store.catalog`,
in one schema of a PostgreSQL database, written with SQLAlchemy Core.

`connect` builds the engine of a workspace: psycopg 3, with the workspace schema first on every
connection's search path (then `public`, where the pgvector extension lives), so the same
table names serve any number of workspaces in one database, none seeing another's rows.
`migrate` brings the schema to the newest Alembic revision (`ragbench/store/migrations`) under
a transaction-scoped advisory lock, so processes that open one workspace at once migrate it
once.

`PgCatalog` keeps the SQLite catalog's methods, arguments and row shapes (it subclasses
`Catalog` for that contract). Full-text search follows FTS5's query rules (the quoted words of
the query OR-ed, the query stop list left out, English stemming on both sides) on a `tsvector`
column with a GIN index. PostgreSQL has no BM25: a chunk scores the sum over the query words
it contains of the word's rarity (log((N + 1) / (df + 1)), as BM25's idf) times `ts_rank`
(term frequency, normalised by log length), so rare words weigh more as they do in FTS5;
rankings can still differ from FTS5's in order (tests check membership, not order). Media-level
search ranks documents by their best chunk. Chats and reports have their own PostgreSQL stores
(`ragbench.chats.pgstore`, `ragbench.reports.pgstore`) on the tables defined here. Code that
still runs SQLite SQL on `conn` or on a transaction is refused with `BackendUnsupportedError`
naming the calling function (docs/team.md; none is left on the paths tested there).
`PgAdvisoryLock` is the workspace write lock across hosts (store steps shared, doctor
exclusive).
"""

from __future__ import annotations

import json
import math
import re
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB, TSVECTOR
from sqlalchemy.dialects.postgresql import insert as pg_insert

from ragbench.errors import BackendUnsupportedError, StoreError
from ragbench.ids import text_hash
from ragbench.lexical import STOPWORDS, query_words, stem
from ragbench.models import Chunk, DocumentRecord, SearchFilters
from ragbench.store.catalog import Catalog
from ragbench.store.catalog_base import (
    CHUNK_META_FIELDS,
    UPDATABLE_CHUNK_FIELDS,
    UPDATABLE_DOCUMENT_FIELDS,
    check_fields,
    now_iso,
)
from ragbench.store.schema import INGEST_VERSIONS

MIGRATIONS_DIR = Path(__file__).with_name("migrations")
TS_CONFIG = "ragbench_english"
"""Text search configuration made by migration 0001: English parser and stemmer, no stop list."""
_LOCK_KEY = 0x7261_6762  # "ragb": the advisory lock of schema migrations
_WORD = re.compile(r"\w+", re.UNICODE)
_SCHEMA = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")

metadata = sa.MetaData()
"""Core tables as migration 0001 makes them (the search path picks the workspace schema)."""

documents = sa.Table(
    "documents", metadata,
    sa.Column("rowid", sa.BigInteger), sa.Column("doc_id", sa.Text, primary_key=True),
    *(sa.Column(name, sa.Text) for name in (
        "source_id", "file_name", "format", "file_hash", "title", "source_uri", "lens",
        "parent_doc_id", "root_doc_id", "path", "embedding_model", "status", "error",
        "metadata", "text", "created_at", "updated_at", "context_summary", "ingest_settings",
        "archive_path", "archive_browse_uri", "archive_download_uri")),
    *(sa.Column(name, sa.Integer) for name in (
        "size_bytes", "depth", "content_version", "ingest_version", "chunk_size",
        "chunk_overlap")),
)
chunks = sa.Table(
    "chunks", metadata,
    sa.Column("rowid", sa.BigInteger), sa.Column("chunk_id", sa.Text, primary_key=True),
    sa.Column("doc_id", sa.Text, sa.ForeignKey("documents.doc_id")),
    *(sa.Column(name, sa.Text) for name in (
        "chunk_type", "section_path", "lens", "text", "embedding_text",
        "embedding_hash", "metadata", "context_header")),
    *(sa.Column(name, sa.Integer) for name in (
        "chunk_index", "total_chunks", "start_char", "end_char", "token_count", "page_number",
        "line_from", "line_to")),
    sa.Column("tsv", TSVECTOR),
)
ingest_versions = sa.Table(
    "ingest_versions", metadata, sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("description", sa.Text), sa.Column("breaking_changes", sa.Integer),
    sa.Column("created_at", sa.Text),
)
answers = sa.Table(
    "answers", metadata, sa.Column("answer_id", sa.Text, primary_key=True),
    *(sa.Column(n, sa.Text) for n in ("question", "response", "settings", "created_at",
                                       "updated_at")),
)
meta = sa.Table(
    "meta", metadata, sa.Column("key", sa.Text, primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)
context_cache = sa.Table(
    "context_cache", metadata, sa.Column("key", sa.Text, primary_key=True),
    sa.Column("summary", sa.Text),
)
embedding_cache = sa.Table(
    "embedding_cache", metadata, sa.Column("model_id", sa.Text, primary_key=True),
    sa.Column("text_hash", sa.Text, primary_key=True), sa.Column("dim", sa.Integer),
    sa.Column("vector", sa.LargeBinary),
)
conversations = sa.Table(
    "conversations", metadata, sa.Column("rowid", sa.BigInteger),
    sa.Column("conversation_id", sa.Text, primary_key=True),
    *(sa.Column(n, sa.Text) for n in ("title", "created_at", "updated_at")),
)
conversation_turns = sa.Table(
    "conversation_turns", metadata,
    sa.Column("conversation_id", sa.Text, sa.ForeignKey("conversations.conversation_id"),
              primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("answer_id", sa.Text),
    *(sa.Column(n, sa.Text) for n in ("retrieval_question", "created_at")),
)
reports = sa.Table(
    "reports", metadata, sa.Column("report_id", sa.Text, primary_key=True),
    *(sa.Column(n, sa.Text) for n in ("title", "template", "brief", "lenses", "created_at",
                                       "updated_at")),
)
report_parts = sa.Table(
    "report_parts", metadata, sa.Column("part_id", sa.Text, primary_key=True),
    sa.Column("report_id", sa.Text, sa.ForeignKey("reports.report_id")),
    sa.Column("position", sa.Integer), sa.Column("version", sa.Integer),
    *(sa.Column(n, sa.Text) for n in ("header", "query", "kind", "keywords", "mood",
                                       "created_at", "updated_at")),
)
report_part_versions = sa.Table(
    "report_part_versions", metadata,
    sa.Column("part_id", sa.Text, sa.ForeignKey("report_parts.part_id"), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("content", sa.Text), sa.Column("created_at", sa.Text),
)
report_sources = sa.Table(
    "report_sources", metadata,
    sa.Column("part_id", sa.Text, primary_key=True), sa.Column("version", sa.Integer,
                                                               primary_key=True),
    sa.Column("chunk_id", sa.Text, primary_key=True), sa.Column("doc_id", sa.Text),
    sa.Column("source", sa.Text),
)
chunk_vectors = sa.Table(
    "chunk_vectors", metadata, sa.Column("chunk_id", sa.Text, primary_key=True),
    sa.Column("embedding", sa.Text),  # pgvector's type: see ragbench.store.pgvectors
    sa.Column("doc_id", sa.Text), sa.Column("lens", sa.Text), sa.Column("chunk_type", sa.Text),
    sa.Column("metadata", JSONB),
)

_CHUNK_FIELDS = [c for c in chunks.c if c.name != "tsv"]
_DOC_FIELDS = [c for c in documents.c if c.name not in ("rowid", "text")]


def connect(url: str, schema: str) -> sa.Engine:
    """The engine of workspace `schema` in the database at `url` (psycopg 3 driver)."""
    if not _SCHEMA.match(schema):
        raise StoreError(f"database_schema {schema!r} is not a lower-case SQL name")
    try:
        parsed = sa.make_url(url).set(drivername="postgresql+psycopg")
    except sa.exc.ArgumentError as e:
        raise StoreError(f"database_url is not a database URL: {e}") from e
    return sa.create_engine(
        parsed, pool_pre_ping=True,
        connect_args={"options": f"-c search_path={schema},public"},
    )


def migrate(engine: sa.Engine, schema: str) -> None:
    """Create the workspace schema if needed and upgrade it to the newest Alembic revision.

    One transaction under an advisory lock: PostgreSQL DDL is transactional, so a failed step
    leaves the workspace at the previous revision, and a second process waits, then finds the
    schema current.
    """
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["schema"] = schema
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _LOCK_KEY})
            conn.execute(sa.text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
    except sa.exc.SQLAlchemyError as e:
        raise StoreError(
            f"cannot open or migrate workspace schema {schema!r} in PostgreSQL "
            f"({redacted(engine)}): {_first_line(e)}. ragbench needs PostgreSQL >= 14 with "
            "the pgvector extension (>= 0.5) available, and a role that may create schemas "
            "and tables (and the extension, unless it is already created)") from e


class PgAdvisoryLock:
    """The write lock of a workspace in PostgreSQL: a session-level advisory lock on
    (`_LOCK_KEY`, hash of the schema), so it holds across every host that opens the schema.

    Store steps take it shared (any number of writers at once, on any host); `ragbench
    doctor` takes it exclusive, so it waits for every writer between its vector write and its
    catalog commit (whose vectors are not drift) and no writer starts while it repairs. A
    process that dies loses its session and so its lock (no stale lock). The host's file lock
    (`ragbench.store.lock`) still guards this host's `files/` folder.
    """

    def __init__(self, engine: sa.Engine, schema: str, wait_seconds: float = 600.0) -> None:
        self.engine = engine
        self.schema = schema
        self.wait_seconds = wait_seconds

    @contextmanager
    def held(self, what: str = "write", required: bool = True,
             shared: bool = False) -> Iterator[None]:
        """Hold the lock (shared or exclusive) for `what`, waiting up to `wait_seconds`
        (StoreError after that). `required` is accepted for `WorkspaceLock`'s callers: a
        database lock needs no writable folder.
        """
        kind = "_shared" if shared else ""
        key = {"key": _LOCK_KEY, "schema": self.schema}
        with self.engine.connect() as conn:
            deadline = time.monotonic() + self.wait_seconds
            while not conn.execute(sa.text(
                    f"SELECT pg_try_advisory_lock{kind}(:key, hashtext(:schema))"), key).scalar():
                conn.rollback()
                if time.monotonic() > deadline:
                    raise StoreError(
                        f"workspace schema {self.schema!r} is busy: another process held its "
                        f"write lock for more than {self.wait_seconds:.0f} s; {what} not done, "
                        "retry when it has finished")
                time.sleep(0.2)
            conn.commit()
            try:
                yield
            finally:
                conn.execute(sa.text(f"SELECT pg_advisory_unlock{kind}(:key, hashtext(:schema))"),
                             key)
                conn.commit()


def redacted(engine: sa.Engine) -> str:
    """The engine's URL without its password, for messages."""
    return engine.url.render_as_string(hide_password=True)


def _first_line(error: BaseException) -> str:
    text = str(getattr(error, "orig", None) or error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__


def query_terms(text: str) -> dict[str, int]:
    """The words of a full-text query with how often it says each, as `catalog_base.fts_query`
    picks them (`lexical.query_words`: the query stop list left out unless nothing else is
    left, a word said twice counted twice).
    """
    return dict(Counter(query_words(text)))


def _tsquery(term: str) -> sa.ColumnElement[Any]:
    """One query word as a tsquery (a bound value: no operator injection)."""
    return sa.func.plainto_tsquery(sa.literal_column(f"'{TS_CONFIG}'::regconfig"),
                                   sa.bindparam(None, term, type_=sa.Text))


def _any_of(terms: Sequence[str]) -> sa.ColumnElement[Any]:
    """The OR of the words' tsqueries (tsquery `||`)."""
    query = _tsquery(terms[0])
    for term in terms[1:]:
        query = query.op("||")(_tsquery(term))
    return query


class PgCatalog(Catalog):
    """The catalog of one workspace in PostgreSQL (see the module docstring)."""

    backend = "postgres"

    def __init__(self, engine: sa.Engine, schema: str) -> None:
        # no Catalog.__init__: it opens SQLite; this catalog shares `engine` with the vectors
        self.engine = engine
        self.schema = schema
        self.path = Path(f"postgresql:{schema}")  # for messages that name the catalog
        migrate(engine, schema)
        with engine.begin() as conn:
            conn.execute(
                pg_insert(ingest_versions).on_conflict_do_nothing(),
                [{"version": v, "description": d, "breaking_changes": int(b)}
                 for v, d, b in INGEST_VERSIONS])

    # --- connections ---------------------------------------------------------------------

    @property
    def conn(self) -> Any:
        """Refused: code that reaches for the SQLite connection is not ported yet."""
        raise _unsupported(sys._getframe(1))

    def close(self) -> None:
        """Release the engine's pooled connections."""
        self.engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """One database transaction (committed at the end, rolled back on any exception),
        as a `PgTransaction` for the catalog's own write methods.
        """
        with self.engine.begin() as conn:
            yield PgTransaction(conn)

    def _read(self, statement: sa.Executable) -> list[sa.RowMapping]:
        with self.engine.connect() as conn:
            return list(conn.execute(statement).mappings())

    # --- documents -------------------------------------------------------------------------

    @staticmethod
    def _record(row: sa.RowMapping) -> DocumentRecord:
        data = dict(row)
        data.pop("text", None)
        data.pop("rowid", None)
        data["path"] = json.loads(data["path"])
        data["metadata"] = json.loads(data["metadata"])
        raw = data.get("ingest_settings")
        data["ingest_settings"] = json.loads(raw) if raw else None
        return DocumentRecord(**data)

    @staticmethod
    def _chunk_count_of(d: sa.FromClause) -> sa.ScalarSelect[Any]:
        return (sa.select(sa.func.count()).select_from(chunks)
                .where(chunks.c.doc_id == d.c.doc_id).scalar_subquery())

    def _documents(self, *where: sa.ColumnElement[bool], counted: bool = True,
                   order: bool = False) -> list[DocumentRecord]:
        count = self._chunk_count_of(documents) if counted else sa.literal(0)
        statement = sa.select(*_DOC_FIELDS, count.label("chunk_count")).where(*where)
        if order:
            statement = statement.order_by(documents.c.updated_at.desc(), documents.c.source_id)
        return [self._record(r) for r in self._read(statement)]

    def get_document(self, doc_id: str, include_failed: bool = False) -> DocumentRecord | None:
        """One document by id (indexed only unless `include_failed`)."""
        where = [documents.c.doc_id == doc_id]
        if not include_failed:
            where.append(documents.c.status == "indexed")
        found = self._documents(*where)
        return found[0] if found else None

    def document_text(self, doc_id: str) -> str | None:
        """The plaintext of a document."""
        rows = self._read(sa.select(documents.c.text).where(documents.c.doc_id == doc_id))
        return str(rows[0]["text"]) if rows else None

    def documents_by_source(self, source_id: str, status: str = "indexed") -> list[DocumentRecord]:
        """Documents with this source id and status (normally at most one indexed)."""
        return self._documents(documents.c.source_id == source_id,
                               documents.c.status == status, counted=False)

    def list_documents(
        self, lens: str | None = None, roots_only: bool = False, status: str = "indexed"
    ) -> list[DocumentRecord]:
        """Documents of a status, newest first, optionally of one lens or only top-level ones."""
        where = [documents.c.status == status]
        if lens:
            where.append(documents.c.lens == lens)
        if roots_only:
            where.append(documents.c.parent_doc_id.is_(None))
        return self._documents(*where, order=True)

    def all_doc_ids(self) -> set[str]:
        """Ids of every document row, indexed or failed."""
        return {r["doc_id"] for r in self._read(sa.select(documents.c.doc_id))}

    def children(self, doc_id: str) -> list[str]:
        """Ids of all documents below `doc_id` (attachments, recursively)."""
        below = (sa.select(documents.c.doc_id).where(documents.c.parent_doc_id == doc_id)
                 .cte("below", recursive=True))
        d = documents.alias("d")
        below = below.union(sa.select(d.c.doc_id).join(below, d.c.parent_doc_id == below.c.doc_id))
        return [r["doc_id"] for r in self._read(sa.select(below.c.doc_id))]

    def insert_document(
        self, conn: Any, record: DocumentRecord, text: str, chunks_: Sequence[Chunk],
    ) -> None:
        """Write a document with its chunks (inside the caller's transaction)."""
        stamp = now_iso()
        row = {c.name: getattr(record, c.name, None) for c in documents.c
               if c.name not in ("rowid", "text")}
        row.update(
            path=json.dumps(record.path), metadata=json.dumps(record.metadata), text=text,
            created_at=record.created_at or stamp, updated_at=stamp,
            ingest_settings=json.dumps(record.ingest_settings, sort_keys=True)
            if record.ingest_settings is not None else None)
        tx = _connection(conn)
        tx.execute(sa.insert(documents), row)
        if chunks_:
            tx.execute(sa.insert(chunks), [self._chunk_values(c) for c in chunks_])

    @staticmethod
    def _chunk_values(c: Chunk) -> dict[str, Any]:
        meta = {k: getattr(c, k) for k in CHUNK_META_FIELDS if getattr(c, k) not in (None, [])}
        names = [col.name for col in _CHUNK_FIELDS if col.name not in ("rowid", "metadata",
                                                                       "embedding_hash")]
        values = {name: getattr(c, name) for name in names}
        values.update(metadata=json.dumps(meta), embedding_hash=text_hash(c.embedding_text))
        return values

    def delete_documents(self, conn: Any, doc_ids: Sequence[str]) -> list[str]:
        """Delete documents and their chunks; returns the deleted chunk ids (for the vectors)."""
        if not doc_ids:
            return []
        tx = _connection(conn)
        ids = list(doc_ids)
        removed = tx.execute(
            sa.delete(chunks).where(chunks.c.doc_id.in_(ids)).returning(chunks.c.chunk_id))
        out = [r[0] for r in removed]
        tx.execute(sa.delete(documents).where(documents.c.doc_id.in_(ids)))
        return out

    def set_archive_links(self, conn: Any, record: DocumentRecord) -> None:
        """Store a record's archive fields (inside the caller's transaction)."""
        _connection(conn).execute(
            sa.update(documents).where(documents.c.doc_id == record.doc_id).values(
                archive_path=record.archive_path, archive_browse_uri=record.archive_browse_uri,
                archive_download_uri=record.archive_download_uri))

    def update_chunk(self, conn: Any, chunk_id: str, fields: dict[str, Any]) -> None:
        """Set `fields` (columns of `UPDATABLE_CHUNK_FIELDS`) of one chunk, inside the
        caller's transaction.
        """
        check_fields(fields, UPDATABLE_CHUNK_FIELDS)
        _connection(conn).execute(
            sa.update(chunks).where(chunks.c.chunk_id == chunk_id).values(**fields))

    def update_document(self, conn: Any, doc_id: str, fields: dict[str, Any]) -> None:
        """Set `fields` (columns of `UPDATABLE_DOCUMENT_FIELDS`) of one document, inside the
        caller's transaction.
        """
        check_fields(fields, UPDATABLE_DOCUMENT_FIELDS)
        _connection(conn).execute(
            sa.update(documents).where(documents.c.doc_id == doc_id).values(**fields))

    # --- archive reads (documents in ingest order) -------------------------------------------

    def archive_rows(self) -> list[dict[str, Any]]:
        """Every document's place in its thread, status and archive links, in ingest order."""
        d = documents.c
        statement = sa.select(d.doc_id, d.parent_doc_id, d.root_doc_id, d.status, d.file_name,
                              d.archive_path, d.archive_browse_uri,
                              d.archive_download_uri).order_by(d.rowid)
        return [dict(r) for r in self._read(statement)]

    def thread_members(self, root_id: str) -> list[str]:
        """Ids of the documents below thread root `root_id` (not itself), in ingest order."""
        d = documents.c
        statement = (sa.select(d.doc_id).where(d.root_doc_id == root_id, d.doc_id != root_id)
                     .order_by(d.rowid))
        return [r["doc_id"] for r in self._read(statement)]

    def attachment_links(self, doc_id: str) -> list[tuple[str, str | None]]:
        """(file name, archive browse URI) of the documents directly below `doc_id`."""
        d = documents.c
        statement = (sa.select(d.file_name, d.archive_browse_uri)
                     .where(d.parent_doc_id == doc_id).order_by(d.rowid))
        return [(r["file_name"], r["archive_browse_uri"]) for r in self._read(statement)]

    def mail_rows(self) -> list[dict[str, Any]]:
        """Top-level indexed e-mails (eml, msg) without their text, in ingest order."""
        d = documents.c
        statement = (sa.select(d.doc_id, d.file_name, d.title, d.metadata, d.archive_browse_uri)
                     .where(d.format.in_(["eml", "msg"]), d.parent_doc_id.is_(None),
                            d.status == "indexed").order_by(d.rowid))
        return [dict(r) for r in self._read(statement)]

    # --- chunks ----------------------------------------------------------------------------

    def chunk_ids(self) -> set[str]:
        """Every chunk id in the catalog."""
        return {r["chunk_id"] for r in self._read(sa.select(chunks.c.chunk_id))}

    def chunk_count(self) -> int:
        """Number of chunks in the catalog."""
        return int(self._read(sa.select(sa.func.count().label("n")).select_from(chunks))[0]["n"])

    @staticmethod
    def _filters(filters: SearchFilters | None,
                 lens: str | None = None) -> list[sa.ColumnElement[bool]]:
        """`SearchFilters.fields` as conditions over chunks joined with documents (as the
        SQLite catalog's `_filter_sql`; media-level search ranks chunks too, so one form).
        """
        columns: dict[str, sa.ColumnElement[Any]] = {
            "lens": chunks.c.lens, "chunk_type": chunks.c.chunk_type,
            "doc_id": chunks.c.doc_id, "source_id": documents.c.source_id}
        return [columns[name].in_(values)
                for name, values in (filters or SearchFilters()).fields(lens).items()]

    def indexed_chunk_count(self, filters: SearchFilters | None = None) -> int:
        """Number of chunks of indexed documents that `filters` lets through (all without)."""
        statement = (sa.select(sa.func.count().label("n")).select_from(chunks.join(documents))
                     .where(documents.c.status == "indexed", *self._filters(filters)))
        return int(self._read(statement)[0]["n"])

    def _document_frequencies(self, terms: Sequence[str]) -> list[int]:
        """How many chunks contain each word (one scan of the GIN index's matches)."""
        counts = [sa.func.count().filter(chunks.c.tsv.op("@@")(_tsquery(t))).label(f"t{i}")
                  for i, t in enumerate(terms)]
        row = self._read(sa.select(*counts).where(chunks.c.tsv.op("@@")(_any_of(terms))))[0]
        return [int(row[f"t{i}"]) for i in range(len(terms))]

    def word_rarity(self, text: str) -> dict[str, float]:
        """Inverse chunk frequency, log((N + 1) / (df + 1)), of each content word of `text`
        across the whole workspace, keyed by its stem (as `Catalog.word_rarity`).
        """
        words: dict[str, str] = {}
        for word in dict.fromkeys(w.lower() for w in _WORD.findall(text)):
            key = stem(word)
            if word not in STOPWORDS and key not in words:
                words[key] = word
        if not words:
            return {}
        total = self.chunk_count()
        dfs = self._document_frequencies(list(words.values()))
        return {key: float(np.log((total + 1) / (df + 1)))
                for key, df in zip(words, dfs, strict=True)}

    def _rows_of(self, columns: Sequence[sa.ColumnElement[Any]],
                    chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for i in range(0, len(chunk_ids), 1000):
            part = list(chunk_ids[i : i + 1000])
            statement = (sa.select(chunks.c.chunk_id, *columns)
                         .select_from(chunks.join(documents))
                         .where(documents.c.status == "indexed", chunks.c.chunk_id.in_(part)))
            out.update({r["chunk_id"]: dict(r) for r in self._read(statement)})
        return out

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Indexed chunk rows (with document fields) by id."""
        return self._rows_of(
            [*_CHUNK_FIELDS, documents.c.source_id, documents.c.title.label("source_title"),
             documents.c.file_name, documents.c.archive_browse_uri,
             documents.c.archive_download_uri], chunk_ids)

    def contradiction_rows(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Chunk text with lens, document, thread root and document date (e-mail Date)."""
        date = sa.cast(documents.c.metadata, JSONB)["date"].astext.label("doc_date")
        return self._rows_of([chunks.c.doc_id, chunks.c.lens, chunks.c.text,
                                 documents.c.root_doc_id, date], chunk_ids)

    def graph_rows(self, chunk_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """What the context graph needs of each chunk (text, position, lens, document)."""
        return self._rows_of(
            [chunks.c.lens, chunks.c.doc_id, chunks.c.chunk_index, chunks.c.total_chunks,
             chunks.c.token_count, chunks.c.text, documents.c.file_name, documents.c.source_id,
             documents.c.created_at, documents.c.metadata], chunk_ids)

    def chunks_of(self, doc_id: str) -> list[dict[str, Any]]:
        """All chunk rows of a document in order."""
        statement = (sa.select(*_CHUNK_FIELDS).where(chunks.c.doc_id == doc_id)
                     .order_by(chunks.c.chunk_index))
        return [dict(r) for r in self._read(statement)]

    def fts_search(
        self, query: str, k: int, lens: str | None = None,
        filters: SearchFilters | None = None, level: str = "chunk",
    ) -> list[tuple[str, float]]:
        """(chunk_id, score, higher is better) of the best `k` chunks for `query`.

        The score is the rarity-weighted `ts_rank` of the module docstring. `level="media"`
        ranks documents by their best chunk and returns that chunk of each.
        """
        counts = query_terms(query)
        terms = list(counts)
        if not terms:
            return []
        total = self.chunk_count()
        weights = [counts[term] * math.log((total + 1) / (df + 1))
                   for term, df in zip(terms, self._document_frequencies(terms), strict=True)]
        score: sa.ColumnElement[Any] = sa.literal(0.0)
        for term, weight in zip(terms, weights, strict=True):
            score = score + weight * sa.func.ts_rank(chunks.c.tsv, _tsquery(term), 1)
        where = [chunks.c.tsv.op("@@")(_any_of(terms)), documents.c.status == "indexed",
                 *self._filters(filters, lens)]
        scored = (sa.select(chunks.c.chunk_id, chunks.c.doc_id, score.label("score"))
                  .select_from(chunks.join(documents)).where(*where))
        if level == "media":
            best = scored.add_columns(sa.func.row_number().over(
                partition_by=chunks.c.doc_id, order_by=score.desc()).label("place")).subquery()
            statement = (sa.select(best.c.chunk_id, best.c.score).where(best.c.place == 1)
                         .order_by(best.c.score.desc(), best.c.chunk_id).limit(k))
        else:
            statement = scored.order_by(sa.desc("score"), chunks.c.chunk_id).limit(k)
        return [(r["chunk_id"], float(r["score"])) for r in self._read(statement)]

    def lenses(self) -> list[str]:
        """Lenses that have indexed chunks."""
        statement = (sa.select(chunks.c.lens).distinct().select_from(chunks.join(documents))
                     .where(documents.c.status == "indexed").order_by(chunks.c.lens))
        return [r["lens"] for r in self._read(statement)]

    def fts_integrity(self) -> bool:
        """Always true: the `tsv` column is generated by PostgreSQL from the chunk text."""
        return True

    def fts_rebuild(self) -> None:
        """Rebuild the full-text index (REINDEX of the GIN index)."""
        with self.engine.begin() as conn:
            conn.execute(sa.text("REINDEX INDEX idx_chunks_tsv"))

    # --- stats -----------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts for `ragbench stats`: documents, chunks, tokens, per lens and chunk type."""
        indexed = documents.c.status == "indexed"
        joined = chunks.join(documents)
        with self.engine.connect() as conn:
            docs = conn.execute(sa.select(sa.func.count()).where(indexed)).scalar_one()
            n, tokens = conn.execute(
                sa.select(sa.func.count(), sa.func.coalesce(sa.func.sum(chunks.c.token_count), 0))
                .select_from(joined).where(indexed)).one()
            per_lens = {
                r[0]: {"documents": r[1], "chunks": r[2], "tokens": int(r[3])}
                for r in conn.execute(
                    sa.select(documents.c.lens, sa.func.count(sa.distinct(documents.c.doc_id)),
                              sa.func.count(chunks.c.chunk_id),
                              sa.func.coalesce(sa.func.sum(chunks.c.token_count), 0))
                    .select_from(documents.outerjoin(chunks)).where(indexed)
                    .group_by(documents.c.lens).order_by(documents.c.lens))}
            per_type: dict[str, int] = dict(conn.execute(
                sa.select(chunks.c.chunk_type, sa.func.count()).select_from(joined)
                .where(indexed).group_by(chunks.c.chunk_type).order_by(chunks.c.chunk_type)
            ).all())
            per_format: dict[str, int] = dict(conn.execute(
                sa.select(documents.c.format, sa.func.count()).where(indexed)
                .group_by(documents.c.format).order_by(documents.c.format)).all())
        chunks_n, tokens_n = int(n), int(tokens)
        return {
            "documents": int(docs),
            "chunks": chunks_n,
            "tokens": tokens_n,
            "avg_tokens_per_chunk": round(tokens_n / chunks_n, 1) if chunks_n else 0.0,
            "per_lens": per_lens,
            "per_chunk_type": per_type,
            "per_format": per_format,
        }

    def signature_groups(self) -> list[dict[str, Any]]:
        """Indexed top-level documents grouped by what made them (see `Catalog`)."""
        root = sa.func.coalesce(documents.c.root_doc_id, documents.c.doc_id)
        keys = (documents.c.ingest_version, documents.c.chunk_size, documents.c.chunk_overlap,
                documents.c.embedding_model, documents.c.ingest_settings)
        with self.engine.connect() as conn:
            per_root: dict[str, int] = dict(conn.execute(
                sa.select(root, sa.func.count()).select_from(chunks.join(documents))
                .group_by(root)).all())
            rows = conn.execute(sa.select(documents.c.doc_id, *keys).where(
                documents.c.status == "indexed", documents.c.parent_doc_id.is_(None))).all()
        groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row in rows:
            key = tuple("" if v is None else v for v in tuple(row)[1:])
            group = groups.setdefault(key, {
                "ingest_version": row[1], "chunk_size": row[2], "chunk_overlap": row[3],
                "embedding_model": row[4], "ingest_settings": row[5], "documents": 0,
                "chunks": 0})
            group["documents"] += 1
            group["chunks"] += per_root.get(row[0], 0)
        return [groups[k] for k in sorted(groups)]

    def fingerprint(self) -> str:
        """Changes whenever documents, chunks, saved answers or archive entries change."""
        values = [
            sa.select(sa.func.count()).select_from(documents),
            sa.select(sa.func.max(documents.c.updated_at)),
            sa.select(sa.func.max(chunks.c.rowid)),
            sa.select(sa.func.count()).select_from(chunks),
            sa.select(sa.func.max(answers.c.updated_at)),
            sa.select(sa.func.count(documents.c.archive_browse_uri)),
        ]
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(*(v.scalar_subquery() for v in values))).one()
        return ":".join(str(v) for v in row)

    def recent_documents(self, limit: int = 10) -> list[dict[str, Any]]:
        """The most recently stored top-level documents (indexed or failed), without text."""
        d = documents.c
        statement = (sa.select(d.doc_id, d.source_id, d.lens, d.status, d.content_version,
                               d.error, d.updated_at,
                               self._chunk_count_of(documents).label("chunks"))
                     .where(d.parent_doc_id.is_(None)).order_by(d.updated_at.desc()).limit(limit))
        return [dict(r) for r in self._read(statement)]

    def ingest_versions(self) -> list[dict[str, Any]]:
        """Known ingest versions with the number of indexed documents each one made."""
        v = ingest_versions.c
        made = (sa.select(sa.func.count()).select_from(documents)
                .where(documents.c.ingest_version == v.version, documents.c.status == "indexed")
                .scalar_subquery())
        statement = (sa.select(v.version, v.description, v.breaking_changes, v.created_at,
                               made.label("documents")).order_by(v.version))
        return [dict(r) for r in self._read(statement)]

    def documents_by_hash(self, file_hash: str) -> list[DocumentRecord]:
        """Indexed documents whose original file has this sha256 (duplicates by content)."""
        return self._documents(documents.c.file_hash == file_hash,
                               documents.c.status == "indexed", counted=False)

    # --- saved answers -----------------------------------------------------------------------

    def save_answer(self, answer_id: str, question: str, response: str, settings: str) -> None:
        """Insert or replace a saved answer (JSON strings)."""
        stamp = now_iso()
        statement = pg_insert(answers).values(
            answer_id=answer_id, question=question, response=response, settings=settings,
            created_at=stamp, updated_at=stamp)
        statement = statement.on_conflict_do_update(
            index_elements=[answers.c.answer_id],
            set_={"response": statement.excluded.response,
                  "settings": statement.excluded.settings,
                  "updated_at": statement.excluded.updated_at})
        with self.engine.begin() as conn:
            conn.execute(statement)

    def list_answers(self, limit: int = 100) -> list[dict[str, Any]]:
        """Saved answers, newest first."""
        statement = sa.select(answers).order_by(answers.c.updated_at.desc()).limit(limit)
        return [dict(r) for r in self._read(statement)]

    def get_answer(self, answer_id: str) -> dict[str, Any] | None:
        """One saved answer."""
        rows = self._read(sa.select(answers).where(answers.c.answer_id == answer_id))
        return dict(rows[0]) if rows else None

    def answer_citing(self, chunk_id: str) -> tuple[str, str] | None:
        """The newest saved answer with a source of this chunk id: (answer_id, source JSON),
        found by PostgreSQL's JSON functions inside the stored responses.
        """
        source = (sa.func.jsonb_array_elements(
            sa.cast(answers.c.response, JSONB)["sources"]).table_valued(sa.column("value", JSONB))
            .alias("s"))
        statement = (sa.select(answers.c.answer_id, sa.cast(source.c.value, sa.Text).label("src"))
                     .select_from(answers).join(source, sa.true())
                     .where(source.c.value["id"].astext == chunk_id)
                     .order_by(answers.c.updated_at.desc()).limit(1))
        rows = self._read(statement)
        return (rows[0]["answer_id"], rows[0]["src"]) if rows else None

    # --- context summaries and the embedding cache ------------------------------------------

    def get_meta(self, key: str) -> str | None:
        """A workspace-level value from the `meta` table (None when unset)."""
        rows = self._read(sa.select(meta.c.value).where(meta.c.key == key))
        return str(rows[0]["value"]) if rows else None

    def put_meta_once(self, key: str, value: str) -> str:
        """Store `value` under `key` unless a value is there already; return the stored value
        (the first writer wins when processes, on any host, race).
        """
        with self.engine.begin() as conn:
            conn.execute(pg_insert(meta).values(key=key, value=value)
                         .on_conflict_do_nothing(index_elements=[meta.c.key]))
        return self.get_meta(key) or value

    def runtimes_in_use(self) -> dict[str, int]:
        """Indexed documents per `embedding_runtime` of their recorded signature."""
        runtime = sa.func.coalesce(
            sa.cast(sa.func.nullif(documents.c.ingest_settings, ""), JSONB)
            ["embedding_runtime"].astext, "torch")
        statement = (sa.select(runtime.label("runtime"), sa.func.count().label("n"))
                     .where(documents.c.status == "indexed").group_by(runtime))
        return {str(r["runtime"]): int(r["n"]) for r in self._read(statement)}

    def get_summary(self, key: str) -> str | None:
        """A cached document summary (contextual chunking with a model)."""
        rows = self._read(sa.select(context_cache.c.summary).where(context_cache.c.key == key))
        return str(rows[0]["summary"]) if rows else None

    def put_summary(self, key: str, summary: str) -> None:
        """Cache a document summary (idempotent)."""
        statement = pg_insert(context_cache).values(key=key, summary=summary)
        with self.engine.begin() as conn:
            conn.execute(statement.on_conflict_do_update(
                index_elements=[context_cache.c.key], set_={"summary": summary}))

    def get_embeddings(self, model_id: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors for these text hashes."""
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(hashes), 1000):
            statement = sa.select(embedding_cache.c.text_hash, embedding_cache.c.vector).where(
                embedding_cache.c.model_id == model_id,
                embedding_cache.c.text_hash.in_(list(hashes[i : i + 1000])))
            for row in self._read(statement):
                out[row["text_hash"]] = np.frombuffer(row["vector"], dtype=np.float32)
        return out

    def put_embeddings(self, model_id: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        """Store vectors (idempotent)."""
        if not items:
            return
        rows = {h: {"model_id": model_id, "text_hash": h, "dim": int(v.shape[0]),
                    "vector": np.asarray(v, np.float32).tobytes()} for h, v in items}
        statement = pg_insert(embedding_cache)
        statement = statement.on_conflict_do_update(
            index_elements=[embedding_cache.c.model_id, embedding_cache.c.text_hash],
            set_={"dim": statement.excluded.dim, "vector": statement.excluded.vector})
        with self.engine.begin() as conn:
            conn.execute(statement, list(rows.values()))

    def clear(self) -> None:
        """Delete every document and chunk (the embedding cache is kept)."""
        with self.engine.begin() as conn:
            conn.execute(sa.delete(chunks))
            conn.execute(sa.delete(documents))


class PgTransaction:
    """A catalog transaction of the PostgreSQL backend: the SQLAlchemy connection (`conn`) for
    `PgCatalog`'s write methods. `execute` / `executemany` with SQL text are refused, since
    callers that pass SQLite SQL are the ones not ported yet.
    """

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn

    def execute(self, *_args: Any) -> Any:
        """Refused (SQLite SQL): raises `BackendUnsupportedError` naming the caller."""
        raise _unsupported(sys._getframe(1))

    def executemany(self, *_args: Any) -> Any:
        """Refused (SQLite SQL): raises `BackendUnsupportedError` naming the caller."""
        raise _unsupported(sys._getframe(1))


def _connection(tx: Any) -> sa.Connection:
    """The SQLAlchemy connection of a `PgTransaction` (or a connection itself)."""
    return tx.conn if isinstance(tx, PgTransaction) else tx


def _unsupported(frame: Any) -> BackendUnsupportedError:
    """The error for SQLite-only code reached on PostgreSQL, naming the calling function."""
    module = frame.f_globals.get("__name__", "?")
    operation = f"{module}.{frame.f_code.co_qualname}"
    return BackendUnsupportedError(
        f"{operation} is not implemented on the PostgreSQL backend yet (it runs SQLite SQL "
        "on the catalog); use an embedded workspace for it (no database_url) — docs/team.md "
        "lists what the PostgreSQL backend does")
