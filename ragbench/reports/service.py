"""Reports over one workspace: create from a template, write parts, tune, suggest, reorder.

`ReportService` ties the report store to retrieval, contradiction search and the chat model:

- a part is written from passages gathered for its query (lens-balanced + graph-expanded,
  preferring passages no other part cites) and the contradictions among them;
- a disagreements part is written from the contradictions among every passage the other parts
  were offered plus its own retrieval, so it is best completed last (`generate` does);
- completing a part again or tuning it stores a new version; earlier ones stay as history;
- suggestions come from the model (specs/000 `essay_suggest`) or, without one, from the
  report itself: parts not written, lenses in scope never cited, disagreements not stated
  (the coverage and the suggestions are `ragbench.reports.review`'s).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ragbench.answer.llm import ChatModel
from ragbench.contradictions import Finding
from ragbench.errors import InvalidRequestError, LLMError, NotFoundError
from ragbench.lexical import stem
from ragbench.models import RetrievalResult
from ragbench.reports.context import GenerationOptions, Search, gather
from ragbench.reports.digest import statements_of
from ragbench.reports.generator import Draft, PartGenerator, PartTask, TokenCallback
from ragbench.reports.models import (
    PartVersion,
    Report,
    ReportBrief,
    ReportCoverage,
    ReportPart,
    ReportSummary,
    Suggestion,
)
from ragbench.reports.review import model_suggestions, own_suggestions, report_coverage
from ragbench.reports.store import ReportStore
from ragbench.reports.templates import PartSpec, outline
from ragbench.store.catalog_base import now_iso


class FindContradictions(Protocol):
    """The workbench's contradiction search over chunk ids (`places`: conflicting places too,
    for the part that lists the disagreements).
    """

    def __call__(self, chunk_ids: Sequence[str], *, places: bool = False) -> list[Finding]:
        """The findings among `chunk_ids`."""
        ...


ChunksById = Callable[[Sequence[str]], list[RetrievalResult]]
ReportProgress = Callable[[str, int, int], None]
"""progress(part header, parts done, parts in all): before each part and once at the end."""

_SHORTER = re.compile(r"\b(short|shorter|brief|briefer|concise|condense|tighten|summar)", re.I)
_LONGER = re.compile(r"\b(long|longer|detail|expand|elaborate|more)\b", re.I)
_STYLE_WORDS = {"shorter", "short", "longer", "brief", "concise", "focus", "more", "less",
                "detail", "detailed", "make", "it", "on", "the", "and", "please", "expand"}

def new_id(*parts: str, length: int = 12) -> str:
    """A short random-enough hex id from `parts` and the clock."""
    key = "\n".join([*parts, str(time.time_ns())])
    return hashlib.sha256(key.encode()).hexdigest()[:length]


@dataclass
class ReportService:
    """Create, write, tune and reshape reports (see the module docstring), with the store,
    the retrieval, the workspace's lenses, chunk lookup, contradiction finding and the part
    writer it is given.
    """

    store: ReportStore
    search: Search
    all_lenses: Callable[[], list[str]]
    chunks: ChunksById
    find_contradictions: FindContradictions
    generator: PartGenerator

    # --- reports --------------------------------------------------------------------------

    def create(self, template: str, title: str, brief: ReportBrief | None = None,
               lenses: Sequence[str] | None = None,
               custom_outline: Sequence[str] | None = None) -> Report:
        """A new report with the template's parts (not yet written)."""
        brief = brief or ReportBrief()
        if not title.strip():
            raise InvalidRequestError("a report needs a title")
        known = self.all_lenses()
        unknown = [lens for lens in lenses or [] if lens not in known]
        if unknown:
            raise InvalidRequestError(f"unknown lens(es) {unknown}; the workspace has "
                                      f"{known or 'no documents yet'}")
        specs = outline(template, title, brief, list(custom_outline or []))
        report_id = new_id(title, template)
        parts = [self._part(spec, i, report_id) for i, spec in enumerate(specs, 1)]
        report = Report(report_id=report_id, title=title.strip(), template=template,
                        brief=brief, lenses=list(lenses or []), parts=parts)
        self.store.create(report)
        return self.store.get(report_id)

    @staticmethod
    def _part(spec: PartSpec, position: int, report_id: str) -> ReportPart:
        return ReportPart(part_id=new_id(report_id, spec.header, str(position), length=8),
                          position=position, header=spec.header, query=spec.query,
                          kind=spec.kind, keywords=spec.keywords, mood=spec.mood)

    def get(self, report_id: str) -> Report:
        """One report (NotFoundError naming the id)."""
        return self.store.get(report_id)

    def summaries(self) -> list[ReportSummary]:
        """Reports, most recently changed first."""
        return self.store.summaries()

    def delete(self, report_id: str) -> None:
        """Delete a report and everything stored with it."""
        self.store.delete(report_id)

    def resolve_part(self, report: Report, ref: str) -> ReportPart:
        """A part by id, or by its 1-based position ("3")."""
        ref = ref.strip()
        if ref.isdigit() and len(ref) <= 4:
            position = int(ref)
            if 1 <= position <= len(report.parts):
                return report.parts[position - 1]
        found = report.part(ref)
        if found is None:
            choices = ", ".join(f"{p.position}={p.part_id}" for p in report.parts)
            raise NotFoundError(f"report {report.report_id!r} has no part {ref!r}; parts: "
                                f"{choices or 'none'}")
        return found

    # --- writing --------------------------------------------------------------------------

    def generate(self, report_id: str, model: ChatModel | None = None,
                 progress: ReportProgress | None = None,
                 on_token: Callable[[str, str], None] | None = None,
                 only_missing: bool = False) -> Report:
        """Write every part (disagreement parts last); `on_token(part_id, delta)` streams."""
        report = self.get(report_id)
        order = sorted(report.parts, key=lambda p: (p.kind == "disagreements", p.position))
        todo = [p for p in order if not (only_missing and p.done)]
        for i, part in enumerate(todo):
            if progress:
                progress(part.header, i, len(todo))
            stream = (lambda d, pid=part.part_id: on_token(pid, d)) if on_token else None
            self.complete_part(report_id, part.part_id, model, on_token=stream)
        if progress:
            progress("done", len(todo), len(todo))
        return self.get(report_id)

    def complete_part(self, report_id: str, part_ref: str, model: ChatModel | None = None,
                      on_token: TokenCallback | None = None) -> ReportPart:
        """Write the part (again): a new current version, the old one kept in history."""
        report = self.get(report_id)
        part = self.resolve_part(report, part_ref)
        return self._write(report, part, model, part.mood, on_token)

    def tune_part(self, report_id: str, part_ref: str, instruction: str,
                  model: ChatModel | None = None,
                  on_token: TokenCallback | None = None) -> ReportPart:
        """Rewrite the part following `instruction` ("shorter", "focus on engineering risks").

        With a model the current text is rewritten from fresh passages; without one the
        digest is rebuilt with the instruction's words as focus (retrieval and statement
        choice), a lens it names first, and fewer or more statements for "shorter"/"longer".
        """
        if not instruction.strip():
            raise InvalidRequestError("the tuning instruction is empty")
        report = self.get(report_id)
        part = self.resolve_part(report, part_ref)
        return self._write(report, part, model, instruction.strip(), on_token, tune=True)

    def _write(self, report: Report, part: ReportPart, model: ChatModel | None,
               instruction: str | None, on_token: TokenCallback | None,
               tune: bool = False) -> ReportPart:
        """Write `part` (or tune it by `instruction`) and store the draft as its new version:
        retrieve for its query, find disagreements, write, keep the findings the text cites.
        """
        lenses = report.lenses or self.all_lenses()
        others = [p for p in report.parts if p.part_id != part.part_id and p.current]
        avoid = {cid for p in others if p.current for cid in p.current.cited_ids()}
        used: set[str] = set()
        for p in others:
            if p.current:
                used |= statements_of(p.current.text_with_ids)
        options = self.generator.options
        focus = _focus_words(instruction) if tune and instruction else []
        query = part.query + (" " + " ".join(focus) if focus else "")
        if tune and instruction and model is None:
            current = len(part.current.text.split()) if part.current else options.words
            options = _tuned_options(options, instruction, current)
        results = gather(self.search, query, lenses, options, avoid) if lenses else []
        results, findings = self._with_findings(part, others, results)
        task = self._task(report, part, others, query, focus, instruction, tune, lenses)
        generator = self.generator
        if options is not generator.options:
            generator = PartGenerator(options, generator.max_tokens, generator.fallback,
                                      generator.embedder, generator.rarity)
        draft = generator.write(task, results, findings, model, used, on_token)
        if tune and instruction:
            draft.generation.instruction = instruction
        self.store.save_version(report.report_id, part.part_id,
                                _next_version(part, draft, findings), part.mood)
        fresh = self.get(report.report_id).part(part.part_id)
        assert fresh is not None
        return fresh

    def _with_findings(self, part: ReportPart, others: Sequence[ReportPart],
                       results: list[RetrievalResult],
                       ) -> tuple[list[RetrievalResult], list[Finding]]:
        """The part's passages and the disagreements among them. A disagreements part looks
        across everything the other parts retrieved too (places included) and adds each
        side's chunk to its passages.
        """
        if part.kind != "disagreements":
            ids = [r.chunk_id for r in results]
            return results, (self.find_contradictions(ids) if len(ids) > 1 else [])
        scope = list(dict.fromkeys(
            [cid for p in others if p.current for cid in p.current.generation.retrieved_ids]
            + [r.chunk_id for r in results]))
        findings = (self.find_contradictions(scope, places=True)  # where things are too
                    if len(scope) > 1 else [])
        sides = list(dict.fromkeys(str(s.get("chunk_id")) for f in findings
                                   for s in f.chunks))
        have = {r.chunk_id for r in results}
        return results + [r for r in self.chunks([c for c in sides if c not in have])], findings

    @staticmethod
    def _task(report: Report, part: ReportPart, others: Sequence[ReportPart], query: str,
              focus: list[str], instruction: str | None, tune: bool,
              lenses: Sequence[str]) -> PartTask:
        """What the generator is asked: the part in its report, what the other parts already
        say, and (tuning) the current text and the instruction.
        """
        return PartTask(report_title=report.title, brief=report.brief.as_text(),
                        header=part.header, query=query, kind=part.kind,
                        keywords=[*part.keywords, *focus], instruction=instruction,
                        current_text=part.current.text_with_ids if tune and part.current
                        else None,
                        other_parts=[p.header for p in report.parts if p.part_id != part.part_id],
                        lens_order=[lens for lens in lenses
                                    if instruction and lens in instruction.lower()],
                        state_disagreements=not any(p.kind == "disagreements"
                                                    for p in report.parts),
                        stated_topics=[f.topic for p in others if p.current
                                       for f in p.current.contradictions])

    # --- reshaping ------------------------------------------------------------------------

    def add_part(self, report_id: str, header: str, query: str | None = None,
                 position: int | None = None, mood: str | None = None) -> ReportPart:
        """A new empty part (at the end unless `position` is given)."""
        if not header.strip():
            raise InvalidRequestError("a part needs a header")
        report = self.get(report_id)
        last = len(report.parts) + 1
        where = last if position is None else position
        if not 1 <= where <= last:
            raise InvalidRequestError(f"position {position} is outside 1..{last}")
        kind = "disagreements" if header.lower().startswith("where sources disagree") else (
            "section")
        part = ReportPart(part_id=new_id(report_id, header, length=8), position=where,
                          header=header.strip(), query=(query or header).strip(), kind=kind,
                          mood=mood)
        self.store.add_part(report_id, part)
        return part

    def update_part(self, report_id: str, part_ref: str, header: str | None = None,
                    query: str | None = None, mood: str | None = None) -> ReportPart:
        """Change a part's header, query or standing mood (its text stays until rewritten)."""
        report = self.get(report_id)
        part = self.resolve_part(report, part_ref)
        self.store.update_part(report_id, part.part_id, (header or part.header).strip(),
                               (query or part.query).strip(),
                               part.mood if mood is None else (mood.strip() or None))
        fresh = self.get(report_id).part(part.part_id)
        assert fresh is not None
        return fresh

    def delete_part(self, report_id: str, part_ref: str) -> None:
        """Delete a part with its versions."""
        part = self.resolve_part(self.get(report_id), part_ref)
        self.store.delete_part(report_id, part.part_id)

    def move_part(self, report_id: str, part_ref: str, position: int) -> Report:
        """Move a part to `position` (1-based); the others keep their order."""
        report = self.get(report_id)
        part = self.resolve_part(report, part_ref)
        if not 1 <= position <= len(report.parts):
            raise InvalidRequestError(f"position {position} is outside 1..{len(report.parts)}")
        ids = [p.part_id for p in report.parts if p.part_id != part.part_id]
        ids.insert(position - 1, part.part_id)
        self.store.reorder(report_id, ids)
        return self.get(report_id)

    def update(self, report_id: str, title: str | None = None,
               brief: ReportBrief | None = None, lenses: Sequence[str] | None = None) -> Report:
        """Change title, brief or lenses in scope (parts are not rewritten)."""
        report = self.get(report_id)
        self.store.update_meta(report_id, (title or report.title).strip(),
                               brief or report.brief,
                               list(report.lenses if lenses is None else lenses))
        return self.get(report_id)

    # --- review ---------------------------------------------------------------------------

    def coverage(self, report_id: str) -> ReportCoverage:
        """Lens coverage, documents cited and disagreements stated across the report."""
        report = self.get(report_id)
        return report_coverage(report, report.lenses or self.all_lenses())

    def suggest(self, report_id: str, model: ChatModel | None = None) -> list[Suggestion]:
        """Proposed changes: the model's (specs/000 essay_suggest) after the report's own."""
        report = self.get(report_id)
        found = own_suggestions(report, self.coverage(report_id))
        if model is not None and any(p.done for p in report.parts):
            try:
                found += model_suggestions(report, model)
            except LLMError as e:
                if not self.generator.fallback:
                    raise
                found.append(Suggestion(kind="other", text=f"model unavailable: {e}"))
        return found


def _next_version(part: ReportPart, draft: Draft, findings: Sequence[Finding]) -> PartVersion:
    """The draft as the part's next version, with the findings at least two of whose sides
    the draft mentions.
    """
    mentioned = set(draft.generation.retrieved_ids)
    earlier = [*part.history, *([part.current] if part.current else [])]
    return PartVersion(
        version=1 + max((v.version for v in earlier), default=0),
        header=part.header, text=draft.text, text_with_ids=draft.text_with_ids,
        sources=draft.sources, references=draft.references,
        references_method=draft.references_method,
        contradictions=[f for f in findings
                        if sum(1 for s in f.chunks if s.get("chunk_id") in mentioned) >= 2],
        generation=draft.generation, created_at=now_iso())


def _focus_words(instruction: str) -> list[str]:
    """The subject words of a tuning instruction ("focus on engineering risks" -> both)."""
    words = re.findall(r"[A-Za-z][\w-]+", instruction)
    return [w for w in words if w.lower() not in _STYLE_WORDS and len(w) > 2
            and not _SHORTER.match(w) and stem(w.lower()) not in {"detail", "long"}]


def _tuned_options(options: GenerationOptions, instruction: str,
                   current_words: int) -> GenerationOptions:
    """Part length for an instruction: about half the current part when shorter, half again
    when longer.
    """
    if _SHORTER.search(instruction):
        words = max(40, min(options.words, current_words) // 2)
        return options.model_copy(update={"words": words, "disagreements": 1})
    if _LONGER.search(instruction):
        return options.model_copy(update={"words": options.words * 3 // 2,
                                          "pool": options.pool + 10})
    return options
