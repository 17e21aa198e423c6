"""The browsable archive (specs/004 Phase 2): originals plus Markdown views per thread.

`folder` writes and reads the archive tree safely, `markdown` renders the views, `ops` keeps
the catalog's archive links, checks them and (re)builds entries.
"""

from ragbench.archive.folder import (
    ARCHIVE_DIR,
    Archive,
    ArchiveError,
    ArchiveItem,
    ArchiveOwnerError,
    ArchivePathError,
    archive_root,
)

__all__ = ["ARCHIVE_DIR", "Archive", "ArchiveError", "ArchiveItem", "ArchiveOwnerError",
           "ArchivePathError", "archive_root"]
