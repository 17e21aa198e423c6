"""Originals missing from the database, and loading them from this host (`ragbench doctor`).

On PostgreSQL every document's original is kept in the table `originals` (migration 0005),
so any host can re-process it or serve its download. Documents stored before that migration
have theirs only in the `files/` folder of the host that stored them. `check_originals`
counts them, and with `repair` loads each one this host can find (its `files/<doc_id>/`
copy, its archive, the source path: `find_original`, which checks the content hash) into the
table.

Why in `doctor` and not in a migration: a migration runs once, on whichever host connects
first, with a database connection and no workspace folder, while these files are spread over
the folders of every host that ingested; `doctor` runs on each host, repeatedly and safely
(an original is inserted once per content, and only while a document still refers to it),
and it is already the command that repairs the shared stores. Documents whose original no
host has stay counted, with a hint: ingest them again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ragbench.archive import Archive
from ragbench.ingest.versioning import find_original
from ragbench.store.catalog import Catalog

if TYPE_CHECKING:  # SQLAlchemy is imported only where PostgreSQL is used
    from ragbench.store.originals import PgOriginals


class OriginalsCheck(BaseModel):
    """Indexed documents without their original in the database, before and after."""

    missing: int = Field(description="documents whose original was not in the database")
    loaded: int = Field(0, description="of them, loaded from this host's copies")
    missing_after: int = Field(description="documents whose original is still not there")
    hint: str = ""


def check_originals(catalog: Catalog, originals: PgOriginals, archive: Archive,
                    files_dir: Path, repair: bool) -> OriginalsCheck:
    """Count the documents without an original in the database; with `repair`, load those
    this host has (see the module docstring).
    """
    missing = originals.missing()
    loaded = 0
    if repair:
        for doc_id in missing:
            record = catalog.get_document(doc_id)
            if record is None:  # deleted meanwhile
                continue
            data, _where, _problem = find_original(record, archive, files_dir)
            if data is None:
                continue
            with originals.engine.begin() as conn:
                originals.put(conn, data, record.file_name)
                # deleted while it was read: the row would belong to nothing
                loaded += 1 - originals.forget(conn, [record.file_hash])
    after = len(originals.missing()) if loaded else len(missing)
    hint = ""
    if after:
        hint = (f"{after} documents have no original in the database (stored before "
                "migration 0005) and none was found on this host: run `ragbench doctor` on "
                "the host whose workspace folder stored them, or ingest them again")
    return OriginalsCheck(missing=len(missing), loaded=loaded, missing_after=after, hint=hint)


def add_to_report(report: dict[str, Any], check: OriginalsCheck, repair: bool) -> None:
    """Fold `check` into a doctor report: `missing_originals` (and `originals_loaded` after a
    repair); a missing original makes the workspace inconsistent, as drift does.
    """
    report["missing_originals"] = check.missing
    if not check.missing:
        return
    report["consistent"] = False
    if repair:
        report["originals_loaded"] = check.loaded
        report["repaired"] = True
        report["consistent_after"] = (report.get("consistent_after", True)
                                      and not check.missing_after)
    if check.hint:
        report["hint"] = "; ".join(filter(None, [report.get("hint"), check.hint]))


__all__ = ["OriginalsCheck", "add_to_report", "check_originals"]
