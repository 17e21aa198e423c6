"""The workspace is private to its owner: group and other permission bits are removed.

A workspace holds every document's text (`catalog.sqlite`, `chroma/`), the originals
(`files/`), the archive and possibly an API key (`settings.toml`). The archive was already
created 0700/0600; the rest followed the process umask (0755/0644 here: world-readable).
Opening a workspace now takes group/other bits off the workspace folder and the stores in it.
Only bits are removed, never added: a read-only workspace (0555) stays read-only (0500).
A path the process does not own cannot be changed; that is logged, not raised, so a shared
read-only workspace still opens.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

logger = logging.getLogger(__name__)

PRIVATE_ENTRIES = ("catalog.sqlite", "catalog.sqlite-wal", "catalog.sqlite-shm", "files", "chroma",
                   "graph", "settings.toml")


def make_private(path: Path) -> None:
    """Remove group and other permission bits from `path` (if it exists and is not a link)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        return
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        try:
            os.chmod(path, mode & ~0o077)
        except OSError as e:  # not the owner, or a read-only file system
            logger.info("could not make %s private: %s", path, e)


def make_workspace_private(workspace: Path) -> None:
    """The workspace folder and the stores directly in it, private to the owner."""
    make_private(workspace)
    for name in PRIVATE_ENTRIES:
        make_private(workspace / name)
