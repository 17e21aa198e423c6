"""The Context graph page in a real browser: pick a chunk by search, see the interactive
network (the pyvis explorer; its details in test_graph_explorer_browser.py), click a node to
explore from it, and the ranked contradictions list. Screenshots under
tests/browser/artifacts/."""


import pytest

from ragbench.workbench import Workbench
from tests.browser.conftest import ARTIFACTS, live_app

from ..conftest import SAMPLES
from .test_app_browser import open_page, shot, wait_idle
from .test_graph_explorer_browser import click_to_recentre, explorer_frame, node_points

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def graph_server(tmp_path_factory):
    """A live app on a workspace holding three lenses of the demo corpus."""
    workspace = tmp_path_factory.mktemp("browser-graph")
    wb = Workbench(workspace)
    for lens in ("team-structured", "engineering", "external-analyst"):
        wb.library.ingest([SAMPLES / lens], lens=lens, root=SAMPLES)
    with live_app(workspace, "streamlit-graph.log") as server:
        yield server


def test_graph_page_draws_the_network_and_lists_contradictions(graph_server, page):
    open_page(page, graph_server, "", "Dashboard")  # a session starts at the app's root
    open_page(page, graph_server, "graph", "Context graph")
    page.get_by_text("Nodes").first.wait_for()
    page.get_by_label("Find a chunk").fill("Tidepool general availability")
    page.get_by_label("Find a chunk").press("Enter")
    wait_idle(page, timeout=120_000)
    page.get_by_text("Neighbourhood").first.wait_for()
    frame = explorer_frame(page)
    view = page.locator(".st-key-graph_view").first
    box = view.locator("iframe").first.bounding_box()
    assert box and box["width"] > 400 and box["height"] > 400
    shot(page, "07-graph")
    view.scroll_into_view_if_needed()
    view.screenshot(path=str(ARTIFACTS / "07b-graph-view.png"))
    # a click on a neighbour node explores from it: the network is centred on that chunk
    centre = frame.evaluate("window.explorer.centre")
    other = next(n for n in node_points(page, frame) if n != centre)
    click_to_recentre(page, other)
    page.get_by_role("button", name="Back").wait_for()
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
    with live_app(tmp_path / "ws", "streamlit-first-url.log") as server:
        page.goto(f"{server.url}/graph")
        page.get_by_role("heading", name="Context graph").first.wait_for()
        wait_idle(page)
        assert not page.get_by_text("KeyError").count()
        assert not page.get_by_role("heading", name="Dashboard").count()


def test_a_page_url_opened_in_a_running_app_lands_on_that_page(graph_server, page):
    page.goto(f"{graph_server.url}/graph")
    page.get_by_role("heading", name="Context graph").first.wait_for()
    wait_idle(page)
    assert not page.get_by_text("KeyError").count()
    assert not page.get_by_role("heading", name="Dashboard").count()
