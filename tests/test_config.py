import pytest

from ragbench.config import Settings, SettingsError, load_settings, save_settings

pytestmark = pytest.mark.unit


def test_defaults():
    s = Settings()
    assert (s.chunk_size, s.chunk_overlap, s.tokenizer) == (1024, 150, "cl100k_base")


def test_layering_file_env_overrides(tmp_path, monkeypatch):
    (tmp_path / "settings.toml").write_text("chunk_size = 512\nchunk_overlap = 64\n")
    assert load_settings(tmp_path).chunk_size == 512
    monkeypatch.setenv("RAGBENCH_CHUNK_SIZE", "600")
    assert load_settings(tmp_path).chunk_size == 600
    assert load_settings(tmp_path, chunk_size=700).chunk_size == 700
    assert load_settings(tmp_path, chunk_size=None).chunk_size == 600


def test_save_roundtrip_without_secret(tmp_path):
    s = Settings(chunk_size=300, chunk_overlap=30, openai_api_key="sk-secret")
    path = save_settings(tmp_path, s)
    assert "sk-secret" not in path.read_text()
    assert load_settings(tmp_path).chunk_size == 300


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("chunk_size = 10\n", "chunk_size"),
        ("chunk_size = 100\nchunk_overlap = 100\n", "chunk_overlap"),
        ("chunk_sise = 100\n", "unknown setting"),
        ("chunk_size = [\n", "not valid TOML"),
        ('embedding_backend = "magic"\n', "embedding_backend"),
    ],
)
def test_bad_settings_name_the_problem(tmp_path, content, match):
    (tmp_path / "settings.toml").write_text(content)
    with pytest.raises(SettingsError, match=match):
        load_settings(tmp_path)


def test_bad_env_number(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGBENCH_TOP_K", "many")
    with pytest.raises(SettingsError, match="RAGBENCH_TOP_K"):
        load_settings(tmp_path)
