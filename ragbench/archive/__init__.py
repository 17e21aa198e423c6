"""The browsable archive (specs/004 Phase 2): originals plus Markdown views per thread.

`folder` writes and reads the archive tree safely (`paths`: safe names, confinement and
writes; `entry`: an entry's files and metadata), `markdown` renders the views, `ops` keeps
the catalog's archive links, checks them and (re)builds entries.
"""

from ragbench.archive.entry import ArchiveItem
from ragbench.archive.folder import Archive, ArchiveError, ArchiveOwnerError, ArchivePathError
from ragbench.archive.paths import ARCHIVE_DIR, archive_root

__all__ = ["ARCHIVE_DIR", "Archive", "ArchiveError", "ArchiveItem", "ArchiveOwnerError",
           "ArchivePathError", "archive_root"]
