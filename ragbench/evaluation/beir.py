"""Retrieval evaluation on BEIR-format datasets (corpus.jsonl, queries.jsonl, qrels/test.tsv).

What is measured is what the report says:

- **Exact corpus ids.** Each corpus document is ingested as a Markdown file (`# title` + text)
  whose document metadata holds its corpus `_id` verbatim (`external_id`); rankings map back
  through that, so ids with upper case, `/`, spaces or unicode, and ids differing only in case,
  are distinct documents scored under their own id. The file name only has to be unique: a
  lower-case, slash-free id keeps `<id>.md` (SciFact-style ids keep the ids they always had),
  any other id becomes `id-<sha256 of the id>.md`.
- **No stale workspace.** The corpus is indexed in `<workspace>/eval/<dataset>-<key>`, where
  the key hashes the corpus file, the settings that change the index (chunk size/overlap,
  tokenizer, embedding backend/model, contextual embeddings: `versioning.signature_of`), the
  ingest version and this module's file layout. Queries and qrels do not change the index, so
  they are not part of it. The report names the workspace and whether it was reused.
- **Failures are counted once.** A document that failed to parse is recorded as failed and not
  retried by later runs on the same workspace; the report lists indexed and failed documents
  (with reasons) and the judged-relevant documents that are not in the index.

A document's score for a query is its best chunk's. Every retrieval mode can be evaluated
(`ragbench.retrieval.retriever.MODES`); note that `balanced` returns `chunks_per_lens` chunks
per lens and the eval workspace has one lens, so its recall is bounded by that setting.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ragbench.config import Settings, load_settings
from ragbench.errors import EvalError, RetrievalError
from ragbench.evaluation.metrics import evaluate, mrr_at, ndcg_at, rank_documents, recall_at
from ragbench.ingest.versioning import signature_of
from ragbench.models import FileResult, NewDocument
from ragbench.retrieval.retriever import MODES
from ragbench.store.schema import CURRENT_INGEST_VERSION

if TYPE_CHECKING:
    from ragbench.store.catalog import Catalog
    from ragbench.workbench import Workbench

__all__ = [
    "EvalError", "corpus_files", "corpus_items", "doc_ranking", "eval_workspace", "evaluate",
    "load_beir", "mrr_at", "ndcg_at", "rank_documents", "recall_at", "run_beir", "source_name",
    "workspace_key",
]

LAYOUT_VERSION = 2
"""How corpus rows become files (names, Markdown text, external ids); part of the workspace
key, so a change here never reuses a workspace made the old way."""
EXTERNAL_ID = "external_id"
"""Document metadata key holding the corpus `_id` exactly."""
LIST_CAP = 20
"""At most this many ids or failures are listed in a report (counts are always complete)."""

_SAFE_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")


class CorpusFile(BaseModel):
    """One corpus document as the file ingested for it."""

    corpus_id: str
    name: str
    data: bytes


class WorkspaceInfo(BaseModel):
    """Which eval workspace was used, and whether it already held this index."""

    path: str
    key: str
    reused: bool


class Failure(BaseModel):
    """A corpus document that could not be indexed, and why."""

    id: str
    reason: str


class MissingJudged(BaseModel):
    """Judged-relevant documents (of the evaluated queries) that are not in the index."""

    count: int
    ids: list[str]
    failed: int
    absent_from_corpus: int
    queries_without_indexed_relevant: int


class IndexReport(BaseModel):
    """What the index holds of the corpus."""

    indexed: int
    failed: int
    failures: list[Failure]
    not_indexed: int
    missing_judged: MissingJudged


# --- reading ---------------------------------------------------------------------------------


def _jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSON-lines file, each with an `_id` (EvalError naming the bad line)."""
    rows = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise EvalError(f"{path}:{number}: not valid JSON ({e.msg})") from e
            if not isinstance(row, dict) or "_id" not in row:
                raise EvalError(f"{path}:{number}: a row needs an '_id' field")
            rows.append(row)
    return rows


def load_beir(folder: Path, split: str = "test") -> tuple[dict[str, dict], dict[str, str],
                                                          dict[str, dict[str, int]]]:
    """(corpus by id, queries by id with judgements, qrels) of a BEIR dataset folder.

    Ids are kept exactly as written (only converted to strings).
    """
    needed = [folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels" / f"{split}.tsv"]
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        raise EvalError(f"not a BEIR dataset, missing: {', '.join(missing)}")
    corpus = {str(row["_id"]): row for row in _jsonl(needed[0])}
    qrels: dict[str, dict[str, int]] = {}
    with needed[2].open(encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            parts = line.rstrip("\r\n").split("\t")
            if i == 0 and not parts[-1].strip().lstrip("-").isdigit():
                continue  # header
            if len(parts) < 3 or not parts[-1].strip().lstrip("-").isdigit():
                if not line.strip():
                    continue
                raise EvalError(f"{needed[2]}:{i + 1}: expected 'query-id<TAB>corpus-id<TAB>"
                                f"score', got {line.strip()!r}")
            qid, did, score = parts[0], parts[1], int(parts[-1])
            qrels.setdefault(qid, {})[did] = score
    queries = {str(row["_id"]): str(row.get("text", "")) for row in _jsonl(needed[1])
               if str(row["_id"]) in qrels}
    return corpus, queries, qrels


# --- corpus as files -------------------------------------------------------------------------


def source_name(corpus_id: str) -> str:
    """The file name a corpus document is ingested under: unique per id, lower-case, no `/`.

    Ingest lower-cases source ids and keeps base names, so only ids that are already such
    names keep them (`<id>.md`); any other id is named by its hash. The id itself is kept
    in the document's metadata, never recovered from this name.
    """
    if _SAFE_ID.fullmatch(corpus_id):
        return f"{corpus_id}.md"
    return f"id-{hashlib.sha256(corpus_id.encode('utf-8')).hexdigest()[:32]}.md"


def corpus_files(corpus: Mapping[str, Mapping[str, Any]]) -> list[CorpusFile]:
    """The Markdown file of each corpus document (EvalError if two ids would share a name)."""
    files: list[CorpusFile] = []
    owner: dict[str, str] = {}
    for did, row in corpus.items():
        name = source_name(did)
        if name in owner:
            raise EvalError(f"corpus ids {owner[name]!r} and {did!r} map to the same file name "
                            f"{name!r}; rename one of them")
        owner[name] = did
        title = " ".join(str(row.get("title") or "").split())
        text = f"# {title}\n\n{row.get('text', '')}\n" if title else f"{row.get('text', '')}\n"
        files.append(CorpusFile(corpus_id=did, name=name, data=text.encode("utf-8")))
    return files


def corpus_items(corpus: Mapping[str, Mapping[str, Any]], dataset: str = "") -> list[tuple[str,
                                                                                          bytes]]:
    """(file name, Markdown bytes) per corpus document, for `Workbench.ingest_bytes`.

    Kept for callers that ingest a corpus through the facade (benchmarks); such a workspace has
    no external ids, so evaluate with `run_beir` instead.
    """
    return [(f.name, f.data) for f in corpus_files(corpus)]


def doc_ranking(results: Sequence[Any], source_prefix: str) -> list[tuple[str, float]]:
    """Corpus ids ranked by best chunk, read back from source ids `<prefix><id>.md`.

    Only right for ids that `source_name` keeps as they are (lower-case, no `/`); prefer
    `rank_documents` with the stored external ids.
    """
    seen: dict[str, float] = {}
    for r in results:
        did = r.source_id[len(source_prefix):].removesuffix(".md")
        if did not in seen:
            seen[did] = r.score
    return list(seen.items())


# --- workspace -------------------------------------------------------------------------------


def workspace_key(folder: Path, settings: Settings) -> str:
    """Hash of what determines the index: corpus bytes, index settings, ingest version, layout."""
    h = hashlib.sha256()
    with (folder / "corpus.jsonl").open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    h.update(json.dumps({"signature": signature_of(settings), "ingest": CURRENT_INGEST_VERSION,
                         "layout": LAYOUT_VERSION}, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


def eval_workspace(root: Path, folder: Path, settings: Settings) -> tuple[Path, str]:
    """(`<root>/eval/<dataset>-<key>`, key): one workspace per corpus content and index
    settings, never shared by two different corpora that happen to have the same folder name.
    """
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", folder.resolve().name) or "dataset"
    key = workspace_key(folder, settings)
    return root / "eval" / f"{name}-{key}", key


# --- ingest ----------------------------------------------------------------------------------


def ingest_corpus(
    wb: Workbench,
    files: Sequence[CorpusFile],
    lens: str,
    prefix: str,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[FileResult]:
    """Ingest every file through the facade with its corpus id as `external_id`; files that
    already failed in this workspace are not retried (their failure is reported once, from
    the catalog).
    """
    documents = [NewDocument(name=f.name, data=f.data, source_id=f"{prefix}/{f.name}",
                             metadata={EXTERNAL_ID: f.corpus_id}) for f in files]
    return wb.library.ingest_documents(documents, lens, file_progress=progress,
                                       retry_failed=False).files


def _totals(results: Sequence[FileResult]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for r in results:
        totals[r.status] = totals.get(r.status, 0) + 1
    chunks = sum(r.chunks for r in results if r.status != "skipped")
    return totals | ({"chunks": chunks} if chunks else {})


def index_report(
    catalog: Catalog,
    corpus: Mapping[str, Any],
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, int]],
) -> tuple[IndexReport, dict[str, str]]:
    """What the catalog holds of the corpus, and the doc id -> corpus id map of indexed ones."""
    external: dict[str, str] = {}
    for doc in catalog.list_documents(status="indexed"):
        value = doc.metadata.get(EXTERNAL_ID)
        if isinstance(value, str) and value in corpus:
            external[doc.doc_id] = value
    indexed = set(external.values())
    failures: dict[str, str] = {}
    for doc in catalog.list_documents(status="failed"):
        value = doc.metadata.get(EXTERNAL_ID)
        if isinstance(value, str) and value in corpus and value not in indexed:
            failures[value] = doc.error or "failed"
    missing: list[str] = []
    failed_missing = absent = hopeless = 0
    for qid in queries:
        relevant = [d for d, r in qrels[qid].items() if r > 0]
        gone = [d for d in relevant if d not in indexed]
        hopeless += bool(relevant) and len(gone) == len(relevant)
        for d in gone:
            if d not in missing:
                missing.append(d)
                failed_missing += d in failures
                absent += d not in corpus
    report = IndexReport(
        indexed=len(indexed),
        failed=len(failures),
        failures=[Failure(id=i, reason=r) for i, r in sorted(failures.items())[:LIST_CAP]],
        not_indexed=len(corpus) - len(indexed) - len(failures),
        missing_judged=MissingJudged(
            count=len(missing), ids=sorted(missing)[:LIST_CAP], failed=failed_missing,
            absent_from_corpus=absent, queries_without_indexed_relevant=hopeless,
        ),
    )
    return report, external


# --- the whole thing -------------------------------------------------------------------------


def check_modes(modes: Sequence[str]) -> list[str]:
    """The modes, validated (EvalError naming the bad one and the valid choices)."""
    bad = [m for m in modes if m not in MODES]
    if bad:
        raise EvalError(f"unknown mode {bad[0]!r}; choose from {', '.join(MODES)}")
    return list(dict.fromkeys(modes))


def run_beir(
    workspace: Path,
    folder: Path,
    modes: list[str],
    top_k: int = 100,
    settings: Settings | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    limit: int | None = None,
    per_query: dict[str, dict[str, dict[str, float]]] | None = None,
) -> dict[str, Any]:
    """Ingest the corpus into its content-keyed workspace (or reuse it) and evaluate each mode.

    Returns a JSON-safe dict: dataset, workspace (path, key, reused), documents, index
    (indexed, failed with reasons, judged-relevant documents missing), ingest (this run's
    totals and seconds), chunks, top_k and per mode the averaged metrics. A `per_query` dict,
    when given, receives mode -> query id -> metrics (for reports over subsets of queries).
    """
    from ragbench.workbench import Workbench

    modes = check_modes(modes)
    if top_k < 1:
        raise EvalError(f"top_k must be at least 1, got {top_k}")
    if limit is not None and limit < 1:
        raise EvalError(f"limit must be at least 1, got {limit}")
    corpus, queries, qrels = load_beir(folder)
    if limit:
        queries = dict(list(queries.items())[:limit])
    files = corpus_files(corpus)
    settings = settings or load_settings(workspace)
    dataset = folder.resolve().name.lower()
    path, key = eval_workspace(workspace, folder, settings)
    if settings.database_url:  # its own schema: the evaluated corpus never joins the team's
        settings = settings.model_copy(update={"database_schema": f"eval_{key}"})
    reused = (path / "catalog.sqlite").exists() or bool(settings.database_url)
    wb = Workbench(path, settings)
    reused = reused and bool(wb.catalog.list_documents(status="indexed")
                             or wb.catalog.list_documents(status="failed"))
    started = time.perf_counter()
    results = ingest_corpus(wb, files, dataset, f"beir/{dataset}", progress)
    ingest_s = time.perf_counter() - started
    index, external = index_report(wb.catalog, corpus, queries, qrels)
    out: dict[str, Any] = {
        "dataset": dataset,
        "workspace": WorkspaceInfo(path=str(path), key=key,
                                   reused=reused).model_dump(),
        "documents": len(corpus),
        "index": index.model_dump(),
        "ingest": _totals(results) | {"seconds": round(ingest_s, 1)},
        "chunks": wb.catalog.chunk_count(),
        "top_k": top_k,
        "modes": {},
    }
    retriever = wb.retriever
    for mode in modes:
        retriever.search("warm up", mode=mode, top_k=1)  # model, index and graph load untimed
        unmapped = [0]

        def search(text: str, mode: str = mode, unmapped: list[int] = unmapped,
                   ) -> list[tuple[str, float]]:
            try:
                hits = retriever.search(text, mode=mode, top_k=top_k)
            except RetrievalError as e:
                raise EvalError(f"{mode} search failed for query {text[:60]!r}: {e}") from e
            ranked, lost = rank_documents(hits, external)
            unmapped[0] += lost
            return ranked

        scores: dict[str, dict[str, float]] = {}
        out["modes"][mode] = evaluate(search, queries, qrels, scores) | {
            "unmapped_hits": unmapped[0]}
        if per_query is not None:
            per_query[mode] = scores
    return out
