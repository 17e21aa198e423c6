"""Settings: the model, the layers of load_settings, the errors, save_settings (the
settings reference of the docs is checked in tests/test_docs.py).

Real files in tmp_path and the real environment (monkeypatch); the conftest clears every
RAGBENCH_* / OPENAI_* variable before each test.
"""

import re
import tomllib
from pathlib import Path

import pytest

import ragbench.config as config
from ragbench import errors
from ragbench.config import (
    DEFAULT_WORKSPACE,
    EDGE_TYPES,
    ENV_PREFIX,
    INGEST_FIELDS,
    SETTINGS_FILE,
    Settings,
    load_settings,
    read_settings_file,
    save_settings,
)
from ragbench.errors import SettingsError

pytestmark = pytest.mark.unit


def write(workspace: Path, text: str) -> Path:
    path = workspace / SETTINGS_FILE
    path.write_text(text, encoding="utf-8")
    return path


# --- the model --------------------------------------------------------------------------------


def test_defaults_and_constants():
    s = Settings()
    assert (s.chunk_size, s.chunk_overlap, s.tokenizer) == (1024, 150, "cl100k_base")
    assert (ENV_PREFIX, SETTINGS_FILE, DEFAULT_WORKSPACE) == ("RAGBENCH_", "settings.toml", "workspace")
    assert set(INGEST_FIELDS) <= set(Settings.model_fields)
    assert SettingsError is errors.SettingsError


def test_settings_built_in_code_ignore_environment_and_files(tmp_path, monkeypatch):
    write(tmp_path, "chunk_size = 512\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RAGBENCH_TOP_K", "77")
    monkeypatch.setenv("RAGBENCH_LLM_FALLBACK", "maybe")  # would fail if it were read
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    s = Settings(chunk_size=300, chunk_overlap=30)
    assert (s.chunk_size, s.top_k, s.llm_fallback, s.openai_api_key) == (300, 10, True, "")
    assert Settings() == Settings.model_validate({})


def test_load_returns_plain_settings_equal_to_direct_construction(tmp_path):
    write(tmp_path, "chunk_size = 512\nchunk_overlap = 64\n")
    loaded = load_settings(tmp_path)
    assert type(loaded) is Settings
    assert loaded == Settings(chunk_size=512, chunk_overlap=64)
    assert loaded.settings_hash() == Settings(chunk_size=512, chunk_overlap=64).settings_hash()
    assert load_settings(tmp_path / "no-such-workspace") == Settings()


def test_hash_and_ingest_signature():
    base = Settings()
    assert base.settings_hash() == Settings(openai_api_key="sk-other").settings_hash()
    assert base.settings_hash() != Settings(top_k=11).settings_hash()
    assert set(base.ingest_signature()) == set(INGEST_FIELDS)
    ctx = Settings(contextual_embeddings=True, llm_backend="openai", llm_model="m")
    assert ctx.ingest_signature()["context_model"] == "m"


# --- layers -----------------------------------------------------------------------------------


def test_layering_file_env_overrides(tmp_path, monkeypatch):
    write(tmp_path, "chunk_size = 512\nchunk_overlap = 64\n")
    assert load_settings(tmp_path).chunk_size == 512
    monkeypatch.setenv("RAGBENCH_CHUNK_SIZE", "600")
    assert load_settings(tmp_path).chunk_size == 600
    assert load_settings(tmp_path).chunk_overlap == 64  # the file still gives the other keys
    assert load_settings(tmp_path, chunk_size=700).chunk_size == 700
    assert load_settings(tmp_path, chunk_size=None).chunk_size == 600


def test_file_over_defaults_for_every_kind_of_field(tmp_path):
    write(tmp_path, 'llm_fallback = false\nhybrid_vector_weight = 0.25\nsearch_mode = "fts"\n'
                    'embedding_model = "/models/mini"\n')
    s = load_settings(tmp_path)
    assert (s.llm_fallback, s.hybrid_vector_weight, s.search_mode, s.embedding_model) == (
        False, 0.25, "fts", "/models/mini")
    assert s.top_k == Settings().top_k


@pytest.mark.parametrize(
    ("name", "raw", "value"),
    [
        ("top_k", "25", 25),
        ("hybrid_vector_weight", "0.75", 0.75),
        ("llm_fallback", "no", False),
        ("llm_fallback", "0", False),
        ("answer_contradictions", "FALSE", False),
        ("contextual_embeddings", "yes", True),
        ("search_mode", "graph", "graph"),
        ("graph_edge_types", "SIMILAR_TO,SAME_LENS", "SIMILAR_TO,SAME_LENS"),
    ],
)
def test_env_values_are_converted_per_field(tmp_path, monkeypatch, name, raw, value):
    monkeypatch.setenv(ENV_PREFIX + name.upper(), raw)
    assert getattr(load_settings(tmp_path), name) == value


def test_env_over_file(tmp_path, monkeypatch):
    write(tmp_path, 'llm_fallback = true\nllm_model = "from-file"\n')
    monkeypatch.setenv("RAGBENCH_LLM_FALLBACK", "false")
    monkeypatch.setenv("RAGBENCH_LLM_MODEL", "from-env")
    s = load_settings(tmp_path)
    assert (s.llm_fallback, s.llm_model) == (False, "from-env")


def test_unrelated_prefixed_variables_are_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_WORKSPACE", str(tmp_path))  # read by app.py and the CLI
    monkeypatch.setenv("RAGBENCH_TOKEN_ENCODER", "tiktoken")  # read by the chunker
    assert load_settings(tmp_path) == Settings()


def test_openai_variables_are_fallbacks(tmp_path, monkeypatch):
    write(tmp_path, 'openai_base_url = "http://file/v1"\n')
    assert load_settings(tmp_path).openai_base_url == "http://file/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://openai-env/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    s = load_settings(tmp_path)
    assert (s.openai_base_url, s.openai_api_key) == ("http://openai-env/v1", "sk-openai")
    monkeypatch.setenv("RAGBENCH_OPENAI_BASE_URL", "http://ragbench-env/v1")
    monkeypatch.setenv("RAGBENCH_OPENAI_API_KEY", "sk-ragbench")
    s = load_settings(tmp_path)
    assert (s.openai_base_url, s.openai_api_key) == ("http://ragbench-env/v1", "sk-ragbench")
    assert load_settings(tmp_path, openai_base_url="http://call/v1").openai_base_url == (
        "http://call/v1")


def test_empty_openai_variable_is_no_value(tmp_path, monkeypatch):
    write(tmp_path, 'openai_base_url = "http://file/v1"\n')
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    assert load_settings(tmp_path).openai_base_url == "http://file/v1"


def test_openai_fallback_covers_only_the_two_openai_fields(tmp_path, monkeypatch):
    monkeypatch.setenv("TOP_K", "99")
    monkeypatch.setenv("OPENAI_TIMEOUT", "5")
    s = load_settings(tmp_path)
    assert (s.top_k, s.openai_timeout) == (10, 30.0)


def test_overrides_over_everything_and_none_ignored(tmp_path, monkeypatch):
    write(tmp_path, "top_k = 5\n")
    monkeypatch.setenv("RAGBENCH_TOP_K", "6")
    assert load_settings(tmp_path, top_k=7, search_mode=None).top_k == 7
    assert load_settings(tmp_path, top_k=None).top_k == 6
    assert load_settings(tmp_path, search_mode=None).search_mode == "hybrid"


def test_overrides_are_validated_with_the_other_layers(tmp_path):
    write(tmp_path, "chunk_size = 512\n")
    with pytest.raises(SettingsError, match=r"chunk_overlap \(600\) must be smaller than "
                                            r"chunk_size \(512\)"):
        load_settings(tmp_path, chunk_overlap=600)


# --- errors -----------------------------------------------------------------------------------


def one_line_error(workspace: Path, **overrides) -> str:
    with pytest.raises(SettingsError) as info:
        load_settings(workspace, **overrides)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("chunk_size = 10\n", r"settings\.toml: chunk_size=10 is out of range; valid: "
                              r"32 <= chunk_size <= 8192"),
        ("chunk_size = 100\nchunk_overlap = 100\n", "chunk_overlap"),
        ("chunk_sise = 100\n", "unknown setting"),
        ("chunk_size = [\n", "not valid TOML"),
        ('embedding_backend = "magic"\n',
         r"embedding_backend='magic' is not a valid choice; valid: sentence-transformers, openai"),
        ('llm_fallback = "maybe"\n', "llm_fallback='maybe' is not a valid boolean"),
        ('top_k = "many"\n', "top_k='many' is not a whole number"),
    ],
)
def test_bad_settings_name_the_problem(tmp_path, content, match):
    write(tmp_path, content)
    with pytest.raises(SettingsError, match=match):
        load_settings(tmp_path)


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("top_k = true\n", r"settings\.toml: top_k=True is a boolean, not a whole number; "
                           r"valid: 1 <= top_k <= 1000"),
        ("chunk_size = false\n", r"chunk_size=False is a boolean, not a whole number"),
        ("hybrid_vector_weight = true\n",
         r"hybrid_vector_weight=True is a boolean, not a number; valid: 0\.0 <= "),
    ],
)
def test_boolean_for_a_number_is_refused(tmp_path, content, match):
    """Issue 31 R9: `top_k = true` was taken as 1 (pydantic's lax mode turns a bool into 1/0)."""
    write(tmp_path, content)
    assert re.search(match, one_line_error(tmp_path))


def test_boolean_for_a_number_is_refused_in_overrides_and_the_model(tmp_path):
    assert "override top_k=True is a boolean" in one_line_error(tmp_path, top_k=True)
    with pytest.raises(ValueError, match="boolean"):
        Settings(top_k=True)
    assert Settings(top_k=3, hybrid_vector_weight=1).hybrid_vector_weight == 1.0
    assert Settings(llm_fallback=False).llm_fallback is False  # booleans still take booleans


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://host/v1", "127.0.0.1:8080/v1", "http://", "javascript:x"])
def test_openai_base_url_must_be_http(tmp_path, url):
    """Issue 31 R9: `openai_base_url = "file:///..."` was accepted."""
    write(tmp_path, f'openai_base_url = "{url}"\n')
    message = one_line_error(tmp_path)
    assert "openai_base_url=" in message
    assert "not an http:// or https:// URL" in message


def test_openai_base_url_http_https_or_empty(tmp_path, monkeypatch):
    for url in ("http://127.0.0.1:8080/v1", "HTTPS://api.example.com/v1", ""):
        write(tmp_path, f'openai_base_url = "{url}"\n')
        assert load_settings(tmp_path).openai_base_url == url
    monkeypatch.setenv("OPENAI_BASE_URL", "file:///x")
    assert "OPENAI_BASE_URL='file:///x' is invalid" in one_line_error(tmp_path)


def test_bad_openai_base_url_message_hides_credentials(tmp_path):
    message = one_line_error(tmp_path, openai_base_url="ftp://user:sk-secret@host/v1")
    assert "sk-secret" not in message and "ftp://***@host/v1" in message


def test_bad_env_number(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_TOP_K", "abc")
    message = one_line_error(tmp_path)
    assert "RAGBENCH_TOP_K='abc' is not a whole number" in message
    assert "1 <= top_k <= 1000" in message


def test_bad_env_float(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_OPENAI_TIMEOUT", "soon")
    message = one_line_error(tmp_path)
    assert "RAGBENCH_OPENAI_TIMEOUT='soon' is not a number" in message
    assert "0 < openai_timeout <= 600" in message


def test_bad_env_boolean_is_not_called_a_number(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_LLM_FALLBACK", "maybe")
    message = one_line_error(tmp_path)
    assert "RAGBENCH_LLM_FALLBACK='maybe' is not a valid boolean" in message
    assert "true/false" in message and "1/0" in message
    assert "number" not in message


def test_env_out_of_range_and_bad_choice(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_GRAPH_HOPS", "4")
    monkeypatch.setenv("RAGBENCH_SEARCH_MODE", "psychic")
    message = one_line_error(tmp_path)
    assert "RAGBENCH_GRAPH_HOPS='4' is out of range; valid: 1 <= graph_hops <= 3" in message
    assert "RAGBENCH_SEARCH_MODE='psychic' is not a valid choice; valid: fts, vector, hybrid, " \
           "balanced, graph" in message


def test_error_names_the_layer_the_value_came_from(tmp_path, monkeypatch):
    path = write(tmp_path, "top_k = 0\n")
    assert f"{path}: top_k=0 is out of range" in one_line_error(tmp_path)
    monkeypatch.setenv("RAGBENCH_TOP_K", "0")
    assert "RAGBENCH_TOP_K='0' is out of range" in one_line_error(tmp_path)
    monkeypatch.delenv("RAGBENCH_TOP_K")
    assert "override top_k=2000 is out of range" in one_line_error(tmp_path, top_k=2000)


def test_unknown_key_in_file_lists_the_valid_keys(tmp_path):
    path = write(tmp_path, "chunk_size = 512\nchunk_sise = 100\n")
    message = one_line_error(tmp_path)
    assert message.startswith(f"{path}: unknown setting(s) ['chunk_sise']; valid: ")
    assert all(name in message for name in Settings.model_fields)
    with pytest.raises(SettingsError, match="chunk_sise"):
        read_settings_file(tmp_path)


def test_unknown_override_lists_the_valid_names(tmp_path):
    message = one_line_error(tmp_path, chunk_sise=100)
    assert "unknown setting override(s) ['chunk_sise']" in message
    assert "chunk_size" in message


def test_non_utf8_file_names_the_file(tmp_path):
    path = tmp_path / SETTINGS_FILE
    path.write_bytes('# caf\u00e9\nchunk_size = 512\n'.encode("latin-1"))
    message = one_line_error(tmp_path)
    assert message.startswith(f"{path} is not UTF-8")
    with pytest.raises(SettingsError, match="is not UTF-8"):
        read_settings_file(tmp_path)


@pytest.mark.parametrize(
    ("content", "place"),
    [
        ("chunk_size = 512\ntop_k = = 3\n", "line 2, column 9"),
        ("chunk_size = 512\ntop_k = 3\nchunk_overlap = [\n", "line 3 (end of file)"),
    ],
)
def test_invalid_toml_names_the_file_and_line(tmp_path, content, place):
    path = write(tmp_path, content)
    message = one_line_error(tmp_path)
    assert message.startswith(f"{path} is not valid TOML, {place}: ")


@pytest.mark.parametrize("source", ["file", "env", "override"])
def test_unknown_graph_edge_type_is_rejected_at_load(tmp_path, monkeypatch, source):
    overrides = {}
    if source == "file":
        write(tmp_path, 'graph_edge_types = "SIMILAR_TO,NOPE"\n')
    elif source == "env":
        monkeypatch.setenv("RAGBENCH_GRAPH_EDGE_TYPES", "SIMILAR_TO,NOPE")
    else:
        overrides["graph_edge_types"] = "SIMILAR_TO,NOPE"
    message = one_line_error(tmp_path, **overrides)
    assert "unknown edge type(s) ['NOPE']" in message
    assert all(t in message for t in EDGE_TYPES)


def test_graph_edge_types_accepts_any_case_and_spaces_unchanged():
    value = "similar_to, Sequential ,"
    assert Settings(graph_edge_types=value).graph_edge_types == value
    with pytest.raises(ValueError, match="NOPE"):
        Settings(graph_edge_types="NOPE")


def test_edge_types_match_the_graph_stage():
    from ragbench.graph.model import EDGE_TYPES as GRAPH_EDGE_TYPES

    assert GRAPH_EDGE_TYPES == EDGE_TYPES


def test_api_key_is_never_shown_in_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("RAGBENCH_TOP_K", "x")
    assert "sk-secret" not in one_line_error(tmp_path)


def test_loader_is_used_only_through_load_settings():
    with pytest.raises(SettingsError, match="load_settings"):
        config.loading._SettingsLoader()


# --- the file ---------------------------------------------------------------------------------


def test_read_settings_file(tmp_path):
    assert read_settings_file(tmp_path) == {}
    write(tmp_path, "chunk_size = 512\ntop_k = 7\n")
    assert read_settings_file(tmp_path) == {"chunk_size": 512, "top_k": 7}
    assert read_settings_file(str(tmp_path)) == {"chunk_size": 512, "top_k": 7}


def test_save_roundtrip_without_secret(tmp_path):
    s = Settings(chunk_size=300, chunk_overlap=30, openai_api_key="sk-secret")
    path = save_settings(tmp_path, s)
    assert "sk-secret" not in path.read_text()
    assert load_settings(tmp_path).chunk_size == 300


def test_save_writes_only_non_defaults_and_reloads_equal(tmp_path):
    s = Settings(llm_fallback=False, hybrid_vector_weight=0.3, llm_model='say "hi"\\',
                 graph_edge_types="SIMILAR_TO")
    path = save_settings(tmp_path / "new", s)
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data == {"llm_fallback": False, "hybrid_vector_weight": 0.3, "llm_model": 'say "hi"\\',
                    "graph_edge_types": "SIMILAR_TO"}
    assert load_settings(tmp_path / "new") == s
    assert not path.with_suffix(".tmp").exists()


def test_save_replaces_the_previous_file(tmp_path):
    save_settings(tmp_path, Settings(top_k=5))
    save_settings(tmp_path, Settings(top_k=6))
    assert read_settings_file(tmp_path) == {"top_k": 6}
    save_settings(tmp_path, Settings())
    assert read_settings_file(tmp_path) == {}

