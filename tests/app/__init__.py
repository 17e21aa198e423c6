"""Streamlit AppTest tests of the pages; helpers shared by them."""

import html
import re


def plain(text: str) -> str:
    """Text as a reader sees it: Markdown markers (emphasis, pipes, headings) dropped,
    whitespace collapsed."""
    return " ".join(re.sub(r"[*|`#_]", " ", text).split())


def passage_views(at) -> list[str]:  # noqa: ANN001 - an AppTest
    """The rendered passages (st.html elements holding a highlight) of the page."""
    return [h.value for h in at.html if "<mark>" in h.value]


def highlighted(view: str) -> str:
    """The highlighted text of a rendered passage, as plain text."""
    marks = re.findall(r"<mark>(.*?)</mark>", view, re.S)
    return plain(" ".join(html.unescape(m) for m in marks))


def shown(view: str) -> str:
    """All the text of a rendered passage, as plain text."""
    return plain(html.unescape(re.sub(r"<style>.*?</style>|<[^>]+>", " ", view, flags=re.S)))
