"""Ingest benchmark: chunking, embedding and re-ingest, each beside its peer, in one run.

Prints one JSON object. Peers measured in the same process on the same text:
- chunking: LangChain `TokenTextSplitter` (cl100k_base, same size/overlap) and raw tiktoken
  `encode_ordinary` (the floor: our chunker encodes once, then only does arithmetic), in
  interleaved rounds with medians, single-threaded and on all cores;
- embedding: the model's own `encode` on the very texts the pipeline sends to it;
- re-ingest: the first ingest of the same corpus into an empty workspace;
- embedding_runtimes: `embedding_runtime` torch / onnx / onnx-int8 throughput (texts/s and
  windows/s) on SciFact texts and ~1024-token chunks beside `SentenceTransformer.encode`,
  interleaved rounds, and the cosine of each ONNX path's vectors to torch's (issue 17);
- ingest_stages: the whole ingest of the first N documents of a BEIR corpus (CACM by default)
  beside the bare encode of the texts it embedded, with the time per stage (issue 28);
- quality: SciFact nDCG@10 (vector, hybrid) of each runtime via `ragbench eval beir`, and a
  verdict: which runtimes pass the issue-17 bar (>= 2.5x torch throughput, <= 0.5 point
  nDCG@10 loss, cosine >= 0.99) and the fastest of them, beside the configured default.

    python benchmarks/bench_ingest.py [--corpus DIR] [--scifact DIR] [--repeat N]
        [--chunk-rounds N] [--runtime-texts N] [--runtime-chunks N] [--cosine-texts N]
        [--eval-workspace DIR] [--eval-limit N] [--stages-corpus DIR] [--stages-docs N]
        [--stages-runtime torch|onnx|onnx-int8]
        [--skip chunking|embedding|embedding_runtimes|quality|reingest|ingest_stages ...]

"machine" names the CPU model and its kernel flags (avx512_vnni and others): the int8 cosine
to torch depends on them, so the cosine bar is judged here, per machine, and not in the tests.

A section whose input folder is absent is skipped and named under "skipped" in the JSON.

`--corpus` is a folder of documents (default: ../shared/fixtures/docs); `--scifact` the BEIR
SciFact folder (default: ../shared/datasets/scifact). Targets (issue 2): chunking >= 1.2x the
LangChain splitter and within 25% of encode_ordinary; embedding >= 90% of `encode`; re-ingest
of an unchanged corpus >= 50x faster than the first ingest.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import machine_info  # noqa: E402
from ragbench.chunking.chunker import chunk_document, chunk_documents  # noqa: E402
from ragbench.chunking.tokenizer import (  # noqa: E402
    TOKENIZER_ENV,
    ensure_tiktoken_cache,
    get_encoding,
    tokenizer_backend,
)
from ragbench.config import Settings  # noqa: E402
from ragbench.embeddings.embedders import CachedEmbedder, SentenceTransformerEmbedder  # noqa: E402
from ragbench.ingest.sources import collect_files  # noqa: E402
from ragbench.models import ParsedDocument  # noqa: E402
from ragbench.parsers import parse_bytes  # noqa: E402
from ragbench.parsers.base import ParseError, TextBuilder  # noqa: E402
from ragbench.store.catalog import Catalog  # noqa: E402
from ragbench.workbench import Workbench  # noqa: E402

SHARED = ROOT.parent / "shared"


def best_of(repeat: int, fn: Callable[[], Any]) -> float:
    """Fastest wall time of `repeat` runs (the least disturbed by the other core's load)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def scifact_documents(folder: Path, per_doc: int = 50) -> list[ParsedDocument]:
    """SciFact abstracts grouped into documents of `per_doc` (title heading + abstract)."""
    docs, builder, count = [], TextBuilder(), 0
    with (folder / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            builder.add_heading(row["title"], 2)
            builder.add(row["text"])
            count += 1
            if count % per_doc == 0:
                docs.append(builder.build("md"))
                builder = TextBuilder()
    if builder.blocks:
        docs.append(builder.build("md"))
    return docs


def fixture_documents(folder: Path) -> list[ParsedDocument]:
    """Every fixture (and attachment) that parses."""
    out: list[ParsedDocument] = []
    files, _ = collect_files([folder])
    for path in files:
        try:
            doc = parse_bytes(path.read_bytes(), path.name)
        except ParseError:
            continue
        out.append(doc)
        for att in doc.attachments:
            try:
                out.append(parse_bytes(att.data, att.name))
            except ParseError:
                pass
    return out


def interleaved(repeat: int, contenders: dict[str, Callable[[], Any]]) -> dict[str, dict]:
    """Wall and CPU seconds of each contender over `repeat` rounds, after one warm-up call each.

    Every round runs every contender once, in an order rotated from round to round, so slow
    phases of a shared machine hit all of them alike; medians are the figures, per-round
    times are kept for ratios within a round.
    """
    names = list(contenders)
    for name in names:
        contenders[name]()
    wall: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}
    for r in range(repeat):
        for name in names[r % len(names):] + names[: r % len(names)]:
            c0, w0 = time.process_time(), time.perf_counter()
            contenders[name]()
            wall[name].append(time.perf_counter() - w0)
            cpu[name].append(time.process_time() - c0)
    return {n: {"wall": wall[n], "cpu": cpu[n]} for n in names}


def _ratios(num: list[float], den: list[float]) -> dict:
    """Ratio of medians, and the spread of the per-round ratios."""
    per_round = sorted(a / b for a, b in zip(num, den, strict=True))
    return {"median": round(statistics.median(num) / statistics.median(den), 3),
            "per_round_min": round(per_round[0], 3), "per_round_max": round(per_round[-1], 3)}


def bench_chunking(docs: list[ParsedDocument], size: int, overlap: int, repeat: int) -> dict:
    """Ours vs LangChain TokenTextSplitter vs raw encode_ordinary over the same texts.

    All contenders get the same input, the parsed documents' text (ours also reads their
    blocks); parsing is not timed. Ours is the corpus API `chunk_documents` on one thread and
    on all cores; the peers are single-threaded by nature. For context, not for the targets:
    ours called per document (`chunk_document`, as ingest does), ours single-threaded with
    tiktoken as its encoder instead of the default bpe-openai (`RAGBENCH_TOKEN_ENCODER=tiktoken`,
    so the share of the speed-up that comes from the encoder is visible), `encode_to_numpy`
    (tiktoken's buffer form of the same tokens) and tiktoken's own threaded
    `encode_ordinary_batch` on as many threads.
    """
    ensure_tiktoken_cache()
    from langchain_text_splitters import TokenTextSplitter

    enc = get_encoding("cl100k_base")
    texts = [d.text for d in docs]
    splitter = TokenTextSplitter(encoding_name="cl100k_base", chunk_size=size,
                                 chunk_overlap=overlap)
    tokens = sum(len(enc.encode_ordinary(t)) for t in texts)
    pairs = [(d, "0" * 16) for d in docs]
    load_before = [round(x, 2) for x in os.getloadavg()]  # other processes on the machine
    threads = os.cpu_count() or 1
    def with_tiktoken() -> None:
        os.environ[TOKENIZER_ENV] = "tiktoken"
        try:
            chunk_documents(pairs, size, overlap, workers=1)
        finally:
            os.environ.pop(TOKENIZER_ENV)

    runs = interleaved(repeat, {
        "ours_single_thread": lambda: chunk_documents(pairs, size, overlap, workers=1),
        "ours_single_thread_tiktoken_encoder": with_tiktoken,
        "ours_threads": lambda: chunk_documents(pairs, size, overlap, workers=threads),
        "ours_per_document": lambda: [chunk_document(d, i, size, overlap) for d, i in pairs],
        "langchain_token_splitter": lambda: [splitter.split_text(t) for t in texts],
        "encode_ordinary": lambda: [enc.encode_ordinary(t) for t in texts],
        "encode_to_numpy": lambda: [enc.encode_to_numpy(t, disallowed_special=()) for t in texts],
        "encode_ordinary_batch_threads": lambda: enc.encode_ordinary_batch(
            texts, num_threads=threads),
    })
    load_after = [round(x, 2) for x in os.getloadavg()]
    wall = {n: r["wall"] for n, r in runs.items()}
    lang, raw = wall["langchain_token_splitter"], wall["encode_ordinary"]
    out: dict[str, Any] = {
        "documents": len(docs),
        "tokens": tokens,
        "chunks": sum(len(c) for c in chunk_documents(pairs, size, overlap, workers=1)),
        "rounds": repeat,
        "threads": threads,
        "encoder": tokenizer_backend(),
        "load_average_1_5_15min": {"before": load_before, "after": load_after},
        "wall_s_median": {n: round(statistics.median(w), 4) for n, w in wall.items()},
        "wall_s_min_max": {n: [round(min(w), 4), round(max(w), 4)] for n, w in wall.items()},
    }
    for mode in ("single_thread", "threads"):
        ours = wall[f"ours_{mode}"]
        speedup, vs_raw = _ratios(lang, ours), _ratios(ours, raw)
        out[mode] = {
            "tokens_per_s": round(tokens / statistics.median(ours)),
            "speedup_vs_langchain": speedup,
            "time_vs_encode_ordinary": vs_raw,
            "targets_met": speedup["median"] >= 1.2 and vs_raw["median"] <= 1.25,
        }
    for name in ("per_document", "single_thread_tiktoken_encoder"):
        out[name] = {
            "speedup_vs_langchain": _ratios(lang, wall[f"ours_{name}"]),
            "time_vs_encode_ordinary": _ratios(wall[f"ours_{name}"], raw),
        }
    out["threads"]["time_vs_encode_ordinary_batch"] = _ratios(
        wall["ours_threads"], wall["encode_ordinary_batch_threads"])
    # CPU time of the single-threaded runs: the work done, less sensitive to other processes
    cpu = {n: runs[n]["cpu"] for n in ("ours_single_thread", "ours_per_document",
                                        "langchain_token_splitter", "encode_ordinary",
                                        "encode_to_numpy")}
    out["single_thread_cpu"] = {
        "cpu_s_median": {n: round(statistics.median(c), 4) for n, c in cpu.items()},
        "speedup_vs_langchain": _ratios(cpu["langchain_token_splitter"],
                                        cpu["ours_single_thread"]),
        "time_vs_encode_ordinary": _ratios(cpu["ours_single_thread"], cpu["encode_ordinary"]),
    }
    return out


def bench_embedding(short: list[str], long: list[str], repeat: int) -> dict:
    """Pipeline (windowing + pooling + cache bookkeeping) vs `model.encode` on the same inputs."""
    emb = SentenceTransformerEmbedder()
    model = emb.model
    # short: texts that fit one window, so pipeline and peer do identical model work;
    # long: chunks the pipeline windows, with the peer encoding exactly those windows
    short = [t for t in short if len(emb.windows(t)) == 1]
    windows = [w for t in long for w, _ in emb.windows(t)]
    model.encode(short[:8], batch_size=32)  # warm-up

    def pipeline(texts: list[str]) -> None:
        with tempfile.TemporaryDirectory() as tmp:  # empty cache: every text is embedded
            CachedEmbedder(emb, Catalog(Path(tmp) / "c.sqlite")).embed(texts)

    out: dict[str, Any] = {"model": emb.model_id, "window_wordpieces": emb.window}
    for name, texts, peer_inputs in (("short", short, short), ("long", long, windows)):
        ours = best_of(repeat, lambda texts=texts: pipeline(texts))
        peer = best_of(repeat, lambda p=peer_inputs: model.encode(
            p, batch_size=32, normalize_embeddings=True, show_progress_bar=False))
        out[name] = {
            "texts": len(texts),
            "model_inputs": len(peer_inputs),
            "pipeline_s": round(ours, 3),
            "model_encode_s": round(peer, 3),
            "pipeline_texts_per_s": round(len(texts) / ours, 2),
            "relative_throughput": round(peer / ours, 3),
        }
    out["targets_met"] = all(out[k]["relative_throughput"] >= 0.9 for k in ("short", "long"))
    return out


def scifact_texts(folder: Path, n: int) -> list[str]:
    """The first `n` SciFact corpus texts (title, blank line, abstract)."""
    out: list[str] = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            out.append(f"{row['title']}\n\n{row['text']}".strip())
            if len(out) >= n:
                break
    return out


def bench_embedding_runtimes(
    texts: list[str], chunks: list[str], cosine_texts: list[str], rounds: int
) -> dict:
    """Torch fp32 vs ONNX fp32 vs ONNX int8 (setting `embedding_runtime`), same run.

    Throughput of each runtime's `embed` (windowing + pooling included) on SciFact texts and on
    ~1024-token chunks, interleaved rounds with medians, beside the peer
    `SentenceTransformer.encode` on exactly the windows the pipeline sends; then cosine of
    each ONNX path's vectors against torch's on `cosine_texts` (min and mean).
    """
    from ragbench.embeddings.onnx import OnnxEmbedder

    torch_emb = SentenceTransformerEmbedder()
    runtimes: dict[str, Any] = {"torch": torch_emb}
    out: dict[str, Any] = {"load_s": {}, "errors": {}}
    for name, quantized in (("onnx", False), ("onnx-int8", True)):
        start = time.perf_counter()
        try:
            runtimes[name] = OnnxEmbedder(quantized=quantized)
        except Exception as e:  # noqa: BLE001 - recorded in the JSON, the others still run
            out["errors"][name] = str(e)
            continue
        out["load_s"][name] = {"seconds": round(time.perf_counter() - start, 2),
                               "exported": runtimes[name].exported}
    for label, inputs in (("scifact_texts", texts), ("chunks_1024", chunks)):
        windows = [w for t in inputs for w, _ in torch_emb.windows(t)]
        contenders: dict[str, Callable[[], Any]] = {
            "torch_peer_encode": lambda w=windows: torch_emb.model.encode(
                w, batch_size=32, normalize_embeddings=True, show_progress_bar=False),
        }
        for name, emb in runtimes.items():
            contenders[name] = lambda e=emb, x=inputs: e.embed(x)
        runs = interleaved(rounds, contenders)
        medians = {n: statistics.median(r["wall"]) for n, r in runs.items()}
        out[label] = {
            "texts": len(inputs), "windows": len(windows),
            "median_s": {n: round(v, 3) for n, v in medians.items()},
            "texts_per_s": {n: round(len(inputs) / v, 2) for n, v in medians.items()},
            "windows_per_s": {n: round(len(windows) / v, 2) for n, v in medians.items()},
            "speedup_vs_torch": {n: _ratios(runs["torch"]["wall"], runs[n]["wall"])
                                 for n in runtimes if n != "torch"},
        }
    reference = torch_emb.embed(cosine_texts)
    out["cosine_vs_torch"] = {"texts": len(cosine_texts)}
    for name, emb in runtimes.items():
        if name == "torch":
            continue
        cos = (emb.embed(cosine_texts) * reference).sum(axis=1)
        out["cosine_vs_torch"][name] = {"min": round(float(cos.min()), 5),
                                        "mean": round(float(cos.mean()), 6)}
    return out


RUNTIMES = ("torch", "onnx", "onnx-int8")


def scifact_subset(folder: Path, documents: int, target: Path, seed: int = 17) -> dict:
    """A smaller SciFact: every document judged relevant for a test query, plus seeded random
    other documents up to `documents` in all; every test query and its qrels are kept.

    Absolute nDCG@10 on it is higher than on the full corpus (fewer distractors), but every
    runtime is scored on the same subset, which is what the loss against torch needs.
    """
    import random

    qrels = (folder / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    judged = {line.split("\t")[1] for line in qrels[1:] if line.strip()}
    rows = (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    ids = [json.loads(r)["_id"] for r in rows]
    others = [i for i in ids if i not in judged]
    keep = judged | set(random.Random(seed).sample(others, max(0, documents - len(judged))))
    (target / "qrels").mkdir(parents=True, exist_ok=True)
    (target / "corpus.jsonl").write_text(
        "\n".join(r for r, i in zip(rows, ids, strict=True) if i in keep) + "\n",
        encoding="utf-8")
    shutil.copy(folder / "queries.jsonl", target / "queries.jsonl")
    shutil.copy(folder / "qrels" / "test.tsv", target / "qrels" / "test.tsv")
    return {"documents": len(keep), "judged_relevant": len(judged & set(ids)),
            "random_others": len(keep) - len(judged & set(ids)), "seed": seed,
            "of_corpus": len(ids), "queries": "all test queries"}


def bench_quality(scifact: Path, workspace: Path, runtimes: list[str], limit: int | None) -> dict:
    """SciFact nDCG@10 (vector, hybrid) of each `embedding_runtime` via `ragbench eval beir`.

    One CLI run per runtime with `RAGBENCH_EMBEDDING_RUNTIME` set, at nice 10. The eval
    workspace is keyed by corpus content and ingest settings (the runtime included), so a
    second run of this benchmark reuses each runtime's index and only re-runs the queries.
    Losses are in nDCG points (x100) against torch fp32.
    """
    out: dict[str, Any] = {"workspace": str(workspace), "queries_limit": limit, "runs": {}}
    for runtime in runtimes:
        cli = str(Path(sys.executable).with_name("ragbench"))
        cmd = ["nice", "-n", "10", cli, "eval", "beir",
               str(scifact), "--mode", "vector", "--mode", "hybrid", "--workspace",
               str(workspace), "--json"] + (["--limit", str(limit)] if limit else [])
        env = {**os.environ, "RAGBENCH_EMBEDDING_RUNTIME": runtime}
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT,
                              check=False)
        seconds = round(time.perf_counter() - start, 1)
        if proc.returncode != 0:
            out["runs"][runtime] = {"error": (proc.stderr or proc.stdout).strip()[-500:]}
            continue
        result = json.loads(proc.stdout)
        out["runs"][runtime] = {
            "ndcg@10": {m: round(r["ndcg@10"], 4) for m, r in result["modes"].items()},
            "recall@100": {m: round(r["recall@100"], 4) for m, r in result["modes"].items()},
            "documents": result["documents"], "chunks": result["chunks"],
            "index_reused": result["workspace"]["reused"], "ingest": result["ingest"],
            "wall_s": seconds,
        }
    base = out["runs"].get("torch", {}).get("ndcg@10")
    if base:
        out["loss_points_vs_torch"] = {
            rt: {m: round(100 * (base[m] - v), 2) for m, v in r["ndcg@10"].items()}
            for rt, r in out["runs"].items() if rt != "torch" and "ndcg@10" in r}
    return out


def verdict(result: dict) -> dict:
    """Which runtimes pass the issue-17 bar, the fastest of them, and the configured default.

    Bar: throughput >= 2.5x torch fp32 on both text sets (median of interleaved rounds),
    nDCG@10 loss <= 0.5 point in vector and hybrid mode, cosine to torch >= 0.99 (mean and
    minimum over the cosine texts are both reported; the bar is applied to the mean, and the
    minimum is shown so a bad tail is visible).
    """
    runtimes = result.get("embedding_runtimes", {})
    quality = result.get("quality", {}).get("loss_points_vs_torch", {})
    rows: dict[str, Any] = {}
    for rt in RUNTIMES[1:]:
        speed = [runtimes.get(k, {}).get("speedup_vs_torch", {}).get(rt, {}).get("median")
                 for k in ("scifact_texts", "chunks_1024")]
        cos = runtimes.get("cosine_vs_torch", {}).get(rt, {})
        loss = quality.get(rt)
        checks = {
            "speedup_ge_2.5": None if None in speed else min(speed) >= 2.5,  # type: ignore
            "ndcg_loss_le_0.5": None if not loss else max(loss.values()) <= 0.5,
            "cosine_mean_ge_0.99": None if not cos else cos["mean"] >= 0.99,
        }
        rows[rt] = {"speedup_min": None if None in speed else min(speed),  # type: ignore
                    "cosine": cos, "ndcg_loss_points": loss, "checks": checks,
                    "passes": all(v is True for v in checks.values())}
    passing = [rt for rt in rows if rows[rt]["passes"]]
    fastest = max(passing, key=lambda rt: rows[rt]["speedup_min"]) if passing else "torch"
    return {"runtimes": rows, "fastest_passing": fastest,
            "configured_default": Settings().embedding_runtime,
            "cpu": result.get("machine", {}).get("cpu", {}).get("model")}


def bench_ingest_stages(beir: Path, documents: int, runtime: str) -> dict:
    """Whole ingest of the first `documents` of a BEIR corpus (SciFact, CACM) beside the bare
    encode of the very texts it embedded, same run, and where the ingest time went.

    Stages are timed by wrapping the pipeline's own calls: plan (parse, chunk, context text,
    decision), embed (the group batches), Chroma upserts, the catalog write (documents, chunks,
    FTS), and the graph update after the ingest; "other" is the rest (bookkeeping, originals,
    archive). The bare encode is the same embedder's `embed` on all texts at once, on an
    empty cache, after the ingest (the model is loaded and warm for both).
    """
    from ragbench.evaluation.beir import corpus_files, ingest_corpus, load_beir
    from ragbench.ingest.ingestor import Ingestor
    from ragbench.store.vectors import ChromaVectors

    corpus, _, _ = load_beir(beir)
    files = corpus_files(dict(list(corpus.items())[:documents]))
    spent: dict[str, float] = {"plan": 0.0, "embed": 0.0, "chroma_upsert": 0.0,
                               "catalog_write": 0.0, "graph": 0.0}
    originals: list[tuple[Any, str, Any]] = []

    def timed(owner: Any, name: str, stage: str) -> None:
        real = getattr(owner, name)
        originals.append((owner, name, real))

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return real(*args, **kwargs)
            finally:
                spent[stage] += time.perf_counter() - start
        setattr(owner, name, wrapper)

    work = Path(tempfile.mkdtemp(prefix="ragbench-bench-stages-"))
    try:
        settings = Settings(embedding_runtime=runtime)  # type: ignore[arg-type]
        wb = Workbench(work / "ws", settings)
        wb.embedder.embed(["warm up"])
        wb.vectors.count()
        timed(Ingestor, "plan", "plan")
        timed(Ingestor, "warm", "embed")
        timed(ChromaVectors, "upsert", "chroma_upsert")
        timed(Catalog, "insert_document", "catalog_write")
        timed(wb.graph_service, "current", "graph")
        load_before = [round(x, 2) for x in os.getloadavg()]
        start, cpu_start = time.perf_counter(), time.process_time()
        ingest_corpus(wb, files, "bench", "bench/beir")
        ingest_s = time.perf_counter() - start
        ingest_cpu_s = time.process_time() - cpu_start
        for owner, name, real in reversed(originals):
            setattr(owner, name, real)
        texts = [r[0] for r in wb.catalog.conn.execute(
            "SELECT embedding_text FROM chunks ORDER BY rowid").fetchall()]
        start, cpu_start = time.perf_counter(), time.process_time()
        wb.embedder.inner.embed(texts)
        encode_s = time.perf_counter() - start
        encode_cpu_s = time.process_time() - cpu_start
        load_after = [round(x, 2) for x in os.getloadavg()]
    finally:
        for owner, name, real in reversed(originals):
            setattr(owner, name, real)
        shutil.rmtree(work, ignore_errors=True)
    stages = {k: round(v, 2) for k, v in spent.items()}
    stages["other"] = round(ingest_s - sum(spent.values()), 2)
    return {"corpus": str(beir), "documents": len(files), "chunks": len(texts),
            "runtime": runtime, "runs_as": wb.settings.embedding_runtime,
            "auto_choice": getattr(wb.runtime_choice, "runtime", None),
            "load_average_1_5_15min": {"before": load_before, "after": load_after},
            "ingest_s": round(ingest_s, 2), "bare_encode_s": round(encode_s, 2),
            "ingest_vs_encode": round(ingest_s / encode_s, 3), "stages_s": stages,
            # CPU seconds of this process (all its threads): steadier than wall time when
            # other jobs share the cores
            "ingest_cpu_s": round(ingest_cpu_s, 2), "bare_encode_cpu_s": round(encode_cpu_s, 2),
            "target_met": ingest_s / encode_s <= 1.5}


def bench_reingest(corpus: Path) -> dict:
    """First ingest into an empty workspace vs ingesting the unchanged corpus again."""
    work = Path(tempfile.mkdtemp(prefix="ragbench-bench-"))
    try:
        wb = Workbench(work / "ws", Settings())
        start = time.perf_counter()
        first = wb.library.ingest([corpus], lens="bench", root=corpus)
        t_first = time.perf_counter() - start
        start = time.perf_counter()
        second = wb.library.ingest([corpus], lens="bench", root=corpus)
        t_second = time.perf_counter() - start
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "files": len(first.files),
        "first_totals": first.totals,
        "second_totals": second.totals,
        "first_ingest_s": round(t_first, 3),
        "reingest_s": round(t_second, 3),
        "speedup": round(t_first / t_second, 1),
        "targets_met": t_first / t_second >= 50 and second.totals["skipped"] == len(
            [f for f in first.files if f.status != "failed" and f.parent_doc_id is None]
        ),
    }


def main() -> None:
    """Run every part and print one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=SHARED / "fixtures" / "docs")
    ap.add_argument("--scifact", type=Path, default=SHARED / "datasets" / "scifact")
    ap.add_argument("--repeat", type=int, default=3, help="runs of the embedding figures")
    ap.add_argument("--chunk-rounds", type=int, default=9,
                    help="interleaved rounds of the chunking contenders (medians reported)")
    ap.add_argument("--embed-texts", type=int, default=200, help="SciFact texts to embed")
    ap.add_argument("--runtime-texts", type=int, default=200,
                    help="SciFact texts for the embedding_runtimes throughput")
    ap.add_argument("--runtime-chunks", type=int, default=16,
                    help="~1024-token chunks for the embedding_runtimes throughput")
    ap.add_argument("--cosine-texts", type=int, default=1000,
                    help="SciFact texts for the torch-vs-ONNX cosine")
    ap.add_argument("--eval-workspace", type=Path, default=ROOT / "data",
                    help="workspace of the SciFact evals (indexes are reused per runtime)")
    ap.add_argument("--eval-limit", type=int, default=None,
                    help="only the first N SciFact queries in the quality section")
    ap.add_argument("--eval-docs", type=int, default=None,
                    help="quality on a SciFact subset of N documents: all judged-relevant "
                         "ones plus seeded random others (default: the full corpus)")
    ap.add_argument("--eval-runtimes", nargs="*", choices=list(RUNTIMES), default=None,
                    help="runtimes of the quality section (default: all)")
    ap.add_argument("--stages-corpus", type=Path, default=SHARED / "datasets" / "cacm",
                    help="BEIR folder for the ingest-vs-encode section (CACM or SciFact)")
    ap.add_argument("--stages-docs", type=int, default=1000,
                    help="documents of --stages-corpus ingested in that section")
    ap.add_argument("--stages-runtime", nargs="+", default=["torch"],
                    choices=["auto", "torch", "onnx", "onnx-int8"],
                    help="embedding runtime(s) of the ingest-vs-encode section; several are "
                    "run in turn, --stages-rounds times (auto: what the default picks here)")
    ap.add_argument("--stages-rounds", type=int, default=1,
                    help="rounds of the ingest-vs-encode section over its runtimes")
    ap.add_argument("--skip", nargs="*", default=[],
                    choices=["chunking", "embedding", "embedding_runtimes", "quality",
                             "reingest", "ingest_stages"])
    args = ap.parse_args()
    settings = Settings()
    result: dict[str, Any] = {
        "machine": machine_info(),
        "settings": {"chunk_size": settings.chunk_size, "chunk_overlap": settings.chunk_overlap,
                     "embedding_runtime": settings.embedding_runtime},
        "skipped": {},
    }
    # a section whose input folder is absent is skipped with the reason in the JSON
    needs = {"chunking": [args.corpus, args.scifact], "embedding": [args.scifact],
             "embedding_runtimes": [args.scifact], "quality": [args.scifact],
             "reingest": [args.corpus], "ingest_stages": [args.stages_corpus]}
    for section, folders in needs.items():
        missing = [str(f) for f in folders if not f.exists()]
        if missing and section not in args.skip:
            result["skipped"][section] = f"input folder absent: {', '.join(missing)}"
            args.skip.append(section)
    # parsed only for the sections that read them (parsing the fixtures takes a while)
    wants = set(needs) - set(args.skip)
    sci = (scifact_documents(args.scifact)
           if wants & {"chunking", "embedding", "embedding_runtimes"} else [])
    fix = fixture_documents(args.corpus) if "chunking" in wants else []
    if "chunking" not in args.skip:
        size, overlap = settings.chunk_size, settings.chunk_overlap
        result["chunking"] = {
            "scifact": bench_chunking(sci, size, overlap, args.chunk_rounds),
            "fixtures": bench_chunking(fix, size, overlap, args.chunk_rounds),
        }
    if "embedding" not in args.skip:
        abstracts = [b for d in sci[:10] for b in (d.text.split("\n\n"))][: args.embed_texts]
        long_chunks = [c.text for d in sci[:2] for c in chunk_document(d, "0" * 16)][:12]
        result["embedding"] = bench_embedding(abstracts, long_chunks, max(1, args.repeat - 1))
    if "embedding_runtimes" not in args.skip:
        many = scifact_texts(args.scifact, max(args.runtime_texts, args.cosine_texts))
        chunks = [c.text for d in sci[:4] for c in chunk_document(d, "0" * 16)]
        result["embedding_runtimes"] = bench_embedding_runtimes(
            many[: args.runtime_texts], chunks[: args.runtime_chunks],
            many[: args.cosine_texts], max(1, args.repeat))
    if "quality" not in args.skip:
        dataset, subset = args.scifact, None
        if args.eval_docs:
            # a stable folder name, so the eval workspace (keyed by content) is reused
            dataset = args.eval_workspace / "bench-subsets" / f"scifact-{args.eval_docs}"
            subset = scifact_subset(args.scifact, args.eval_docs, dataset)
        result["quality"] = bench_quality(dataset, args.eval_workspace,
                                          args.eval_runtimes or list(RUNTIMES), args.eval_limit)
        result["quality"]["corpus_subset"] = subset or "full SciFact corpus"
    if "embedding_runtimes" not in args.skip or "quality" not in args.skip:
        result["verdict"] = verdict(result)
    if "reingest" not in args.skip:
        result["reingest"] = bench_reingest(args.corpus)
    if "ingest_stages" not in args.skip:
        runs = [bench_ingest_stages(args.stages_corpus, args.stages_docs, runtime)
                for _ in range(args.stages_rounds) for runtime in args.stages_runtime]
        result["ingest_stages"] = runs[0] if len(runs) == 1 else {
            "runs": runs, "median_by_runtime": {
                rt: {key: statistics.median(r[key] for r in runs if r["runtime"] == rt)
                     for key in ("ingest_s", "ingest_cpu_s", "bare_encode_s", "bare_encode_cpu_s")}
                for rt in args.stages_runtime}}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
