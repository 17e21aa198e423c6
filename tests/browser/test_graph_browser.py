"""The Context graph page in a real browser: pick a chunk by search, see the clickable
network chart (Vega-Lite) and the ranked contradictions list. Screenshot under
tests/browser/artifacts/."""


import pytest

from ragbench.graph.view import LENS_COLOURS
from ragbench.workbench import Workbench
from tests.browser.conftest import ARTIFACTS, AppServer

from ..conftest import SAMPLES
from .test_app_browser import open_page, shot, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def graph_server(tmp_path_factory):
    """A live app on a workspace holding three lenses of the demo corpus."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    workspace = tmp_path_factory.mktemp("browser-graph")
    wb = Workbench(workspace)
    for lens in ("team-structured", "engineering", "external-analyst"):
        wb.library.ingest([SAMPLES / lens], lens=lens, root=SAMPLES)
    server = AppServer(workspace, ARTIFACTS / "streamlit-graph.log")
    try:
        server.wait_healthy()
        yield server
    finally:
        server.stop()


def _neighbour_node(png) -> tuple[int, int]:
    """The centre of a drawn neighbour node in a screenshot of the view: pixels in a lens
    colour, grouped into blobs (the legend on the right left out); the largest blob is the
    chosen chunk, the next largest a neighbour."""
    from PIL import Image

    image = Image.open(png).convert("RGB")
    width, height = image.size
    colours = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in LENS_COLOURS.values()]
    pixels = image.load()
    hits = {(x, y) for x in range(0, width - 180, 2) for y in range(0, height, 2)
            if any(sum(abs(a - b) for a, b in zip(pixels[x, y], c, strict=True)) < 24
                   for c in colours)}
    blobs = []
    while hits:
        stack, blob = [hits.pop()], []
        while stack:
            x, y = stack.pop()
            blob.append((x, y))
            for n in ((x + 2, y), (x - 2, y), (x, y + 2), (x, y - 2)):  # every 2nd pixel
                if n in hits:
                    hits.remove(n)
                    stack.append(n)
        blobs.append(blob)
    blobs.sort(key=len, reverse=True)
    assert len(blobs) >= 2 and len(blobs[1]) > 5, "no neighbour node drawn"
    xs, ys = zip(*blobs[1], strict=True)
    return sum(xs) // len(xs), sum(ys) // len(ys)


def test_graph_page_draws_the_network_and_lists_contradictions(graph_server, page):
    open_page(page, graph_server, "", "Dashboard")  # a session starts at the app's root
    open_page(page, graph_server, "graph", "Context graph")
    page.get_by_text("Nodes").first.wait_for()
    page.get_by_label("Find a chunk").fill("Tidepool general availability")
    page.get_by_label("Find a chunk").press("Enter")
    wait_idle(page, timeout=120_000)
    page.get_by_text("Neighbourhood").first.wait_for()
    chart = page.locator(".st-key-graph_view").first  # the view (the bar chart is Vega too)
    chart.wait_for(timeout=60_000)
    drawn = chart.locator(".vega-embed").first
    drawn.wait_for(timeout=60_000)
    box = drawn.bounding_box()
    assert box and box["width"] > 400 and box["height"] > 400
    shot(page, "07-graph")
    drawn.scroll_into_view_if_needed()
    drawn.screenshot(path=str(ARTIFACTS / "07b-graph-view.png"))
    # a click on a neighbour node selects it: its details appear with a way to explore from it
    x, y = _neighbour_node(ARTIFACTS / "07b-graph-view.png")
    drawn.click(position={"x": x, "y": y})
    wait_idle(page, timeout=120_000)
    page.get_by_text("Clicked node").first.wait_for(timeout=60_000)
    page.get_by_role("button", name="Explore from this chunk").first.wait_for()
    shot(page, "07c-graph-clicked")

    page.get_by_role("tab", name="Contradictions").click()
    page.get_by_role("button", name="Find contradictions").click()
    wait_idle(page, timeout=120_000)
    page.get_by_text("potential contradictions").first.wait_for()
    page.get_by_text("Q3 2026 vs Q4 2026").first.wait_for()  # titled by the disputed values
    shot(page, "08-graph-contradictions")


def test_a_page_url_opened_first_lands_on_that_page_not_a_traceback(tmp_path, page):
    # a fresh server may run the page before the app shell; the page then sends the session
    # through app.py, which sets up and switches back to it: the requested page, no traceback
    server = AppServer(tmp_path / "ws", ARTIFACTS / "streamlit-first-url.log")
    try:
        server.wait_healthy()
        page.goto(f"{server.url}/graph")
        page.get_by_role("heading", name="Context graph").first.wait_for()
        wait_idle(page)
        assert not page.get_by_text("KeyError").count()
        assert not page.get_by_role("heading", name="Dashboard").count()
    finally:
        server.stop()


def test_a_page_url_opened_in_a_running_app_lands_on_that_page(graph_server, page):
    page.goto(f"{graph_server.url}/graph")
    page.get_by_role("heading", name="Context graph").first.wait_for()
    wait_idle(page)
    assert not page.get_by_text("KeyError").count()
    assert not page.get_by_role("heading", name="Dashboard").count()
