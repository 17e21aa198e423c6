"""`passage_view`: what Chat and Reports show for a cited source, computed in the library
(sentence spans, document text around the chunk, pages from the archive view, the view cut
around the cited block, the original to download), for live, changed and unarchived documents.
"""

from pathlib import Path

import pytest

from ragbench.answer import Source
from ragbench.answer.citations import CitedPassage
from ragbench.answer.saved import CitationTarget
from ragbench.errors import NotFoundError
from ragbench.workbench.passages import CONTEXT_CHARS, FAR, cited_spans, context, passage_view

pytestmark = pytest.mark.unit
INTRO = "Intro words. " * 40  # 520 characters before the chunk
CHUNK = "The migration starts in May. It finishes on March 15, 2026. Owners stay on call."
TAIL = " Closing remarks follow here."
TEXT = INTRO + CHUNK + TAIL
START, END = len(INTRO), len(INTRO) + len(CHUNK)
SENTENCE = "It finishes on March 15, 2026."
VIEW = ("# Plan\n\n## Page 1\n\nIntro words.\n\n## Page 2\n\n"
        "The migration starts in May. It finishes on March 15, 2026. Owners stay on call.\n\n"
        "## Page 3\n\nClosing remarks follow here.\n")


def source(**kw) -> Source:
    at = CHUNK.index(SENTENCE)
    fields = dict(
        number=1, id="c1", documentId="d1", chunkIndex=3, chunkText=CHUNK, sourceName="plan.pdf",
        title="Migration plan", lens="engineering", page=1, sectionPath="Plan", score=0.5,
        startChar=START, endChar=END, archiveBrowseUri="plan/view.md",
        archiveDownloadUri="plan/plan.pdf", cited=True,
        passages=[CitedPassage(start=at, end=at + len(SENTENCE), text=SENTENCE,
                               claim="The migration finishes in March.")])
    fields.update(kw)
    return Source(**fields)


def target(**kw) -> CitationTarget:
    fields = dict(status="live", chunk_id="c1", doc_id="d1", text=CHUNK, start_char=START,
                  end_char=END, source_id="s1")
    fields.update(kw)
    return CitationTarget(**fields)


def missing(uri: str):
    raise NotFoundError(f"no archive file {uri}")


def view_of(src: Source, tgt: CitationTarget, views=None, originals=None, texts=None,
            workspace: Path | None = None):
    views = {"plan/view.md": VIEW} if views is None else views
    originals = {"plan/plan.pdf": b"%PDF-1.7"} if originals is None else originals
    texts = {"d1": TEXT} if texts is None else texts
    return passage_view(src, tgt, document_text=texts.get,
                        read_view=lambda u: views[u] if u in views else missing(u),
                        read_original=lambda u: originals[u] if u in originals else missing(u),
                        workspace=workspace)


def test_live_passage_highlights_its_sentence_with_context_page_and_original():
    v = view_of(source(), target())
    at = CHUNK.index(SENTENCE)
    assert v.spans == [(at, at + len(SENTENCE))]
    assert v.chunk == CHUNK and v.status == "live" and v.title == "Migration plan"
    assert v.before == "…" + INTRO[-CONTEXT_CHARS:]
    assert v.after == TAIL  # short tail: no ellipsis
    assert v.pages == [2]  # from the view, not the source's page 1 (the chunk's start)
    assert v.where == "lens engineering · chunk 3 · page 2 · Plan · score 0.500"
    assert v.claims == ["The migration finishes in March."]
    assert v.anchor is not None and v.view_page == 2 and v.view_heading == ""
    assert v.original == b"%PDF-1.7" and v.original_name == "plan.pdf"
    parts = v.view_parts()
    assert parts.cited == CHUNK and parts.before == "## Page 2\n\n"
    assert parts.after.startswith("\n\n## Page 3") and parts.skipped == 0


def test_page_unknown_without_a_view_falls_back_to_the_source_page_or_none():
    v = view_of(source(archiveBrowseUri=None), target())
    assert v.view is None and v.anchor is None and not v.view_unreadable
    assert v.pages == [1] and "page 1" in v.where
    v = view_of(source(archiveBrowseUri=None, page=None), target())
    assert v.pages == [] and "page" not in v.where and v.view_page is None


def test_unreadable_view_is_reported_not_raised():
    v = view_of(source(), target(), views={})
    assert v.view is None and v.view_unreadable and v.pages == [1]


def test_offsets_outside_the_chunk_are_dropped_and_overlaps_merged():
    assert cited_spans([(5, 9), (0, 3), (2, 6), (10, 999), (4, 4)], "x" * 20) == [(0, 9)]
    bad = source(passages=[CitedPassage(start=0, end=len(CHUNK) + 5, text="x")])
    assert view_of(bad, target()).spans == []  # none matched: the face marks the whole chunk


def test_context_at_the_document_edges():
    assert context(TEXT, 0, len(TEXT)) == ("", "")
    assert context(None, 10, 20) == ("", "")
    assert context("abcdef", 2, 4) == ("ab", "ef")
    long = "y" * (CONTEXT_CHARS + 10)
    assert context(long, len(long), len(long))[0] == "…" + "y" * CONTEXT_CHARS


def test_changed_document_shows_the_archived_chunk_without_document_text():
    # the answer cited an older chunk text; the target holds the passage stored with the answer
    old = "An older wording of the plan. It finished in 2025."
    v = view_of(source(), target(status="archived", text=old), texts={"d1": "new text " * 99})
    assert v.status == "archived" and v.chunk == CHUNK
    assert v.spans == []  # the sentence offsets are into another text: not trusted
    assert v.before == "" and v.after == ""  # no document text for an archived citation


def test_missing_original_falls_back_to_the_stored_file_else_none(tmp_path):
    v = view_of(source(), target(), originals={})
    assert v.original is None and v.original_name is None
    stored = tmp_path / "files" / "plan.pdf"
    stored.parent.mkdir()
    stored.write_bytes(b"stored original")
    v = view_of(source(downloadUrl="files/plan.pdf"), target(), originals={}, workspace=tmp_path)
    assert v.original == b"stored original" and v.original_name == "plan.pdf"


def test_table_chunk_is_found_in_the_view_and_named_by_its_section():
    table = "| Initiative | Target |\n| --- | --- |\n| Search | Q3 2026 |"
    view = "# Roadmap\n\nSome text.\n\n## Milestones\n\n" + table + "\n\nAfter.\n"
    src = source(chunkText=table, passages=[], page=None, startChar=0, endChar=len(table))
    v = view_of(src, target(text=table, start_char=0, end_char=len(table)),
                views={"plan/view.md": view}, texts={"d1": table})
    assert v.spans == [] and v.anchor is not None
    assert v.view_heading == "Milestones" and v.pages == []
    assert v.view_parts().cited == table


def test_long_section_starts_the_view_at_the_cited_block():
    filler = "\n\n".join(f"Paragraph {i} " + "filler " * 40 for i in range(12))
    view = "# Notes\n\n## Details\n\n" + filler + "\n\n" + CHUNK + "\n"
    v = view_of(source(), target(), views={"plan/view.md": view})
    assert v.anchor is not None and v.view_heading == "Details"
    parts = v.view_parts()
    assert parts.heading == "## Details" and parts.skipped > FAR
    assert parts.before == "" and parts.cited == CHUNK
    whole = v.view_parts(whole=True)
    assert whole.skipped == 0 and whole.before.startswith("# Notes")


def test_passage_not_in_the_view_shows_the_view_from_its_top():
    v = view_of(source(), target(), views={"plan/view.md": "# Other\n\nUnrelated words only.\n"})
    assert v.anchor is None and v.pages == [1]
    assert v.view_parts().after.startswith("# Other") and v.view_parts().cited == ""
