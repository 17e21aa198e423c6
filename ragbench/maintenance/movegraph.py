"""The context graph in `ragbench migrate` (`ragbench.maintenance.move`).

A folder's graph is its two files `graph/arrays.npz` and `graph/nodes.json` (one save, tied by
a save id); on PostgreSQL the graph every host reads is the one row of `graph_saves`
(`PgGraphSaves`), and a host trusts no local files when that row is absent. A migration carries
the save across byte for byte (the same save id, edges with their `created_at` times, the
build's state), so the copy opens with the source's graph instead of building one:

- into PostgreSQL (`graph_to_postgres`): the folder's two files, when they load as one whole
  save (`ContextGraph.load`), written in the migration's transaction (a failed migration leaves
  no graph either). A graph that is missing or does not load is reported and left out (the
  workspace builds its own on first use): the graph is derived data, never worth failing the
  copy of the catalog for.
- into a folder (`graph_to_folder`): the database's save, read in the copy's snapshot, written
  as the new folder's two files in place of any copied from the source folder; with no save
  (or one that does not load), no graph files, so the folder builds a fresh graph rather than
  trust files the database no longer vouches for.

Kept apart from `move` (tables, vectors, originals) so that each module stays one concern.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import sqlalchemy as sa

from ragbench.fileio import write_atomic
from ragbench.graph.base import GRAPH_DIR
from ragbench.graph.model import ContextGraph, GraphError
from ragbench.store import tables
from ragbench.store.catalog_records import fingerprint
from ragbench.store.pggraph import GraphSave, PgGraphSaves

FILES = ("arrays.npz", "nodes.json")
"""The two files of one graph save (`ContextGraph.save`)."""
LOCAL_ONLY = ("last_update.json",)
"""What `GraphService` writes next to a save about this host's last update, not part of it."""


def graph_to_postgres(workspace: Path, pg: sa.Connection) -> tuple[int, str]:
    """The graph saved in `workspace/graph/` into `graph_saves` on `pg` (the migration's open
    transaction, after the catalog's rows): (1, what) when copied, (0, why not) otherwise, in
    which case any save the target schema held is removed too (its graph would not match).
    """
    saves = PgGraphSaves(pg.engine)
    loaded = _folder_save(workspace / GRAPH_DIR)
    if isinstance(loaded, str):
        saves.delete(pg)
        return 0, f"not copied: {loaded}; the PostgreSQL workspace builds its own on first use"
    graph, arrays, nodes = loaded
    assert graph.save_id is not None  # `_folder_save` refuses a save without one
    # `catalog_state` is `Catalog.fingerprint()` when the graph was made; the embedded backend
    # does not record it. The fingerprint is comparable across backends (counts, copied row
    # ids and stored text, read by the same query), so when the graph holds exactly the
    # catalog's chunks it is the copied catalog's fingerprint, read here on PostgreSQL as
    # every host will; a graph behind its catalog was made from an unknown state: left empty
    # (the first host to read it brings it up to date, as the folder would have).
    chunk_ids = set(pg.execute(sa.select(tables.chunks.c.chunk_id)).scalars())
    state = fingerprint(pg) if set(graph.index) == chunk_ids else ""
    saves.put(GraphSave(save_id=graph.save_id, arrays=arrays, nodes=nodes,
                        catalog_state=state), pg)
    behind = "" if state else " (behind the catalog: the first use updates it)"
    return 1, f"save {graph.save_id} copied into the database{behind}"


def _folder_save(directory: Path) -> tuple[ContextGraph, bytes, bytes] | str:
    """(graph, arrays.npz bytes, nodes.json bytes) of the save in `directory`, or why there is
    none to copy. The bytes are read once and loaded from a private copy, so what is stored is
    exactly what was checked even if the folder's graph is saved again meanwhile.
    """
    if not all((directory / name).is_file() for name in FILES):
        return f"no saved graph in {directory}"
    try:
        arrays, nodes = ((directory / name).read_bytes() for name in FILES)
    except OSError as e:
        return f"the graph in {directory} is unreadable ({e})"
    with tempfile.TemporaryDirectory(prefix="ragbench-graph-") as temp:
        (Path(temp) / "arrays.npz").write_bytes(arrays)
        (Path(temp) / "nodes.json").write_bytes(nodes)
        try:
            graph = ContextGraph.load(temp)
        except GraphError as e:
            return f"the graph does not load ({str(e).replace(temp, str(directory))})"
    if graph.save_id is None:
        return f"the graph in {directory} has no save id (an older format)"
    return graph, arrays, nodes


def graph_to_folder(save: GraphSave | None, folder: Path) -> tuple[int, str]:
    """The database's `save` (read in the copy's snapshot) as `folder/graph/`'s files, in
    place of those copied from the source folder; with no save, or one that does not load,
    no graph files (the folder builds its own). (1, what) when written, (0, why not).
    """
    directory = folder / GRAPH_DIR
    for name in (*FILES, *LOCAL_ONLY):
        (directory / name).unlink(missing_ok=True)
    if save is None:
        return 0, "none saved in the database: the folder builds its own on first use"
    directory.mkdir(parents=True, exist_ok=True)
    write_atomic(directory / "arrays.npz", save.arrays, mode=0o600)  # as `GraphService` does
    write_atomic(directory / "nodes.json", save.nodes, mode=0o600)
    try:
        ContextGraph.load(directory)
    except GraphError as e:
        for name in FILES:
            (directory / name).unlink(missing_ok=True)
        return 0, f"the database's save does not load ({e}): the folder builds its own"
    return 1, f"save {save.save_id} written to {directory}"
