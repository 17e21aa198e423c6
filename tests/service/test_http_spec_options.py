"""The specs' behaviour offered by name, over real HTTP (`ragbench serve`, real uvicorn): specs/001's
source order per request on `/v1/chat`, and specs/004's `ARCHIVE_DIR` (the archive in a folder
outside the workspace) behind the archive routes and the answers' archive links."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from ragbench.archive.folder import MARKER
from ragbench.config import Settings, load_settings, save_settings
from tests.conftest import lens_workbench
from tests.service.test_http_api import CALL_TIMEOUT, Server, error_of

pytestmark = pytest.mark.integration

DOCS = {  # the planted disagreement gives answers a synthesized "Potential contradictions"
    "engineering/adr-007.md": (
        "# ADR-007: Migrate the metadata store to Postgres 16\n\n"
        "We will complete the production cutover of the Postgres 16 migration by March 15, "
        "2026, using a blue-green switch based on logical replication.\n"),
    "team/sync.md": (
        "# Weekly sync\n\nTomasz: I would plan on the production cutover of the Postgres 16 "
        "migration finishing in April 2026, because replication lag is still too high.\n"),
    "team/notes.md": "# Notes\n\nThe offsite is in Lisbon in May.\n",
}
QUESTION = "When does the Postgres 16 migration finish?"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[Server, httpx.Client]]:
    root = tmp_path_factory.mktemp("spec-options")
    ws, archive = root / "ws", root / "published" / "archive"
    save_settings(ws, Settings(archive_dir=str(archive)))  # read by the server as by the ingest
    lens_workbench(root / "src", ws, DOCS, load_settings(ws))
    server = Server(ws, "127.0.0.1", None, root / "server.log")
    server.workspace, server.archive = ws, archive  # type: ignore[attr-defined]
    with httpx.Client(base_url=server.url, timeout=CALL_TIMEOUT) as client:
        yield server, client
    server.stop()


def test_chat_orders_sources_as_specs_001_when_asked(served):
    _, api = served
    default = api.post("/v1/chat", json={"message": QUESTION}).json()
    spec = api.post("/v1/chat", json={"message": QUESTION, "sourceOrder": "spec"}).json()
    assert spec["response"] == default["response"] and spec["citations"]
    # ragbench's order: the cited sources as numbered, the synthesized one last
    cited = [s["number"] for s in default["sources"] if s["number"] is not None]
    assert [s["number"] for s in default["sources"][:len(cited)]] == sorted(cited)
    assert default["sources"][-1]["label"] == "synthesized"
    # specs/001: the synthesized source at index 0 (null ids), then the search's order
    first = spec["sources"][0]
    assert first["label"] == "synthesized"
    assert first["id"] is None and first["documentId"] is None and first["chunkIndex"] is None
    searched = [h["chunk_id"] for h in api.post("/v1/search", json={"query": QUESTION,
                                                                     "topK": 10}).json()]
    documents = [s["id"] for s in spec["sources"][1:]]
    assert documents[:len(searched)] == searched[:len(documents)]
    # the same sources, numbered the same, and every citation still one of them
    assert sorted((s["id"] or "", s["number"] or 0) for s in spec["sources"]) == sorted(
        (s["id"] or "", s["number"] or 0) for s in default["sources"])
    assert set(spec["citations"]) <= set(documents)
    assert error_of(api.post("/v1/chat", json={"message": QUESTION, "sourceOrder": "newest"}),
                    422) == "invalid_request"


def test_archive_routes_and_answer_links_resolve_in_the_archive_dir(served):
    server, api = served
    workspace, archive = server.workspace, server.archive  # type: ignore[attr-defined]
    assert not (workspace / "archive").exists() and (archive / MARKER).is_file()
    documents = api.get("/v1/documents").json()
    assert len(documents) == 3
    for doc in documents:
        assert doc["archive_browse_uri"].startswith(f"archive/{doc['doc_id']}/")
        view = api.get(f"/v1/archive/view/{doc['archive_browse_uri']}")
        assert view.status_code == 200, view.text
        original = api.get(f"/v1/archive/download/{doc['archive_download_uri']}")
        assert original.status_code == 200
        on_disk = archive / doc["doc_id"] / doc["file_name"]
        assert original.content == on_disk.read_bytes()
    reply = api.post("/v1/chat", json={"message": QUESTION}).json()
    assert reply["archive_verified"] and reply["missing_archives"] == []
    for source in (s for s in reply["sources"] if s["number"] is not None):
        assert source["archive_verified"] is True
        assert api.get(f"/v1/archive/view/{source['archiveBrowseUri']}").status_code == 200
        assert f"({source['archiveBrowseUri']})" in reply["sources_text"]
    # a miss is still a 404 naming the URI, not a server path
    response = api.get(f"/v1/archive/view/archive/{documents[0]['doc_id']}/nothing.md")
    assert error_of(response, 404) == "not_found" and str(archive) not in response.text
