"""pgvector store of the PostgreSQL backend: chunk vectors in the workspace schema.

Implements `VectorStore` (and the metadata methods `ChromaVectors` adds for the doctor and
backfill) on the table `chunk_vectors` of migration 0001: the vector, the three filter fields
as columns (`lens`, `chunk_type`, `doc_id`, indexed) and the rest of the flat Chroma metadata
as JSONB. Queries take the Chroma `where` the retriever builds (`$in`, `$and`, equality) so the
retriever does not know which store it talks to.

Similarity is cosine (`<=>`, reported as 1 - distance like Chroma's). pgvector's HNSW index
needs one dimension, which is the embedding model's: the first upsert creates the index for its
dimension (an expression index on `embedding::vector(dim)`, cosine ops, `m` 16 and
`ef_construction` 200 as in Chroma), and vectors of another dimension are refused, as Chroma
refuses them. Queries run with `hnsw.ef_search` = `EF_SEARCH` (1000, pgvector's maximum and
Chroma's setting here). pgvector before 0.8 filters after the index scan, so a filter that
keeps few of the `ef_search` candidates returns fewer than `k` (docs/team.md).

Every process reads the database, so there is no generation token to watch (`refresh` is a
no-op) and a write is visible to every replica at its commit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import sqlalchemy as sa
from pgvector.sqlalchemy import VECTOR
from psycopg.types.json import Jsonb
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.dialects.postgresql import insert as pg_insert

from ragbench.errors import StoreError
from ragbench.store.vectors import EF_SEARCH, flat_metadata

_COLUMNS = ("lens", "chunk_type", "doc_id")
"""Metadata keys stored as indexed columns (the retriever's filters)."""
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")

table = sa.Table(
    "chunk_vectors", sa.MetaData(), sa.Column("chunk_id", sa.Text, primary_key=True),
    sa.Column("embedding", VECTOR()), sa.Column("doc_id", sa.Text), sa.Column("lens", sa.Text),
    sa.Column("chunk_type", sa.Text), sa.Column("metadata", JSONB),
)


class PgVectors:
    """The pgvector chunk vectors of one workspace (see the module docstring)."""

    backend = "postgres"

    def __init__(self, engine: sa.Engine, schema: str) -> None:
        self.engine = engine
        self.schema = schema
        self.reopens = 0

    def refresh(self) -> bool:
        """Nothing to reopen: every query reads the database (kept for `ChromaVectors` users)."""
        return False

    def dimension(self) -> int | None:
        """The dimension of the stored vectors (None while empty)."""
        with self.engine.connect() as conn:
            return conn.execute(sa.text(
                "SELECT vector_dims(embedding) FROM chunk_vectors LIMIT 1")).scalar()

    def _ensure_index(self, conn: sa.Connection, dim: int) -> None:
        """The HNSW index for `dim` (made once, under an advisory lock against a racing
        replica); a different dimension than the stored vectors' is refused.
        """
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(current_schema()))"))
        have = conn.execute(sa.text(
            "SELECT vector_dims(embedding) FROM chunk_vectors LIMIT 1")).scalar()
        if have is not None and have != dim:
            raise StoreError(
                f"the vector store of workspace schema {self.schema!r} holds {have}-dimensional "
                f"vectors; these have {dim} (another embedding model): clear the workspace or "
                "use another database_schema")
        conn.execute(sa.text(
            f"CREATE INDEX IF NOT EXISTS chunk_vectors_hnsw_{int(dim)} ON chunk_vectors "
            f"USING hnsw ((embedding::vector({int(dim)})) vector_cosine_ops) "
            "WITH (m = 16, ef_construction = 200)"))

    def upsert(
        self, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[Mapping[str, Any]]
    ) -> None:
        """Insert or replace vectors with their metadata, in one transaction."""
        if not len(ids):
            return
        try:
            with self.engine.begin() as conn:
                self.write(conn, ids, vectors, metadatas)
        except sa.exc.SQLAlchemyError as e:
            raise StoreError(f"could not store vectors in PostgreSQL: {e}") from e

    def write(
        self, conn: sa.Connection, ids: Sequence[str], vectors: np.ndarray,
        metadatas: Sequence[Mapping[str, Any]],
    ) -> None:
        """`upsert` inside the caller's transaction `conn` (`ragbench migrate` copies a whole
        workspace in one transaction, so a failed copy leaves no vectors behind).
        """
        if not len(ids):
            return
        data = np.asarray(vectors, dtype=np.float32)
        rows = []
        for chunk_id, vector, meta in zip(ids, data, metadatas, strict=True):
            flat = flat_metadata(meta)
            rows.append({"chunk_id": chunk_id, "embedding": vector,
                         **{c: flat.get(c) for c in _COLUMNS}, "metadata": flat})
        statement = pg_insert(table)
        statement = statement.on_conflict_do_update(
            index_elements=[table.c.chunk_id],
            set_={c: statement.excluded[c] for c in ("embedding", *_COLUMNS, "metadata")})
        self._ensure_index(conn, int(data.shape[1]))
        for i in range(0, len(rows), 1000):
            conn.execute(statement, rows[i : i + 1000])

    def load(self, batches: Iterable[tuple[Sequence[str], np.ndarray,
                                           Sequence[Mapping[str, Any]]]],
             build_memory_mb: int = 1024) -> int:
        """Fill an empty store with many vectors (ids, vectors, metadatas per batch) in one
        transaction, and say how many were written.

        The rows go in by binary COPY with no index, then the HNSW index is built once over
        all of them, in memory while the graph fits `build_memory_mb` and with PostgreSQL's
        parallel maintenance workers: many times faster than `upsert`, which grows the index
        row by row. A store that already holds vectors is refused (StoreError): the bulk path
        is for a new workspace or a copied one, where nothing can be overwritten.
        """
        from pgvector.psycopg import register_vector

        written, dim = 0, None
        with self.engine.begin() as conn:
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(current_schema()))"))
            if conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one():
                raise StoreError(f"the vector store of workspace schema {self.schema!r} is not "
                                 "empty: bulk loading is for an empty store (use upsert)")
            for name in _hnsw_indexes(conn):
                conn.execute(sa.text(f'DROP INDEX "{name}"'))
            raw: Any = conn.connection.driver_connection  # the psycopg connection
            register_vector(raw)
            with raw.cursor() as cursor, cursor.copy(
                    "COPY chunk_vectors (chunk_id, embedding, doc_id, lens, chunk_type, metadata)"
                    " FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(["text", "vector", "text", "text", "text", "jsonb"])
                for ids, vectors, metadatas in batches:
                    data = np.asarray(vectors, dtype=np.float32)
                    if dim is not None and data.shape[1] != dim:
                        raise StoreError(f"vectors of {data.shape[1]} and {dim} dimensions "
                                         "in one load")
                    dim = int(data.shape[1])
                    for chunk_id, vector, meta in zip(ids, data, metadatas, strict=True):
                        flat = flat_metadata(meta)
                        copy.write_row([chunk_id, vector, *(flat.get(c) for c in _COLUMNS),
                                        Jsonb(flat)])
                    written += len(ids)
            if dim is not None:
                conn.execute(sa.text(
                    f"SET LOCAL maintenance_work_mem = '{int(build_memory_mb)}MB'"))
                self._ensure_index(conn, dim)
        return written

    def update_metadata(self, ids: Sequence[str], metadatas: Sequence[Mapping[str, Any]]) -> None:
        """Replace the metadata of stored vectors (the vectors themselves stay)."""
        rows = []
        for chunk_id, meta in zip(ids, metadatas, strict=True):
            flat = flat_metadata(meta)
            rows.append({"id": chunk_id, **{c: flat.get(c) for c in _COLUMNS}, "meta": flat})
        if not rows:
            return
        statement = (sa.update(table).where(table.c.chunk_id == sa.bindparam("id"))
                     .values(metadata=sa.bindparam("meta", type_=JSONB),
                             **{c: sa.bindparam(c) for c in _COLUMNS}))
        with self.engine.begin() as conn:
            conn.execute(statement, rows)

    def get_metadata(self, ids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """Stored metadata by id (every vector when `ids` is None)."""
        statement = sa.select(table.c.chunk_id, table.c.metadata)
        if ids is not None:
            statement = statement.where(table.c.chunk_id.in_(list(ids)))
        with self.engine.connect() as conn:
            return {r[0]: dict(r[1] or {}) for r in conn.execute(statement)}

    def delete(self, ids: Sequence[str]) -> None:
        """Remove vectors by id (missing ids are ignored)."""
        if not ids:
            return
        with self.engine.begin() as conn:
            conn.execute(sa.delete(table).where(table.c.chunk_id.in_(list(ids))))

    def query(
        self, vector: np.ndarray, k: int, where: Mapping[str, Any] | None = None
    ) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the `k` nearest vectors that pass `where`."""
        query = np.asarray(vector, dtype=np.float32)
        dim = int(query.shape[0])
        distance = sa.cast(table.c.embedding, VECTOR(dim)).cosine_distance(query)
        statement = (sa.select(table.c.chunk_id, distance.label("distance"))
                     .where(*_conditions(where or {})).order_by(distance).limit(k))
        with self.engine.begin() as conn:
            stored = conn.execute(sa.text(
                "SELECT vector_dims(embedding) FROM chunk_vectors LIMIT 1")).scalar()
            if stored is None:
                return []
            if stored != dim:
                raise StoreError(f"the query vector has {dim} dimensions, the stored vectors "
                                 f"{stored} (another embedding model)")
            conn.execute(sa.text(f"SET LOCAL hnsw.ef_search = {int(EF_SEARCH)}"))
            return [(r[0], 1.0 - float(r[1])) for r in conn.execute(statement)]

    def ids(self) -> set[str]:
        """Every stored id."""
        with self.engine.connect() as conn:
            return set(conn.execute(sa.select(table.c.chunk_id)).scalars())

    def count(self) -> int:
        """Number of stored vectors."""
        with self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())

    def get_vectors(self, ids: Sequence[str]) -> np.ndarray:
        """The stored vectors of `ids`, in that order (KeyError naming a missing id)."""
        found: dict[str, np.ndarray] = {}
        with self.engine.connect() as conn:
            for i in range(0, len(ids), 1000):
                part = list(ids[i : i + 1000])
                for chunk_id, vector in conn.execute(
                        sa.select(table.c.chunk_id, table.c.embedding)
                        .where(table.c.chunk_id.in_(part))):
                    found[chunk_id] = np.asarray(vector, dtype=np.float32)
        missing = [i for i in ids if i not in found]
        if missing:
            raise KeyError(f"no vector stored for chunk {missing[0]} ({len(missing)} missing)")
        return np.stack([found[i] for i in ids]) if ids else np.zeros((0, 0), np.float32)

    def reset(self) -> None:
        """Drop every vector and the HNSW indexes (the next upsert makes one for its
        dimension, so a workspace cleared for another embedding model can start over).
        """
        with self.engine.begin() as conn:
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(current_schema()))"))
            conn.execute(sa.delete(table))
            for name in _hnsw_indexes(conn):
                conn.execute(sa.text(f'DROP INDEX "{name}"'))


def _hnsw_indexes(conn: sa.Connection) -> list[str]:
    """The names of the workspace's HNSW indexes (one per dimension ever stored)."""
    return list(conn.execute(sa.text(
        "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
        "AND tablename = 'chunk_vectors' AND indexname LIKE 'chunk_vectors_hnsw_%'"
    )).scalars().all())


def _conditions(where: Mapping[str, Any]) -> list[sa.ColumnElement[bool]]:
    """SQL conditions for a Chroma `where` (`$and`, `$in`, `$eq`, plain equality)."""
    out: list[sa.ColumnElement[bool]] = []
    for key, value in where.items():
        if key == "$and":
            for part in value:
                out += _conditions(part)
            continue
        if not _KEY.match(key):
            raise StoreError(f"unsupported vector filter key {key!r}")
        column = (table.c[key] if key in _COLUMNS
                  else table.c.metadata[key].astext)
        if isinstance(value, Mapping):
            for op, operand in value.items():
                if op == "$in":
                    out.append(column.in_([str(v) for v in operand]))
                elif op == "$eq":
                    out.append(column == str(operand))
                else:
                    raise StoreError(f"unsupported vector filter operator {op!r}")
        else:
            out.append(column == str(value))
    return out
