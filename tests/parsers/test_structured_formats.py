"""JSON, XML (RSS, Atom, generic) and Jupyter notebooks become readable text, not raw markup.

Before (issue 16) these files were ingested as plain text: chunks full of `<rss`, `nbformat`
and braces. Every input here is made by the test.
"""

from __future__ import annotations

import json

import pytest

from ragbench.parsers import EmptyDocumentError, ParseError, detect_format, parse_bytes
from tests.parsers.conftest import check_blocks

pytestmark = pytest.mark.unit


def blocks_of(doc, kind=None):
    return [doc.text[b.start_char:b.end_char] for b in doc.blocks
            if kind is None or b.chunk_type == kind]


# --- JSON ----------------------------------------------------------------------------------------

ACCOUNT = {
    "customer": {"name": "Acme Harbor", "plan": "Team", "labels": {"on call": True}},
    "tags": ["pilot", "emea"],
    "orders": [{"id": n, "total": n * 10, "ship": {"city": "Oslo"}} for n in range(1, 5)],
    "notes": None,
}


def test_json_becomes_key_paths_and_record_tables() -> None:
    doc = parse_bytes(json.dumps(ACCOUNT).encode(), "account.json")
    assert doc.format == "json"
    check_blocks(doc)
    assert "{" not in doc.text and '"customer"' not in doc.text
    lines = doc.text.split("\n")
    for line in ("customer.name: Acme Harbor", "customer.plan: Team",
                 'customer.labels["on call"]: true', "tags[0]: pilot", "tags[1]: emea",
                 "notes: null"):
        assert line in lines, line
    (table,) = blocks_of(doc, "table")
    assert table.split("\n")[0] == "| id | total | ship.city |"
    assert "| 4 | 40 | Oslo |" in table
    headings = [b for b in doc.blocks if b.chunk_type == "heading"]
    assert blocks_of(doc, "heading") == ["orders (4 records)"]
    assert doc.blocks[doc.blocks.index(headings[0]) + 1].section_path == "orders (4 records)"
    assert doc.blocks[-1].section_path == ""  # the table's heading does not cover later keys


def test_json_irregular_arrays_are_indexed_paths() -> None:
    data = {"steps": [{"do": "plan"}, {"do": "ship", "with": ["crane", "truck"]}]}
    doc = parse_bytes(json.dumps(data).encode(), "plan.json")
    assert "steps[1].with[1]: truck" in doc.text.split("\n")
    assert not blocks_of(doc, "table")


def test_json_lines_and_title() -> None:
    rows = "\n".join(json.dumps({"event": e, "at": i}) for i, e in enumerate("abc"))
    doc = parse_bytes(rows.encode(), "events.jsonl")
    assert doc.metadata["json_kind"] == "lines"
    assert "| event | at |" in doc.text and "| c | 2 |" in doc.text
    titled = parse_bytes(b'{"title": "Pricing sheet", "price": 12}', "p.json")
    assert titled.title == "Pricing sheet" and "price: 12" in titled.text


def test_json_detected_without_extension_but_txt_stays_text() -> None:
    assert detect_format(b'{"a": 1}', "export") == "json"
    assert detect_format(b'{"a": 1}', "notes.txt") == "txt"  # the extension says text
    assert detect_format(b"[1] Introduction", "readme") == "txt"  # not JSON


@pytest.mark.parametrize(
    ("data", "name", "fragment"),
    [
        (b'{"plan": "Team",,}', "broken.json", "malformed JSON: Expecting property name"),
        (b'{"a": 1}\n{"a": 2\n', "events.jsonl", "malformed JSON Lines: line 2"),
        (b"<feed><entry></feed>", "broken.xml", "malformed XML: mismatched tag: line 1"),
        (b'{"cells": "x", "nbformat": 4}', "nb.ipynb", "not a Jupyter notebook"),
    ],
)
def test_malformed_files_fail_naming_file_and_error(data: bytes, name: str, fragment: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_bytes(data, name)
    assert name in str(info.value) and fragment in str(info.value)


def test_empty_json_is_empty() -> None:
    with pytest.raises(EmptyDocumentError, match="empty.json.*JSON holds no values"):
        parse_bytes(b" [] ", "empty.json")


# --- XML ---------------------------------------------------------------------------------------

RSS = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"
     xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel><title>Harbor Notes</title><link>https://example.test/</link>
<description>News about &lt;b&gt;harbor&lt;/b&gt; cranes</description>
<item><title>Crane upgrade approved</title><link>https://example.test/crane</link>
<pubDate>Tue, 12 May 2026 09:00:00 GMT</pubDate><dc:creator>Ines</dc:creator>
<category>ops</category>
<description><![CDATA[<p>The board approved <b>two</b> cranes.</p>
<script>alert('x')</script><img src="http://beacon.test/p.png" alt="">
<p onclick="steal()">Delivery in <a href="http://x.test">June</a>.</p>]]></description>
</item></channel></rss>"""


def test_rss_items_are_text_without_markup() -> None:
    doc = parse_bytes(RSS, "harbor.rss")
    assert doc.format == "xml" and doc.metadata["xml_kind"] == "rss"
    assert doc.title == "Harbor Notes" and doc.metadata["items"] == 1
    check_blocks(doc)
    assert blocks_of(doc, "heading") == ["Harbor Notes", "Crane upgrade approved"]
    body = doc.text
    for expected in ("Link: https://example.test/crane", "Date: Tue, 12 May 2026 09:00:00 GMT",
                     "Author: Ines", "Categories: ops", "The board approved two cranes.",
                     "Delivery in June.", "News about harbor cranes"):
        assert expected in body, expected
    for leaked in ("<", "alert", "beacon.test", "onclick", "http://x.test", "CDATA"):
        assert leaked not in body, leaked
    item = next(b for b in doc.blocks if "two cranes" in doc.text[b.start_char:b.end_char])
    assert item.section_path == "Harbor Notes > Crane upgrade approved"


ATOM = b"""<feed xmlns="http://www.w3.org/2005/Atom"><title>Ops log</title>
<entry><title>Berth 4 closed</title><link rel="alternate" href="https://example.test/b4"/>
<updated>2026-05-02T10:00:00Z</updated><author><name>Kai</name></author>
<summary type="html">&lt;p&gt;Closed for &lt;em&gt;dredging&lt;/em&gt;.&lt;/p&gt;</summary></entry>
<entry><title>Berth 4 open</title><content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">
<p>Reopened <strong>early</strong>.</p></div></content></entry></feed>"""


def test_atom_entries() -> None:
    doc = parse_bytes(ATOM, "ops.atom")
    assert doc.metadata["xml_kind"] == "atom" and doc.metadata["items"] == 2
    for expected in ("Link: https://example.test/b4", "Date: 2026-05-02T10:00:00Z",
                     "Author: Kai", "Closed for dredging.", "Reopened early."):
        assert expected in doc.text, expected
    assert "<" not in doc.text


def test_generic_xml_as_paths() -> None:
    data = (b'<?xml version="1.0"?><catalog xmlns="urn:x"><book id="bk1"><author>Ng</author>'
            b"<blurb>An <i>honest</i> guide.</blurb></book><book id=\"bk2\"><author>Roe</author>"
            b"</book></catalog>")
    doc = parse_bytes(data, "books.xml")
    assert doc.metadata["xml_kind"] == "xml" and doc.metadata["records"] == 2
    assert blocks_of(doc, "text") == [
        "book/@id: bk1\nbook/author: Ng\nbook/blurb: An honest guide.",
        "book/@id: bk2\nbook/author: Roe",
    ]
    assert doc.blocks[1].section_path == "catalog"


def test_xml_entity_expansion_and_external_entities_refused() -> None:
    laughs = (b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
              + b"".join(b'<!ENTITY %s "%s">' % (f"a{i}".encode(), (b"&a%s;" % (
                  str(i - 1).encode() if i > 1 else b"")) * 10) for i in range(1, 9))
              + b"]><l>&a8;</l>")
    with pytest.raises(ParseError, match="bomb.xml.*declares entities.*billion laughs"):
        parse_bytes(laughs, "bomb.xml")
    external = (b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                b"<r>&x;</r>")
    with pytest.raises(ParseError, match="refused") as info:
        parse_bytes(external, "xxe.xml")
    assert "root:" not in str(info.value)


def test_xml_detection() -> None:
    assert detect_format(RSS, "feed") == "xml"  # no extension: sniffed
    assert detect_format(b'<?xml version="1.0"?><html><body>x</body></html>', "a.xml") == "html"


# --- notebooks -----------------------------------------------------------------------------------

NOTEBOOK = {
    "nbformat": 4, "nbformat_minor": 5,
    "metadata": {"kernelspec": {"name": "python3", "language": "python"}},
    "cells": [
        {"cell_type": "markdown", "metadata": {},
         "source": ["# Tide model\n", "\n", "We fit the *harmonic* tide model.\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": 1,
         "source": ["import numpy as np\n", "amplitude = fit_tides(levels)"],
         "outputs": [
             {"output_type": "stream", "name": "stdout",
              "text": [f"iteration {i}\n" for i in range(30)]},
             {"output_type": "execute_result", "execution_count": 1, "metadata": {},
              "data": {"text/plain": ["1.75"], "image/png": "iVBORw0KGgo="}}]},
        {"cell_type": "code", "metadata": {}, "source": "1 / 0", "execution_count": 2,
         "outputs": [{"output_type": "error", "ename": "ZeroDivisionError",
                      "evalue": "division by zero", "traceback": ["\x1b[0;31mlong trace"]}]},
        {"cell_type": "raw", "metadata": {}, "source": "raw cell text"},
    ],
}


def test_notebook_cells_become_text_and_code_blocks() -> None:
    doc = parse_bytes(json.dumps(NOTEBOOK).encode(), "tides.ipynb")
    assert doc.format == "ipynb" and doc.title == "Tide model"
    check_blocks(doc)
    assert "nbformat" not in doc.text and "iVBOR" not in doc.text and "long trace" not in doc.text
    (code, error_code) = [b for b in doc.blocks if b.chunk_type == "code"]
    assert doc.text[code.start_char:code.end_char] == (
        "import numpy as np\namplitude = fit_tides(levels)")
    assert code.code_language == "python" and code.paragraph_number == 2
    assert code.section_path == "Tide model"
    assert "We fit the *harmonic* tide model." in blocks_of(doc, "text")
    output = next(t for t in blocks_of(doc, "text") if t.startswith("Output:"))
    assert "iteration 19" in output and "iteration 20" not in output  # 20 lines at most
    assert output.endswith("… 11 more lines of output")  # iterations 20-29 and the result
    assert "Error: ZeroDivisionError: division by zero" in doc.text
    assert "raw cell text" in doc.text
    assert doc.metadata["code_cells"] == 2 and doc.metadata["language"] == "python"


def test_notebook_saved_as_json_and_nbformat3() -> None:
    assert parse_bytes(json.dumps(NOTEBOOK).encode(), "tides.json").format == "ipynb"
    old = {"nbformat": 3, "metadata": {"language": "python"}, "worksheets": [{"cells": [
        {"cell_type": "heading", "level": 1, "source": "Old notebook"},
        {"cell_type": "code", "input": "print('legacy')", "outputs": []}]}]}
    doc = parse_bytes(json.dumps(old).encode(), "old.ipynb")
    assert blocks_of(doc, "heading") == ["Old notebook"]
    assert blocks_of(doc, "code") == ["print('legacy')"]
