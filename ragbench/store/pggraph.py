"""The context graph's latest save in the workspace's PostgreSQL schema (team tier).

On PostgreSQL every host reads one graph: `GraphService` saves its two files (arrays.npz and
nodes.json, tied by a save id) into table `graph_saves` after each build or update, and a host
whose local copy has another save id loads the database's instead of building its own. The
table holds one row, replaced by one `INSERT ... ON CONFLICT DO UPDATE`: a reader sees one whole
save, and of two writers the last complete save wins, never a mix of the two.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert

from ragbench.store.catalog_base import now_iso
from ragbench.store.postgres_tables import graph_saves


@dataclass(frozen=True)
class GraphSave:
    """One complete save of a graph: its two files' bytes, its save id, the catalog state
    (`Catalog.fingerprint`) it was built from, and when it was saved.
    """

    save_id: str
    arrays: bytes
    nodes: bytes
    catalog_state: str = ""
    saved_at: str = ""


class PgGraphSaves:
    """The latest graph save of one workspace schema (see the module docstring)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine

    def save_id(self) -> str | None:
        """The save id of the stored graph (None when none is stored); a cheap check."""
        with self.engine.connect() as conn:
            return conn.execute(sa.select(graph_saves.c.save_id)
                                .where(graph_saves.c.id == 1)).scalar()

    def fetch(self, conn: sa.Connection | None = None) -> GraphSave | None:
        """The stored graph, or None (on `conn`: read in its open transaction)."""
        statement = sa.select(graph_saves).where(graph_saves.c.id == 1)
        if conn is not None:
            row = conn.execute(statement).first()
        else:
            with self.engine.connect() as own:
                row = own.execute(statement).first()
        if row is None:
            return None
        return GraphSave(save_id=row.save_id, arrays=bytes(row.arrays), nodes=bytes(row.nodes),
                         catalog_state=row.catalog_state, saved_at=row.saved_at)

    def put(self, save: GraphSave, conn: sa.Connection | None = None) -> None:
        """Replace the stored graph with `save` in one statement (the last one wins); on
        `conn`, inside its open transaction (`ragbench migrate` writes it with the rest).
        """
        values = {"save_id": save.save_id, "arrays": save.arrays, "nodes": save.nodes,
                  "catalog_state": save.catalog_state, "saved_at": save.saved_at or now_iso()}
        statement = pg_insert(graph_saves).values(id=1, **values).on_conflict_do_update(
            index_elements=[graph_saves.c.id], set_=values)
        if conn is not None:
            conn.execute(statement)
            return
        with self.engine.begin() as own:
            own.execute(statement)

    def delete(self, conn: sa.Connection | None = None) -> None:
        """Forget the stored graph (the workspace was cleared, or a rebuild starts over; on
        `conn`: in its open transaction).
        """
        if conn is not None:
            conn.execute(sa.delete(graph_saves))
            return
        with self.engine.begin() as own:
            own.execute(sa.delete(graph_saves))
