"""Report templates: the outline of parts a new report starts with.

- `roadmap` (specs/002 `generate`): the six standard queries become parts, plus a
  "Where sources disagree" part;
- `essay` (specs/000): an outline of parts about a topic (the brief's goal, else the title);
- `brief`: one question turned into a structured brief;
- `custom`: the headers given (`Header` or `Header :: retrieval query`).

Each part carries its retrieval query and a few keywords that mark a relevant statement for the
extractive digest (a risk part looks for "delay", "slip", "blocker"...).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragbench.errors import InvalidRequestError
from ragbench.reports.models import PartKind, ReportBrief, TemplateInfo


class PartSpec(BaseModel):
    """One entry of an outline: header, retrieval query, kind, keywords, optional mood."""

    header: str = Field(min_length=1)
    query: str = Field(min_length=1)
    kind: PartKind = "section"
    keywords: list[str] = Field(default_factory=list)
    mood: str | None = None


ROADMAP_QUERIES: list[tuple[str, str, list[str]]] = [
    ("Strategy and vision", "product strategy and vision",
     ["strategy", "vision", "mission", "principle", "position", "goal", "priority"]),
    ("Priorities and timeline", "roadmap priorities and timeline",
     ["priority", "roadmap", "timeline", "milestone", "ga", "beta", "release", "quarter", "date"]),
    ("Architecture and dependencies", "technical architecture and dependencies",
     ["architecture", "dependency", "migration", "platform", "infrastructure", "engine",
      "region", "connector", "depends"]),
    ("Customer needs", "customer needs and outcomes",
     ["customer", "user", "need", "outcome", "onboarding", "churn", "retention", "deal",
      "feedback"]),
    ("Constraints and trade-offs", "resource constraints and trade-offs",
     ["constraint", "trade", "capacity", "engineer", "squad", "budget", "headcount", "cost",
      "price", "resource"]),
    ("Risks", "risks and concerns",
     ["risk", "concern", "delay", "slip", "blocker", "mitigation", "uncertain", "late",
      "realistic", "estimate"]),
]
"""specs/002's six synthesis queries as (header, query, digest keywords)."""

DISAGREEMENTS = PartSpec(
    header="Where sources disagree", query="conflicting dates figures priorities and plans",
    kind="disagreements",
    keywords=["disagree", "conflict", "differ", "estimate", "expect", "instead"])

TEMPLATES: dict[str, TemplateInfo] = {t.name: t for t in (
    TemplateInfo(name="roadmap", needs="nothing (a goal focuses it)",
                 description="specs/002: strategy and vision, priorities and timeline, "
                 "architecture and dependencies, customer needs, constraints and trade-offs, "
                 "risks, and where sources disagree"),
    TemplateInfo(name="essay", needs="a topic (brief goal, else the title)",
                 description="specs/000: an outline of parts about a topic"),
    TemplateInfo(name="brief", needs="a question (brief goal, else the title)",
                 description="one question answered as a structured brief"),
    TemplateInfo(name="custom", needs="an outline (one header per part)",
                 description="your own outline: 'Header' or 'Header :: retrieval query'"),
)}


def _essay(topic: str) -> list[PartSpec]:
    return [
        PartSpec(header=f"Introduction: {topic}", query=topic,
                 keywords=["overview", "purpose", "goal"]),
        PartSpec(header="Background and context", query=f"{topic} background context history",
                 keywords=["background", "context", "because", "since"]),
        PartSpec(header="Key facts and figures", query=f"{topic} facts figures dates numbers",
                 keywords=["number", "date", "target", "percent"]),
        PartSpec(header="Perspectives across sources", query=f"{topic} views opinions plans",
                 keywords=["view", "believe", "argue", "expect", "plan", "said"]),
        DISAGREEMENTS.model_copy(update={"query": f"{topic} conflicting claims"}),
        PartSpec(header="Conclusion and open questions",
                 query=f"{topic} outcome open questions next steps",
                 keywords=["next", "open", "question", "decision", "outcome"]),
    ]


def _brief(question: str) -> list[PartSpec]:
    return [
        PartSpec(header="Bottom line", query=question),
        PartSpec(header="Key facts, figures and dates",
                 query=f"{question} figures dates numbers", keywords=["date", "number", "target"]),
        PartSpec(header="What each source says", query=f"{question} plans views",
                 keywords=["plan", "expect", "said", "view"]),
        DISAGREEMENTS.model_copy(update={"query": f"{question} conflicting claims"}),
        PartSpec(header="Risks and open questions", query=f"{question} risks concerns open",
                 keywords=["risk", "concern", "delay", "open", "question"]),
    ]


def parse_outline(lines: list[str]) -> list[PartSpec]:
    """Custom outline entries: `Header` (also its query) or `Header :: query`.

    A header starting with "disagree" (or the query `::disagreements`) makes a disagreements
    part. Blank entries are skipped; no entries at all is an error.
    """
    specs: list[PartSpec] = []
    for raw in lines:
        header, _, query = (s.strip() for s in raw.partition("::"))
        if not header:
            continue
        kind: PartKind = ("disagreements" if query.lower() == "disagreements"
                          or header.lower().startswith(("disagree", "where sources disagree"))
                          else "section")
        if kind == "disagreements":
            specs.append(DISAGREEMENTS.model_copy(update={"header": header}))
        else:
            specs.append(PartSpec(header=header, query=query or header))
    if not specs:
        raise InvalidRequestError("a custom report needs an outline: one header per part "
                                  "('Header' or 'Header :: retrieval query')")
    return specs


def outline(template: str, title: str, brief: ReportBrief,
            custom: list[str] | None = None) -> list[PartSpec]:
    """The parts a new report of `template` starts with (InvalidRequestError naming choices)."""
    if template not in TEMPLATES:
        raise InvalidRequestError(
            f"unknown report template {template!r}; choose one of {', '.join(TEMPLATES)}")
    subject = brief.goal.strip() or title.strip()
    if template == "roadmap":
        focus = f" {brief.goal.strip()}" if brief.goal.strip() else ""
        return [*(PartSpec(header=h, query=q + focus, keywords=k) for h, q, k in ROADMAP_QUERIES),
                DISAGREEMENTS]
    if template == "custom":
        return parse_outline(custom or [])
    if not subject:
        raise InvalidRequestError(f"the {template} template needs a "
                                  f"{'topic' if template == 'essay' else 'question'}: "
                                  "give a brief goal or a title")
    if custom:
        return parse_outline(custom)
    return _essay(subject) if template == "essay" else _brief(subject)
