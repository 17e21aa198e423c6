"""The `auto` embedding runtime: the fastest local runtime that keeps torch's vectors, per CPU.

Which runtime is fastest depends on the CPU (int8 kernels pay off with AVX-512 VNNI, not with
AVX2 alone), so `auto` measures instead of guessing: each candidate (torch, ONNX fp32, ONNX
int8) embeds the fixed probe set `PROBE_TEXTS` (short texts and one long text that is
windowed) in interleaved rounds, and each ONNX runtime's vectors are compared with torch's.

`decide` is the rule, a pure function of the measurements: a runtime qualifies when its
cosine to torch is at least `MIN_COSINE` on every probe text and at least `MEAN_COSINE` on
average, and when it is at least `MIN_SPEEDUP` times torch on *both* the short and the long
probe (so a runtime that wins on short texts but loses on long chunks is never chosen); the
fastest qualifying runtime wins, torch when none qualifies. So `auto` is never knowingly
slower than torch.

The choice is made once per workspace and recorded in its catalog (`RECORD_KEY`) beside the
vectors it produces: a workspace opened later, on this machine or on another CPU, uses the
recorded runtime, so vectors are never mixed and nothing is re-processed. A workspace that
already holds documents records the runtime its vectors were made with, without measuring.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

import numpy as np
from pydantic import BaseModel, Field

from ragbench.config import Settings

__all__ = ["CONCRETE_RUNTIMES", "MEAN_COSINE", "MIN_COSINE", "MIN_SPEEDUP", "PROBE_TEXTS",
           "RECORD_KEY", "Measurement", "RuntimeChoice", "cpu_info", "decide", "effective_settings",
           "known_choice", "record_key",
           "from_documents", "measure_runtimes", "measured_choice"]

Runtime = Literal["torch", "onnx", "onnx-int8"]
CONCRETE_RUNTIMES: tuple[Runtime, ...] = ("torch", "onnx", "onnx-int8")
RECORD_KEY = "embedding_runtime_auto"
"""Catalog meta key holding the workspace's `RuntimeChoice` as JSON."""
MIN_COSINE = 0.98
"""Lowest cosine to torch allowed on any probe text."""
MEAN_COSINE = 0.99
"""Lowest mean cosine to torch over the probe texts."""
MIN_SPEEDUP = 1.10
"""A runtime must beat torch by this factor on both probes: timing noise never picks a
runtime that is merely as fast as torch."""
ROUNDS = 3

_SENTENCES = (
    "Mitochondrial dysfunction contributes to insulin resistance in skeletal muscle.",
    "The compiler translates recursive procedures into iterative loops with an explicit stack.",
    "Vaccination coverage above ninety percent reduced measles incidence in the cohort.",
    "A hash table with open addressing degrades when the load factor approaches one.",
    "Regulatory T cells suppress autoimmune responses through interleukin-10 secretion.",
    "The storage allocator coalesces adjacent free blocks to limit fragmentation.",
    "Randomised trials found no effect of vitamin D supplements on fracture risk.",
    "Time-sharing systems schedule interactive jobs ahead of long batch computations.",
    "Tumour hypoxia induces angiogenesis by stabilising the HIF-1 alpha transcription factor.",
    "Sorting by merging runs minimises the passes over tape in external sorting.",
    "Gut microbiota composition differs between lean and obese twins.",
    "Parsing algorithms for context-free grammars run in cubic time in the worst case.",
    "What problems arise when choosing a programming language for numerical analysis?",
    "Statins lower LDL cholesterol and the incidence of cardiovascular events.",
    "The page replacement policy evicts the least recently used page of memory.",
    "Deep brain stimulation improves motor symptoms in advanced Parkinson's disease.",
)
PROBE_TEXTS: tuple[str, ...] = (*_SENTENCES, " ".join(_SENTENCES * 4))
"""Fixed probe set: 16 short texts and one long text (several model windows)."""


KERNEL_FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni",
                "avx512_bf16", "amx_int8", "asimd", "asimddp")
"""CPU flags by which runtimes (torch, onnxruntime) select their kernels."""


def cpu_info(cpuinfo: Path = Path("/proc/cpuinfo"),
             flags_wanted: tuple[str, ...] = KERNEL_FLAGS) -> dict[str, object]:
    """CPU model name and which of `flags_wanted` it has (from /proc/cpuinfo)."""
    import platform

    model, flags = platform.processor() or platform.machine(), set[str]()
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in ("model name", "Model", "cpu model") and value.strip():
            model = value.strip()
        elif key in ("flags", "Features"):
            flags |= set(value.split())
    return {"model": model, "flags": [f for f in flags_wanted if f in flags]}


class Measurement(BaseModel):
    """One runtime on the probe set: seconds per probe and cosine to torch (1.0 for torch)."""

    runtime: Runtime
    short_s: float | None = None
    long_s: float | None = None
    cosine_min: float = 1.0
    cosine_mean: float = 1.0
    error: str = ""


class RuntimeChoice(BaseModel):
    """The runtime `auto` resolved to for a workspace, and why (recorded in its catalog)."""

    runtime: Runtime
    model: str
    source: Literal["measured", "existing vectors"]
    reason: str
    decided_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(
        timespec="seconds"))
    cpu: dict[str, object] = Field(default_factory=dict)
    speedup_vs_torch: dict[str, float] = Field(
        default_factory=dict, description="worse of the short/long probe speedups")
    measurements: list[Measurement] = Field(default_factory=list)


def _speedup(torch: Measurement, other: Measurement) -> float | None:
    """The worse of `other`'s short and long speedups over torch (None: not measured)."""
    if None in (torch.short_s, torch.long_s, other.short_s, other.long_s) or other.error:
        return None
    return min(torch.short_s / other.short_s, torch.long_s / other.long_s)  # type: ignore[operator]


def decide(measurements: Sequence[Measurement], model: str) -> RuntimeChoice:
    """The fastest runtime passing the quality bar and `MIN_SPEEDUP`, else torch (module doc)."""
    by_name = {m.runtime: m for m in measurements}
    torch = by_name.get("torch")
    speedups: dict[str, float] = {}
    notes: list[str] = []
    best: tuple[float, Runtime] | None = None
    for m in measurements:
        if m.runtime == "torch" or torch is None:
            continue
        if m.error:
            notes.append(f"{m.runtime}: unavailable ({m.error[:80]})")
            continue
        speed = _speedup(torch, m)
        if speed is None:
            continue
        speedups[m.runtime] = round(speed, 3)
        if m.cosine_min < MIN_COSINE or m.cosine_mean < MEAN_COSINE:
            notes.append(f"{m.runtime}: cosine to torch {m.cosine_min:.4f} min / "
                         f"{m.cosine_mean:.4f} mean below the bar")
        elif speed < MIN_SPEEDUP:
            notes.append(f"{m.runtime}: {speed:.2f}x torch, below {MIN_SPEEDUP:.2f}x")
        elif best is None or speed > best[0]:
            best = (speed, m.runtime)
    if best is None:
        runtime: Runtime = "torch"
        reason = "no runtime beats torch with torch's vectors" + (
            f" ({'; '.join(notes)})" if notes else "")
    else:
        runtime = best[1]
        cos = by_name[runtime]
        reason = (f"{best[0]:.2f}x torch on the probe (worse of short and long texts), cosine "
                  f"to torch {cos.cosine_min:.4f} min / {cos.cosine_mean:.4f} mean")
    return RuntimeChoice(runtime=runtime, model=model, source="measured", reason=reason,
                         cpu=cpu_info(), speedup_vs_torch=speedups,
                         measurements=list(measurements))


class _Embeds(Protocol):
    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _timed(embedder: _Embeds, texts: list[str]) -> float:
    start = time.perf_counter()
    embedder.embed(texts)
    return time.perf_counter() - start


def measure_runtimes(
    model: str, make: Callable[[Runtime], _Embeds], rounds: int = ROUNDS,
    probe: Sequence[str] = PROBE_TEXTS,
) -> list[Measurement]:
    """Time every runtime on `probe` (interleaved rounds, median) and compare with torch.

    `make(runtime)` returns an embedder with `embed(texts) -> np.ndarray`; a runtime that cannot
    be made (e.g. the ONNX export fails) is reported with its error instead.
    """
    short, long = [t for t in probe if len(t) < 1000], [t for t in probe if len(t) >= 1000]
    embedders: dict[Runtime, _Embeds] = {}
    out: dict[Runtime, Measurement] = {}
    for runtime in CONCRETE_RUNTIMES:
        try:
            embedders[runtime] = make(runtime)
        except Exception as e:  # noqa: BLE001 - a runtime that cannot load is just not chosen
            out[runtime] = Measurement(runtime=runtime, error=" ".join(str(e).split())[:300])
    if "torch" not in embedders:
        return list(out.values())
    vectors: dict[Runtime, np.ndarray] = {
        rt: np.asarray(e.embed(list(probe))) for rt, e in embedders.items()}
    times: dict[Runtime, dict[str, list[float]]] = {
        rt: {"short": [], "long": []} for rt in embedders}
    names = list(embedders)
    for r in range(rounds):
        for rt in names[r % len(names):] + names[: r % len(names)]:
            times[rt]["short"].append(_timed(embedders[rt], short))
            times[rt]["long"].append(_timed(embedders[rt], long))
    reference = vectors["torch"]
    for rt in names:
        cos = (vectors[rt] * reference).sum(axis=1)
        out[rt] = Measurement(
            runtime=rt, short_s=round(statistics.median(times[rt]["short"]), 4),
            long_s=round(statistics.median(times[rt]["long"]), 4),
            cosine_min=round(float(cos.min()), 5), cosine_mean=round(float(cos.mean()), 5))
    return [out[rt] for rt in CONCRETE_RUNTIMES if rt in out]


def from_documents(runtimes: Mapping[str, int], model: str) -> RuntimeChoice | None:
    """The choice for a workspace whose documents were made with `runtimes` (runtime -> count):
    the most used one, so existing vectors stay valid (None when there are none).
    """
    known = {rt: n for rt, n in runtimes.items() if rt in CONCRETE_RUNTIMES and n}
    if not known:
        return None
    runtime = max(known, key=lambda rt: known[rt])
    return RuntimeChoice(runtime=runtime, model=model,
                         source="existing vectors",
                         reason=f"the workspace's {known[runtime]} documents were made with it",
                         cpu=cpu_info())


_MEASURED: dict[tuple[str, int, int], RuntimeChoice] = {}
"""Choices measured in this process (one measurement serves every new workspace)."""


def measured_choice(model: str, settings: Settings) -> RuntimeChoice:
    """`decide` over `measure_runtimes` for `model` with these batch/window settings, once per
    process.
    """
    from ragbench.embeddings.embedders import make_embedder

    key = (model, settings.embedding_batch_size, settings.embedding_window_overlap)
    if key not in _MEASURED:
        def make(runtime: Runtime) -> _Embeds:
            return make_embedder(settings.model_copy(update={"embedding_runtime": runtime}))

        _MEASURED[key] = decide(measure_runtimes(model, make), model)
    return _MEASURED[key]


class RuntimeRecords(Protocol):
    """Where a workspace keeps its choice (the catalog)."""

    def get_meta(self, key: str) -> str | None: ...

    def runtimes_in_use(self) -> dict[str, int]: ...


def record_key(model: str) -> str:
    """The catalog meta key of the `auto` choice for `model`."""
    return f"{RECORD_KEY}:{model}"


def known_choice(records: RuntimeRecords, model: str) -> RuntimeChoice | None:
    """The recorded choice for `model`, else the runtime the stored vectors were made with,
    else None (an empty workspace not measured yet). Reads only.
    """
    stored = records.get_meta(record_key(model))
    if stored:
        return RuntimeChoice.model_validate_json(stored)
    return from_documents(records.runtimes_in_use(), model)


def effective_settings(settings: Settings, records: RuntimeRecords) -> Settings:
    """`settings` with `embedding_runtime = "auto"` replaced by the workspace's known choice
    (unchanged when there is none yet, or for other backends).
    """
    if (settings.embedding_backend != "sentence-transformers"
            or settings.embedding_runtime != "auto"):
        return settings
    choice = known_choice(records, settings.embedding_model)
    if choice is None:
        return settings
    return settings.model_copy(update={"embedding_runtime": choice.runtime})
