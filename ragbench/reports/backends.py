"""The report store of a workspace's backend: the one the catalog's backend implies."""

from __future__ import annotations

from ragbench.reports.store import ReportStore
from ragbench.store.catalog import Catalog


def open_reports(catalog: Catalog) -> ReportStore:
    """`PgReportStore` for a PostgreSQL catalog, else the SQLite `ReportStore` (the PostgreSQL
    one loads only when used, with SQLAlchemy).
    """
    if getattr(catalog, "backend", "embedded") == "postgres":
        from ragbench.reports.pgstore import PgReportStore

        return PgReportStore(catalog)  # type: ignore[arg-type]
    return ReportStore(catalog)
