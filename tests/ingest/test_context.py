"""Contextual chunking: header, summaries, embedding text, LLM summary cache, switching it."""

from email.message import EmailMessage

import pytest

from ragbench.answer.llm import LLMError, LLMReply
from ragbench.config import Settings
from ragbench.ingest.context import (
    SUMMARY_PROMPT,
    LLMSummarizer,
    apply_context,
    chunk_header,
    context_mode,
    document_header,
    extractive_summary,
)
from ragbench.models import Chunk
from ragbench.workbench import Workbench
from tests.llm_server import llm_server  # noqa: F401

SMALL = Settings(chunk_size=64, chunk_overlap=8)
TEXT = (
    "Osprey populations recovered along the river after the ban on DDT. "
    "Volunteers counted nests on platforms every spring between 2010 and 2020. "
    "The river survey found osprey nests on most platforms near the estuary. "
    "Parking near the boat ramp is free on weekends. "
    "Osprey nests near the estuary produced more chicks than nests upriver."
)


def chunk(text, section="", index=0):
    return Chunk(chunk_id=f"c{index}", doc_id="d", chunk_index=index, total_chunks=2,
                 start_char=0, end_char=len(text), text=text, token_count=5,
                 chunk_type="text", section_path=section, embedding_text=text)


@pytest.mark.unit
def test_header_has_title_source_date_lens_and_section():
    head = document_header("Q3  plan\n", "mail/thread.eml", "Mon, 02 Mar 2026 10:00:00 +0000",
                           "finance")
    assert head == ("Title: Q3 plan | Source: mail/thread.eml | "
                    "Date: Mon, 02 Mar 2026 10:00:00 +0000 | Lens: finance")
    assert chunk_header(head, "Plan > Budget") == head + " | Section: Plan > Budget"
    assert document_header(None, "a.md", None, "default") == "Source: a.md"  # no empty fields


@pytest.mark.unit
def test_extractive_summary_is_short_representative_and_deterministic():
    summary = extractive_summary(TEXT, "Osprey survey")
    assert summary == extractive_summary(TEXT, "Osprey survey")
    assert "Parking" not in summary  # off-topic sentence
    assert summary.count(".") == 2 and len(summary) <= 400
    first, second = (TEXT.index(s.strip() + ".") for s in summary.split(".")[:2])
    assert first < second  # document order
    assert extractive_summary("Too short.") == ""


@pytest.mark.unit
def test_apply_context_keeps_text_and_adds_summary_only_to_multi_chunk_documents():
    many = [chunk("Nests counted in spring.", "Survey > Methods", 0), chunk("More nests.", "", 1)]
    apply_context(many, "Title: Osprey | Source: a.md", "The summary.")
    assert many[0].context_header == "Title: Osprey | Source: a.md | Section: Survey > Methods"
    assert many[0].embedding_text == (many[0].context_header + "\nThe summary.\n\n"
                                      "Nests counted in spring.")
    assert many[1].text == "More nests." and many[1].embedding_text.endswith("\n\nMore nests.")
    single = [chunk("The whole document.")]
    apply_context(single, "Title: T", "The summary.")
    assert single[0].embedding_text == "Title: T\n\nThe whole document."
    off = [chunk("Plain.", "S")]
    apply_context(off, "Title: T", "x", enabled=False)
    assert off[0].embedding_text == "Plain." and off[0].context_header == "Title: T | Section: S"


class ScriptedChat:
    """A chat model that records prompts (the unit under test is the summarizer)."""

    name = "openai:scripted"

    def __init__(self, fail=False):
        self.prompts, self.fail = [], fail

    def complete(self, messages, max_tokens=512, temperature=0.0, json_mode=False):
        self.prompts.append((messages[0]["content"], max_tokens))
        if self.fail:
            raise LLMError("endpoint down")
        return LLMReply(text="  An osprey survey report.\nIt counts nests.  ")


class DictCache:
    def __init__(self):
        self.data = {}

    def get_summary(self, key):
        return self.data.get(key)

    def put_summary(self, key, summary):
        self.data[key] = summary


@pytest.mark.unit
def test_llm_summary_uses_the_spec_prompt_once_per_document():
    chat, cache = ScriptedChat(), DictCache()
    summarizer = LLMSummarizer(chat, cache)
    assert summarizer.summarize(TEXT * 100, "Osprey") == "An osprey survey report. It counts nests."
    assert summarizer.summarize(TEXT * 100, "Osprey") == "An osprey survey report. It counts nests."
    assert len(chat.prompts) == 1  # cached
    prompt, max_tokens = chat.prompts[0]
    assert prompt == SUMMARY_PROMPT.format(text=(TEXT * 100)[:4000]) and max_tokens == 150
    assert "2-3 sentences" in prompt


@pytest.mark.unit
def test_llm_summary_falls_back_to_extractive_and_does_not_cache_the_failure():
    chat, cache = ScriptedChat(fail=True), DictCache()
    summarizer = LLMSummarizer(chat, cache)
    assert summarizer.summarize(TEXT, None) == extractive_summary(TEXT)
    assert cache.data == {} and summarizer.failures == ["endpoint down"]
    with pytest.raises(LLMError):
        LLMSummarizer(chat, cache, fallback=False).summarize(TEXT, None)


@pytest.mark.unit
def test_context_mode_and_signature():
    assert context_mode(Settings()) == "off"
    on = Settings(contextual_embeddings=True)
    assert context_mode(on) == "extractive" and "context_model" not in on.ingest_signature()
    llm = Settings(contextual_embeddings=True, llm_backend="openai", llm_model="m1")
    assert context_mode(llm) == "llm:m1" and llm.ingest_signature()["context_model"] == "m1"


@pytest.mark.integration
def test_ingest_with_context_keeps_exact_slices(tmp_path):
    doc = tmp_path / "survey.md"
    doc.write_text("# Osprey survey\n\n## Methods\n\n" + (TEXT + "\n\n") * 6)
    wb = Workbench(tmp_path / "ws", SMALL.model_copy(update={"contextual_embeddings": True}))
    (result,) = wb.library.ingest([doc], root=tmp_path).files
    record = wb.catalog.get_document(result.doc_id)
    text = wb.catalog.document_text(result.doc_id)
    chunks = wb.catalog.chunks_of(result.doc_id)
    assert len(chunks) > 1 and record.context_summary
    for c in chunks:
        assert text[c["start_char"]:c["end_char"]] == c["text"]
        assert c["embedding_text"].startswith("Title: Osprey survey | Source: survey.md")
        assert record.context_summary in c["embedding_text"]
        assert c["embedding_text"].endswith("\n\n" + c["text"])
    assert "Section: Osprey survey > Methods" in chunks[-1]["context_header"]
    assert wb.search.query("osprey nests estuary", mode="vector")[0].doc_id == result.doc_id


@pytest.mark.integration
def test_email_date_enters_the_header(tmp_path):
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "ana@example.com", "b@example.com", "Q3 plan"
    msg["Date"] = "Mon, 02 Mar 2026 10:00:00 +0000"
    msg.set_content("The launch moves to Q3 2026. Budget stays the same.")
    (tmp_path / "t.eml").write_bytes(bytes(msg))
    wb = Workbench(tmp_path / "ws", SMALL.model_copy(update={"contextual_embeddings": True}))
    (result,) = wb.library.ingest([tmp_path / "t.eml"], root=tmp_path).files
    (c,) = wb.catalog.chunks_of(result.doc_id)
    assert c["embedding_text"].startswith(
        "Title: Q3 plan | Source: t.eml | Date: Mon, 02 Mar 2026 10:00:00 +0000\n\n")


@pytest.mark.integration
def test_switching_context_re_embeds_only_what_changed(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "survey.md").write_text("# Survey\n\n" + (TEXT + "\n\n") * 6)
    ws = tmp_path / "ws"
    off = Workbench(ws, SMALL)
    off.library.ingest([tmp_path / "docs"], root=tmp_path / "docs")
    on = Workbench(ws, SMALL.model_copy(update={"contextual_embeddings": True}))
    report = on.maintenance.reprocess()
    distinct = {r[0] for r in on.catalog.conn.execute("SELECT embedding_text FROM chunks")}
    assert report.totals["reprocessed"] == 1 and report.embedded == len(distinct) > 1
    back = Workbench(ws, SMALL)
    report = back.maintenance.reprocess()
    assert report.totals["reprocessed"] == 1 and report.embedded == 0  # all from the cache
    assert all(r["embedding_text"] == r["text"] for r in
               back.catalog.conn.execute("SELECT text, embedding_text FROM chunks"))


@pytest.mark.unit
def test_llm_context_without_endpoint_falls_back_or_fails_clearly():
    from ragbench.ingest.context import ExtractiveSummarizer, make_summarizer

    llm = Settings(contextual_embeddings=True, llm_backend="openai")
    assert isinstance(make_summarizer(llm), ExtractiveSummarizer)
    with pytest.raises(LLMError, match="base URL"):
        make_summarizer(llm.model_copy(update={"llm_fallback": False}))
    assert make_summarizer(Settings()) is None


@pytest.mark.integration
@pytest.mark.slow
def test_llm_summary_from_a_real_server_once_per_document(tmp_path, llm_server):  # noqa: F811
    from ragbench.ingest.context import LLMSummarizer

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "survey.md").write_text("# Survey\n\n" + (TEXT + "\n\n") * 4)
    settings = SMALL.model_copy(update={"contextual_embeddings": True, "llm_backend": "openai",
                                        "openai_base_url": llm_server, "llm_fallback": False,
                                        "openai_timeout": 300.0})
    ws = tmp_path / "ws"
    wb = Workbench(ws, settings)
    (result,) = wb.library.ingest([tmp_path / "docs"], root=tmp_path / "docs").files
    summary = wb.catalog.get_document(result.doc_id).context_summary
    assert summary and summary != extractive_summary(TEXT)
    assert isinstance(wb.ingestor.summarizer, LLMSummarizer) and wb.ingestor.summarizer.calls == 1
    assert all(summary in c["embedding_text"] for c in wb.catalog.chunks_of(result.doc_id))
    wb.catalog.conn.execute("UPDATE documents SET ingest_version = 1")
    again = Workbench(ws, settings)
    assert again.maintenance.reprocess().totals["reprocessed"] == 1
    assert again.ingestor.summarizer.calls == 0  # the cached summary was used
    assert again.catalog.get_document(result.doc_id).context_summary == summary


@pytest.mark.integration
def test_table_continuation_is_embedded_and_found_with_its_header_row(tmp_path):
    """issue 31: the header row of a split table leads the continuation chunk's embedding
    text (with or without contextual embeddings), is stored in the chunk's metadata and comes
    back on search results; the chunk text stays the exact slice."""
    import json

    rows = "".join(f"| Squad {i} | {i + 3} | Focus area number {i} |\n" for i in range(30))
    (tmp_path / "cap.md").write_text(
        "# Capacity\n\n| Squad | Engineers | Focus |\n|---|---|---|\n" + rows)
    wb = Workbench(tmp_path / "ws", SMALL)
    (result,) = wb.library.ingest([tmp_path / "cap.md"], root=tmp_path).files
    text = wb.catalog.document_text(result.doc_id)
    chunks = wb.catalog.chunks_of(result.doc_id)
    header_end = text.index("| Squad | Engineers | Focus |") + len("| Squad | Engineers | Focus |")
    continued = [c for c in chunks if c["start_char"] > header_end]
    assert len(continued) >= 2
    for c in continued:
        assert text[c["start_char"]:c["end_char"]] == c["text"]
        assert json.loads(c["metadata"])["table_header"] == "| Squad | Engineers | Focus |"
        assert c["embedding_text"] == "| Squad | Engineers | Focus |\n" + c["text"]
    hits = wb.search.query("Squad 25 focus area number 25", mode="fts")
    hit = next(h for h in hits if h.chunk_id in {c["chunk_id"] for c in continued})
    assert hit.table_header == "| Squad | Engineers | Focus |"
    # backfill derives the same embedding text: nothing to change
    report = wb.maintenance.backfill(dry_run=True)
    assert report.changes.get("embedding_text", 0) == 0
