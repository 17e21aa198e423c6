"""README.md and docs/*.md: every relative Markdown link points to a file that exists, and a
link with a #fragment to a heading (or an explicit <a id>) of that file."""

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')


def prose(text: str) -> str:
    """The text without code blocks and code spans (links there are examples, not links)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    found: set[str] = set(ANCHOR.findall(text))
    seen: dict[str, int] = {}
    for heading in HEADING.findall(FENCE.sub("", text)):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    links = LINK.findall(prose(path.read_text(encoding="utf-8")))
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


def test_there_are_docs_with_links():
    assert len(DOCS) > 5
    assert relative_links(ROOT / "README.md")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(doc: Path):
    broken = []
    for link in relative_links(doc):
        target, _, fragment = link.partition("#")
        file = (doc.parent / target).resolve() if target else doc
        if not file.exists():
            broken.append(f"{link}: no file {file.relative_to(ROOT)}")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            broken.append(f"{link}: no heading #{fragment} in {file.relative_to(ROOT)}")
    assert broken == []


def test_slug_follows_github():
    assert slug("Command line (`ragbench`)") == "command-line-ragbench"
    assert slug("Serving the app beyond this machine") == "serving-the-app-beyond-this-machine"
    assert slug("Faults and concurrency (issue 16)") == "faults-and-concurrency-issue-16"
