"""`ragbench graph build|stats|export|neighbors|path` and `ragbench contradictions`."""

from __future__ import annotations

import argparse
from typing import Any

from ragbench.cli.main import emit
from ragbench.graph.model import EDGE_TYPES


def register(sub: Any, common: argparse.ArgumentParser) -> dict[str, Any]:
    """Add the graph and contradictions commands; returns their handlers."""
    p = sub.add_parser("graph", parents=[common], help="the chunk-level context graph",
                       description="Build, inspect and export the context graph (specs/002). "
                       "The graph follows ingest and delete by itself; `build` starts over.")
    gsub = p.add_subparsers(dest="graph_command", required=True, metavar="ACTION")
    gsub.add_parser("build", parents=[common], help="rebuild the graph from scratch")
    gsub.add_parser("stats", parents=[common],
                    help="nodes, edges per type, density, components, degrees")
    e = gsub.add_parser("export", parents=[common], help="write node-link JSON or GraphML")
    e.add_argument("--format", choices=["json", "graphml"], default="json")
    e.add_argument("--output", "-o", help="file to write (default: graph.json / graph.graphml)")
    n = gsub.add_parser("neighbors", parents=[common], help="direct neighbours of a chunk")
    n.add_argument("chunk_id", metavar="CHUNK_ID")
    n.add_argument("--edge-type", action="append", choices=list(EDGE_TYPES),
                   help="only this edge type (repeatable)")
    n.add_argument("--hops", type=int, default=1, help="with --limit: neighbourhood depth")
    n.add_argument("--limit", type=int, default=0,
                   help="return the ego graph (nodes and edges) of at most N nodes instead")
    s = gsub.add_parser("path", parents=[common], help="shortest path between two chunks")
    s.add_argument("source", metavar="CHUNK_ID")
    s.add_argument("target", metavar="CHUNK_ID")
    s.add_argument("--edge-type", action="append", choices=list(EDGE_TYPES))

    c = sub.add_parser("contradictions", parents=[common],
                       help="statements that disagree across sources",
                       description="Date, number, priority and negation conflicts between "
                       "documents; --spec adds the specs/002 cross-lens topic check.")
    c.add_argument("--topic", help="only findings about this word")
    c.add_argument("--spec", action="store_true", help="include the specs/002 lens-pair check")
    return {"graph": _cmd_graph, "contradictions": _cmd_contradictions}


def _cmd_graph(wb: Any, args: argparse.Namespace) -> int:
    from ragbench.workbench import WorkbenchError

    action = args.graph_command
    try:
        if action == "build":
            stats = wb.graph_build()
            emit(args, stats, f"built: {stats['nodes']} nodes, {stats['edges']} edges")
        elif action == "stats":
            stats = wb.graph_stats()
            types = ", ".join(f"{k} {v}" for k, v in stats["edge_types"].items())
            emit(args, stats, f"{stats['nodes']} nodes, {stats['edges']} edges ({types}); "
                 f"{stats['components']} components, density {stats['density']}")
        elif action == "export":
            path = args.output or f"graph.{args.format}"
            written = wb.graph_export(path, args.format)
            emit(args, {"path": str(written), "format": args.format}, f"wrote {written}")
        elif action == "neighbors":
            if args.limit:
                ego = wb.graph_ego(args.chunk_id, args.hops, args.edge_type, args.limit)
                emit(args, {"chunk_id": args.chunk_id, **ego},
                     f"{len(ego['nodes'])} nodes, {len(ego['edges'])} edges")
            else:
                found = wb.graph_neighbors(args.chunk_id, args.edge_type)
                lines = [f"{n['type']:<17} {n['weight']:.3f} {n['id']} [{n['lens']}] "
                         f"{n['preview'][:60]!r}" for n in found]
                emit(args, {"chunk_id": args.chunk_id, "neighbors": found},
                     "\n".join(lines) or "no neighbours")
        else:
            path = wb.graph_path(args.source, args.target, args.edge_type)
            emit(args, {"path": path}, " -> ".join(path) or "not connected")
    except WorkbenchError as e:
        emit(args, {"error": str(e)}, f"error: {e}")
        return 1
    return 0


def _cmd_contradictions(wb: Any, args: argparse.Namespace) -> int:
    findings = wb.contradictions(topic=args.topic, include_spec=args.spec)
    lines = []
    for f in findings:
        lines.append(f"[{f.type}] {f.topic}: {f.note}")
        for side in f.chunks[:4]:
            span = side.get("span") or ""
            lines.append(f"    {side['lens']:<20} {side['chunk_id']} {span[:90]!r}")
    emit(args, {"findings": [f.model_dump() for f in findings], "count": len(findings)},
         "\n".join(lines) or "no contradictions found")
    return 0
