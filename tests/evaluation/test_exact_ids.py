"""Corpus ids are kept exactly (case, `/`, spaces, unicode, near-duplicates), and the eval's
figures equal an independent scorer's on the same ranking, in every retrieval mode."""

from __future__ import annotations

import pytest

from ragbench.errors import EvalError
from ragbench.evaluation.beir import (
    EXTERNAL_ID,
    corpus_files,
    eval_workspace,
    load_beir,
    run_beir,
    source_name,
)
from ragbench.retrieval.retriever import MODES
from tests.evaluation.helpers import independent_scores, write_beir

DOCS = {
    "2014 S/S": ("Spring summer", "The spring summer fashion collection showed linen dresses."),
    "Popular Science": ("Popular Science", "A monthly magazine popularizing science and "
                        "technology for a broad audience of readers."),
    "Popular science": ("Popular science", "Books explaining quantum physics to general "
                        "readers without equations."),
    "Café Ünïcode – naïve résumé": ("Café", "Espresso coffee is brewed by forcing hot water "
                                    "through finely ground beans."),
    "a/b/c path": ("Paths", "Directory paths in file systems are separated by slashes."),
    "UPPER CASE": ("Typography", "Capital letters in typography are called upper case "
                   "because printers kept them in the upper drawer."),
    "with  two  spaces": ("Gardening", "Tomatoes need full sun, rich soil and steady watering."),
    "日本語の文書": ("Mount Fuji", "Mount Fuji is the highest volcano in Japan."),
    "empty doc": ("", ""),
    "d1": ("Rivers", "The Nile flows north through eleven countries into the Mediterranean."),
    "d2": ("Bees", "Honey bees communicate the direction of flowers with a waggle dance."),
}
QUERIES = {
    "q1": "spring summer fashion collection",
    "q2": "magazine popularizing science and technology",
    "q3": "books explaining quantum physics to general readers",
    "q4": "how is espresso coffee brewed",
    "q5": "why are capital letters called upper case",
    "q6": "directory paths separated by slashes",
    "q7": "an empty document and a ghost",
    "q8": "highest volcano in Japan",
}
QRELS = [
    ("q1", "2014 S/S", 2), ("q2", "Popular Science", 2), ("q2", "Popular science", 1),
    ("q3", "Popular science", 2), ("q4", "Café Ünïcode – naïve résumé", 1),
    ("q5", "UPPER CASE", 1), ("q6", "a/b/c path", 1), ("q6", "d1", 0),
    ("q7", "empty doc", 1), ("q7", "ghost", 1), ("q8", "日本語の文書", 1),
]


@pytest.mark.unit
def test_source_names_are_unique_and_safe():
    names = {did: source_name(did) for did in DOCS}
    assert len(set(names.values())) == len(DOCS)
    assert names["d1"] == "d1.md"  # lower-case, slash-free ids keep the name they always had
    assert names["Popular Science"] != names["Popular science"]
    for name in names.values():
        assert name == name.lower() and "/" not in name and " " not in name
    clash = source_name("Popular Science").removesuffix(".md")  # a crafted id
    with pytest.raises(EvalError, match="same file name"):
        corpus_files({"Popular Science": {"text": "a"}, clash: {"text": "b"}})


@pytest.mark.unit
def test_load_beir_keeps_ids_and_names_bad_lines(tmp_path):
    folder = write_beir(tmp_path / "titles", DOCS, QUERIES, QRELS)
    corpus, queries, qrels = load_beir(folder)
    assert set(corpus) == set(DOCS) and set(queries) == set(QUERIES)
    assert qrels["q2"] == {"Popular Science": 2, "Popular science": 1}
    (folder / "corpus.jsonl").write_text('{"_id": "x", "text": "ok"}\n{"text": "no id"}\n')
    with pytest.raises(EvalError, match=r"corpus.jsonl:2: a row needs an '_id'"):
        load_beir(folder)


@pytest.fixture(scope="module")
def title_eval(tmp_path_factory):
    root = tmp_path_factory.mktemp("titles")
    folder = write_beir(root / "titles", DOCS, QUERIES, QRELS)
    out = run_beir(root / "ws", folder, list(MODES), top_k=100)
    return root, folder, out


@pytest.mark.integration
def test_every_id_is_its_own_document(title_eval):
    from ragbench.config import Settings
    from ragbench.store.catalog import Catalog

    root, folder, out = title_eval
    path, _ = eval_workspace(root / "ws", folder, Settings())
    assert out["workspace"]["path"] == str(path)
    catalog = Catalog(path / "catalog.sqlite")
    stored = [d.metadata[EXTERNAL_ID] for d in catalog.list_documents(status="indexed")]
    assert sorted(stored) == sorted(d for d in DOCS if d != "empty doc")  # exact, no collision
    assert out["index"]["indexed"] == len(DOCS) - 1 and out["index"]["failed"] == 1
    assert out["index"]["failures"][0]["id"] == "empty doc"
    missing = out["index"]["missing_judged"]
    assert missing["count"] == 2 and missing["ids"] == ["empty doc", "ghost"]
    assert missing["failed"] == 1 and missing["absent_from_corpus"] == 1
    assert missing["queries_without_indexed_relevant"] == 1
    assert out["ingest"]["inserted"] == len(DOCS) - 1 and out["ingest"]["failed"] == 1
    for mode in MODES:
        assert out["modes"][mode]["unmapped_hits"] == 0


@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
def test_figures_equal_an_independent_scorer(title_eval, mode):
    """Rankings rebuilt here from the same workspace, mapping chunks to corpus ids by their
    text (not by the stored external id), scored by `helpers.independent_scores`."""
    from ragbench.config import Settings
    from ragbench.workbench import Workbench

    root, folder, out = title_eval
    path, _ = eval_workspace(root / "ws", folder, Settings())
    wb = Workbench(path, Settings())
    by_text = {text: did for did, (_, text) in DOCS.items() if text}
    rankings: dict[str, list[str]] = {}
    for qid, query in QUERIES.items():
        ranking: list[str] = []
        for hit in wb.retriever.search(query, mode=mode, top_k=100):
            text = wb.catalog.document_text(hit.doc_id) or ""
            [did] = [d for t, d in by_text.items() if t in text]
            if did not in ranking:
                ranking.append(did)
        rankings[qid] = ranking
    qrels: dict[str, dict[str, int]] = {}
    for qid, did, score in QRELS:
        qrels.setdefault(qid, {})[did] = score
    expected = independent_scores(rankings, qrels)
    got = out["modes"][mode]
    for metric, value in expected.items():
        assert got[metric] == pytest.approx(value, abs=5e-5), (mode, metric)
    if mode in ("fts", "hybrid"):  # the collection is easy: title ids no longer score zero
        assert got["ndcg@10"] > 0.7 and got["mrr@10"] > 0.7
