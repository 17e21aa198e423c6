"""Which chunk pairs to compare for contradictions, and the search over a set of chunks.

Comparing every pair is exact but quadratic: up to `ALL_PAIRS_LIMIT` chunks every pair is
compared; beyond that only pairs the context graph already links by similarity, shared topic
or overlapping period (a conflict needs the two passages to speak of the same thing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragbench.contradictions.detector import Finding, conflicts, matches_topic, spec_findings
from ragbench.graph.explorer import ContradictionLink
from ragbench.graph.model import ContextGraph
from ragbench.graph.terms import spec_key_terms
from ragbench.store.catalog import Catalog

ALL_PAIRS_LIMIT = 2000
"""Up to this many chunks, contradiction search compares every pair."""
LINKING_EDGES = ["SIMILAR_TO", "TOPIC_OVERLAP", "TEMPORAL_OVERLAP"]


def find_contradictions(
    catalog: Catalog,
    graph: Callable[[], ContextGraph],
    chunk_ids: Sequence[str] | None = None,
    topic: str | None = None,
    include_spec: bool = False,
    places: bool = False,
) -> list[Finding]:
    """Potential contradictions among `chunk_ids` (default: every chunk of the catalog).

    `include_spec` adds the specs/002 cross-lens findings (topics by the spec's own key-term
    function). `places` adds conflicting places (`conflicts`: for "where…" questions).
    """
    ids = list(chunk_ids) if chunk_ids is not None else sorted(catalog.chunk_ids())
    rows = catalog.contradiction_rows(ids)
    pairs = None
    if len(rows) > ALL_PAIRS_LIMIT:
        g = graph()
        wanted = set(rows)
        ids_of = [n["id"] for n in g.nodes]
        pairs = [(cid, ids_of[j]) for cid in rows if cid in g
                 for j, _, _ in g.edges_of(g.index[cid], LINKING_EDGES)
                 if ids_of[j] in wanted and cid < ids_of[j]]
    found = conflicts(list(rows.values()), pairs=pairs, topic=topic, places=places)
    if include_spec:
        terms = {c: spec_key_terms(r["text"]) for c, r in rows.items()}
        spec = spec_findings(list(rows.values()), terms)
        found += [f for f in spec if topic is None or matches_topic(f, topic)]
    return label_documents(catalog, found)


def label_documents(catalog: Catalog, findings: list[Finding]) -> list[Finding]:
    """Each side gets its document's `title`, `file_name` and `source_id`, so a reader sees
    which documents disagree (chunk ids stay, for citations and details).
    """
    docs: dict[str, dict[str, str]] = {}
    for f in findings:
        for side in f.chunks:
            doc_id = str(side.get("doc_id") or "")
            if doc_id not in docs:
                record = catalog.get_document(doc_id)
                docs[doc_id] = ({"title": record.title or record.file_name,
                                 "file_name": record.file_name, "source_id": record.source_id}
                                if record else {})
            side.update(docs[doc_id])
    return findings


def contradiction_links(findings: Sequence[Finding]) -> list[ContradictionLink]:
    """The pairs of chunks that disagree, for the graph explorer: the two sides of a finding,
    or for a finding of grouped positions (#1 priorities) each pair of chunks on different
    sides; a chunk never disagrees with itself.
    """
    out = []
    for f in findings:
        sides = f.chunks
        for i, x in enumerate(sides):
            for y in sides[i + 1:]:
                a, b = str(x.get("chunk_id") or ""), str(y.get("chunk_id") or "")
                same_side = "side" in x and "side" in y and x["side"] == y["side"]
                if not a or not b or a == b or same_side:
                    continue
                out.append(ContradictionLink(
                    a=a, b=b, kind=f.type, title=f.title, note=f.note, score=f.score,
                    values=[str(x.get("value") or ""), str(y.get("value") or "")]))
    return out
