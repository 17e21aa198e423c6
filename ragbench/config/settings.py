"""The settings model: `Settings`, every tunable of the pipeline with its default, range and
description, and the names settings share with the rest of ragbench (the fields that change
ingest output, the context-graph edge types, the default workspace folder).

`Settings` is a plain pydantic model: building it from keyword arguments reads neither the
environment nor a file, so code and tests get exactly what they pass (`ragbench.config.loading`
layers the sources). `settings_hash` identifies the settings that change ingest output (used
to mark stale data and as a cache key by the app); `redact_url` hides the credentials a URL
setting may carry in messages.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

DEFAULT_WORKSPACE = "workspace"

# Fields whose change alters stored chunks or vectors (so stored data becomes stale).
INGEST_FIELDS = (
    "chunk_size", "chunk_overlap", "tokenizer", "embedding_backend", "embedding_model",
    "embedding_runtime", "contextual_embeddings",
)

# The context-graph edge types, defined here and imported by ragbench.graph.model, so that
# `graph_edge_types` is validated when settings load without config importing the graph stage.
EDGE_TYPES = (
    "SIMILAR_TO", "SAME_SOURCE", "SAME_LENS", "TOPIC_OVERLAP", "TEMPORAL_OVERLAP", "SEQUENTIAL",
)

_HTTP_URL = re.compile(r"^https?://[^/?#\s]+", re.IGNORECASE)
"""What `openai_base_url` must start with: the http or https scheme and a host."""


class Settings(BaseModel):
    """Every tunable of the pipeline, with the defaults of DESIGN.md and specs/002."""

    chunk_size: int = Field(1024, ge=32, le=8192, description="tokens per chunk (cl100k)")
    chunk_overlap: int = Field(150, ge=0, le=2048, description="tokens shared by adjacent chunks")
    tokenizer: Literal["cl100k_base"] = Field(
        "cl100k_base", description="the only offline tokenizer shipped (tiktoken's)")
    embedding_backend: Literal["sentence-transformers", "openai"] = Field(
        "sentence-transformers",
        description="sentence-transformers (local model) or openai (any OpenAI-compatible "
        "/v1/embeddings endpoint)")
    embedding_model: str = Field("all-MiniLM-L6-v2", description="model id for the backend")
    embedding_runtime: Literal["auto", "torch", "onnx", "onnx-int8"] = Field(
        "auto",
        description="sentence-transformers backend: run the model in torch, or in ONNX Runtime "
        "from an export made once on this machine (fp32, or dynamic int8 quantization); 'auto' "
        "measures them once per workspace on its first CPU and records the fastest that keeps "
        "torch's vectors (ragbench.embeddings.runtime)",
    )
    embedding_device: str = Field(
        "auto", pattern=r"^(auto|cpu|mps|cuda(:[0-9]+)?)$",
        description="where the local model runs: 'auto' is the library's own choice (torch: "
        "CUDA, then Apple MPS, then CPU; ONNX Runtime: its CUDA provider when installed, else "
        "CPU), or cpu, cuda, cuda:N, mps; vectors do not depend on it")
    embedding_batch_size: int = Field(32, ge=1, le=1024, description="texts per model call")
    embedding_window_overlap: int = Field(
        32, ge=0, le=200, description="word pieces shared by windows of a long chunk"
    )
    contextual_embeddings: bool = Field(
        False, description="embed each chunk with a document header and summary (specs/004)"
    )
    openai_base_url: str = Field("", description="OpenAI-compatible endpoint (or OPENAI_BASE_URL)")
    openai_api_key: str = Field("", description="API key (or OPENAI_API_KEY)", repr=False)
    openai_timeout: float = Field(30.0, gt=0, le=600, description="seconds per request")
    search_mode: Literal["fts", "vector", "hybrid", "balanced", "graph"] = Field(
        "hybrid", description="default retrieval mode")
    top_k: int = Field(10, ge=1, le=1000, description="default number of results")
    fts_level: Literal["chunk", "media"] = Field(
        "chunk", description="FTS granularity: chunk text, or whole documents (specs/003)"
    )
    chunks_per_lens: int = Field(5, ge=1, le=100, description="balanced mode: chunks per lens")
    hybrid_fusion: Literal["max", "rrf", "score"] = Field(
        "max", description="hybrid fusion: scores over each list's best (max), reciprocal rank "
        "(rrf) or min-max normalised scores (score)")
    hybrid_vector_weight: float = Field(
        0.5, ge=0.0, le=1.0, description="weight of the vector list in hybrid fusion"
    )
    rrf_k: int = Field(60, ge=1, le=1000, description="RRF constant k")
    hybrid_candidates: int = Field(100, ge=10, le=2000, description="depth of each fused list")
    hybrid_title_bonus: float = Field(
        0.15, ge=0.0, le=1.0, description="hybrid: added to the fused score of a chunk whose "
        "document title the query names (every content word of the title is in the query); "
        "0 turns it off")
    llm_backend: Literal["extractive", "openai"] = Field(
        "extractive", description="extractive (no model) or openai (any OpenAI-compatible "
        "chat endpoint)")
    llm_model: str = Field("gpt-4o-mini", description="chat model name for the openai backend")
    llm_fallback: bool = Field(
        True, description="answer extractively when the openai endpoint fails"
    )
    llm_max_tokens: int = Field(512, ge=16, le=8192, description="answer length limit in tokens")
    llm_context_window: int = Field(
        0, ge=0, le=10_000_000,
        description="the chat model's context window in tokens when the server does not say "
        "(0 = unknown); prompts are fitted to it by leaving out the lowest-ranked passages")
    citation_header: Literal["ragbench", "spec"] = Field(
        "ragbench",
        description="the header of each passage in an LLM prompt: ragbench (whole source path "
        "and document id, the title) or spec (specs/004: ids cut to 8 characters, no title)")
    archive_dir: str = Field(
        "", description="the archive folder (specs/004's ARCHIVE_DIR): empty = <workspace>/"
        "archive; a relative path is relative to the workspace; a folder elsewhere is claimed "
        "with a marker naming this workspace and only its own entries are ever removed")
    source_order: Literal["cited", "spec"] = Field(
        "cited", description="order of an answer's sources: cited (cited ones in [n] order, "
        "then the others in search order, the synthesized source last) or spec (specs/001: "
        "the synthesized source first, then every retrieved source in search order)")
    reference_max_chunks: int = Field(
        20, ge=1, le=200, description="specs/000 max_chunks: the chunks a reference evaluation "
        "looks at (the cited ones first, then the others in search order)")
    archive_base_url: str = Field(
        "", description="base URL of the archive links in Sources lines (specs/004's "
        "ARCHIVE_BASE_URL); empty = links relative to the workspace (archive/<doc_id>/...)")
    answer_sentences: int = Field(3, ge=1, le=10, description="extractive: sentences per answer")
    answer_words: int = Field(
        200, ge=50, le=1000,
        description="offline writer: length in words of an answer to an analytical question")
    max_upload_mb: int = Field(
        200, ge=1, le=4096, description="largest uploaded file (app and HTTP API uploads)")
    max_file_mb: int = Field(
        200, ge=1, le=65536,
        description="largest file any ingest (CLI, API, app, attachments excepted) accepts; "
        "bigger files are refused before they are read",
    )
    follow_symlinks: Literal["inside_root", "always", "never"] = Field(
        "inside_root",
        description="ingest of symbolic links: only those resolving inside the ingest root, "
        "all of them, or none",
    )
    ingest_commit_files: int = Field(
        1024, ge=1, le=65536,
        description="files of an ingest stored in one catalog transaction, each in its own "
        "savepoint (at most one planning group of 1,024): a kill loses the uncommitted ones "
        "whole, never part of a file, and a re-run stores them; 1 commits every file alone",
    )
    current_ingest_version: int = Field(
        0, ge=0,
        description="specs/004 CURRENT_INGEST_VERSION as a deployment guard (0 = none): set, a "
        "process whose code ingests at another version refuses to open the workspace (so hosts "
        "running different ragbench releases never stamp chunks with different versions); the "
        "version itself is the code's (`ragbench versions`)",
    )
    ocr: bool = Field(
        True,
        description="recognize text in images and scanned PDF pages with tesseract when it is "
        "installed (make ocr-deps); off, such files fail with that reason",
    )
    graph_mode: Literal["improved", "spec"] = Field(
        "improved",
        description="context graph construction: 'improved' (distinctive key terms, normalised "
        "periods, per-node caps, updated incrementally) or 'spec' (specs/002 exactly: "
        "capitalised-word key terms, every pair of a source linked, one edge per pair, rebuilt "
        "from every chunk after each change)",
    )
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
    database_url: str = Field(
        "", repr=False,
        description="PostgreSQL (with pgvector) holding the catalog and vectors "
        "(postgresql://user:password@host:5432/db); empty = the embedded workspace "
        "(SQLite and Chroma in the workspace folder)",
    )
    database_schema: str = Field(
        "ragbench", min_length=1, max_length=63, pattern=r"^[a-z_][a-z0-9_]*$",
        description="with database_url: the PostgreSQL schema of this workspace; workspaces "
        "sharing one database each use their own and never see each other's data",
    )

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """Refuse `true`/`false` for a number field (pydantic's lax mode would take it as 1/0,
        so `top_k = true` silently meant one result).
        """
        if isinstance(value, bool) and info.field_name is not None:
            annotation = Settings.model_fields[info.field_name].annotation
            if annotation is int:
                raise PydanticCustomError("int_from_bool", "a boolean is not a whole number")
            if annotation is float:
                raise PydanticCustomError("float_from_bool", "a boolean is not a number")
        return value

    @field_validator("database_url")
    @classmethod
    def _postgres_url(cls, value: str) -> str:
        """Empty (embedded) or a postgresql:// URL; the driver part (`+psycopg`) is optional."""
        url = value.strip()
        if url and not re.match(r"^postgres(ql)?(\+psycopg)?://", url, re.IGNORECASE):
            raise ValueError("not a postgresql:// URL (e.g. postgresql://user:pw@host:5432/db)")
        return url

    @field_validator("openai_base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        """Empty (not set) or an http:// or https:// URL with a host: the OpenAI client would
        take `file:///...` or a bare host name and fail only at the first request.
        """
        url = value.strip()
        if url and not _HTTP_URL.match(url):
            raise ValueError("not an http:// or https:// URL (e.g. http://127.0.0.1:8080/v1)")
        return url

    @field_validator("graph_edge_types")
    @classmethod
    def _known_edge_types(cls, value: str) -> str:
        """Every comma-separated name must be a context-graph edge type (any case)."""
        names = [t.strip().upper() for t in value.split(",") if t.strip()]
        unknown = [t for t in names if t not in EDGE_TYPES]
        if unknown:
            raise ValueError(f"unknown edge type(s) {unknown}; choose from {list(EDGE_TYPES)}")
        return value

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


_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")


def redact_url(url: str) -> str:
    """`url` for messages and logs: its user name and password (`http://user:key@host`, a
    way to pass an API key in `OPENAI_BASE_URL`) replaced by `***`.
    """
    return _USERINFO.sub(r"\1***@", url)
