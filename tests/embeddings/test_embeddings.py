import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from ragbench.embeddings.embedders import (
    CachedEmbedder,
    EmbeddingError,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
)
from ragbench.store.catalog import Catalog


@pytest.fixture(scope="module")
def st_embedder():
    return SentenceTransformerEmbedder()


@pytest.mark.integration
def test_real_model_normalised_and_semantic(st_embedder):
    v = st_embedder.embed(["a cat sat on the mat", "a kitten rests on a rug", "quarterly tax filing"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


@pytest.mark.integration
def test_no_silent_truncation(st_embedder):
    """The tail of a long text changes its vector; plain truncation would ignore it."""
    head = "Solar panels convert sunlight into electricity for homes. " * 40
    a = st_embedder.embed([head + "Volcanic eruptions release ash into the stratosphere. " * 20])[0]
    b = st_embedder.embed([head + "Banking regulations require capital reserves. " * 20])[0]
    assert len(st_embedder.windows(head + "x " * 200)) > 1
    assert float(a @ b) < 0.97
    truncated = st_embedder.model.encode([head + "Volcanic eruptions. " * 20, head + "Banks. " * 20],
                                         normalize_embeddings=True)
    assert float(truncated[0] @ truncated[1]) > 0.999  # what truncation would have produced


@pytest.mark.integration
def test_windows_cover_whole_text_and_fit_model(st_embedder):
    text = " ".join(f"word{i}" for i in range(3000))
    windows = st_embedder.windows(text)
    tok = st_embedder.tokenizer
    for piece, _count in windows:
        assert len(tok(piece, add_special_tokens=False)["input_ids"]) <= st_embedder.model.max_seq_length - 2
        assert piece in text
    assert windows[0][0].startswith("word0 ") and windows[-1][0].endswith("word2999")


class FakeEmbedder:
    model_id = "fake"
    dim = 3

    def __init__(self):
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return np.array([[len(t), 1.0, 0.0] for t in texts], dtype=np.float32)


@pytest.mark.unit
def test_cache_embeds_each_text_once(tmp_path):
    catalog = Catalog(tmp_path / "c.sqlite")
    inner = FakeEmbedder()
    cached = CachedEmbedder(inner, catalog)
    first = cached.embed(["a", "bb", "a"])
    assert inner.calls == [["a", "bb"]]
    again = CachedEmbedder(FakeEmbedder(), Catalog(tmp_path / "c.sqlite"))
    second = again.embed(["bb", "a"])
    assert again.inner.calls == []  # type: ignore[attr-defined]
    assert np.array_equal(second, first[[1, 0]])
    assert (again.hits, again.misses) == (2, 0)


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/embeddings":
            self.send_response(404)
            self.end_headers()
            return
        data = [{"index": i, "embedding": [float(len(t)), 2.0]} for i, t in enumerate(body["input"])]
        data.reverse()  # servers may return any order; the client sorts by index
        payload = json.dumps({"data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.mark.unit
def test_openai_backend_batches_orders_and_normalises():
    server = HTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        emb = OpenAIEmbedder(f"http://127.0.0.1:{server.server_port}/v1", "m", batch_size=2)
        v = emb.embed(["a", "bbb", "cc"])
        assert v.shape == (3, 2)
        expected = np.array([[1, 2], [3, 2], [2, 2]], dtype=np.float32)
        expected /= np.linalg.norm(expected, axis=1, keepdims=True)
        assert np.allclose(v, expected)
        bad = OpenAIEmbedder(f"http://127.0.0.1:{server.server_port}/nope", "m")
        with pytest.raises(EmbeddingError, match="/nope failed: HTTP 404"):
            bad.embed(["x"])
    finally:
        server.shutdown()


@pytest.mark.unit
def test_openai_backend_unreachable_is_one_line():
    with pytest.raises(EmbeddingError) as info:
        OpenAIEmbedder("http://127.0.0.1:9/v1", "e5", timeout=5).embed(["x"])
    assert str(info.value) == ("embedding request to http://127.0.0.1:9/v1 failed: cannot reach "
                               "the server (Connection refused) (model 'e5')")


@pytest.mark.unit
def test_openai_backend_needs_url():
    with pytest.raises(EmbeddingError, match="OPENAI_BASE_URL"):
        OpenAIEmbedder("", "m")
