"""Alembic environment: runs the steps on the connection `ragbench.store.postgres_base.migrate`
passes in (`config.attributes["connection"]`), inside its transaction and advisory lock.

There is no alembic.ini and no offline (SQL script) mode: ragbench migrates a workspace when it
opens it, with the connection settings the workspace already has. Importing this module outside
Alembic (as `pkgutil.walk_packages` does) runs nothing.
"""

from __future__ import annotations

from alembic import context


def run() -> None:
    """Apply the pending steps, with Alembic's version table in the workspace schema."""
    config = context.config
    context.configure(
        connection=config.attributes["connection"],
        version_table_schema=config.attributes["schema"],
        transactional_ddl=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if hasattr(context, "config"):  # Alembic is running this environment
    run()
