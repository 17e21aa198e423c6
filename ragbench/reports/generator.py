"""Writing one part: passages in, a validated, referenced `PartVersion` out.

With a chat model the part is written from its lens-grouped context (`context.format_context`)
under the citation rules (specs/004); the output is validated against the ids in that context
(invented ids removed, the rest renumbered) and, when more than half of its citations are
invalid or it cites nothing at all, asked again with the list of valid ids (`MAX_RETRIES`). A
prompt too long for the model's window is retried with half the passages. A failing endpoint
falls back to the offline writer when `llm_fallback` is on. Offline, a section part is written
by `ragbench.writing` (a cited query-focused summary of `options.words` words, skipping what
other parts said) and a disagreements part lists the contradiction clusters.

References (specs/000) are evaluated after generation: with a model, by the specs/000
evaluation prompt (`answer.references.evaluate_references`, at most
`options.reference_max_chunks` chunks, the cited ones first), completed with the deterministic
attribution of any cited chunk the model left out; without one, by that attribution alone,
which gives relevance only to chunks the text actually cites (a cited chunk's best coverage of
the statements citing it).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from ragbench.answer.citations import CITATION_RULES, CitationCheck, validate
from ragbench.answer.extractive import NOT_FOUND
from ragbench.answer.generation import TokenSink, UncitedText, Written, write_cited
from ragbench.answer.llm import ChatModel
from ragbench.answer.references import Reference, evaluate_references
from ragbench.answer.response import Source, attach_passages, source_of
from ragbench.contradictions import Finding
from ragbench.errors import ContextWindowError, LLMError
from ragbench.lexical import content_words
from ragbench.models import RetrievalResult
from ragbench.reports.context import GenerationOptions, format_context
from ragbench.reports.digest import NOTHING, disagreement_digest, disagreement_lines
from ragbench.reports.models import GenerationInfo, PartKind
from ragbench.writing import write
from ragbench.writing.meaning import SentenceEmbedder

TokenCallback = TokenSink
"""on_token(delta): the model's text as it is written (first attempt only)."""

REPORT_RULES = """You write ONE part of a report, from passages grouped by lens (point of view).
Write one to three short paragraphs or a short list for the part named below; do not repeat its
header. Use every lens that has something to say on the part. Where passages disagree, state
both sides, each with its citation. Do not repeat what the other parts cover."""


class PartTask(BaseModel):
    """Everything needed to write one part (besides the passages)."""

    report_title: str
    brief: str = ""
    header: str
    query: str
    kind: PartKind = "section"
    keywords: list[str] = Field(default_factory=list)
    instruction: str | None = None
    current_text: str | None = Field(None, description="text to rewrite (tuning)")
    other_parts: list[str] = Field(default_factory=list)
    lens_order: list[str] = Field(default_factory=list)
    state_disagreements: bool = Field(
        False, description="state the part's disagreements (the report has no part for them)")
    stated_topics: list[str] = Field(
        default_factory=list, description="disagreements other parts already state")


class Draft(BaseModel):
    """A written, validated part before it is stored as a version."""

    text: str
    text_with_ids: str
    sources: list[Source]
    references: list[Reference]
    references_method: str
    generation: GenerationInfo


def with_ids(check: CitationCheck) -> str:
    """The validated text with its `[n]` turned back into `[C:id]`."""
    def back(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f"[C:{check.cited[n - 1]}]" if 1 <= n <= len(check.cited) else match.group(0)

    return re.sub(r"\[(\d+)\]", back, check.text)


def cited_references(text_with_ids: str, results: Sequence[RetrievalResult]) -> list[Reference]:
    """Deterministic references: one per cited chunk and none for the others.

    Relevance = the chunk's best coverage of a statement citing it (the share of the
    statement's content words the chunk contains) times its share of the part's citations
    (0.6 for one citation up to 1.0 for the most cited chunk), at least 0.1.
    """
    by_id = {r.chunk_id: r for r in results}
    best: dict[str, tuple[float, str]] = {}
    uses: dict[str, int] = {}
    for piece in re.split(r"(?<=\])(?=[^\[])|\n", text_with_ids):
        ids = [cid.lower() for cid in re.findall(r"\[C:([0-9a-fA-F]+)\]", piece)]
        statement = re.sub(r"\[C:[0-9a-fA-F]+\]", "", piece)
        statement = re.sub(r"^[\s;,.|*-]+|[\s;,|*-]+$", "", statement.replace("**", ""))
        terms = set(content_words(statement))
        for cid in ids:
            if cid not in by_id:
                continue
            uses[cid] = uses.get(cid, 0) + 1
            words = set(content_words(by_id[cid].text))
            share = len(terms & words) / len(terms) if terms else 0.0
            if cid not in best or share > best[cid][0]:
                best[cid] = (share, statement)
    most = max(uses.values(), default=1)
    refs = []
    for cid, (share, statement) in best.items():
        quote = " ".join(statement.split())
        quote = quote if len(quote) <= 90 else quote[:87] + "..."
        weight = 0.6 + 0.4 * (uses[cid] - 1) / max(1, most - 1) if most > 1 else 1.0
        refs.append(Reference(chunk_id=cid, relevance=round(max(0.1, min(1.0, share * weight)), 3),
                              description=f'cited {uses[cid]}x, e.g. for "{quote}"'))
    return sorted(refs, key=lambda r: (-r.relevance, r.chunk_id))


def _messages(task: PartTask, context: str) -> list[dict[str, str]]:
    lines = [f"REPORT: {task.report_title}"]
    if task.brief:
        lines.append(task.brief)
    if task.other_parts:
        lines.append("OTHER PARTS (covered elsewhere): " + "; ".join(task.other_parts))
    lines.append(f"PART: {task.header}")
    lines.append(f"FOCUS: {task.query}" if task.kind == "section" else
                 "FOCUS: where the sources disagree; state each disagreement with both sides")
    if task.current_text:
        lines.append(f"CURRENT TEXT (rewrite it):\n{task.current_text}")
    if task.instruction:
        lines.append(f"INSTRUCTION: {task.instruction}")
    return [{"role": "system", "content": f"{CITATION_RULES}\n\n{REPORT_RULES}"},
            {"role": "user", "content": f"CONTEXT:\n{context}\n\n" + "\n".join(lines)}]


class PartGenerator:
    """Write a part extractively or with a chat model; validate; evaluate references."""

    def __init__(self, options: GenerationOptions, max_tokens: int, fallback: bool,
                 embedder: Callable[[], SentenceEmbedder | None] | None = None,
                 rarity: Callable[[str], dict[str, float]] | None = None) -> None:
        self.options = options
        self.max_tokens = options.max_tokens or max_tokens
        self.fallback = fallback
        self.embedder = embedder
        """The sentence embedder the offline writer ranks meaning with (None: words only)."""
        self.rarity = rarity
        """Workspace-wide inverse frequency of a question's words (see `writing.write`)."""

    def write(self, task: PartTask, results: list[RetrievalResult], findings: list[Finding],
              model: ChatModel | None = None, used: set[str] | frozenset[str] = frozenset(),
              on_token: TokenCallback | None = None) -> Draft:
        """A draft of the part from `results` (see the module docstring)."""
        start = time.perf_counter()
        info = GenerationInfo(method="extractive", query=task.query,
                              instruction=task.instruction,
                              lenses=list(dict.fromkeys(r.lens for r in results)),
                              retrieved_ids=[r.chunk_id for r in results],
                              settings=self.options.model_dump())
        valid_ids = [r.chunk_id for r in results]
        raw = None
        if model is not None and results:
            try:
                raw, valid_ids = self._generate(model, task, results, findings, info, on_token)
                info.method, info.model = "llm", model.name
            except LLMError as e:
                if not self.fallback:
                    raise
                info.method, info.fallback_reason = "extractive (fallback)", str(e)
                model = None
        if raw is None:
            raw = self._extractive(task, results, findings, used)
        check = validate(raw, valid_ids, from_model=model is not None)
        info.invalid_citations = sorted(set(info.invalid_citations) | set(check.invalid))
        text_ids = with_ids(check)
        by_id = {r.chunk_id: r for r in results}
        cited = [source_of(by_id[cid], n) for n, cid in enumerate(check.cited, 1)]
        attach_passages(cited, text_ids)  # the chunk sentence(s) each citation rests on
        others = [source_of(r, None).model_copy(update={"chunkText": ""})
                  for r in results if r.chunk_id not in check.cited]
        refs, method = self._references(check.text, text_ids, results, model)
        info.seconds = round(time.perf_counter() - start, 3)
        return Draft(text=check.text or NOT_FOUND, text_with_ids=text_ids or NOT_FOUND,
                     sources=cited + others, references=refs, references_method=method,
                     generation=info)

    def _extractive(self, task: PartTask, results: list[RetrievalResult],
                    findings: list[Finding], used: set[str] | frozenset[str]) -> str:
        if task.kind == "disagreements":
            return disagreement_digest(findings, self.options, results)
        query = " ".join([task.query, *(k for k in task.keywords if k not in task.query)])
        written = write(query, results, self.options.words, avoid=used,
                        embedder=self.embedder() if self.embedder else None,
                        rarity=self.rarity(query) if self.rarity else None)
        if not written.text:
            return NOTHING
        if not task.state_disagreements:
            return written.text
        cited = set(written.cited)
        fresh = [f for f in findings if f.topic not in task.stated_topics
                 and any(side.get("chunk_id") in cited for side in f.chunks)]
        lines = disagreement_lines(fresh, self.options.disagreements, sides=2,
                                   texts={r.chunk_id: r.text for r in results})
        return written.text + ("\n\n**Where the sources disagree**\n\n" + "\n".join(lines)
                               if lines else "")

    def _generate(self, model: ChatModel, task: PartTask, results: list[RetrievalResult],
                  findings: list[Finding], info: GenerationInfo,
                  on_token: TokenCallback | None) -> tuple[str, list[str]]:
        budget = self.options.context_chars
        window = _window(model)
        if window:
            budget = min(budget, max(1200, (window - self.max_tokens - 700) * 3))
        for _ in range(3):
            context, ids = format_context(results, findings, budget,
                                          self.options.citation_header)
            try:
                return self._attempts(model, _messages(task, context), ids, info,
                                      on_token), ids
            except ContextWindowError:
                if budget <= 1200:
                    raise
                budget = max(1200, budget // 2)
        raise LLMError("the passages do not fit the model's context window")

    def _attempts(self, model: ChatModel, messages: list[dict[str, str]], ids: list[str],
                  info: GenerationInfo, on_token: TokenCallback | None) -> str:
        """The model's part through the shared loop (`generation.write_cited`), which also
        asks again when the text cites nothing: a part is worth its references.
        """
        try:
            written = write_cited(model, messages, ids, self.max_tokens, on_token=on_token,
                                  require_citations=True)
        except UncitedText as e:
            _account(info, e.written)
            raise
        _account(info, written)
        return written.text

    def _references(self, text: str, text_ids: str, results: list[RetrievalResult],
                    model: ChatModel | None) -> tuple[list[Reference], str]:
        deterministic = cited_references(text_ids, results)
        if model is None or text == NOT_FOUND:
            return deterministic, "attribution"
        refs, method = evaluate_references(text_ids, results, model,
                                           max_chunks=self.options.reference_max_chunks)
        if method != "llm":
            return deterministic, "attribution"
        have = {r.chunk_id for r in refs}
        missing = [r for r in deterministic if r.chunk_id not in have]
        merged = sorted(refs + missing, key=lambda r: -r.relevance)
        return merged, "llm+attribution" if missing else "llm"


def _account(info: GenerationInfo, written: Written) -> None:
    """Add what the model's attempts cost and got wrong to the part's generation record."""
    info.retries += written.retries
    info.invalid_citations += written.invalid_citations
    for key, value in written.usage.items():
        info.usage[key] = info.usage.get(key, 0) + value


def _window(model: ChatModel) -> int | None:
    """The model's context window when it can tell (OpenAIChat can), else None."""
    probe = getattr(model, "context_window", None)
    if not callable(probe):
        return None
    try:
        value = probe()
    except LLMError:
        return None
    return value if isinstance(value, int) and value > 0 else None
