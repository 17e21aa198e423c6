"""The Archive page in a real browser: HTML inside documents (a Markdown original and an HTML
file) is shown as text, never turned into elements, and no script runs; Markdown that would
fetch remote images or link out (titled and reference-style images, autolinks, titled links,
Streamlit directives) fetches nothing and links nowhere."""

import pytest

from ragbench.config import Settings
from ragbench.workbench import Workbench
from tests.browser.conftest import ARTIFACTS, live_app, open_from_root

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOSTILE_MD = ("# Field notes\n\nRaw HTML <img id=\"evil-img\" src=x onerror=\"alert(1)\"> and "
              "<b id=\"evil-b\">bold</b> tags.\n\n<script>alert(3)</script>\n\n"
              "[click me](javascript:alert(4))\n")
HOSTILE_HTML = ("<html><head><title>Hostile page</title><script>alert(5)</script></head><body>"
                "<h1>Ledger</h1><p>Shown literally: &lt;img id=\"evil2\" src=x "
                "onerror=alert(6)&gt;</p></body></html>")
BEACON = "beacon.invalid"  # never resolves: a request for it can only come from the page
REMOTE_MD = ("# Remote bits\n\nTitled image ![titled](http://beacon.invalid/1.png \"t\"), "
             "reference image ![ref][pic], autolink <http://beacon.invalid/3>, titled "
             "[link](http://beacon.invalid/4 \"t\") and :red[red] $x$ :material/home: "
             "directives.\n\n[pic]: http://beacon.invalid/2.png\n")


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory):
    src = tmp_path_factory.mktemp("hostile-src")
    (src / "notes.md").write_text(HOSTILE_MD)
    (src / "page.html").write_text(HOSTILE_HTML)
    (src / "remote.md").write_text(REMOTE_MD)
    workspace = tmp_path_factory.mktemp("hostile-ws")
    wb = Workbench(workspace, Settings())
    wb.library.ingest([src], root=src)
    ids = {d.file_name: d.doc_id for d in wb.catalog.list_documents()}
    with live_app(workspace, "streamlit-archive.log") as server:
        yield server, ids


@pytest.mark.parametrize(("name", "visible", "evil"), [
    ("notes.md", 'Raw HTML <img id="evil-img" src=x onerror="alert(1)">', "#evil-img, #evil-b"),
    ("page.html", 'Shown literally: <img id="evil2" src=x onerror=alert(6)>', "#evil2"),
])
def test_archive_view_shows_html_as_text(hostile_server, page, name, visible, evil):
    server, ids = hostile_server
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_from_root(page, server.url, f"archive?doc={ids[name]}", "Archive")
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_text(visible, exact=False).first.wait_for(timeout=60_000)
    page.wait_for_timeout(1000)
    assert page.locator(evil).count() == 0, "document HTML became elements"
    assert page.locator("[data-testid='stMarkdownContainer'] script").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    assert dialogs == [], dialogs
    page.screenshot(path=str(ARTIFACTS / f"archive-{name}.png"), full_page=True)


def test_archive_view_fetches_nothing_remote(hostile_server, page):
    server, ids = hostile_server
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    open_from_root(page, server.url, f"archive?doc={ids['remote.md']}", "Archive")
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_text("[image: titled]").first.wait_for(timeout=60_000)
    main.get_by_text(":red[red] $x$ :material/home:", exact=False).first.wait_for()
    page.wait_for_timeout(1500)
    assert not [u for u in requests if BEACON in u], requests
    # nothing leaves the machine at all: no favicon or font from a web host either
    outside = [u for u in requests
               if not u.startswith((server.url, "data:", "blob:", "ws://127.0.0.1"))]
    assert not outside, outside
    assert page.locator(f"a[href*='{BEACON}']").count() == 0
    assert page.locator(f"img[src*='{BEACON}']").count() == 0
    page.screenshot(path=str(ARTIFACTS / "archive-remote.png"), full_page=True)
