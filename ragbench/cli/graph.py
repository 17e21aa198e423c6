"""`ragbench graph build|stats|export|neighbors|path` and `ragbench contradictions`."""

from __future__ import annotations

from typing import Annotated

import typer

from ragbench.cli.common import (
    Output,
    choice_option,
    command,
    command_group,
    format_option,
    one_of,
    output_option,
)
from ragbench.cli.jobs import InProcessOption, ResultOption, job_notes, report_queued
from ragbench.workbench import Workbench
from ragbench.workbench.presentation import EDGE_TYPES

EXPORT_FORMATS = ("json", "graphml")

app = typer.Typer()
PANEL = "Context graph"
"""Where these commands are listed in `ragbench --help`."""
graph_app = command_group(
    app, "graph", PANEL, "The chunk-level context graph: build, inspect, export (specs/002).\n\n"
    "The graph follows ingest and delete by itself; `build` starts over.")

EdgeTypeOption = Annotated[list[str] | None, choice_option(
    EDGE_TYPES, "TYPE", f"Only edges of this type (repeatable): {one_of(EDGE_TYPES)}.")]
ChunkIdArgument = Annotated[str, typer.Argument(metavar="CHUNK_ID", show_default=False,
                                                help="A chunk id (12 hex digits).")]


@command(graph_app)
def build(
    wb: Workbench,
    out: Output,
    wait: ResultOption = True,
    in_process: InProcessOption = False,
) -> int:
    """Rebuild the graph from scratch.

    On a PostgreSQL workspace this queues a graph job and waits for it: a `ragbench worker`
    rebuilds the graph and saves it in the database, where every host reads it (`--no-wait`
    returns with the job; `--in-process` rebuilds it here).
    """
    if wb.jobs.deferred and not in_process:
        if not wait:
            _, failed = report_queued(wb, out, wb.jobs.submit_graph(rebuild=True), False)
            return 1 if failed else 0
        stats = wb.jobs.run_graph(True, job_notes(out)).model_dump()
    else:
        stats = wb.graph.build().model_dump()
    out.emit(stats, f"built: {stats['nodes']} nodes, {stats['edges']} edges")
    return 0


@command(graph_app)
def stats(wb: Workbench, out: Output) -> int:
    """Nodes, edges per type, edges per node, density, components, degree distribution."""
    data = wb.graph.stats().model_dump()
    types = ", ".join(f"{k} {v}" for k, v in data["edge_types"].items())
    out.emit(data, f"{data['nodes']} nodes, {data['edges']} edges ({types}); "
             f"{data['components']} components, density {data['density']}")
    return 0


@command(graph_app)
def export(
    wb: Workbench,
    out: Output,
    fmt: Annotated[str, format_option(
        EXPORT_FORMATS, "json: node-link JSON (specs/002's format, edges under `links`); "
        "graphml: GraphML.")] = "json",
    output: Annotated[str | None, output_option(
        "File to write (default: context_graph.json or context_graph.graphml, specs/002's "
        "name, in the current directory).")] = None,
    spec: Annotated[bool, typer.Option(
        "--spec", help="specs/002's simple graph: one link per pair of chunks (the type "
        "its construction leaves there) instead of one per type and pair.")] = False,
) -> int:
    """Write the graph as node-link JSON or GraphML."""
    written = wb.graph.export(output or f"context_graph.{fmt}", fmt, spec)
    out.emit({"path": str(written), "format": fmt, "spec": spec}, f"wrote {written}")
    return 0


@command(graph_app)
def neighbors(
    wb: Workbench,
    out: Output,
    chunk_id: ChunkIdArgument,
    edge_type: EdgeTypeOption = None,
    hops: Annotated[int, typer.Option(
        metavar="H", help="With --limit: the neighbourhood's depth.")] = 1,
    limit: Annotated[int, typer.Option(
        metavar="N", help="Return the ego graph (nodes and edges) of at most N nodes "
        "instead of the list of direct neighbours; 0: the list.")] = 0,
) -> int:
    """A chunk's direct neighbours: edge type, weight, lens, preview. Exit 1 if unknown."""
    if limit:
        ego = wb.graph.ego(chunk_id, hops, edge_type, limit).model_dump()
        out.emit({"chunk_id": chunk_id, **ego},
                 f"{len(ego['nodes'])} nodes, {len(ego['edges'])} edges")
        return 0
    found = [n.model_dump() for n in wb.graph.neighbors(chunk_id, edge_type)]
    lines = [f"{n['type']:<17} {n['weight']:.3f} {n['id']} [{n['lens']}] "
             f"{n['preview'][:60]!r}" for n in found]
    out.emit({"chunk_id": chunk_id, "neighbors": found}, "\n".join(lines) or "no neighbours")
    return 0


@command(graph_app)
def path(
    wb: Workbench,
    out: Output,
    source: Annotated[str, typer.Argument(metavar="CHUNK_ID", show_default=False,
                                          help="The chunk the path starts from.")],
    target: Annotated[str, typer.Argument(metavar="CHUNK_ID", show_default=False,
                                          help="The chunk the path leads to.")],
    edge_type: EdgeTypeOption = None,
) -> int:
    """A shortest path between two chunks (empty when they are not connected)."""
    found = wb.graph.path(source, target, edge_type)
    out.emit({"path": found}, " -> ".join(found) or "not connected")
    return 0


@command(app, rich_help_panel=PANEL)
def contradictions(
    wb: Workbench,
    out: Output,
    topic: Annotated[str | None, typer.Option(
        metavar="WORD", show_default=False, help="Only findings about this word.")] = None,
    spec: Annotated[bool, typer.Option(
        "--spec", metavar="", help="Add the specs/002 cross-lens topic check.")] = False,
) -> int:
    """Statements that disagree across sources, most likely first.

    Date, figure, #1-priority and negation conflicts between documents, each titled by the
    disputed values ("tidepool GA: Q3 2026 vs Q4 2026") with its score, and every side as
    document title, lens, the value it states and its sentence.
    """
    findings = wb.graph.contradictions(topic=topic, include_spec=spec)
    lines = []
    for f in findings:
        lines.append(f"{f.title or f.topic}  [{f.type}, score {f.score:.2f}]")
        firsts = {str(c.get("value")): c for c in reversed(f.chunks)}  # one per value
        ordered = [*firsts.values()][::-1] + [c for c in f.chunks
                                              if c not in firsts.values()]
        for side in ordered[:4]:
            span = " ".join(str(side.get("span") or "").split())
            name = side.get("title") or side.get("file_name") or side["chunk_id"]
            value = f" = {side['value']}" if side.get("value") else ""
            lines.append(f"    {name} ({side['lens']}){value}: {span[:100]!r}")
    out.emit({"findings": [f.model_dump() for f in findings], "count": len(findings)},
             "\n".join(lines) or "no contradictions found")
    return 0
