"""Settings: defaults < `<workspace>/settings.toml` < env `RAGBENCH_*` < per-call overrides.

One pydantic model holds every tunable; validation errors name the field and the allowed range.
`settings_hash` identifies the settings that change ingest output (used to mark stale data
and as a cache key by the app).
"""

from __future__ import annotations

from ragbench.errors import SettingsError  # noqa: F401 (re-exported)
import hashlib
import json
import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, model_validator

SETTINGS_FILE = "settings.toml"
ENV_PREFIX = "RAGBENCH_"
DEFAULT_WORKSPACE = "data"

# Fields whose change alters stored chunks or vectors (so stored data becomes stale).
INGEST_FIELDS = (
    "chunk_size", "chunk_overlap", "tokenizer", "embedding_backend", "embedding_model",
    "contextual_embeddings",
)



class Settings(BaseModel):
    """Every tunable of the pipeline, with the defaults of DESIGN.md and specs/002."""

    chunk_size: int = Field(1024, ge=32, le=8192, description="tokens per chunk (cl100k)")
    chunk_overlap: int = Field(150, ge=0, le=2048, description="tokens shared by adjacent chunks")
    tokenizer: Literal["cl100k_base"] = "cl100k_base"
    embedding_backend: Literal["sentence-transformers", "openai"] = "sentence-transformers"
    embedding_model: str = Field("all-MiniLM-L6-v2", description="model id for the backend")
    embedding_batch_size: int = Field(32, ge=1, le=1024)
    embedding_window_overlap: int = Field(
        32, ge=0, le=200, description="word pieces shared by windows of a long chunk"
    )
    contextual_embeddings: bool = Field(
        False, description="embed each chunk with a document header and summary (specs/004)"
    )
    openai_base_url: str = Field("", description="OpenAI-compatible endpoint (or OPENAI_BASE_URL)")
    openai_api_key: str = Field("", description="API key (or OPENAI_API_KEY)", repr=False)
    openai_timeout: float = Field(30.0, gt=0, le=600)
    search_mode: Literal["fts", "vector", "hybrid", "balanced", "graph"] = "hybrid"
    top_k: int = Field(10, ge=1, le=1000)
    fts_level: Literal["chunk", "media"] = Field(
        "chunk", description="FTS granularity: chunk text, or whole documents (specs/003)"
    )
    chunks_per_lens: int = Field(5, ge=1, le=100, description="balanced mode: chunks per lens")
    hybrid_fusion: Literal["rrf", "score"] = "score"
    hybrid_vector_weight: float = Field(
        0.5, ge=0.0, le=1.0, description="weight of the vector list in hybrid fusion"
    )
    rrf_k: int = Field(60, ge=1, le=1000, description="RRF constant k")
    hybrid_candidates: int = Field(100, ge=10, le=2000, description="depth of each fused list")
    llm_backend: Literal["extractive", "openai"] = "extractive"
    llm_model: str = Field("gpt-4o-mini", description="chat model name for the openai backend")
    llm_fallback: bool = Field(
        True, description="answer extractively when the openai endpoint fails"
    )
    llm_max_tokens: int = Field(512, ge=16, le=8192)
    answer_sentences: int = Field(3, ge=1, le=10, description="extractive: sentences per answer")
    max_upload_mb: int = Field(200, ge=1, le=4096)
    graph_similarity_threshold: float = Field(
        0.80, ge=0.5, le=0.95, description="cosine above which two chunks get a SIMILAR_TO edge"
    )
    graph_min_shared_terms: int = Field(
        2, ge=1, le=10, description="key terms two chunks must share for TOPIC_OVERLAP"
    )
    graph_degree_cap: int = Field(
        10, ge=0, le=1000,
        description="per node and edge type: keep the strongest N SIMILAR_TO, TOPIC_OVERLAP "
        "and TEMPORAL_OVERLAP edges (0 = no cap)",
    )
    graph_same_lens_max_group: int = Field(
        50, ge=0, le=1000, description="SAME_LENS edges only within lenses of at most N chunks"
    )
    answer_contradictions: bool = Field(
        True, description="add a 'Potential contradictions' source when retrieved chunks disagree"
    )
    graph_hops: int = Field(1, ge=1, le=3, description="graph mode: expansion hops from the seeds")
    graph_seed_limit: int = Field(20, ge=1, le=500, description="graph mode: hybrid seeds")
    graph_edge_types: str = Field(
        "SIMILAR_TO,SEQUENTIAL,TOPIC_OVERLAP,TEMPORAL_OVERLAP",
        description="graph mode: comma-separated edge types followed when expanding",
    )

    @model_validator(mode="after")
    def _overlap_below_size(self) -> Settings:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(
                f"chunk_overlap ({self.chunk_overlap}) must be smaller than chunk_size "
                f"({self.chunk_size})"
            )
        return self

    def ingest_signature(self) -> dict[str, Any]:
        """The settings that determine stored chunks and vectors.

        With contextual embeddings and an LLM backend the summary comes from that model, so
        the model is part of the signature too (`context_model`).
        """
        signature = {name: getattr(self, name) for name in INGEST_FIELDS}
        if self.contextual_embeddings and self.llm_backend == "openai":
            signature["context_model"] = self.llm_model
        return signature

    def settings_hash(self) -> str:
        """Short stable hash of all settings except secrets."""
        data = self.model_dump(exclude={"openai_api_key"})
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]


def _coerce_env(name: str, raw: str) -> Any:
    field = Settings.model_fields[name]
    if field.annotation is int:
        return int(raw)
    if field.annotation is float:
        return float(raw)
    if field.annotation is bool:
        if raw.strip().lower() not in ("1", "0", "true", "false", "yes", "no"):
            raise ValueError(raw)
        return raw.strip().lower() in ("1", "true", "yes")
    return raw


def _from_env() -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in Settings.model_fields:
        raw = os.environ.get(ENV_PREFIX + name.upper())
        if raw is not None:
            try:
                values[name] = _coerce_env(name, raw)
            except ValueError as e:
                raise SettingsError(f"{ENV_PREFIX}{name.upper()}={raw!r} is not a number") from e
    if "openai_base_url" not in values and os.environ.get("OPENAI_BASE_URL"):
        values["openai_base_url"] = os.environ["OPENAI_BASE_URL"]
    if "openai_api_key" not in values and os.environ.get("OPENAI_API_KEY"):
        values["openai_api_key"] = os.environ["OPENAI_API_KEY"]
    return values


def read_settings_file(workspace: Path) -> dict[str, Any]:
    """The values saved in the workspace's settings.toml (empty when there is none)."""
    path = workspace / SETTINGS_FILE
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise SettingsError(f"{path} is not valid TOML: {e}") from e
    unknown = sorted(set(data) - set(Settings.model_fields))
    if unknown:
        raise SettingsError(
            f"{path}: unknown setting(s) {unknown}; valid: {sorted(Settings.model_fields)}"
        )
    return data


def load_settings(workspace: str | Path, **overrides: Any) -> Settings:
    """Settings for `workspace`, layered defaults < file < env < `overrides`."""
    values = read_settings_file(Path(workspace))
    values.update(_from_env())
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return Settings(**values)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
            for err in e.errors()
        )
        raise SettingsError(f"invalid settings: {problems}") from e


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value))  # JSON string escaping is valid TOML basic-string escaping


def save_settings(workspace: str | Path, settings: Settings) -> Path:
    """Write the settings that differ from the defaults to settings.toml (never the API key)."""
    path = Path(workspace) / SETTINGS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    defaults = Settings()
    lines = ["# ragbench settings; see README.md 'Settings' for every key."]
    for name in Settings.model_fields:
        value = getattr(settings, name)
        if name == "openai_api_key" or value == getattr(defaults, name):
            continue
        lines.append(f"{name} = {_toml_value(value)}")
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
