"""Reports in the catalog (SQLite schema revision s0003, PostgreSQL migration 0003): reports,
ordered parts, part versions, cited passages, on either backend.

Queries live here rather than in `Catalog`: SQLAlchemy Core over `ragbench.store.tables`, run
on the catalog's connections (`Catalog.reading`, `writing`), so the same code serves both
backends. Every change is one transaction that first marks the report changed (`_touch`, an
UPDATE, so on PostgreSQL it also locks the report row: two replicas reshaping one report at
once take turns instead of interleaving part positions; on SQLite `BEGIN IMMEDIATE` already
serialises writers). Part versions are stored whole as JSON (`PartVersion`); the passages a
version could cite are also rows of `report_sources`, indexed by chunk id, so an old citation
resolves without loading every report.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from ragbench.errors import NotFoundError
from ragbench.reports.models import (
    PartVersion,
    Report,
    ReportBrief,
    ReportPart,
    ReportSummary,
    Source,
)
from ragbench.store.catalog import Catalog
from ragbench.store.catalog_base import dialect_insert, now_iso
from ragbench.store.tables import (
    report_part_versions,
    report_parts,
    report_sources,
    reports,
)

_r, _p, _v, _s = reports.c, report_parts.c, report_part_versions.c, report_sources.c


class ReportStore:
    """Read and write reports through one workspace's catalog."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    # --- reports --------------------------------------------------------------------------

    def create(self, report: Report) -> None:
        """Insert a new report with its (not yet generated) parts."""
        stamp = now_iso()
        with self.catalog.writing() as conn:
            conn.execute(sa.insert(reports).values(
                report_id=report.report_id, title=report.title, template=report.template,
                brief=report.brief.model_dump_json(), lenses=json.dumps(report.lenses),
                created_at=stamp, updated_at=stamp))
            for part in report.parts:
                _insert_part(conn, report.report_id, part, stamp)

    def update_meta(self, report_id: str, title: str, brief: ReportBrief,
                    lenses: list[str]) -> None:
        """Change a report's title, brief and lenses in scope."""
        with self.catalog.writing() as conn:
            _touch(conn, report_id)
            conn.execute(sa.update(reports).where(_r.report_id == report_id).values(
                title=title, brief=brief.model_dump_json(), lenses=json.dumps(lenses)))

    def delete(self, report_id: str) -> None:
        """Delete a report with its parts, versions and stored passages."""
        with self.catalog.writing() as conn:
            if conn.execute(sa.delete(reports).where(_r.report_id == report_id)).rowcount == 0:
                raise _unknown(report_id)

    def get(self, report_id: str) -> Report:
        """A report with every part, its current version and history."""
        with self.catalog.reading() as conn:
            row = conn.execute(sa.select(reports).where(_r.report_id == report_id)
                               ).mappings().first()
            if row is None:
                raise _unknown(report_id)
            version_rows = conn.execute(
                sa.select(_v.part_id, _v.content).join(report_parts, _p.part_id == _v.part_id)
                .where(_p.report_id == report_id).order_by(_v.version)).all()
            part_rows = conn.execute(sa.select(report_parts).where(_p.report_id == report_id)
                                     .order_by(_p.position)).mappings().all()
        return assemble_report(row, version_rows, part_rows)

    def summaries(self, limit: int = 200) -> list[ReportSummary]:
        """Reports, most recently changed first."""
        mine = _p.report_id == _r.report_id
        parts = sa.select(sa.func.count()).where(mine).scalar_subquery()
        done = sa.select(sa.func.count()).where(mine, _p.version > 0).scalar_subquery()
        statement = (sa.select(_r.report_id, _r.title, _r.template, _r.updated_at,
                               parts.label("parts"), done.label("completed_parts"))
                     .order_by(_r.updated_at.desc(), _r.report_id).limit(limit))
        with self.catalog.reading() as conn:
            return [ReportSummary(**r) for r in conn.execute(statement).mappings()]

    def fingerprint(self) -> str:
        """Changes whenever a report changes (a cache key for views)."""
        with self.catalog.reading() as conn:
            count, newest = conn.execute(
                sa.select(sa.func.count(), sa.func.max(_r.updated_at))).one()
        return f"{count}:{newest}"

    # --- parts ----------------------------------------------------------------------------

    def add_part(self, report_id: str, part: ReportPart) -> None:
        """Insert a part at `part.position`, shifting later parts down."""
        with self.catalog.writing() as conn:
            _touch(conn, report_id)
            conn.execute(sa.update(report_parts)
                         .where(_p.report_id == report_id, _p.position >= part.position)
                         .values(position=_p.position + 1))
            _insert_part(conn, report_id, part, now_iso())

    def delete_part(self, report_id: str, part_id: str) -> None:
        """Delete a part with its versions; later parts move up."""
        with self.catalog.writing() as conn:
            _touch(conn, report_id)
            position = conn.execute(sa.select(_p.position).where(
                _p.part_id == part_id, _p.report_id == report_id)).scalar()
            if position is None:
                raise NotFoundError(f"report {report_id!r} has no part {part_id!r}")
            conn.execute(sa.delete(report_parts).where(_p.part_id == part_id))
            conn.execute(sa.update(report_parts)
                         .where(_p.report_id == report_id, _p.position > position)
                         .values(position=_p.position - 1))

    def reorder(self, report_id: str, part_ids: list[str]) -> None:
        """Give the parts the order of `part_ids` (which must be exactly the report's parts)."""
        with self.catalog.writing() as conn:
            _touch(conn, report_id)
            for position, part_id in enumerate(part_ids, 1):
                conn.execute(sa.update(report_parts)
                             .where(_p.part_id == part_id, _p.report_id == report_id)
                             .values(position=position))

    def update_part(self, report_id: str, part_id: str, header: str, query: str,
                    mood: str | None) -> None:
        """Change a part's outline entry (not its generated text)."""
        with self.catalog.writing() as conn:
            _touch(conn, report_id)
            conn.execute(sa.update(report_parts)
                         .where(_p.part_id == part_id, _p.report_id == report_id)
                         .values(header=header, query=query, mood=mood, updated_at=now_iso()))

    def save_version(self, report_id: str, part_id: str, version: PartVersion,
                     mood: str | None) -> None:
        """Make `version` the part's current one (earlier versions stay as history)."""
        stamp = now_iso()
        sources = {s.id: {"part_id": part_id, "version": version.version, "chunk_id": s.id,
                          "doc_id": s.documentId, "source": s.model_dump_json()}
                   for s in reversed(version.sources) if s.id}  # the first of an id wins
        with self.catalog.writing() as conn:
            _touch(conn, report_id)
            conn.execute(sa.insert(report_part_versions).values(
                part_id=part_id, version=version.version, content=version.model_dump_json(),
                created_at=stamp))
            if sources:
                conn.execute(dialect_insert(conn, report_sources).on_conflict_do_nothing(),
                             list(sources.values()))
            conn.execute(sa.update(report_parts).where(_p.part_id == part_id).values(
                version=version.version, header=version.header, mood=mood, updated_at=stamp))

    def source_citing(self, chunk_id: str) -> tuple[str, Source] | None:
        """The newest stored passage of this chunk id in any report: (report_id, source)."""
        statement = (sa.select(_p.report_id, _s.source)
                     .join(report_parts, _p.part_id == _s.part_id).where(_s.chunk_id == chunk_id)
                     .order_by(_p.updated_at.desc(), _s.version.desc()).limit(1))
        with self.catalog.reading() as conn:
            row = conn.execute(statement).first()
        return (row[0], Source.model_validate_json(row[1])) if row else None


def _insert_part(conn: sa.Connection, report_id: str, part: ReportPart, stamp: str) -> None:
    conn.execute(sa.insert(report_parts).values(
        part_id=part.part_id, report_id=report_id, position=part.position, header=part.header,
        query=part.query, kind=part.kind, keywords=json.dumps(part.keywords), mood=part.mood,
        version=0, created_at=stamp, updated_at=stamp))


def _touch(conn: sa.Connection, report_id: str) -> None:
    """Mark the report changed (locking its row); NotFoundError when it does not exist."""
    done = conn.execute(sa.update(reports).where(_r.report_id == report_id)
                        .values(updated_at=now_iso()))
    if done.rowcount == 0:
        raise _unknown(report_id)


def _unknown(report_id: str) -> NotFoundError:
    return NotFoundError(f"no report {report_id!r} (see `ragbench report list`)")


def assemble_report(row: Any, version_rows: Iterable[Any], part_rows: Iterable[Any]) -> Report:
    """A `Report` from its stored rows: the `reports` row, every (part_id, content) of its part
    versions in version order, and its `report_parts` rows in position order (mappings).
    """
    versions: dict[str, list[PartVersion]] = {}
    for part_id, content in version_rows:
        versions.setdefault(part_id, []).append(PartVersion.model_validate_json(content))
    parts = []
    for p in part_rows:
        mine = versions.get(p["part_id"], [])
        current = next((v for v in mine if v.version == p["version"]), None)
        parts.append(ReportPart(
            part_id=p["part_id"], position=p["position"], header=p["header"],
            query=p["query"], kind=p["kind"], keywords=json.loads(p["keywords"]),
            mood=p["mood"], current=current,
            history=[v for v in mine if v.version != p["version"]]))
    return Report(report_id=row["report_id"], title=row["title"], template=row["template"],
                  brief=ReportBrief.model_validate_json(row["brief"]),
                  lenses=json.loads(row["lenses"]), parts=parts,
                  created_at=row["created_at"], updated_at=row["updated_at"])
