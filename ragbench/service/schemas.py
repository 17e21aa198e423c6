"""Request and response models of the HTTP API (its OpenAPI schema).

Wire names follow the specs where they exist (specs/001: `id`, `documentId`, `chunkIndex` on
sources; camelCase on the chat endpoint) and the OpenAI chat-completions shape on
`/v1/chat/completions`; facade models (`WorkspaceStats`, `Report`, ...) are returned as they are.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragbench.workbench.presentation import ChatResponse, Source

FtsLevel = Literal["chunk", "media"]
ChunkTypeName = Literal["text", "heading", "list", "table", "code", "media"]

MAX_QUESTION_CHARS = 8000
"""Longest question or search query the HTTP API and the MCP tools accept, in characters."""


def question_too_long(text: str, what: str = "the question") -> str | None:
    """Why `text` is refused as a question (over `MAX_QUESTION_CHARS`), or None."""
    if len(text) <= MAX_QUESTION_CHARS:
        return None
    return (f"{what} is {len(text):,} characters long; the limit is "
            f"{MAX_QUESTION_CHARS:,} characters")


class ChatRequest(BaseModel):
    """specs/001 chat request: a message, optionally in an existing conversation."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS,
                         description="the question")
    conversationId: str | None = Field(  # noqa: N815 - specs/001 wire name
        None, description="continue this conversation (follow-ups use its earlier questions)")
    mode: str | None = Field(None, description="retrieval mode; default: the setting")
    topK: int | None = Field(None, ge=1, le=100)  # noqa: N815
    lenses: list[str] | None = Field(None, description="only these lenses")
    llm: Literal["extractive", "openai"] | None = Field(
        None, description="answer backend; default: the setting")
    fts_level: FtsLevel | None = Field(
        None, description="specs/003: full-text search over chunk text or whole documents "
                          "(media) for this request; default: the fts_level setting")
    sourceOrder: Literal["cited", "spec"] | None = Field(  # noqa: N815
        None, description="order of `sources`: cited (cited ones in [n] order, then the "
                          "others, the synthesized source last) or spec (specs/001: the "
                          "synthesized source first, then every source in search order); "
                          "default: the source_order setting")


class HistoryItem(BaseModel):
    """One earlier exchange of the conversation."""

    role: Literal["user", "assistant"]
    content: str


class ChatApiResponse(BaseModel):
    """specs/001 `ChatResponse`: the answer, its sources (chunk `id`, `documentId`,
    `chunkIndex`; synthesized sources have nulls), the cited ids in order, the conversation.
    """

    conversationId: str  # noqa: N815
    title: str
    turn: int
    response: str = Field(description="the answer with [n] citations")
    responseWithIds: str = Field(description="the answer with [C:chunk_id] citations")  # noqa: N815
    citations: list[str] = Field(description="chunk ids cited, in [n] order")
    sources: list[Source]
    references: list[dict[str, Any]] = Field(default_factory=list)
    history: list[HistoryItem] = Field(default_factory=list)
    llm: str
    fallbackReason: str | None = None  # noqa: N815
    filterNote: str | None = None  # noqa: N815
    mode: str
    usage: dict[str, int] = Field(default_factory=dict)
    timings: dict[str, float] = Field(default_factory=dict)
    archive_verified: bool = Field(
        True, description="specs/004 check 2: every cited chunk's archive file exists")
    missing_archives: list[str] = Field(
        default_factory=list, description="cited chunk ids whose archive file is missing")
    sources_text: str = Field("", description="specs/004's Sources lines of the cited sources")


def chat_api_response(conversation_id: str, title: str, turn: int, response: ChatResponse,
                      history: list[HistoryItem]) -> ChatApiResponse:
    """The wire response of one answered turn."""
    cited = sorted((s for s in response.sources if s.number is not None and s.id),
                   key=lambda s: s.number or 0)
    return ChatApiResponse(
        conversationId=conversation_id, title=title, turn=turn, response=response.answer,
        responseWithIds=response.answer_with_ids or response.answer,
        citations=[s.id for s in cited if s.id], sources=response.sources,
        references=[r.model_dump() for r in response.references], history=history,
        llm=response.llm, fallbackReason=response.fallback_reason,
        filterNote=response.filter_note, mode=response.mode, usage=response.usage,
        timings=response.timings, archive_verified=response.archive_verified,
        missing_archives=response.missing_archives, sources_text=response.sources_text)


class OpenAIMessage(BaseModel):
    """A chat message in the OpenAI shape (text content only)."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        """The message text (text parts of a multi-part content joined)."""
        if isinstance(self.content, list):
            return " ".join(str(p.get("text", "")) for p in self.content
                            if p.get("type") == "text")
        return self.content or ""


class StreamOptions(BaseModel):
    """OpenAI `stream_options`: `include_usage` adds a last chunk with the token counts."""

    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class CompletionRequest(BaseModel):
    """OpenAI chat-completions request; the last user message is the question, earlier user
    messages make follow-ups. `model` is `ragbench` or `ragbench-<mode>`. Every user message
    is capped at `MAX_QUESTION_CHARS`.
    """

    model_config = ConfigDict(extra="allow")  # temperature, top_p... are accepted, unused

    model: str = "ragbench"
    messages: list[OpenAIMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    n: int = Field(1, ge=1, description="choices wanted; ragbench answers with one (n=1)")
    max_tokens: int | None = Field(None, ge=1, description="cap of a model's answer")
    max_completion_tokens: int | None = Field(None, ge=1, description="same as max_tokens")
    lenses: list[str] | None = Field(None, description="ragbench extension: only these lenses")

    @model_validator(mode="after")
    def _questions_fit(self) -> CompletionRequest:
        for message in self.messages:
            if message.role == "user":
                reason = question_too_long(message.text(), "a user message")
                if reason:
                    raise ValueError(reason)
        return self

    def answer_cap(self) -> int | None:
        """The model answer's token cap asked for (`max_completion_tokens` wins)."""
        return self.max_completion_tokens or self.max_tokens


class SearchRequest(BaseModel):
    """Ranked chunks for a query."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    mode: str | None = None
    topK: int | None = Field(None, ge=1, le=1000)  # noqa: N815
    lenses: list[str] | None = None
    chunkTypes: list[ChunkTypeName] | None = Field(  # noqa: N815
        None, description="specs/003 chunk_type filter: only chunks of these types")
    fts_level: FtsLevel | None = Field(
        None, description="specs/003: full-text search over chunk text or whole documents "
                          "(media) for this request; default: the fts_level setting")


class ReportCreateRequest(BaseModel):
    """A new report from a template (generated at once unless `generate` is false)."""

    model_config = ConfigDict(extra="forbid")

    template: str = Field(description="roadmap, essay, brief or custom")
    title: str = Field(min_length=1, max_length=300)
    goal: str = ""
    audience: str = ""
    tone: str = ""
    lenses: list[str] | None = None
    outline: list[str] | None = Field(None, description="custom template: part headers")
    generate: bool = True
    llm: Literal["extractive", "openai"] | None = None


class TuneRequest(BaseModel):
    """Rewrite a part with an instruction ("shorter", "focus on engineering risks")."""

    model_config = ConfigDict(extra="forbid")

    instruction: str = Field(min_length=1, max_length=2000)
    llm: Literal["extractive", "openai"] | None = None


class CompleteRequest(BaseModel):
    """Write a part again."""

    model_config = ConfigDict(extra="forbid")

    llm: Literal["extractive", "openai"] | None = None


class RenameRequest(BaseModel):
    """A new title."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=300)


class Health(BaseModel):
    """Liveness and the workspace's size."""

    status: Literal["ok"] = "ok"
    version: str
    documents: int
    chunks: int


class ReprocessRequest(BaseModel):
    """Re-process the stale documents (`POST /v1/jobs/reprocess`)."""

    model_config = ConfigDict(extra="forbid")

    target_version: int | None = Field(
        None, ge=1, description="bring documents up to this ingest version; default: current")


class GraphRequest(BaseModel):
    """Rebuild the context graph (`POST /v1/jobs/graph`)."""

    model_config = ConfigDict(extra="forbid")

    rebuild: bool = Field(True, description="true: from scratch; false: bring it up to date "
                                            "with the catalog")
