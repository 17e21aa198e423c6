"""`ragbench migrate`: copy a workspace between the embedded backend and PostgreSQL.

- embedded -> PostgreSQL (`to_postgres`): every catalog table (ingest versions, documents,
  chunks, the embedding and context-summary caches, saved answers, chats, reports) copied
  row by row with its ids and `rowid`s, and the vectors read from Chroma and written to
  pgvector as they are (no re-embedding), all in ONE PostgreSQL transaction into a schema that
  must be empty: a failed copy leaves nothing behind. The originals under `files/` are
  copied into the `originals` table in that transaction too (those whose content is what
  the catalog recorded), and so is the folder's saved context graph, into `graph_saves`
  (`ragbench.maintenance.movegraph`); the folder itself (its `files/` cache, the archive, the
  graph's local copy) stays where it is, and the PostgreSQL workspace keeps using it.
- PostgreSQL -> a folder (`to_folder`): the same tables into a new SQLite catalog and the
  vectors into a new Chroma store, plus a copy of the source folder's files (everything but
  its own catalog, Chroma store and lock file; `settings.toml` without the two database
  settings), the originals of documents that folder lacks (stored by other hosts) written
  from the `originals` table into `files/<doc_id>/`, and the database's graph save as the
  folder's graph (none saved: no graph files), all built in a temporary folder next to
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
import tomllib
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import sqlalchemy as sa
import tomli_w

from ragbench.errors import StoreError
from ragbench.ids import file_hash
from ragbench.maintenance.movegraph import graph_to_folder, graph_to_postgres
from ragbench.store import tables

if TYPE_CHECKING:
    from ragbench.store.catalog import Catalog

TABLES = (
    "ingest_versions", "documents", "chunks", "embedding_cache", "context_cache", "answers",
    "conversations", "conversation_turns", "reports", "report_parts", "report_part_versions",
    "report_sources",
)
"""Catalog tables in foreign-key order (the SQLite `meta` flags are SQLite's own); each is
copied with the columns reflected from the two schemas (`_stored`)."""
ROWID_TABLES = ("documents", "chunks", "conversations")
"""Tables whose SQLite `rowid` is a column on PostgreSQL (it orders ties): copied too."""
FOLDER_SKIP = {"catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm", "chroma",
               ".write.lock", "settings.toml"}
"""What of a workspace folder is the embedded stores (or rewritten), not folder-side files."""
BATCH = 1000

Progress = Callable[[str, int, int], None]


class Moved(NamedTuple):
    """What a copy did: rows per table (and `vectors`, `originals`, `graph_saves`), and what
    became of the context graph (`ragbench.maintenance.movegraph`), in words.
    """

    counts: dict[str, int]
    graph: str


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
    catalog: Catalog, vectors: Any, url: str, schema: str,
    progress: Progress = _quiet, files_dir: Path | None = None,
    workspace: Path | None = None,
) -> Moved:
    """Copy the SQLite `catalog` and the Chroma `vectors` into the empty PostgreSQL schema
    `schema` at `url`, in one transaction; returns rows copied per table (and `vectors`).
    With `files_dir` the documents' originals found there (with the content the catalog
    recorded) go into the `originals` table in the same transaction (`originals`: how many);
    with `workspace` its saved context graph into `graph_saves` (`graph_saves`: 1 or 0).
    Hold the source's write lock around the call.
    """
    from ragbench.store import postgres_fts
    from ragbench.store.originals import PgOriginals
    from ragbench.store.pgvectors import PgVectors
    from ragbench.store.pgvectors import table as vector_table
    from ragbench.store.postgres_base import connect, migrate

    engine = connect(url, schema)
    try:
        migrate(engine, schema)
        counts: dict[str, int] = {}
        # one snapshot of the source (WAL: writers do not disturb it), one target transaction
        with catalog.snapshot() as lite, engine.begin() as pg:
            _refuse_nonempty_schema(pg, schema, vector_table)
            for name in TABLES:
                counts[name] = _copy_table(lite, pg, name, progress, "the target")
            progress("full-text index", 0, counts["chunks"])
            progress("full-text index", postgres_fts.rebuild(pg), counts["chunks"])
            for name in ROWID_TABLES:
                _continue_rowids(pg, name)
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
                    lite, files_dir, PgOriginals(engine), pg, progress)
            graph = "not copied (no workspace folder given)"
            if workspace is not None:
                progress("graph", 0, 1)
                counts["graph_saves"], graph = graph_to_postgres(workspace, pg)
                progress("graph", 1, 1)
        return Moved(counts, graph)
    except sa.exc.SQLAlchemyError as e:
        raise StoreError(f"the copy to PostgreSQL schema {schema!r} failed and was rolled "
                         f"back: {str(getattr(e, 'orig', e)).strip().splitlines()[0]}") from e
    finally:
        engine.dispose()


def _refuse_nonempty_schema(pg: sa.Connection, schema: str, vector_table: sa.Table) -> None:
    """StoreError when any data table of the target schema has a row."""
    full = [tables.metadata.tables[n] for n in TABLES if n != "ingest_versions"]
    for table in (*full, vector_table):
        if pg.execute(sa.select(sa.exists().select_from(table))).scalar():
            raise StoreError(
                f"PostgreSQL schema {schema!r} already holds a workspace ({table.name} is not "
                "empty): migrate into a new or empty schema (--schema NAME)")


def _continue_rowids(pg: sa.Connection, name: str) -> None:
    """Set the `rowid` sequence of PostgreSQL table `name` to the next row id after the
    copied ones (1 for an empty table).
    """
    top = sa.func.max(tables.metadata.tables[name].c.rowid)
    pg.execute(sa.select(sa.func.setval(
        sa.func.pg_get_serial_sequence(name, "rowid"),
        sa.func.greatest(sa.func.coalesce(top, 0), 1), top.is_not(None))))


DERIVED_COLUMNS = {"chunks": {"fts_text"}}
"""SQLite columns the other backend derives itself: `fts_text` is the SQLite full-text index's
stemmed copy of the chunk text (PostgreSQL generates its `tsv` column; a copy back into SQLite
refills it with `Catalog.fts_rebuild`)."""


def _stored(conn: sa.Connection, name: str) -> sa.TableClause:
    """Table `name` as stored on `conn` (reflected, so a column `tables` does not declare is
    copied too): every column but generated and derived ones, with `rowid` on SQLite for
    `ROWID_TABLES` (its implicit row id). PostgreSQL's columns keep their reflected types (how
    the driver binds them); SQLite's are untyped, so values pass as `sqlite3` gives them.
    """
    typed = conn.dialect.name == "postgresql"
    columns = [sa.column(c["name"], c["type"] if typed else None)
               for c in sa.inspect(conn).get_columns(name)
               if "computed" not in c and c["name"] not in DERIVED_COLUMNS.get(name, set())]
    if name in ROWID_TABLES and all(c.name != "rowid" for c in columns):
        columns.insert(0, sa.column("rowid"))
    return sa.table(name, *columns)


def _copy_table(source: sa.Connection, target: sa.Connection, name: str, progress: Progress,
                target_name: str) -> int:
    """Rows of table `name` from `source` into the table of that name on `target` (in their
    open transactions), `BATCH` at a time in row id (or primary key) order; the row count.
    Every source column must be a target column (a copy never drops data; `target_name`
    names the target in the error).
    """
    table, into = _stored(source, name), _stored(target, name)
    lost = [c for c in table.c.keys() if c not in into.c]
    if lost:
        raise StoreError(f"table {name}: {target_name} has no column(s) {lost}; it was "
                         "made by another ragbench version (upgrade both sides first)")
    total = int(source.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())
    if name == "ingest_versions":  # the target's first open made its own rows: keep the source's
        target.execute(into.delete())
    order = (["rowid"] if name in ROWID_TABLES
             else sa.inspect(source).get_pk_constraint(name)["constrained_columns"])
    result = source.execute(sa.select(table).order_by(*(table.c[c] for c in order)),
                            execution_options={"yield_per": BATCH})
    done = 0
    for rows in result.mappings().partitions():
        target.execute(into.insert(), [dict(r) for r in rows])
        done += len(rows)
        progress(name, done, total)
    progress(name, done, total)
    return done


# --- PostgreSQL -> a folder -----------------------------------------------------------------


def to_folder(
    engine: sa.Engine, source_folder: Path, target: Path, progress: Progress = _quiet,
) -> Moved:
    """Copy the PostgreSQL workspace on `engine` (catalog, vectors, the graph's save) and the
    folder-side files of `source_folder` into the new embedded workspace `target` (absent or
    empty), built in a temporary folder and renamed into place; returns rows copied per table
    (and `vectors`, `originals`, `graph_saves`).
    """
    from ragbench.store.catalog import Catalog
    from ragbench.store.pggraph import PgGraphSaves
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
        counts: dict[str, int] = {}
        with engine.connect() as pg:
            pg = pg.execution_options(isolation_level="REPEATABLE READ")
            with pg.begin():  # one snapshot of the source
                _refuse_pending_uploads(pg)
                with catalog.writing() as lite:  # one transaction: all tables or none
                    for name in TABLES:
                        counts[name] = _copy_table(pg, lite, name, progress,
                                                   "the SQLite catalog")
                catalog.fts_rebuild()  # the index's stemmed text (not a PostgreSQL column)
                counts["vectors"] = _vectors_to_chroma(pg, open_vectors(temp / "chroma"),
                                                       progress)
                documents = _pg_documents(pg)
                save = PgGraphSaves(engine).fetch(pg)
        catalog.close()
        catalog = None
        forget_client(temp / "chroma")
        _copy_folder_files(Path(source_folder), temp)
        counts["originals"] = _originals_to_folder(engine, documents, temp)
        counts["graph_saves"], graph = graph_to_folder(save, temp)
        progress("graph", 1, 1)
        os.rename(temp, target)  # onto an absent or empty folder: atomic on POSIX
        return Moved(counts, graph)
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
    d = tables.documents.c
    return list(pg.execute(sa.select(d.doc_id, d.file_name, d.file_hash, d.source_id, d.lens,
                                     d.parent_doc_id)))


def _refuse_pending_uploads(pg: sa.Connection) -> None:
    """StoreError while uploads wait in the queue (migration 0004): an embedded workspace has
    no queue, so they would be lost; the finished ones' documents are in the catalog.
    """
    if not sa.inspect(pg).has_table("uploads"):
        return
    uploads = sa.table("uploads", sa.column("outcome"))
    pending = pg.execute(sa.select(sa.func.count()).select_from(uploads)
                         .where(uploads.c.outcome.is_(None))).scalar()
    if pending:
        raise StoreError(f"{pending} uploads are still queued in this workspace (jobs of any "
                         "kind: uploads, paths, re-processing, graph); an embedded "
                         "workspace has no queue: let the workers finish (`ragbench worker "
                         "--once`) and migrate again")


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


def _originals_to_postgres(lite: sa.Connection, files_dir: Path, store: Any,
                           pg: sa.Connection, progress: Progress) -> int:
    """Each document (read on `lite`, the source's snapshot) its original under
    `files_dir/<doc_id>/` into `originals` (on `pg`), one file in memory at a time; a missing
    file or one whose content changed is left out (that document is then re-processable only
    where its original is).
    """
    d = tables.documents.c
    rows = lite.execute(sa.select(d.doc_id, d.file_name, d.file_hash)).all()
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
