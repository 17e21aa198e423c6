"""Alembic environment of the SQLite catalog: runs the revisions on the connection
`ragbench.store.schema.migrate` passes in (`config.attributes["connection"]`), inside the
`BEGIN IMMEDIATE` transaction it holds, so the whole upgrade commits or rolls back as one.

There is no alembic.ini and no offline (SQL script) mode: ragbench migrates the catalog when it
opens it. `render_as_batch` is on so that an ALTER SQLite cannot do in place is written with
`op.batch_alter_table` (copy and move); such a revision must recreate the triggers and FTS5
tables that read the rebuilt table, which batch mode does not carry over. Importing this module
outside Alembic (as `pkgutil.walk_packages` does) runs nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from alembic import context
from alembic.runtime.migration import MigrationContext, MigrationInfo


def run() -> None:
    """Apply the pending revisions (or stamp), reporting each to `config.attributes["applied"]`."""
    config = context.config
    applied: list[str] = config.attributes.setdefault("applied", [])

    def record(ctx: MigrationContext, step: MigrationInfo, heads: Collection[Any],
               run_args: Mapping[str, Any]) -> None:
        if not step.is_stamp:
            applied.append(str(step.up_revision_id))

    context.configure(
        connection=config.attributes["connection"],
        transactional_ddl=True,
        render_as_batch=True,
        on_version_apply=record,
    )
    with context.begin_transaction():
        context.run_migrations()


if hasattr(context, "config"):  # Alembic is running this environment
    run()
