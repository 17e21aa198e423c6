"""Retrieval modes, filters, fusion and BEIR evaluation on small real workspaces."""

import json

import pytest

from ragbench.errors import RagbenchError
from ragbench.evaluation.beir import EvalError, load_beir, mrr_at, ndcg_at, recall_at, run_beir
from ragbench.evaluation.metrics import average, query_metrics
from ragbench.models import SearchFilters
from ragbench.retrieval.retriever import fuse, max_fuse, name_titles, rrf_fuse, score_fuse
from ragbench.store.catalog_base import fts_query
from tests.conftest import lens_workbench

DOCS = {
    "engineering/db.md": "# Database\n\nThe Postgres 16 migration finishes on March 15, 2026.",
    "engineering/api.md": "# API\n\nThe public API uses OAuth tokens and rate limits per tenant.",
    "team/sync.md": "# Weekly sync\n\nThe team said the Postgres migration slips to April 2026.",
    "analyst/brief.md": "# Brief\n\nAnalysts expect the streaming launch in Q4 2026.\n\n"
                        "| item | quarter |\n|---|---|\n| launch | Q4 |",
}


@pytest.fixture(scope="module")
def wb(tmp_path_factory):
    return lens_workbench(tmp_path_factory.mktemp("corpus"), tmp_path_factory.mktemp("ws"), DOCS)


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["fts", "vector", "hybrid", "graph"])
def test_every_mode_finds_the_migration_date(wb, mode):
    hits = wb.search.query("when does the Postgres migration finish", mode=mode, top_k=3)
    assert hits and hits[0].source_id in ("engineering/db.md", "team/sync.md")
    h = hits[0]
    assert h.text and h.chunk_id and h.doc_id and h.source_uri.startswith("files/")
    assert h.download_url and h.view_url and h.rank == 1
    assert [x.rank for x in hits] == list(range(1, len(hits) + 1))


@pytest.mark.integration
def test_balanced_gives_every_lens_a_voice(wb):
    hits = wb.search.query("Postgres migration", mode="balanced")
    lenses = [h.lens for h in hits]
    assert set(lenses) == {"engineering", "team", "analyst"}
    assert len(set(lenses[:3])) == 3  # interleaved: each lens's best comes first


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["fts", "vector", "hybrid"])
def test_filters_apply_in_every_mode(wb, mode):
    only_team = SearchFilters(lenses=["team"])
    assert {h.lens for h in wb.search.query("migration", mode=mode, filters=only_team)} == {"team"}
    by_source = SearchFilters(source_ids=["engineering/api.md"])
    assert {h.source_id for h in wb.search.query("tokens", mode=mode, filters=by_source)} == {
        "engineering/api.md"}
    tables = SearchFilters(chunk_types=["table"])
    assert all(h.chunk_type == "table" for h in wb.search.query("launch", mode=mode, filters=tables))


@pytest.mark.integration
def test_fts_escapes_user_syntax_and_media_level(wb):
    for nasty in ['"unbalanced', "NEAR(a b", "a* OR -b", "col:value", "^x"]:
        wb.search.query(nasty, mode="fts")  # never an FTS5 syntax error
    media = wb.search.query("Postgres April", mode="fts", fts_level="media")
    assert media and media[0].source_id == "team/sync.md"
    with pytest.raises(RagbenchError, match="fts_level"):
        wb.search.query("x", mode="fts", fts_level="page")


@pytest.mark.integration
def test_fts_finds_the_topic_of_a_long_request(wb):
    """A request mostly made of function words ranks by its few topic words, stemmed the same
    way on both sides ("tenants ... limited" meets "tenant ... limits")."""
    request = ("I would like to know what there is about how the tenants are limited when "
               "they are calling it, and which of those limits are there for each of them")
    hits = wb.search.query(request, mode="fts", top_k=4)
    assert hits[0].source_id == "engineering/api.md"
    assert wb.search.query("the", mode="fts", top_k=4)  # function words alone still search


@pytest.mark.unit
def test_max_fusion_divides_each_list_by_its_best_score():
    fts = [("a", 8.0), ("b", 4.0), ("c", 2.0)]
    vec = [("c", 0.8), ("d", 0.6)]
    fused = dict(max_fuse([(fts, 0.5), (vec, 0.5)]))
    assert fused == pytest.approx({"a": 0.5, "b": 0.25, "c": 0.125 + 0.5, "d": 0.375})
    # the weakest candidate keeps what its list says of it (min-max would give it 0)
    assert dict(max_fuse([(fts, 1.0)]))["c"] == pytest.approx(0.25)
    # a list with nothing above 0 gives no credit, but its candidates stay ranked
    assert max_fuse([(fts, 0.5), ([("z", -0.1)], 0.5)])[-1] == ("z", 0.0)
    assert fuse(fts, vec, "max", 0.3, 60) == max_fuse([(fts, 0.7), (vec, 0.3)])
    assert [c for c, _ in fuse(fts, vec, "max", 0.5, 60)] == ["c", "a", "d", "b"]


@pytest.mark.unit
def test_rrf_and_score_fusion():
    fused = rrf_fuse([(["a", "b", "c"], 0.5), (["c", "a"], 0.5)], k=60)
    assert [c for c, _ in fused][:2] == ["a", "c"]
    assert rrf_fuse([(["a"], 1.0), (["b"], 0.0)])[0][0] == "a"
    fused = score_fuse([([("a", 10.0), ("b", 8.0), ("x", 0.0)], 0.5), ([("b", 0.9), ("c", 0.1)], 0.5)])
    assert fused[0][0] == "b"


@pytest.mark.unit
def test_fuse_is_what_hybrid_settings_name():
    fts = [("a", 9.0), ("b", 5.0), ("c", 1.0)]
    vec = [("c", 0.9), ("b", 0.8), ("d", 0.1)]
    assert fuse(fts, vec, "rrf", 0.3, 10) == rrf_fuse([(["a", "b", "c"], 0.7),
                                                       (["c", "b", "d"], 0.3)], 10)
    assert fuse(fts, vec, "score", 0.6, 60) == score_fuse([(fts, 0.4), (vec, 0.6)])
    assert [c for c, _ in fuse(fts, vec, "rrf", 1.0, 60)][:3] == ["c", "b", "d"]
    with pytest.raises(RagbenchError, match="'borda'.*'rrf' or 'score'"):
        fuse(fts, vec, "borda", 0.5, 60)


@pytest.mark.unit
def test_a_title_the_query_names_lifts_its_chunks():
    fused = [("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6)]
    titles = {"a": "Quarterly report", "b": "Weekly sync", "c": "Arthur's Magazine",
              "d": "The"}  # "The": no content word, names nothing
    query = "Which magazine was started first, Arthur's Magazine or First for Women?"
    assert [c for c, _ in name_titles(query, fused, titles, 0.15)] == ["a", "c", "b", "d"]
    assert dict(name_titles(query, fused, titles, 0.15))["c"] == pytest.approx(0.85)
    assert [c for c, _ in name_titles(query, fused, titles, 0.3)] == ["c", "a", "b", "d"]
    # every content word of the title must be in the query (stems: "syncs" names "sync")
    assert [c for c, _ in name_titles("weekly syncs", fused, titles, 0.3)][0] == "b"
    assert name_titles("the weekly report", fused, titles, 0.3) == fused  # half a title: none
    assert name_titles(query, fused, titles, 0.0) == fused
    assert name_titles(query, fused, {}, 0.3) == fused  # chunks without a title


@pytest.mark.integration
def test_hybrid_puts_the_document_the_query_names_first(wb, monkeypatch):
    query = "What does the weekly sync say about the database?"
    hits = wb.search.query(query, mode="hybrid", top_k=4)
    assert hits[0].source_id == "team/sync.md" and hits[0].source_title == "Weekly sync"
    monkeypatch.setattr(wb.settings, "hybrid_title_bonus", 0.0)
    assert wb.search.query(query, mode="hybrid", top_k=4)[0].score < hits[0].score


@pytest.mark.unit
def test_fts_query_keeps_the_topic_of_a_long_request_and_drops_its_function_words():
    request = ("What problems and concerns are there in choosing a database for time-sharing "
               "systems? I would rather see time sharing experience than theory.")
    terms = fts_query(request).split(" OR ")
    # the topic words, as the Snowball stems the chunk index holds
    for topic in ("problem", "concern", "choos", "databas", "time", "share", "system",
                  "experi", "theori"):
        assert f'"{topic}"' in terms
    # the request's function words are gone (the query stop list: NLTK's, as bm25s ships it)
    for function_word in ("what", "and", "are", "there", "in", "a", "for", "i", "than"):
        assert f'"{function_word}"' not in terms
    # what the request says twice counts twice ("time-sharing" ... "time sharing")
    assert terms.count('"time"') == terms.count('"share"') == 2
    assert terms.count('"databas"') == 1
    # the document index stems with porter itself: it gets the words as written
    assert fts_query(request, stemmed=False).split(" OR ")[:4] == [
        '"problems"', '"concerns"', '"choosing"', '"database"']


@pytest.mark.unit
def test_fts_query_quotes_every_word_and_keeps_a_query_of_function_words():
    assert fts_query("Which magazine was started first?") == '"magazin" OR "start" OR "first"'
    # nothing but function words: they are the query ("The Who", "to be or not to be")
    assert fts_query("The Who") == '"the" OR "who"'
    assert fts_query("the THE a") == '"the" OR "the" OR "a"'
    # FTS5 syntax in user text stays words: no phrase, prefix, column, NEAR or NOT operators
    assert fts_query('say "NEAR(x" -z* col:value ^w') == (
        '"say" OR "near" OR "x" OR "z" OR "col" OR "valu" OR "w"')
    assert fts_query("?!") == ""


@pytest.mark.unit
def test_per_query_metrics_average_over_any_subset():
    rels = {"a": 1}
    per_query = {"q1": query_metrics(["a", "x"], rels), "q2": query_metrics(["x", "a"], rels)}
    assert per_query["q1"] == {"ndcg@10": 1.0, "recall@10": 1.0, "recall@100": 1.0,
                               "mrr@10": 1.0}
    assert average(per_query, ["q2"])["mrr@10"] == 0.5
    assert average(per_query)["mrr@10"] == 0.75
    assert average(per_query, [])["ndcg@10"] == 0.0


@pytest.mark.unit
def test_metrics():
    rels = {"a": 1, "b": 1}
    assert ndcg_at(["a", "b", "x"], rels) == pytest.approx(1.0)
    assert ndcg_at(["x", "a"], {"a": 1}) == pytest.approx(1 / 1.5849625, rel=1e-6)
    assert recall_at(["a", "x"], rels, 10) == 0.5
    assert mrr_at(["x", "x", "b"], rels) == pytest.approx(1 / 3)


def write_beir(folder):
    folder.mkdir()
    docs = {"d1": ("Aspirin", "Aspirin reduces the risk of heart attack."),
            "d2": ("Vitamin D", "Vitamin D deficiency is linked to bone loss."),
            "d3": ("Exercise", "Regular exercise improves sleep quality.")}
    with (folder / "corpus.jsonl").open("w") as fh:
        for did, (title, text) in docs.items():
            fh.write(json.dumps({"_id": did, "title": title, "text": text}) + "\n")
    with (folder / "queries.jsonl").open("w") as fh:
        fh.write(json.dumps({"_id": "q1", "text": "does aspirin prevent heart attacks"}) + "\n")
        fh.write(json.dumps({"_id": "q2", "text": "bone loss and vitamin deficiency"}) + "\n")
        fh.write(json.dumps({"_id": "q9", "text": "unjudged query"}) + "\n")
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")


@pytest.mark.integration
def test_beir_eval_end_to_end_and_cached(tmp_path):
    write_beir(tmp_path / "tiny")
    corpus, queries, qrels = load_beir(tmp_path / "tiny")
    assert len(corpus) == 3 and set(queries) == {"q1", "q2"}
    per_query: dict = {}
    out = run_beir(tmp_path / "ws", tmp_path / "tiny", ["fts", "vector", "hybrid"], 10,
                   per_query=per_query)
    assert out["ingest"]["inserted"] == 3
    assert set(per_query) == {"fts", "vector", "hybrid"}
    assert {q: m["ndcg@10"] for q, m in per_query["fts"].items()} == {"q1": 1.0, "q2": 1.0}
    for m in out["modes"].values():
        assert m["ndcg@10"] == pytest.approx(1.0) and m["queries"] == 2
        assert m["latency_ms_p95"] >= m["latency_ms_p50"] > 0
    again = run_beir(tmp_path / "ws", tmp_path / "tiny", ["fts"], 10)
    assert again["ingest"].get("skipped") == 3 and "inserted" not in again["ingest"]
    with pytest.raises(EvalError, match="corpus.jsonl"):
        load_beir(tmp_path)
