"""Reports in the catalog (revision s0003): reports, ordered parts, part versions, cited passages.

Queries live here rather than in `Catalog`; they run on the catalog's per-thread connection and
its `transaction()` (`BEGIN IMMEDIATE` ... `COMMIT`), so a report change is atomic and sees the
same WAL database as everything else. Part versions are stored whole as JSON
(`PartVersion`); the passages a version could cite are also rows of `report_sources`, indexed
by chunk id, so an old citation resolves without loading every report.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

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
from ragbench.store.catalog_base import now_iso


class ReportStore:
    """Read and write reports through one workspace's catalog."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    # --- reports --------------------------------------------------------------------------

    def create(self, report: Report) -> None:
        """Insert a new report with its (not yet generated) parts."""
        stamp = now_iso()
        with self.catalog.transaction() as tx:
            tx.execute(
                "INSERT INTO reports(report_id, title, template, brief, lenses, created_at, "
                "updated_at) VALUES (?,?,?,?,?,?,?)",
                (report.report_id, report.title, report.template, report.brief.model_dump_json(),
                 json.dumps(report.lenses), stamp, stamp))
            for part in report.parts:
                self._insert_part(tx, report.report_id, part, stamp)

    def update_meta(self, report_id: str, title: str, brief: ReportBrief,
                    lenses: list[str]) -> None:
        """Change a report's title, brief and lenses in scope."""
        with self.catalog.transaction() as tx:
            self._touch(tx, report_id)
            tx.execute("UPDATE reports SET title = ?, brief = ?, lenses = ? WHERE report_id = ?",
                       (title, brief.model_dump_json(), json.dumps(lenses), report_id))

    def delete(self, report_id: str) -> None:
        """Delete a report with its parts, versions and stored passages."""
        with self.catalog.transaction() as tx:
            if tx.execute("DELETE FROM reports WHERE report_id = ?",
                          (report_id,)).rowcount == 0:
                raise NotFoundError(f"no report {report_id!r} (see `ragbench report list`)")

    def get(self, report_id: str) -> Report:
        """A report with every part, its current version and history."""
        conn = self.catalog.conn
        row = conn.execute("SELECT * FROM reports WHERE report_id = ?", (report_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no report {report_id!r} (see `ragbench report list`)")
        version_rows = conn.execute(
            "SELECT v.part_id, v.content FROM report_part_versions v JOIN report_parts p "
            "ON p.part_id = v.part_id WHERE p.report_id = ? ORDER BY v.version",
            (report_id,)).fetchall()
        part_rows = conn.execute(
            "SELECT * FROM report_parts WHERE report_id = ? ORDER BY position",
            (report_id,)).fetchall()
        return assemble_report(row, version_rows, part_rows)

    def summaries(self, limit: int = 200) -> list[ReportSummary]:
        """Reports, most recently changed first."""
        rows = self.catalog.conn.execute(
            "SELECT r.report_id, r.title, r.template, r.updated_at, "
            "(SELECT COUNT(*) FROM report_parts p WHERE p.report_id = r.report_id) AS parts, "
            "(SELECT COUNT(*) FROM report_parts p WHERE p.report_id = r.report_id "
            "AND p.version > 0) AS completed_parts "
            "FROM reports r ORDER BY r.updated_at DESC, r.report_id LIMIT ?", (limit,))
        return [ReportSummary(**dict(r)) for r in rows]

    def fingerprint(self) -> str:
        """Changes whenever a report changes (a cache key for views)."""
        row = self.catalog.conn.execute(
            "SELECT COUNT(*), MAX(updated_at) FROM reports").fetchone()
        return f"{row[0]}:{row[1]}"

    # --- parts ----------------------------------------------------------------------------

    def add_part(self, report_id: str, part: ReportPart) -> None:
        """Insert a part at `part.position`, shifting later parts down."""
        with self.catalog.transaction() as tx:
            self._touch(tx, report_id)
            tx.execute("UPDATE report_parts SET position = position + 1 "
                       "WHERE report_id = ? AND position >= ?", (report_id, part.position))
            self._insert_part(tx, report_id, part, now_iso())

    def delete_part(self, report_id: str, part_id: str) -> None:
        """Delete a part with its versions; later parts move up."""
        with self.catalog.transaction() as tx:
            self._touch(tx, report_id)
            row = tx.execute("SELECT position FROM report_parts WHERE part_id = ? AND "
                             "report_id = ?", (part_id, report_id)).fetchone()
            if row is None:
                raise NotFoundError(f"report {report_id!r} has no part {part_id!r}")
            tx.execute("DELETE FROM report_parts WHERE part_id = ?", (part_id,))
            tx.execute("UPDATE report_parts SET position = position - 1 "
                       "WHERE report_id = ? AND position > ?", (report_id, row["position"]))

    def reorder(self, report_id: str, part_ids: list[str]) -> None:
        """Give the parts the order of `part_ids` (which must be exactly the report's parts)."""
        with self.catalog.transaction() as tx:
            self._touch(tx, report_id)
            for position, part_id in enumerate(part_ids, 1):
                tx.execute("UPDATE report_parts SET position = ? WHERE part_id = ? AND "
                           "report_id = ?", (position, part_id, report_id))

    def update_part(self, report_id: str, part_id: str, header: str, query: str,
                    mood: str | None) -> None:
        """Change a part's outline entry (not its generated text)."""
        with self.catalog.transaction() as tx:
            self._touch(tx, report_id)
            tx.execute("UPDATE report_parts SET header = ?, query = ?, mood = ?, updated_at = ? "
                       "WHERE part_id = ? AND report_id = ?",
                       (header, query, mood, now_iso(), part_id, report_id))

    def save_version(self, report_id: str, part_id: str, version: PartVersion,
                     mood: str | None) -> None:
        """Make `version` the part's current one (earlier versions stay as history)."""
        stamp = now_iso()
        with self.catalog.transaction() as tx:
            self._touch(tx, report_id)
            tx.execute("INSERT INTO report_part_versions(part_id, version, content, created_at) "
                       "VALUES (?,?,?,?)",
                       (part_id, version.version, version.model_dump_json(), stamp))
            tx.executemany(
                "INSERT OR IGNORE INTO report_sources(part_id, version, chunk_id, doc_id, source) "
                "VALUES (?,?,?,?,?)",
                [(part_id, version.version, s.id, s.documentId, s.model_dump_json())
                 for s in version.sources if s.id])
            tx.execute("UPDATE report_parts SET version = ?, header = ?, mood = ?, "
                       "updated_at = ? WHERE part_id = ?",
                       (version.version, version.header, mood, stamp, part_id))

    def source_citing(self, chunk_id: str) -> tuple[str, Source] | None:
        """The newest stored passage of this chunk id in any report: (report_id, source)."""
        row = self.catalog.conn.execute(
            "SELECT p.report_id, s.source FROM report_sources s JOIN report_parts p "
            "ON p.part_id = s.part_id WHERE s.chunk_id = ? ORDER BY p.updated_at DESC, "
            "s.version DESC LIMIT 1", (chunk_id,)).fetchone()
        return (row[0], Source.model_validate_json(row[1])) if row else None

    # --- helpers --------------------------------------------------------------------------

    @staticmethod
    def _insert_part(tx: sqlite3.Connection, report_id: str, part: ReportPart,
                     stamp: str) -> None:
        tx.execute(
            "INSERT INTO report_parts(part_id, report_id, position, header, query, kind, "
            "keywords, mood, version, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,0,?,?)",
            (part.part_id, report_id, part.position, part.header, part.query, part.kind,
             json.dumps(part.keywords), part.mood, stamp, stamp))

    @staticmethod
    def _touch(tx: sqlite3.Connection, report_id: str) -> None:
        """Mark the report changed; NotFoundError when it does not exist."""
        cur = tx.execute("UPDATE reports SET updated_at = ? WHERE report_id = ?",
                         (now_iso(), report_id))
        if cur.rowcount == 0:
            raise NotFoundError(f"no report {report_id!r} (see `ragbench report list`)")


def assemble_report(row: Any, version_rows: Iterable[Any], part_rows: Iterable[Any]) -> Report:
    """A `Report` from its stored rows, the same on SQLite and PostgreSQL: the `reports` row,
    every (part_id, content) of its part versions in version order, and its `report_parts` rows
    in position order (rows read by column name, as sqlite3.Row and SQLAlchemy mappings are).
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
