"""Hybrid query latency at scale on both storage backends, and HNSW recall@10 (issue 30).

For each size N (chunks) and each backend it builds one workspace store and measures:

- `build_s`: writing N chunks through the catalog's own write path
  (`Catalog.insert_document` inside `Catalog.transaction()`, 100 chunks a document, 20
  documents a transaction; the FTS index is SQLite FTS5 on the embedded backend, the BM25
  postings of `store/postgres_fts.py` on PostgreSQL, vacuumed and analysed after the load)
  and N vectors through the vector store's `upsert` (Chroma's HNSW on the embedded backend;
  pgvector's HNSW, `m` 16, `ef_construction` 200, built as rows arrive, on PostgreSQL), 2000
  vectors a call;
- `hybrid_ms`: p50 / p95 of the real `Retriever.search(query, mode="hybrid", top_k=10)` with
  the default settings (FTS and vector candidates 100 deep each, fused, resolved through the
  catalog), the query's vector handed over by a stub embedder so the model's time is not in it;
  also `fts_ms` and `vector_ms` (the two halves, same path with `mode="fts"` / `"vector"`),
  all after one untimed pass of every query (steady state: postings and index in memory);
- `recall_at_10`: the share of the exact top 10 (numpy, cosine, over all N vectors) that the
  store's `query(vector, 10)` returns (`hnsw.ef_search` / Chroma `ef_search` 1000 as shipped).

The data, said in the JSON too: chunk TEXT is real (SciFact abstracts from
`../shared/datasets/scifact`, cut into passages of about 60 words, repeated in a shuffled order
to reach N, so passages recur N / P times); the VECTORS are stored random unit vectors drawn
around 64 centres (384-dimensional like all-MiniLM-L6-v2; not embeddings of the text), and the
queries are SciFact's queries (their text for FTS) with random vectors around the same
centres. PostgreSQL is a private PostgreSQL 16 + pgvector 0.6.2 (pgserver, the dev extra) in a
temporary folder; the embedded store is a temporary workspace folder. Not run by the tests.

    python benchmarks/bench_hybrid_scale.py [--sizes 10000 100000] [--queries 200]
        [--backends postgres embedded] [--text-only-sizes 1000000] [--bulk-sizes 1000000]
        [--pg-dir DIR] [--pg-conf NAME=VALUE ...]

`--pg-dir DIR` keeps the PostgreSQL server's data folder and its workspaces (schema
`bench_N`) after the run; the next run with the same folder reuses what they hold and writes
only what is missing, so a 1M workspace built once can be measured again on a quiet machine.

`--pg-conf shared_buffers=6GB ...` writes server settings (ALTER SYSTEM, restarting the server
when one needs it) before measuring; the JSON's `postgres_settings` says what the run had.

`--bulk-sizes` loads those sizes' PostgreSQL vectors with `PgVectors.load` (binary COPY, then
one in-memory parallel HNSW build, `maintenance_work_mem` BUILD_MEMORY_MB) instead of
`upsert`, which grows the index row by row: how a large workspace is first filled.

`--text-only-sizes` builds those sizes without vectors and measures full-text search alone
(`fts_ms`): the part of hybrid search that grows with the collection's words, at sizes whose
HNSW index these 2 cores cannot build in reasonable time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from machine import machine_info  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "datasets" / "scifact"
DIM = 384
CHUNKS_PER_DOC = 100
DOCS_PER_TX = 20
PASSAGE_WORDS = 60
BUILD_MEMORY_MB = 4096
"""`maintenance_work_mem` of a bulk HNSW build (1M 384-dimensional vectors: about 2 GB)."""


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def passages() -> list[str]:
    """SciFact abstracts (title and text) cut into passages of about PASSAGE_WORDS words."""
    out: list[str] = []
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            words = f"{doc.get('title', '')}. {doc.get('text', '')}".split()
            for i in range(0, len(words), PASSAGE_WORDS):
                if len(words[i:i + PASSAGE_WORDS]) >= 10:
                    out.append(" ".join(words[i:i + PASSAGE_WORDS]))
    return out


def query_texts(count: int) -> list[str]:
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    return [texts[i % len(texts)] for i in range(count)]


class Data:
    """N chunk texts, their vectors, and the queries (text + vector)."""

    def __init__(self, n: int, queries: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        pool = passages()
        order = np.concatenate([rng.permutation(len(pool))
                                for _ in range(n // len(pool) + 1)])[:n]
        self.texts = [pool[i] for i in order]
        self.distinct = len(set(order.tolist()))
        centres = unit(rng.normal(size=(64, DIM)))
        spread = 0.6 / np.sqrt(DIM)
        self.vectors = unit(centres[rng.integers(0, 64, size=n)]
                            + spread * rng.normal(size=(n, DIM))).astype(np.float32)
        self.ids = [f"c{i:08d}" for i in range(n)]
        self.lenses = [("a", "b", "c", "d")[i % 4] for i in range(n)]
        self.query_texts = query_texts(queries)
        self.query_vectors = unit(centres[rng.integers(0, 64, size=queries)]
                                  + spread * rng.normal(size=(queries, DIM))).astype(np.float32)


def build(catalog: Any, vectors: Any, data: Data, bulk: bool = False) -> dict[str, Any]:
    """Write every chunk through the catalog and every vector through the store (no vectors
    when `vectors` is None: a text-only size); `bulk` loads the vectors with
    `PgVectors.load` (COPY, then the HNSW index built once) instead of `upsert`. What a
    kept PostgreSQL workspace (`--pg-dir`) already holds is not written again.
    """
    from ragbench.models import Chunk, DocumentRecord

    n = len(data.ids)
    kept = catalog.chunk_count()
    if kept not in (0, n):
        raise SystemExit(f"the kept workspace holds {kept} chunks, not {n}: drop its schema")
    if kept:
        out: dict[str, Any] = {"catalog_s": "kept from an earlier run (--pg-dir)"}
        if vectors is None or vectors.count() == n:
            return {**out, "vectors_s": "kept from an earlier run (--pg-dir)"}
        return {**out, **build_vectors(vectors, data, bulk)}
    start = time.perf_counter()
    docs = range(0, n, CHUNKS_PER_DOC)
    batch: list[tuple[DocumentRecord, str, list[Chunk]]] = []
    for d, first in enumerate(docs):
        doc_id = f"d{d:07d}"
        lens = data.lenses[first]
        parts = data.texts[first:first + CHUNKS_PER_DOC]
        text = "\n\n".join(parts)
        chunks, at = [], 0
        for j, part in enumerate(parts):
            chunks.append(Chunk(
                chunk_id=data.ids[first + j], doc_id=doc_id, chunk_index=j,
                total_chunks=len(parts), start_char=at, end_char=at + len(part), text=part,
                token_count=len(part.split()), chunk_type="text", lens=lens,
                embedding_text=part))
            at += len(part) + 2
        record = DocumentRecord(
            doc_id=doc_id, source_id=f"bench/{doc_id}.txt", file_name=f"{doc_id}.txt",
            format="text", file_hash=f"h{d}", size_bytes=len(text), title=doc_id, lens=lens,
            root_doc_id=doc_id, embedding_model="random-unit-vectors", chunk_count=len(parts))
        batch.append((record, text, chunks))
        if len(batch) == DOCS_PER_TX or d == len(docs) - 1:
            with catalog.transaction() as conn:
                for rec, txt, chs in batch:
                    catalog.insert_document(conn, rec, txt, chs)
            batch = []
    catalog_s = time.perf_counter() - start
    if vectors is None:
        return {"catalog_s": round(catalog_s, 1)}
    built = build_vectors(vectors, data, bulk)
    return {"catalog_s": round(catalog_s, 1), **built,
            "build_s": round(catalog_s + built["vectors_s"], 1)}


def build_vectors(vectors: Any, data: Data, bulk: bool) -> dict[str, Any]:
    """Write every vector through the store (`upsert`, or `PgVectors.load` when `bulk`)."""
    n = len(data.ids)
    start = time.perf_counter()
    batches = ((data.ids[i:i + 2000], data.vectors[i:i + 2000],
                [{"lens": data.lenses[j], "chunk_type": "text",
                  "doc_id": f"d{j // CHUNKS_PER_DOC:07d}"} for j in range(i, min(n, i + 2000))])
               for i in range(0, n, 2000))
    if bulk:
        vectors.load(batches, build_memory_mb=BUILD_MEMORY_MB)
    else:
        for batch in batches:
            vectors.upsert(*batch)
    return {"vectors_s": round(time.perf_counter() - start, 1),
            "vector_write": "PgVectors.load (COPY, HNSW built once)" if bulk
            else "VectorStore.upsert, 2000 a call"}


class StubEmbedder:
    """Hands the retriever the stored query vector of a query text."""

    def __init__(self, data: Data) -> None:
        self.by_text = dict(zip(data.query_texts, data.query_vectors, strict=False))

    def embed_query(self, text: str) -> np.ndarray:
        """The stored vector of `text`."""
        return self.by_text[text]


def percentiles(times: list[float]) -> dict[str, float]:
    return {"p50": round(float(np.percentile(times, 50)), 1),
            "p95": round(float(np.percentile(times, 95)), 1)}


def measure(catalog: Any, vectors: Any, data: Data) -> dict[str, Any]:
    from ragbench.config import Settings
    from ragbench.retrieval.retriever import Retriever

    embedder = StubEmbedder(data)
    retriever = Retriever(catalog, lambda: vectors, lambda: embedder, Settings())
    # each query text is met once in the timed loop (texts repeat only past 1109 queries)
    out: dict[str, Any] = {}
    modes = ("hybrid", "fts", "vector") if vectors is not None else ("fts",)
    # steady state: every query once, untimed, so that no mode pays for reading the postings
    # and the index from disk first (the mode timed first would, the others not)
    for text in data.query_texts:
        retriever.search(text, mode=modes[0], top_k=10)
    for mode in modes:
        times, empty = [], 0
        for text in data.query_texts:
            t = time.perf_counter()
            hits = retriever.search(text, mode=mode, top_k=10)
            times.append((time.perf_counter() - t) * 1000)
            empty += not hits
        out[f"{mode}_ms"] = percentiles(times)
        if empty:
            out[f"{mode}_empty_results"] = empty
    if catalog.backend == "postgres":
        out.update(blocks_against_summing(catalog, data, retriever.settings.hybrid_candidates))
    if vectors is None:
        out["text_only"] = "no vectors stored at this size: full-text search alone"
        return out
    recalls = []
    for q in data.query_vectors:
        exact = {data.ids[j] for j in np.argsort(-(data.vectors @ q))[:10]}
        got = {c for c, _ in vectors.query(q, 10)}
        recalls.append(len(exact & got) / 10)
    out["recall_at_10"] = round(float(np.mean(recalls)), 4)
    return out


def blocks_against_summing(catalog: Any, data: Data, k: int) -> dict[str, Any]:
    """PostgreSQL full text at hybrid depth `k`: `top_chunks` (the packed blocks summed with
    numpy) against its peer, summing every posting in SQL (`summed_top`), query by query in
    one snapshot, with how many rankings differ beyond equal scores.
    """
    from ragbench.store import postgres_fts
    from ragbench.store.postgres_chunks import query_terms

    ranked, summed, differ = [], [], 0
    for text in data.query_texts:
        with catalog.engine.connect().execution_options(
                isolation_level="REPEATABLE READ") as conn:
            weights, average, _ = postgres_fts.query_weights(conn, query_terms(text))
            if not weights:
                continue
            t = time.perf_counter()
            ours = postgres_fts.top_chunks(conn, weights, average, k)
            ranked.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            peer = postgres_fts.summed_top(conn, weights, average, k)
            summed.append((time.perf_counter() - t) * 1000)
            differ += not np.allclose([s for _, s in ours], [s for _, s in peer], rtol=1e-12)
    return {f"fts_depth{k}_ms": percentiles(ranked),
            f"fts_depth{k}_summed_peer_ms": percentiles(summed),
            f"fts_depth{k}_score_lists_differing": differ}


def run_postgres(url: str, data: Data, size: int, text_only: bool,
                 bulk: bool = False, keep: bool = False) -> dict[str, Any]:
    import sqlalchemy as sa

    from ragbench.store.pgvectors import PgVectors
    from ragbench.store.postgres import PgCatalog
    from ragbench.store.postgres_base import connect

    schema = f"bench_{size}"
    engine = connect(url, schema)
    try:
        catalog = PgCatalog(engine, schema)
        vectors = None if text_only else PgVectors(engine, schema)
        out: dict[str, Any] = build(catalog, vectors, data, bulk)
        # after a bulk load, as autovacuum would soon do: statistics, and the visibility map
        # that lets the postings be read from their covering index alone
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(sa.text("VACUUM ANALYZE chunks, chunk_vectors, chunk_terms"))
        out.update(measure(catalog, vectors, data))
        with engine.connect() as conn:
            if text_only:
                if not keep:
                    conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
                    conn.commit()
                return out
            plan = conn.execute(sa.text(
                "EXPLAIN SELECT chunk_id FROM chunk_vectors ORDER BY "  # noqa: S608
                f"embedding::vector({DIM}) <=> CAST(:q AS vector) LIMIT 10"),
                {"q": json.dumps(data.query_vectors[0].tolist())}).scalars().all()
            out["uses_hnsw_index"] = any("chunk_vectors_hnsw" in line for line in plan)
        if not keep:
            with engine.begin() as tx:
                tx.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        return out
    finally:
        engine.dispose()


def run_embedded(folder: Path, data: Data, text_only: bool) -> dict[str, Any]:
    from ragbench.store.catalog import Catalog
    from ragbench.store.vectors import forget_client, open_vectors

    folder.mkdir(parents=True)
    catalog = Catalog(folder / "catalog.sqlite")
    vectors = None if text_only else open_vectors(folder / "chroma")
    try:
        out: dict[str, Any] = build(catalog, vectors, data)
        out.update(measure(catalog, vectors, data))
        return out
    finally:
        catalog.close()
        forget_client(folder / "chroma")


SHOWN_SETTINGS = ("shared_buffers", "work_mem", "effective_cache_size",
                  "max_parallel_workers_per_gather")


def configured(server: Any, settings: list[str], start: Any) -> Any:
    """`server` with `settings` (NAME=VALUE) written by ALTER SYSTEM, restarted by stopping it
    and calling `start` when a setting needs a restart (shared_buffers does).
    """
    import sqlalchemy as sa

    if not settings:
        return server
    engine = sa.create_engine(server.get_uri(), isolation_level="AUTOCOMMIT")
    names = []
    with engine.connect() as conn:
        for setting in settings:
            name, _, value = setting.partition("=")
            if not name.isidentifier() or not value.replace(".", "").isalnum():
                raise SystemExit(f"--pg-conf: not NAME=VALUE (letters, digits, dots): {setting!r}")
            # a utility statement takes no bound parameters; both parts were checked above
            conn.execute(sa.text(f"ALTER SYSTEM SET {name} = '{value}'"))
            names.append(name)
        conn.execute(sa.text("SELECT pg_reload_conf()"))
        restart = conn.execute(sa.text(  # settings read only when the server starts
            "SELECT count(*) FROM pg_settings WHERE name = ANY(:names) AND context = 'postmaster'"
        ), {"names": names}).scalar_one()
    engine.dispose()
    if restart:
        server.cleanup()
        server = start()
    return server


def server_settings(url: str) -> dict[str, str]:
    """The server settings that bear on the timings (SHOWN_SETTINGS), as the server reports
    them.
    """
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    with engine.connect() as conn:
        found = {n: conn.execute(sa.text(f"SHOW {n}")).scalar_one() for n in SHOWN_SETTINGS}
    engine.dispose()
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--text-only-sizes", type=int, nargs="*", default=[],
                        help="sizes built without vectors, measuring full-text search alone "
                             "(where 2 cores cannot build the HNSW index in reasonable time)")
    parser.add_argument("--bulk-sizes", type=int, nargs="*", default=[],
                        help="sizes whose PostgreSQL vectors go in by PgVectors.load (COPY, "
                             "then one HNSW build) instead of upsert")
    parser.add_argument("--pg-dir", type=Path, default=None,
                        help="a PostgreSQL data folder kept after the run: its workspaces "
                             "(schema bench_N) are kept and reused by the next run, which "
                             "adds only what is missing (e.g. measure again on a quiet machine)")
    parser.add_argument("--backends", nargs="+", default=["postgres", "embedded"],
                        choices=["postgres", "embedded"])
    parser.add_argument("--pg-conf", nargs="*", default=[], metavar="NAME=VALUE",
                        help="server settings written with ALTER SYSTEM before measuring (the "
                             "server is restarted when one needs it), e.g. shared_buffers=6GB; "
                             "the JSON records the settings the run had")
    args = parser.parse_args()

    out: dict[str, Any] = {
        "machine": machine_info(),
        "data": {
            "text": "real: SciFact abstracts cut into ~60-word passages, repeated in shuffled "
                    "order to reach N (FTS runs on real words)",
            "vectors": f"stored random unit vectors around 64 centres, dim {DIM} (not "
                       "embeddings of the text)",
            "queries": f"{args.queries} SciFact query texts with random query vectors",
            "write_path": "Catalog.insert_document in Catalog.transaction (20 docs x 100 "
                          "chunks per transaction) + VectorStore.upsert (2000 per call; "
                          "PgVectors.load for --bulk-sizes)"},
        "sizes": {}}
    server = None
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        try:
            if "postgres" in args.backends:
                import pgserver

                folder = args.pg_dir or Path(tmp) / "pg"  # a temporary one goes with `tmp`
                server = configured(pgserver.get_server(folder, cleanup_mode="stop"),
                                    args.pg_conf,
                                    lambda: pgserver.get_server(folder, cleanup_mode="stop"))
                out["postgres_server"] = "pgserver PostgreSQL 16 + pgvector 0.6.2"
                out["postgres_settings"] = server_settings(server.get_uri())
            for size in [*args.sizes, *args.text_only_sizes]:
                text_only = size in args.text_only_sizes
                data = Data(size, args.queries)
                entry: dict[str, Any] = {"distinct_passages": data.distinct}
                for backend in args.backends:
                    print(f"# {size} chunks, {backend} ...", file=sys.stderr, flush=True)
                    if backend == "postgres":
                        assert server is not None
                        entry[backend] = run_postgres(server.get_uri(), data, size,
                                                      text_only, size in args.bulk_sizes,
                                                      keep=args.pg_dir is not None)
                    else:
                        entry[backend] = run_embedded(Path(tmp) / f"embedded_{size}", data,
                                                      text_only)
                    print(f"# {json.dumps(entry[backend])}", file=sys.stderr, flush=True)
                out["sizes"][str(size)] = entry
        finally:
            if server is not None:
                server.cleanup()
    out["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
