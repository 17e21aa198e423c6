"""Reports in a real workspace (SQLite, Chroma, the embedding model, the context graph):
citations that survive re-ingest, the facade, and the `ragbench report` CLI round trip."""

from __future__ import annotations

import io
import json
import re

import pytest

from ragbench.cli.main import main
from ragbench.errors import NotFoundError
from tests.conftest import lens_workbench

pytestmark = pytest.mark.integration

DOCS = {
    "engineering/db.md": "# Database migration\n\nThe Postgres 16 migration is the main "
    "architecture dependency on the roadmap and finishes on March 15, 2026.\n\nThe risk: "
    "connector framework v2 has no slack, so Tidepool could slip.",
    "team-structured/roadmap.md": "# Roadmap 2026\n\nTidepool general availability is planned "
    "for Q3 2026 (September 15, 2026). Priority #1 for 2026 is EU data residency.\n\nThe Team "
    "plan costs $49 per seat per month.",
    "external-analyst/brief.md": "# Analyst brief\n\nWe expect Tidepool general availability "
    "in Q4 2026, later than the roadmap says. The Team plan is moving to $59 per seat per "
    "month.",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    ws = tmp_path_factory.mktemp("ws")
    wb = lens_workbench(root, ws, DOCS)
    return root, ws, wb


def _cited(part) -> list[str]:
    return re.findall(r"\[C:([0-9a-f]+)\]", part.current.text_with_ids)


def test_roadmap_cites_every_lens_and_states_the_disagreement(corpus):
    _, _, wb = corpus
    report = wb.reports.create("roadmap", "Plan 2026", "the 2026 plan")
    seen: list[tuple[str, int, int]] = []
    done = wb.reports.generate(report.report_id, progress=lambda h, d, t: seen.append((h, d, t)))
    assert [s[1:] for s in seen] == [(i, 7) for i in range(8)]
    assert seen[-2][0] == "Where sources disagree"  # written last, from the others' passages
    cov = wb.reports.coverage(report.report_id)
    assert all(c.cited for c in cov.lenses) and cov.documents_cited == 3
    for part in done.parts:
        ids = set(_cited(part))
        assert ids <= set(part.current.generation.retrieved_ids)
        assert ids <= {r.chunk_id for r in part.current.references}
    disagree = done.parts[-1].current.text
    line = next(ln for ln in disagree.splitlines() if "Q3 2026" in ln and "Q4 2026" in ln)
    assert len(re.findall(r"\[\d+\]", line)) >= 2  # both sides cited
    assert wb.reports.list()[0].completed_parts == 7


def test_report_citations_resolve_after_reingest(corpus, tmp_path):
    root, ws, wb = corpus
    report = wb.reports.create("custom", "Db", lenses=["engineering", "team-structured"],
                               outline=["Postgres migration date", "Tidepool GA date"])
    report = wb.reports.generate(report.report_id)
    db_doc = next(d for d in wb.library.documents() if d.source_id == "engineering/db.md")
    db_chunks = {c["chunk_id"]: c["text"] for c in wb.catalog.chunks_of(db_doc.doc_id)}
    cited = [c for p in report.parts for c in _cited(p)]
    old = next(c for c in cited if c in db_chunks)
    other = next(c for c in cited if c not in db_chunks)

    # unchanged file, ingested again: content-addressed ids are the same, the citation is live
    wb.library.ingest([root / "engineering"], lens="engineering", root=root)
    assert wb.reports.resolve_citation(old).status == "live"

    # the document changes: its chunk ids go, the report's stored passage answers
    (root / "engineering/db.md").write_text(DOCS["engineering/db.md"] + "\n\nUpdated: done.")
    wb.library.ingest([root / "engineering"], lens="engineering", root=root)
    assert old not in wb.catalog.chunk_ids()
    target = wb.reports.resolve_citation(old)
    assert target.status == "archived" and target.report_id == report.report_id
    assert target.text == db_chunks[old] and target.doc_id == db_doc.doc_id
    assert wb.reports.resolve_citation(other).status == "live"  # untouched document
    # one resolver for every face: Chat's (answers) finds the report's passage too, and its
    # passage view opens it
    assert wb.answers.resolve_citation(old) == target
    assert wb.citations.resolve(old.upper()) == target
    # the stored report still renders every citation
    again = wb.reports.get(report.report_id)
    assert old in {s.id for p in again.parts for s in p.current.sources if s.cited}
    with pytest.raises(NotFoundError, match="unknown chunk id"):
        wb.reports.resolve_citation("0123456789ab")


def _run(capsys, *argv: str) -> tuple[int, dict]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip().startswith("{") else {"text": out}


def test_cli_round_trip(corpus, capsys, tmp_path):
    from docx import Document

    _, ws, _ = corpus
    w = ("--workspace", str(ws))
    code, made = _run(capsys, "report", "new", "brief", "When is Tidepool GA?", *w, "--json")
    assert code == 0 and made["template"] == "brief" and made["parts"][0]["current"] is None
    rid = made["report_id"]
    code, listed = _run(capsys, "report", "list", *w, "--json")
    assert code == 0 and rid in [r["report_id"] for r in listed["reports"]]
    code, full = _run(capsys, "report", "complete-part", rid, *w, "--json")
    assert code == 0 and all(p["current"] for p in full["parts"])
    code, part = _run(capsys, "report", "complete-part", rid, "1", *w, "--json")
    assert code == 0 and part["current"]["version"] == 2 and len(part["history"]) == 1
    code, tuned = _run(capsys, "report", "tune-part", rid, "1", "focus on engineering risks",
                       *w, "--json")
    assert code == 0 and tuned["current"]["generation"]["instruction"]
    code, shown = _run(capsys, "report", "show", rid, *w)
    assert code == 0 and "lenses cited" in shown["text"]
    code, one = _run(capsys, "report", "show", rid, "--part", "1", *w, "--json")
    assert code == 0 and one["current"]["version"] == 3
    code, md = _run(capsys, "report", "export", rid, *w)
    assert code == 0 and md["text"].startswith("# When is Tidepool GA?")
    assert "[View](archive/" in md["text"]
    code, wrote = _run(capsys, "report", "export", rid, "--format", "docx", "-o",
                       str(tmp_path / "r.docx"), *w, "--json")
    assert code == 0 and wrote["bytes"] > 1000
    assert Document(io.BytesIO((tmp_path / "r.docx").read_bytes())).paragraphs
    code, essay = _run(capsys, "report", "export", rid, "--format", "essay", *w, "--json")
    assert code == 0 and json.loads(essay["content"])["parts"][0]["references"]
    code, sug = _run(capsys, "report", "suggest", rid, *w, "--json")
    assert code == 0 and isinstance(sug["suggestions"], list)
    # errors: one JSON object and exit code 1, naming what is wrong
    for argv, needle in ((("report", "show", "nope"), "no report 'nope'"),
                         (("report", "complete-part", rid, "zz"), "has no part 'zz'"),
                         (("report", "new", "memo", "x"), "choose one of roadmap"),
                         (("report", "export", rid, "--format", "docx"), "--output")):
        code, err = _run(capsys, *argv, *w, "--json")
        assert code == 1 and needle in err["error"]
    with pytest.raises(SystemExit) as usage:  # a bad choice is a usage error
        main(["report", "export", rid, "--format", "pdf", *w, "--json"])
    assert usage.value.code == 2 and "choose from md, docx" in capsys.readouterr().out
    code, gone = _run(capsys, "report", "delete", rid, *w, "--json")
    assert code == 0 and gone == {"deleted": rid}
