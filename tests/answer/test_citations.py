import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragbench.answer.citations import build_context, header, parse_ids, validate
from ragbench.models import RetrievalResult

pytestmark = pytest.mark.unit

HEX = st.text("0123456789abcdef", min_size=12, max_size=12)


def result(cid: str, **kw) -> RetrievalResult:
    base = dict(chunk_id=cid, doc_id="d" * 16, source_id="a/b.md", source_title='The "Plan"',
                file_name="b.md", lens="x", chunk_index=0, total_chunks=1, chunk_type="text",
                section_path="", page_number=3, line_from=1, line_to=2, start_char=0,
                end_char=5, text="hello", score=1.0, rank=1, mode="fts")
    base.update(kw)
    return RetrievalResult(**base)


def test_header_format():
    assert header(result("abcdef012345")) == (
        "[S:a/b.md | D:dddddddddddddddd | C:abcdef012345 | p:3 | title:\"The 'Plan'\"]")
    assert "p:-" in header(result("abcdef012345", page_number=None))
    ctx = build_context([result("abcdef012345"), result("0123456789ab", text="world")])
    assert ctx.index("C:abcdef012345") < ctx.index("C:0123456789ab") and "world" in ctx


def test_tolerated_forms_and_renumbering():
    a, b = "aaaaaaaaaaaa", "bbbbbbbbbbbb"
    text = f"One [C:{b}]. Two [C: {a}] and [{b}]. Three [C:{a}, C:{b}]. Bad [C:deadbeefcafe]."
    check = validate(text, [a, b])
    assert check.cited == [b, a]
    assert check.text == "One [1]. Two [2] and [1]. Three [2][1]. Bad."
    assert check.invalid == ["deadbeefcafe"] and check.found == 6 and not check.needs_retry
    assert parse_ids(text) == [b, a, b, a, b, "deadbeefcafe"]


def test_retry_when_more_than_half_invalid():
    check = validate("x [C:111111111111] y [C:222222222222] z [C:aaaaaaaaaaaa]", ["aaaaaaaaaaaa"])
    assert check.needs_retry and check.cited == ["aaaaaaaaaaaa"]
    assert not validate("no citations at all", ["aaaaaaaaaaaa"]).needs_retry


@given(valid=st.lists(HEX, min_size=1, max_size=5, unique=True),
       invented=st.lists(HEX, max_size=5),
       words=st.lists(st.sampled_from(["alpha", "beta.", "gamma,", "[", "]", "C:", "12"]),
                      max_size=20))
def test_output_only_cites_valid_ids_numbered_in_order(valid, invented, words):
    invented = [i for i in invented if i not in valid]
    pieces = []
    for i, w in enumerate(words):
        pieces.append(w)
        pool = valid + invented
        pieces.append(f"[C:{pool[i % len(pool)]}]")
    check = validate(" ".join(pieces), valid)
    assert set(check.cited) <= set(valid)
    assert not (set(check.invalid) - set(invented))
    numbers = [int(n) for n in __import__("re").findall(r"\[(\d+)\]", check.text)]
    assert set(numbers) == set(range(1, len(check.cited) + 1))
    for inv in invented:
        assert inv not in check.text


def test_every_citation_like_mark_is_validated():
    """Issue 16: [7], (C:..), 【C:..】 and over-long ids used to pass through unflagged."""
    valid = ["1a2b3c4d5e6f", "abcdef012345"]
    text = ("Launch is Q3 (C:1a2b3c4d5e6f) and Q4 【C:abcdef012345】. Made up [7], [1, 2], "
            "[C:1a2b3c4d5e6f00112233], (C:page2) and ［C:deadbeefdead］.")
    check = validate(text, valid)
    assert check.text == "Launch is Q3 [1] and Q4 [2]. Made up,,, and."
    assert check.cited == valid
    assert check.invalid == ["[C:1a2b3c4d5e6f00112233]", "(C:page2)", "[7]", "[1, 2]",
                             "deadbeefdead"]
    assert check.found == 7 and check.needs_retry


def test_echoed_header_keys_are_not_citations():
    """A small model echoed a context header's source key as if it were a citation."""
    check = validate("The plan ships in May [S:team-structured/roadmap-2026] [D:0011223344556677]"
                     " [C:1a2b3c4d5e6f].", ["1a2b3c4d5e6f"])
    assert check.text == "The plan ships in May [1]."
    assert check.invalid == ["[S:team-structured/roadmap-2026]", "[D:0011223344556677]"]


def test_quoted_reference_numbers_are_removed_but_not_counted():
    """Extractive text quotes documents: their own [3] must not pass for our [3], nor count."""
    check = validate("Trials agree [3] [C:1a2b3c4d5e6f].", ["1a2b3c4d5e6f"], from_model=False)
    assert check.text == "Trials agree [1]."
    assert check.invalid == [] and check.found == 1


def test_spec_header_form_and_setting():
    """specs/004's `to_citation_header`: ids cut to 8, p only when known, no title."""
    from ragbench.answer.citations import CITATION_RULES
    from ragbench.answer.prompting import ModelWriter
    from ragbench.config import Settings

    long = result("abcdef012345", source_id="roadmap/plan.md", doc_id="0123456789abcdef")
    assert header(long, "spec") == "[S:roadmap/ | D:01234567 | C:abcdef012345 | p:3]"
    assert header(result("abcdef012345", page_number=None), "spec") == (
        "[S:a/b.md | D:dddddddd | C:abcdef012345]")
    assert "[C:<id1>][C:<id2>]" in CITATION_RULES  # the rule for several ids
    for style, expected in (("ragbench", header(long)), ("spec", header(long, "spec"))):
        writer = ModelWriter(Settings(citation_header=style))
        prompt = writer.messages("When?", [long], [])[1]["content"]
        assert prompt.startswith(f"CONTEXT:\n{expected}\nhello")
    from ragbench.reports.context import format_context

    assert header(long, "spec") in format_context([long], style="spec")[0]


def test_sources_block_in_the_spec_format_with_the_archive_base_url():
    from ragbench.answer.response import Source
    from ragbench.answer.sources import sources_block

    cited = Source(number=1, id="abcdef012345", title="Safety | Manual", page=12,
                   archiveBrowseUri="archive/a3f2b1c8/attachments/manual.pdf.md",
                   archiveDownloadUri="archive/a3f2b1c8/attachments/manual.pdf")
    other = Source(number=None, id="0123456789ab", title="Not cited")
    assert sources_block([other, cited]) == (
        "**Sources:**\n[1] Safety / Manual | p.12 | "
        "[View](archive/a3f2b1c8/attachments/manual.pdf.md) | "
        "[Download](archive/a3f2b1c8/attachments/manual.pdf)")
    assert "[View](https://kb.example/ws/archive/a3f2b1c8/" in sources_block(
        [cited], "https://kb.example/ws/")
    assert sources_block([other]) == ""


def test_chunk_id_line_names_a_cited_source_by_its_ids():
    """The command line's line under the Sources lines (ask, and report parts with the lens)."""
    from ragbench.answer.response import Source
    from ragbench.answer.sources import chunk_id_line

    cited = Source(number=2, id="abcdef012345", sourceId="team/plan.md", chunkIndex=4,
                   lens="team")
    assert chunk_id_line(cited) == "[2] team/plan.md #4  (C:abcdef012345)"
    assert chunk_id_line(cited, lens=True) == "[2] team/plan.md #4 (team)  (C:abcdef012345)"
