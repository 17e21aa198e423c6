import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragbench.chunking.chunker import ChunkingError, chunk_document, chunk_documents
from ragbench.chunking.tokenizer import get_encoding
from ragbench.ids import compute_chunk_id
from ragbench.models import ParsedDocument
from ragbench.parsers.base import TextBuilder

pytestmark = pytest.mark.unit

WORDS = st.sampled_from(
    ["alpha", "beta", "Gamma.", "delta,", "épée", "naïve", "数据", "🙂", "x" * 30, "end.", "\n",
     "  ", "1024", "(note)", "über?", "tab\t", "a-b"]
)


def build(blocks: list[tuple[str, str]]) -> ParsedDocument:
    b = TextBuilder()
    for kind, text in blocks:
        if kind == "heading":
            b.add_heading(text, 2)
        else:
            b.add(text, kind)  # type: ignore[arg-type]
    return b.build("txt", allow_empty=True)


block_st = st.tuples(
    st.sampled_from(["text", "text", "heading", "list", "table", "code"]),
    st.lists(WORDS, min_size=1, max_size=120).map(" ".join),
)


def check_invariants(doc: ParsedDocument, chunks, size: int) -> None:
    text = doc.text
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    covered = [False] * len(text)
    for c in chunks:
        assert text[c.start_char : c.end_char] == c.text
        assert c.text.strip() == c.text and c.text
        assert c.total_chunks == len(chunks)
        assert c.chunk_id == compute_chunk_id("d" * 16, c.start_char, c.end_char)
        assert 0 < c.token_count <= size
        for i in range(c.start_char, c.end_char):
            covered[i] = True
    missing = [i for i, ch in enumerate(text) if not ch.isspace() and not covered[i]]
    assert not missing, f"uncovered characters at {missing[:10]}"
    starts = [c.start_char for c in chunks]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    ends = [c.end_char for c in chunks]
    assert all(a < b for a, b in zip(ends, ends[1:], strict=False)), "a chunk made no progress"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks=st.lists(block_st, min_size=1, max_size=12),
    size=st.integers(min_value=8, max_value=200),
    overlap_frac=st.floats(min_value=0, max_value=0.9),
)
def test_chunks_are_exact_slices_covering_every_character(blocks, size, overlap_frac):
    doc = build(blocks)
    overlap = int(size * overlap_frac)
    chunks = chunk_document(doc, "d" * 16, size, overlap)
    check_invariants(doc, chunks, size)


@settings(max_examples=60, deadline=None)
@given(blocks=st.lists(block_st, min_size=3, max_size=12), size=st.integers(32, 120))
def test_overlap_is_bounded_by_setting(blocks, size):
    doc = build(blocks)
    overlap = size // 4
    chunks = chunk_document(doc, "d" * 16, size, overlap)
    enc = get_encoding()
    for a, b in zip(chunks, chunks[1:], strict=False):
        shared = max(0, a.end_char - b.start_char)
        if shared:
            assert len(enc.encode_ordinary(doc.text[b.start_char : a.end_char])) <= overlap + 2


def test_long_text_uses_requested_overlap_and_size():
    sentence = "The quick brown fox jumps over the lazy dog near the river bank. "
    doc = build([("text", sentence * 400)])
    chunks = chunk_document(doc, "d" * 16, 1024, 150)
    assert len(chunks) > 3
    assert all(c.token_count <= 1024 for c in chunks)
    assert all(c.token_count > 800 for c in chunks[:-1])
    enc = get_encoding()
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert b.start_char < a.end_char  # overlapping
        shared = len(enc.encode_ordinary(doc.text[b.start_char : a.end_char]))
        assert 50 <= shared <= 151
        assert doc.text[b.start_char - 2 : b.start_char] == ". "  # snapped to a sentence start


def test_heading_stays_with_following_block():
    body = "word " * 60
    blocks = [("text", body)] * 3 + [("heading", "Results")] + [("text", body)] * 3
    doc = build(blocks)
    chunks = chunk_document(doc, "d" * 16, 120, 0)
    for c in chunks:
        assert not c.text.endswith("Results"), "a heading was left at the end of a chunk"
    assert any(c.text.startswith("Results") for c in chunks)
    assert any(c.section_path == "Results" for c in chunks)


def test_oversized_tables_progress_by_a_full_window():
    """Regression: big table blocks once made each chunk advance by a single token."""
    row = "| " + " | ".join(f"cell{i} value" for i in range(40)) + " |"
    doc = build([("table", "\n".join([row] * 30)), ("table", "\n".join([row] * 30))])
    chunks = chunk_document(doc, "d" * 16, 256, 40)
    tokens = sum(c.token_count for c in chunks)
    assert tokens < 1.4 * len(get_encoding().encode_ordinary(doc.text))
    assert min(c.token_count for c in chunks[:-1]) > 100


def test_table_kept_whole_when_it_fits():
    table = "\n".join(f"| row {i} | value {i} |" for i in range(12))
    blocks = [("text", "intro sentence. " * 30), ("table", table), ("text", "outro. " * 30)]
    doc = build(blocks)
    chunks = chunk_document(doc, "d" * 16, 128, 20)
    assert any(table in c.text for c in chunks)
    assert any(c.chunk_type == "table" for c in chunks)


def test_metadata_lens_and_lines():
    doc = build([("heading", "Intro"), ("text", "one\ntwo\nthree")])
    (chunk,) = chunk_document(doc, "d" * 16, 1024, 150, lens="engineering")
    assert chunk.lens == "engineering"
    assert chunk.line_from == 1 and chunk.line_to == 5
    assert chunk.ancestry_titles == ["Intro"] or chunk.section_path in ("", "Intro")


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (100, 100), (100, -1)])
def test_bad_settings_are_named(size, overlap):
    doc = build([("text", "hello")])
    with pytest.raises(ChunkingError, match="chunk"):
        chunk_document(doc, "d" * 16, size, overlap)


def test_empty_document_has_no_chunks():
    doc = ParsedDocument(format="txt", text="   ", blocks=[])
    assert chunk_document(doc, "d" * 16) == []


@pytest.mark.parametrize(
    "text",
    ["plain words", "a <|endoftext|> b <|fim_prefix|>", "数据 🙂 épée", "lone \ud800 surrogate", ""],
)
def test_encode_tokens_is_encode_ordinary(text):
    """The numpy buffer encoding yields exactly tiktoken's ordinary tokens, specials as text."""
    from ragbench.chunking.tokenizer import encode_tokens

    assert encode_tokens(text).tolist() == get_encoding().encode_ordinary(text)


# text in which tokenisers differ if anywhere: contractions, digit runs, whitespace runs before
# words and line breaks, mixed scripts, combining marks, emoji, specials, odd separators
TRICKY = st.lists(
    st.sampled_from(
        list("aZé ñ\t\n\r'’sStTrRvVmMlLdD019.,!?;:-_()<>|/\\\"@#$%&*~`+=")
        + ["'s", "'re", "'ll", "’S", "<|endoftext|>", "\u00a0", "\u2003", "\u3000", "日本語",
           "한국어", "Ελληνικά", "русский", "🙂", "👍🏽", "\u200b", "\ufeff", "e\u0301", "١٢٣",
           "𝟘𝟙", "ß", "İ", "ﬁ", "\x00", "\x0b", "\x0c", "\x85", "\u2028", "    ", "\n\n\n"]
    ),
    max_size=60,
).map("".join)


@settings(max_examples=3000, deadline=None)
@given(text=TRICKY | st.text(max_size=80))
def test_fast_encoder_yields_tiktokens_tokens(text):
    """The bpe-openai encoder (the default backend) gives tiktoken's ordinary tokens exactly."""
    from ragbench.chunking.tokenizer import encode_tokens, tokenizer_backend

    assert tokenizer_backend() == "bpe-openai"  # a pinned dependency: the fast path is tested
    assert encode_tokens(text).tolist() == get_encoding().encode_ordinary(text)


def test_tokenizer_backend_fallbacks(monkeypatch):
    """RAGBENCH_TOKEN_ENCODER=tiktoken forces tiktoken; a failing fast encoder (a pyo3 panic is a
    BaseException) falls back to tiktoken; an interrupt is not swallowed."""
    from ragbench.chunking import tokenizer

    text = "Fallbacks keep the tokens: 数据 🙂"
    expected = get_encoding().encode_ordinary(text)
    monkeypatch.setenv(tokenizer.TOKENIZER_ENV, "tiktoken")
    assert tokenizer.tokenizer_backend() == "tiktoken"
    assert tokenizer.encode_tokens(text).tolist() == expected
    monkeypatch.delenv(tokenizer.TOKENIZER_ENV)

    class PanicException(BaseException):  # pyo3's name for a Rust panic
        pass

    def raising(exc: BaseException):
        def encode(_text: str) -> list[int]:
            raise exc
        return encode

    for exc in (PanicException("boom"), ValueError("bad")):
        monkeypatch.setattr(tokenizer, "_fast_encoder", lambda name, exc=exc: raising(exc))
        assert tokenizer.encode_tokens(text).tolist() == expected
    monkeypatch.setattr(tokenizer, "_fast_encoder", lambda name: raising(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        tokenizer.encode_tokens(text)


def test_token_char_offsets_split_characters():
    """A character split over tokens: its later tokens start at the character's start."""
    from ragbench.chunking.tokenizer import encode_tokens, token_char_offsets

    text = "a🙂b数据" * 3
    tokens = encode_tokens(text)
    offs = token_char_offsets(text, tokens)
    assert offs[-1] == len(text)
    assert any(a == b for a, b in zip(offs, offs[1:], strict=False)), "no character was split"
    enc = get_encoding()
    for i, tok in enumerate(tokens.tolist()):
        prefix = enc.decode_bytes(tokens[:i].tolist())
        # the character that contains the token's first byte starts at offs[i]
        assert offs[i] == len(prefix.decode("utf-8", errors="ignore")), (i, tok)


def test_chunk_documents_threads_same_result_and_errors():
    docs = [ParsedDocument(format="txt", text="", blocks=[])]
    docs += [build([("text", "word " * n)]) for n in (5, 900, 40, 2000, 1)]
    pairs = [(d, f"{i:016d}") for i, d in enumerate(docs)]
    single = [chunk_document(d, i, 128, 16) for d, i in pairs]
    for workers in (1, 2, 8):
        got = chunk_documents(pairs, 128, 16, workers=workers)
        assert [[c.model_dump() for c in cs] for cs in got] == [
            [c.model_dump() for c in cs] for cs in single
        ]
    with pytest.raises(ChunkingError, match="chunk_overlap"):
        chunk_documents(pairs, 128, 128, workers=2)
    assert chunk_documents([], 128, 16, workers=2) == []


def test_chunks_are_validated_models_with_their_own_lists():
    """Chunks are ordinary pydantic models: they round-trip through validation unchanged, the
    fields the chunker sets are the fields set, later fields keep their defaults, and no list
    is shared with the blocks or between chunks."""
    from ragbench.models import Chunk

    doc = build([("heading", "Intro"), ("text", "Alpha beta. " * 60), ("list", "- a\n- b"),
                 ("heading", "Code"), ("code", "x = 1\n" * 40), ("table", "| a | b |\n" * 30)])
    chunks = chunk_document(doc, "d" * 16, 64, 8, lens="field")
    assert len(chunks) > 3
    # context_header (ingest context) and table_header (`attach_table_headers`) come later;
    # cue times and PDF boxes are set only for blocks that have them (none here)
    set_by_chunker = set(Chunk.model_fields) - {"context_header", "table_header",
                                                "start_timestamp_ms", "end_timestamp_ms",
                                                "bbox_quad"}
    for c in chunks:
        assert type(c) is Chunk
        assert Chunk.model_validate(c.model_dump()) == c
        assert c.model_fields_set == set_by_chunker
        assert c.context_header is None and c.lens == "field"
        assert type(c.start_char) is int and type(c.token_count) is int
    titled = [c for c in chunks if c.ancestry_titles]
    assert titled, "some chunk should carry its section's titles"
    titled[0].ancestry_titles.append("changed")
    assert all("changed" not in b.ancestry_titles for b in doc.blocks)
    assert all("changed" not in c.ancestry_titles for c in chunks[1:] if c is not titled[0])


ROADMAP_TABLE = (
    "| Initiative | Milestone | Target | Status |\n"
    + "".join(f"| Initiative {i} | Milestone number {i} reached | Q{i % 4 + 1} 2026 | Committed |\n"
              for i in range(40))
).strip()


@pytest.mark.parametrize("separator", [False, True])
def test_table_continuation_chunks_carry_the_header_row(separator):
    """issue 31: a table split across chunks repeats its header row (and separator) for every
    continuation chunk, as `table_header`; the chunk text stays the exact slice."""
    from ragbench.chunking.tables import attach_table_headers

    table = ROADMAP_TABLE
    header = "| Initiative | Milestone | Target | Status |"
    if separator:
        header += "\n| --- | --- | --- | --- |"
        table = table.replace("\n", "\n| --- | --- | --- | --- |\n", 1)
    doc = build([("heading", "Timeline"), ("text", "Intro sentence here."), ("table", table),
                 ("text", "After the table.")])
    chunks = chunk_document(doc, "d" * 16, 64, 16)
    attach_table_headers(doc, chunks)
    check_invariants(doc, chunks, 64)
    (table_block,) = [b for b in doc.blocks if b.chunk_type == "table"]
    below = table_block.start_char + len(header)
    inside = [c for c in chunks if below < c.start_char < table_block.end_char]
    assert len(inside) >= 3
    assert all(c.table_header == header for c in inside)
    # a chunk starting above the table, at its top, or after it has none
    assert all(c.table_header is None for c in chunks if c not in inside)
    assert chunks[0].table_header is None and chunks[-1].text.endswith("After the table.")


def test_table_header_of_the_roadmap_at_512_tokens():
    """issue 31 walk: Settings → chunk size 512 → the roadmap's timeline table continues in
    chunk 1, which starts at the 'EU data residency' row."""
    from pathlib import Path

    from ragbench.chunking.tables import attach_table_headers
    from ragbench.parsers import parse_bytes

    path = Path(__file__).parents[2] / "data" / "samples" / "team-structured" / "roadmap-2026.md"
    doc = parse_bytes(path.read_bytes(), path.name)
    chunks = chunk_document(doc, "d" * 16, 512, 150)
    attach_table_headers(doc, chunks)
    assert chunks[1].text.startswith("| EU data residency |")
    assert chunks[1].table_header == "| Initiative | Milestone | Target | Status |"
    assert chunks[0].table_header is None


# --- specs/003 citation.start/end_timestamp_ms and citation.bbox_quad ----------------------------


def _subtitles(cues: int) -> bytes:
    """A real SubRip file: cue n runs from 2.5 n s for 2 s and says a sentence about n."""
    def stamp(ms: int) -> str:
        return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"

    return "\n".join(
        f"{n}\n{stamp(2500 * n)} --> {stamp(2500 * n + 2000)}\n"
        f"Cue number {n} says the pumps of line {n % 7} are checked at shift change.\n"
        for n in range(1, cues + 1)).encode()


@pytest.mark.parametrize(("size", "overlap"), [(24, 0), (40, 12), (200, 30)])
def test_subtitle_chunks_run_from_their_first_cue_start_to_their_last_cue_end(size, overlap):
    from ragbench.parsers import parse_bytes

    doc = parse_bytes(_subtitles(40), "talk.srt")
    chunks = chunk_document(doc, "d" * 16, size, overlap)
    assert len(chunks) > 1
    for c in chunks:
        cues = [b for b in doc.blocks if b.start_char < c.end_char and b.end_char > c.start_char]
        assert c.start_timestamp_ms == cues[0].start_timestamp_ms
        assert c.end_timestamp_ms == max(b.end_timestamp_ms or 0 for b in cues)
        assert c.start_timestamp_ms < c.end_timestamp_ms
        first = int(c.text.split("Cue number ", 1)[1].split()[0]) if c.text.startswith(
            "Cue number") else None
        if first is not None:  # the chunk starts at a cue: that cue's time, as written
            assert c.start_timestamp_ms == 2500 * first
    assert chunks[0].start_timestamp_ms == 2500
    assert chunks[-1].end_timestamp_ms == 2500 * 40 + 2000


def _placed_pdf(lines_per_page: int, pages: int) -> tuple[bytes, list[tuple]]:
    """A PDF of numbered lines set by fpdf2 at known places: its bytes and, per line, (page,
    text, x, baseline y in PDF points from the bottom, width)."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.set_font("Helvetica", size=11)
    placed = []
    for page in range(1, pages + 1):
        pdf.add_page()
        for i in range(lines_per_page):
            n = (page - 1) * lines_per_page + i
            text = f"Line {n} of the pump log: valve {n % 9} greased, seal {n % 5} checked."
            x, y = 60 + 15 * (i % 3), 80 + 22 * i
            pdf.text(x=x, y=y, text=text)
            placed.append((page, text, x, pdf.h - y, pdf.get_string_width(text)))
    return bytes(pdf.output()), placed


@pytest.mark.parametrize(("size", "overlap"), [(30, 0), (64, 16)])
def test_pdf_chunks_have_the_box_of_the_lines_they_cover_on_their_first_page(size, overlap):
    from ragbench.parsers import parse_bytes

    data, placed = _placed_pdf(lines_per_page=12, pages=2)
    doc = parse_bytes(data, "log.pdf")
    chunks = chunk_document(doc, "d" * 16, size, overlap)
    assert len(chunks) > 4
    spans = [(page, doc.text.index(t), doc.text.index(t) + len(t), x, y, w)
             for page, t, x, y, w in placed]
    for c in chunks:
        quad = c.bbox_quad
        assert quad is not None and len(quad) == 4
        xs, ys = [p["x"] for p in quad], [p["y"] for p in quad]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        mine = [(x, y, w) for page, a, b, x, y, w in spans
                if page == c.page_number and a < c.end_char and b > c.start_char]
        assert mine, "a chunk touches some line of its first page"
        for x, y, w in mine:  # every line it touches on that page lies in its box, whole
            assert x0 - 0.1 <= x and x + w <= x1 + 0.1 and y0 <= y <= y1
        assert (x0, y0) == pytest.approx((min(x for x, _, _ in mine),
                                          min(y for _, y, _ in mine) - 11 * 0.25), abs=0.1)
        others = [y for page, a, b, _, y, _ in spans
                  if page == c.page_number and (a >= c.end_char or b <= c.start_char)]
        assert not any(y0 <= y <= y1 for y in others)  # and no line it does not touch
