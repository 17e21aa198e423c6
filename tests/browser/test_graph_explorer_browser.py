"""The interactive graph explorer in a real browser: the Graph page opened on a chunk
(`/graph?node=<chunk id>`) draws the pyvis network in its sandboxed frame; hovering a node
shows its document and text (a chunk's `<img src=x onerror=alert(1)>` as text, no image, no
alert), hovering a line says why the two chunks are linked, a dragged node stays where it is
dropped, a click on another node re-centres the page on it (and Back returns), and no request
of the page or its frames leaves 127.0.0.1. Screenshots under tests/browser/artifacts/."""

from __future__ import annotations

import math
from urllib.parse import parse_qs, urlparse

import pytest

from ragbench.workbench import Workbench
from tests.browser.conftest import ARTIFACTS, live_app
from tests.conftest import lens_workbench
from tests.graph.test_graph_explorer import DOCS, EVIL

from .test_app_browser import open_page, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@pytest.fixture(scope="module")
def explorer_server(tmp_path_factory):
    """A live app on the explorer's small workspace (tests/graph/test_graph_explorer.py)."""
    workspace = tmp_path_factory.mktemp("browser-explorer")
    lens_workbench(tmp_path_factory.mktemp("explorer-docs"), workspace, DOCS)
    graph = Workbench(workspace).graph.current()
    ids = {n["source_name"]: n["id"] for n in graph.nodes}
    with live_app(workspace, "streamlit-explorer.log") as server:
        yield server, ids


def explorer_frame(page):
    """The explorer's frame once its network has settled (physics done)."""
    handle = page.locator(".st-key-graph_view iframe").first.element_handle(timeout=60_000)
    frame = handle.content_frame()
    frame.wait_for_selector("body[data-ready='1']", state="attached", timeout=60_000)
    return frame


def centred_on(page, chunk_id, timeout=60_000):
    """The explorer's frame once it shows `chunk_id`'s neighbourhood (a re-centred explorer
    replaces the frame's document: until then the old one answers)."""
    frame = explorer_frame(page)
    frame.wait_for_function("""(c) => window.explorer && window.explorer.centre === c
        && document.body.getAttribute('data-ready') === '1'""", arg=chunk_id, timeout=timeout)
    return frame


def node_points(page, frame) -> dict[str, tuple[float, float]]:
    """Each node's centre in page coordinates (the frame's box plus its position inside)."""
    box = page.locator(".st-key-graph_view iframe").first.bounding_box()
    inside = frame.evaluate("""() => {
        const net = window.explorer.network, out = {};
        const at = net.getPositions();
        for (const id in at) { out[id] = net.canvasToDOM(at[id]); }
        const area = document.getElementById("network").getBoundingClientRect();
        return {nodes: out, left: area.left, top: area.top};
    }""")
    return {nid: (box["x"] + inside["left"] + p["x"], box["y"] + inside["top"] + p["y"])
            for nid, p in inside["nodes"].items()}


def click_to_recentre(page, target: str, attempts: int = 3):
    """Click node `target` until the explorer re-centres on it; the frame then. The points
    are read again before each try: on a busy machine Streamlit may re-render the frame
    between reading a node's position and the click, which then lands on the old one.
    """
    for attempt in range(attempts):
        frame = explorer_frame(page)
        page.mouse.click(*node_points(page, frame)[target])
        wait_idle(page, timeout=120_000)
        try:
            return centred_on(page, target, timeout=20_000)
        except Exception:  # noqa: BLE001 - a click that missed: read the points again
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def hover_tooltip(page, node: str, attempts: int = 3) -> str:
    """Hover node `node` until its tooltip shows (see `click_to_recentre` for why retry)."""
    for attempt in range(attempts):
        frame = explorer_frame(page)
        page.mouse.move(1, 1)  # off the network: the next move is a fresh hover
        page.wait_for_timeout(200)
        page.mouse.move(*node_points(page, frame)[node])
        try:
            return tooltip(frame)
        except Exception:  # noqa: BLE001 - a hover that missed: read the points again
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def tooltip(frame, timeout=5_000) -> str:
    """The text of the visible vis-network tooltip."""
    tip = frame.locator("div.vis-tooltip")
    frame.wait_for_function("""() => {
        const t = document.querySelector("div.vis-tooltip");
        return t && t.style.visibility !== "hidden" && t.innerText.trim().length > 0;
    }""", timeout=timeout)
    return tip.inner_text()


def test_the_explorer_hovers_drags_recentres_and_stays_on_this_machine(explorer_server, page):
    server, ids = explorer_server
    requests: list[str] = []
    page.context.on("request", lambda r: requests.append(r.url))
    page.on("websocket", lambda ws: requests.append(ws.url))
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    notes, roadmap = ids["notes.txt"], ids["roadmap.md"]

    open_page(page, server, "", "Dashboard")  # a session starts at the app's root
    page.goto(f"{server.url}/graph?node={notes}")  # a link to a chunk's neighbourhood
    page.get_by_role("heading", name="Context graph", exact=True).first.wait_for()
    wait_idle(page, timeout=120_000)
    frame = centred_on(page, notes)
    view = page.locator(".st-key-graph_view").first
    view.scroll_into_view_if_needed()
    box = page.locator(".st-key-graph_view iframe").first.bounding_box()
    assert box and box["width"] > 500 and box["height"] > 500
    legend = frame.locator("#legend").inner_text()
    assert "contradicts" in legend and "your-voice" in legend and "TOPIC_OVERLAP" in legend
    view.screenshot(path=str(ARTIFACTS / "09-graph-explorer.png"))

    # hovering the chosen chunk: its document, lens and text, the markup in it as text
    text = hover_tooltip(page, notes)
    frame = explorer_frame(page)
    points = node_points(page, frame)
    assert "notes.txt" in text and "your-voice" in text and EVIL in text
    assert frame.locator("div.vis-tooltip img").count() == 0
    assert frame.evaluate("document.images.length") == 0
    view.screenshot(path=str(ARTIFACTS / "09b-graph-explorer-node-tooltip.png"))

    # hovering a line says why the two chunks are linked: try each line's middle
    edges = frame.evaluate("window.explorer.edges.get().map(e => [e.from, e.to])")
    top = frame.evaluate("document.getElementById('network').getBoundingClientRect().top")
    empty = (box["x"] + 4, box["y"] + top + 4)  # a corner of the network: nothing there
    said = ""
    for a, b in edges:
        (x1, y1), (x2, y2) = points[a], points[b]
        page.mouse.move(*empty)
        page.wait_for_timeout(200)
        page.mouse.move((x1 + x2) / 2, (y1 + y2) / 2)
        try:
            said = tooltip(frame, timeout=1_500)
        except Exception:  # noqa: BLE001 - the middle lies under a node or a label: next one
            continue
        if "why these two chunks are linked" in said:
            break
    assert "why these two chunks are linked" in said, said
    assert any(kind in said for kind in ("shared terms:", "same period:", "similar wording",
                                         "same lens", "CONTRADICTS"))
    view.screenshot(path=str(ARTIFACTS / "09c-graph-explorer-edge-tooltip.png"))

    # drag a neighbour: it stays where it is dropped, and dragging is not a click
    other = next(n for n in points if n != notes)
    x, y = points[other]
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, 11):
        page.mouse.move(x + 9 * step, y + 6 * step)
    page.mouse.up()
    page.wait_for_timeout(400)
    moved = node_points(page, frame)[other]
    assert math.dist(moved, (x + 90, y + 60)) < 12, (moved, (x, y))
    assert frame.evaluate("document.body.getAttribute('data-picked')") is None
    assert frame.evaluate("window.explorer.centre") == notes

    # a click on a node explores from it: the page re-centres (address, frame, chosen chunk)
    target = roadmap if roadmap in points else other
    frame = click_to_recentre(page, target)
    page.wait_for_function(f"() => location.search.includes('node={target}')",
                           timeout=60_000)
    assert parse_qs(urlparse(page.url).query)["node"] == [target]
    back = page.get_by_role("button", name="Back")
    assert back.is_enabled()
    page.locator(".st-key-graph_view").first.screenshot(
        path=str(ARTIFACTS / "09d-graph-explorer-recentred.png"))
    back.click()
    page.wait_for_function(f"() => location.search.includes('node={notes}')", timeout=60_000)
    wait_idle(page, timeout=120_000)
    centred_on(page, notes)

    # nothing left this machine: the app, its frames and its socket all on 127.0.0.1
    assert not dialogs
    assert requests
    remote = [u for u in requests if urlparse(u).scheme not in ("data", "blob", "about")
              and urlparse(u).hostname not in LOCAL_HOSTS]
    assert remote == []
