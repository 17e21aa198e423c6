"""`ragbench migrate`: copy a workspace between the embedded backend and PostgreSQL.

- embedded -> PostgreSQL (`to_postgres`): every catalog table (ingest versions, documents,
  chunks, the embedding and context-summary caches, saved answers, chats, reports) copied
  row by row with its ids and `rowid`s, and the vectors read from Chroma and written to
  pgvector as they are (no re-embedding), all in ONE PostgreSQL transaction into a schema that
  must be empty: a failed copy leaves nothing behind. The originals under `files/` are
  copied into the `originals` table in that transaction too (those whose content is what
  the catalog recorded); the folder itself (its `files/` cache, the archive, the context
  graph) stays where it is, and the PostgreSQL workspace keeps using it as its folder.
- PostgreSQL -> a folder (`to_folder`): the same tables into a new SQLite catalog and the
  vectors into a new Chroma store, plus a copy of the source folder's files (everything but
  its own catalog, Chroma store and lock file; `settings.toml` without the two database
  settings), and the originals of documents that folder lacks (stored by other hosts) written
  from the `originals` table into `files/<doc_id>/`, all built in a temporary folder next to
  the target and renamed into place at the end. The target must be absent or empty, and no
  job may still be queued (the embedded backend has no queue); the queue's own tables
  (`uploads`, procrastinate's) are not copied.

The source is read in one snapshot (a SQLite read transaction under the workspace write lock;
a PostgreSQL REPEATABLE READ transaction), so a copy never mixes two states of it. Tables
are compared column by column first: a source column the target lacks is refused, not
dropped. Per-table progress goes to `progress(table, rows done, rows total)`.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tomllib
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import sqlalchemy as sa
import tomli_w

from ragbench.errors import StoreError
from ragbench.ids import file_hash

TABLES = (
    "ingest_versions", "documents", "chunks", "embedding_cache", "context_cache", "answers",
    "conversations", "conversation_turns", "reports", "report_parts", "report_part_versions",
    "report_sources",
)
"""Catalog tables in foreign-key order (the SQLite `meta` flags are SQLite's own). Table and
column names in SQL text below come from here and from the two schemas, never from input."""
ROWID_TABLES = ("documents", "chunks", "conversations")
"""Tables whose SQLite `rowid` is a column on PostgreSQL (it orders ties): copied too."""
FOLDER_SKIP = {"catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm", "chroma",
               ".write.lock", "settings.toml"}
"""What of a workspace folder is the embedded stores (or rewritten), not folder-side files."""
BATCH = 1000

Progress = Callable[[str, int, int], None]


def _quiet(_table: str, _done: int, _total: int) -> None:
    return None


def parse_target(target: str, schema: str | None) -> tuple[str, str | None]:
    """(database URL, schema) for `postgresql://...[#schema]`, (folder, None) otherwise."""
    if target.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        url, _, fragment = target.partition("#")
        if fragment and schema and fragment != schema:
            raise StoreError(f"two schemas given: #{fragment} in the URL and --schema {schema}")
        return url, fragment or schema or "ragbench"
    if schema:
        raise StoreError("--schema applies to a postgresql:// target only")
    return target, None


# --- embedded -> PostgreSQL -----------------------------------------------------------------


def to_postgres(
    conn: sqlite3.Connection, vectors: Any, url: str, schema: str,
    progress: Progress = _quiet, files_dir: Path | None = None,
) -> dict[str, int]:
    """Copy the SQLite catalog on `conn` and the Chroma `vectors` into the empty PostgreSQL
    schema `schema` at `url`, in one transaction; returns rows copied per table (and
    `vectors`). With `files_dir` the documents' originals found there (with the content the
    catalog recorded) go into the `originals` table in the same transaction (`originals`: how
    many). Hold the source's write lock around the call.
    """
    from ragbench.store import postgres_fts
    from ragbench.store.originals import PgOriginals
    from ragbench.store.pgvectors import PgVectors
    from ragbench.store.postgres_base import connect, migrate

    engine = connect(url, schema)
    try:
        migrate(engine, schema)
        counts: dict[str, int] = {}
        conn.execute("BEGIN")  # one snapshot of the source (WAL: writers do not disturb it)
        try:
            with engine.begin() as pg:
                _refuse_nonempty_schema(pg, schema)
                for name in TABLES:
                    table = sa.Table(name, sa.MetaData(), autoload_with=pg)
                    columns = _shared_columns(name, _sqlite_columns(conn, name), table)
                    total = conn.execute(
                        f"SELECT count(*) FROM {name}").fetchone()[0]  # noqa: S608 - ours
                    if name == "ingest_versions":  # made by migrate's first catalog open
                        pg.execute(table.delete())
                    done = 0
                    for rows in _sqlite_batches(conn, name, columns):
                        pg.execute(table.insert(), rows)
                        done += len(rows)
                        progress(name, done, total)
                    progress(name, done, total)
                    counts[name] = done
                progress("full-text index", 0, counts["chunks"])
                progress("full-text index", postgres_fts.rebuild(pg), counts["chunks"])
                for name in ROWID_TABLES:
                    pg.execute(sa.text(  # the next rowid after the copied ones
                        f"SELECT setval(pg_get_serial_sequence('{name}', 'rowid'), "  # noqa: S608
                        "GREATEST(COALESCE(max(rowid), 0), 1), max(rowid) IS NOT NULL) "
                        f"FROM {name}"))
                ids = sorted(vectors.ids())
                store = PgVectors(engine, schema)
                for start in range(0, len(ids), BATCH):
                    part = ids[start : start + BATCH]
                    meta = vectors.get_metadata(part)
                    store.write(pg, part, vectors.get_vectors(part), [meta[i] for i in part])
                    progress("vectors", start + len(part), len(ids))
                progress("vectors", len(ids), len(ids))
                counts["vectors"] = len(ids)
                if files_dir is not None:
                    counts["originals"] = _originals_to_postgres(
                        conn, files_dir, PgOriginals(engine), pg, progress)
        finally:
            conn.execute("ROLLBACK")
        return counts
    except sa.exc.SQLAlchemyError as e:
        raise StoreError(f"the copy to PostgreSQL schema {schema!r} failed and was rolled "
                         f"back: {str(getattr(e, 'orig', e)).strip().splitlines()[0]}") from e
    finally:
        engine.dispose()


def _refuse_nonempty_schema(pg: sa.Connection, schema: str) -> None:
    """StoreError when any data table of the target schema has a row."""
    full = [n for n in (*TABLES, "chunk_vectors") if n != "ingest_versions"]
    for name in full:
        if pg.execute(sa.text(f"SELECT EXISTS (SELECT 1 FROM {name})")  # noqa: S608
                      ).scalar():
            raise StoreError(
                f"PostgreSQL schema {schema!r} already holds a workspace ({name} is not "
                "empty): migrate into a new or empty schema (--schema NAME)")


DERIVED_COLUMNS = {"chunks": {"fts_text"}}
"""SQLite columns the other backend derives itself: `fts_text` is the SQLite full-text index's
stemmed copy of the chunk text (PostgreSQL generates its `tsv` column; a copy back into SQLite
refills it with `Catalog.fts_rebuild`)."""


def _sqlite_columns(conn: sqlite3.Connection, name: str) -> list[str]:
    columns = [r[1] for r in conn.execute(f"PRAGMA table_info({name})")
               if r[1] not in DERIVED_COLUMNS.get(name, set())]
    return (["rowid"] if name in ROWID_TABLES else []) + columns


def _shared_columns(name: str, source: Sequence[str], target: sa.Table) -> list[str]:
    """The source columns, all of which the target must have (a copy never drops data)."""
    have = {c.name for c in target.c if c.computed is None}
    lost = [c for c in source if c not in have]
    if lost:
        raise StoreError(f"table {name}: the target has no column(s) {lost}; it was made by "
                         "another ragbench version (upgrade both sides first)")
    return list(source)


def _sqlite_batches(conn: sqlite3.Connection, name: str,
                    columns: Sequence[str]) -> Iterator[list[dict[str, Any]]]:
    order = " ORDER BY rowid" if name in ROWID_TABLES else ""  # some are WITHOUT ROWID
    cursor = conn.execute(f"SELECT {', '.join(columns)} FROM {name}{order}")  # noqa: S608
    while rows := cursor.fetchmany(BATCH):
        yield [dict(zip(columns, tuple(r), strict=True)) for r in rows]


# --- PostgreSQL -> a folder -----------------------------------------------------------------


def to_folder(
    engine: sa.Engine, source_folder: Path, target: Path, progress: Progress = _quiet,
) -> dict[str, int]:
    """Copy the PostgreSQL workspace on `engine` (catalog, vectors) and the folder-side files
    of `source_folder` into the new embedded workspace `target` (absent or empty), built in a
    temporary folder and renamed into place; returns rows copied per table (and `vectors`).
    """
    from ragbench.store.catalog import Catalog
    from ragbench.store.vectors import forget_client, open_vectors

    target = Path(target).absolute()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise StoreError(f"{target} exists and is not an empty folder: migrate into a new one")
    if target.resolve() == Path(source_folder).resolve():
        raise StoreError("the target folder is the source workspace's own folder")
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.parent / f".{target.name}.migrating-{uuid.uuid4().hex[:8]}"
    temp.mkdir()
    catalog: Catalog | None = None
    try:
        catalog = Catalog(temp / "catalog.sqlite")
        conn = catalog.conn
        counts: dict[str, int] = {}
        with engine.connect() as pg:
            pg = pg.execution_options(isolation_level="REPEATABLE READ")
            with pg.begin():  # one snapshot of the source
                _refuse_pending_uploads(pg)
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for name in TABLES:
                        counts[name] = _copy_to_sqlite(pg, conn, name, progress)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                catalog.fts_rebuild()  # the index's stemmed text (not a PostgreSQL column)
                counts["vectors"] = _vectors_to_chroma(pg, open_vectors(temp / "chroma"),
                                                       progress)
                documents = _pg_documents(pg)
        catalog.close()
        catalog = None
        forget_client(temp / "chroma")
        _copy_folder_files(Path(source_folder), temp)
        counts["originals"] = _originals_to_folder(engine, documents, temp)
        os.rename(temp, target)  # onto an absent or empty folder: atomic on POSIX
        return counts
    except sa.exc.SQLAlchemyError as e:
        raise StoreError(f"reading the PostgreSQL workspace failed; nothing was written to "
                         f"{target}: {str(getattr(e, 'orig', e)).strip().splitlines()[0]}") from e
    finally:
        if catalog is not None:
            catalog.close()
        if temp.exists():
            forget_client(temp / "chroma")
            shutil.rmtree(temp, ignore_errors=True)


def _pg_documents(pg: sa.Connection) -> list[Any]:
    """(doc_id, file_name, file_hash, source_id, lens, parent_doc_id) of every document."""
    return list(pg.execute(sa.text(
        "SELECT doc_id, file_name, file_hash, source_id, lens, parent_doc_id FROM documents")))


def _refuse_pending_uploads(pg: sa.Connection) -> None:
    """StoreError while uploads wait in the queue (migration 0004): an embedded workspace has
    no queue, so they would be lost; the finished ones' documents are in the catalog.
    """
    if not sa.inspect(pg).has_table("uploads"):
        return
    pending = pg.execute(sa.text("SELECT count(*) FROM uploads WHERE outcome IS NULL")).scalar()
    if pending:
        raise StoreError(f"{pending} uploads are still queued in this workspace (jobs of any "
                         "kind: uploads, paths, re-processing, graph); an embedded "
                         "workspace has no queue: let the workers finish (`ragbench worker "
                         "--once`) and migrate again")


def _copy_to_sqlite(pg: sa.Connection, conn: sqlite3.Connection, name: str,
                    progress: Progress) -> int:
    """Rows of PostgreSQL table `name` into the SQLite table of that name; the row count."""
    table = sa.Table(name, sa.MetaData(), autoload_with=pg)
    have = {r[1] for r in conn.execute(f"PRAGMA table_info({name})")}
    if name in ROWID_TABLES:
        have.add("rowid")
    source = [c.name for c in table.c if c.computed is None]
    lost = [c for c in source if c not in have]
    if lost:
        raise StoreError(f"table {name}: the SQLite catalog has no column(s) {lost}; it was "
                         "made by another ragbench version (upgrade both sides first)")
    total = int(pg.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())
    if name == "ingest_versions":  # the new catalog made its own rows: keep the source's
        conn.execute("DELETE FROM ingest_versions")
    order = [table.c.rowid] if "rowid" in table.c else list(table.primary_key.columns)
    statement = (f"INSERT INTO {name} ({', '.join(source)}) "  # noqa: S608 - checked names
                 f"VALUES ({', '.join('?' for _ in source)})")
    result = pg.execution_options(yield_per=BATCH).execute(
        sa.select(*(table.c[c] for c in source)).order_by(*order))
    done = 0
    for rows in result.partitions():
        conn.executemany(statement, [tuple(_sqlite_value(v) for v in r) for r in rows])
        done += len(rows)
        progress(name, done, total)
    progress(name, done, total)
    return done


def _sqlite_value(value: Any) -> Any:
    return bytes(value) if isinstance(value, memoryview) else value


def _vectors_to_chroma(pg: sa.Connection, store: Any, progress: Progress) -> int:
    """Every pgvector row into the Chroma `store` as stored (no re-embedding); the count."""
    from ragbench.store.pgvectors import table

    total = int(pg.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())
    result = pg.execution_options(yield_per=BATCH).execute(
        sa.select(table.c.chunk_id, table.c.embedding, table.c.metadata)
        .order_by(table.c.chunk_id))
    done = 0
    for rows in result.partitions():
        ids = [r[0] for r in rows]
        data = np.stack([np.asarray(r[1], dtype=np.float32) for r in rows])
        metas: list[Mapping[str, Any]] = [dict(r[2] or {}) for r in rows]
        store.upsert(ids, data, metas)
        done += len(rows)
        progress("vectors", done, total)
    progress("vectors", done, total)
    return done


def _originals_to_postgres(conn: sqlite3.Connection, files_dir: Path, store: Any,
                           pg: sa.Connection, progress: Progress) -> int:
    """Each document's original under `files_dir/<doc_id>/` into `originals` (on `pg`), one
    file in memory at a time; a missing file or one whose content changed is left out (that
    document is then re-processable only where its original is).
    """
    rows = conn.execute("SELECT doc_id, file_name, file_hash FROM documents").fetchall()
    stored = 0
    for done, (doc_id, file_name, digest) in enumerate(rows, 1):
        path = files_dir / doc_id / file_name
        try:
            data = path.read_bytes() if path.is_file() else None
        except OSError:
            data = None
        if data is not None and file_hash(data) == digest:
            store.put(pg, data, file_name)
            stored += 1
        progress("originals", done, len(rows))
    return stored


def _originals_to_folder(engine: sa.Engine, documents: Sequence[Any], temp: Path) -> int:
    """Write into `temp/files/<doc_id>/` the originals (from the `originals` table) of the
    documents whose folder copy is missing (stored by another host), each with its
    `.source.json`, as ingest writes them; how many.
    """
    from ragbench.ingest.originals import SOURCE, OriginalSource
    from ragbench.store.originals import PgOriginals

    store = PgOriginals(engine)
    written = 0
    for doc in documents:
        folder = temp / "files" / doc.doc_id
        if (folder / doc.file_name).exists():
            continue
        data = store.get(doc.file_hash)
        if data is None:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        (folder / doc.file_name).write_bytes(data)
        source = OriginalSource(source_id=doc.source_id, lens=doc.lens,
                                file_name=doc.file_name, parent_doc_id=doc.parent_doc_id)
        (folder / SOURCE).write_text(source.model_dump_json(), encoding="utf-8")
        written += 1
    return written


def _copy_folder_files(source: Path, temp: Path) -> None:
    """The folder-side files of `source` into `temp` (see `FOLDER_SKIP`); `settings.toml`
    without `database_url`/`database_schema`, so the copy opens as an embedded workspace.
    """
    if not source.is_dir():
        return
    for item in source.iterdir():
        if item.name in FOLDER_SKIP or item.name.startswith(".write.lock"):
            continue
        if item.is_dir():
            shutil.copytree(item, temp / item.name, symlinks=True)
        else:
            shutil.copy2(item, temp / item.name)
    settings = source / "settings.toml"
    if settings.exists():
        data = tomllib.loads(settings.read_text(encoding="utf-8"))
        data.pop("database_url", None)
        data.pop("database_schema", None)
        (temp / "settings.toml").write_text(tomli_w.dumps(data), encoding="utf-8")
