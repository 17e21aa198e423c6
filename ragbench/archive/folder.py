"""The browsable archive (specs/004 Phase 2): originals plus Markdown views, one folder per thread.

Layout under `<workspace>/archive/` (the *archive root*)::

    <root_doc_id>/
        email.eml            the original (email.msg for Outlook; a non-email document keeps
                             its own, sanitised name)
        email.eml.md         the Markdown view (`<name>.md` for other documents)
        metadata.json        ids, titles and the links of the document and its attachments:
                             specs/004's keys (doc_id, subject, participants,
                             email_browse_uri / email_download_uri for an e-mail, the
                             attachments map: archived name -> entry with its browse_uri
                             and download_uri) plus ragbench's (source_id, status, ...)
        attachments/
            report.pdf       every attachment (recursively, flattened) ...
            report.pdf.md    ... with its `.md` companion (none when it is Markdown already)

Every document of a thread (the top-level file and all its attachments) records in the catalog
`archive_path` (`archive/<root_doc_id>`), `archive_browse_uri` (its Markdown view) and
`archive_download_uri` (its original). URIs are posix paths `archive/<doc_id>/...` whatever
folder holds the archive: the `archive/` prefix names the archive (as specs/004 resolves
`archive_dir / uri.replace("archive/", "", 1)`), so a workspace, or an archive moved out of it
with the `archive_dir` setting, can be moved without rewriting the catalog; `Archive.path_of`
turns a URI back into a file, confined to the archive root.

An archive folder elsewhere than `<workspace>/archive` (`archive_dir`) may hold other files or
be within reach of another workspace, so it is *guarded*: `Archive.claim` writes a marker
(`MARKER`) naming the owning workspace and refuses a folder another workspace claimed, or one
holding entries this workspace's catalog does not know (another archive's), with an
`ArchiveOwnerError`; and sweeping, removing and clearing touch only what this archive wrote:
folders named by a document id holding that id's `metadata.json`, and its own temporary
folders. The default archive is the workspace's own folder: no marker is written there (a
workspace moves as one folder), and a crash leftover of any name is swept.

Safe by construction (the primitives are `ragbench.archive.paths`): file names are sanitised
(`archive_safe_name`), every path is resolved and must stay under the archive root
(`confined`), files are created exclusively with mode 0o600 and folders with 0o700, never
following symlinks. What an entry holds and how it is written is `ragbench.archive.entry`.

Never half-stored: an entry is written completely into a temporary folder, then swapped in by
renames (`Archive.publishing`); if the caller's catalog transaction fails, the new folder is
removed and the previous one, if any, restored. Folders left by a crash (temporary, replaced,
or of documents the catalog does not have) are removed by `Archive.sweep`.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from ragbench.archive.entry import ArchiveItem, build_entry
from ragbench.archive.paths import (
    ARCHIVE_DIR,
    DOC_ID,
    check_doc_id,
    confined,
    discard,
    entry_uri,
    write_new,
)
from ragbench.errors import (  # noqa: F401
    ArchiveError,
    ArchiveOwnerError,
    ArchivePathError,
    NotFoundError,
)

MARKER = ".ragbench-archive.json"
"""The file in a guarded archive folder naming the workspace that owns it."""

_TEMP_PREFIXES = (".tmp-", ".old-")
_TEMP_NAME = re.compile(r"^\.(tmp|old)-[A-Za-z0-9_-]{1,64}-[0-9a-f]{8}$")
"""A temporary or replaced entry folder exactly as `Archive.publishing` names it."""


class Published:
    """An entry swapped in before its documents' catalog commit (`Archive.publish`)."""

    def __init__(self, target: Path | None, old: Path | None) -> None:
        self.target = target
        self.old = old

    def keep(self) -> None:
        """The commit succeeded: the replaced entry, if any, goes."""
        if self.old is not None:
            discard(self.old)
            self.old = None

    def undo(self) -> None:
        """The commit failed: the new entry goes and the replaced one, if any, comes back."""
        if self.target is None:
            return
        discard(self.target)
        if self.old is not None:
            os.rename(self.old, self.target)
        self.target = self.old = None


class Archive:
    """The archive root of one workspace.

    `guarded` (an `archive_dir` other than `<workspace>/archive`, see the module docstring):
    `owner` is the workspace whose marker the folder carries, and maintenance removes only
    entries this archive wrote.
    """

    def __init__(self, root: str | Path, owner: Path | None = None,
                 guarded: bool = False) -> None:
        self.root = Path(root)
        self.owner = owner
        self.guarded = guarded
        self.stored_original: Callable[[str], bytes | None] | None = None
        """An original by its content hash from a store every host shares (PostgreSQL's
        `PgOriginals.get`), for entries of documents whose original this host does not keep
        under `files/` (another host ingested them); None: only the local files.
        """

    # --- ownership -------------------------------------------------------------------------

    def claim(self, known_docs: set[str]) -> None:
        """Check that this folder is the owner's archive and, when guarded, mark it so.

        Refused with `ArchiveOwnerError`: a folder whose marker names another workspace (also
        the default folder, if another workspace's `archive_dir` claimed it), an unreadable
        marker, and a guarded folder without a marker holding entries that are not documents
        of `known_docs` (another archive's). An unmarked guarded folder holding no entries, or
        only this workspace's (an archive moved there), gets the marker.
        """
        if self.owner is None:
            return
        owner = str(self.owner.resolve())
        marker = self.root / MARKER
        if marker.is_file() or marker.is_symlink():
            try:
                named = json.loads(marker.read_text(encoding="utf-8")).get("workspace")
            except (OSError, ValueError, AttributeError) as e:
                raise ArchiveOwnerError(
                    f"the archive folder {self.root} has a marker {MARKER} that cannot be read "
                    f"({e}); if no other workspace uses this folder, delete the marker") from e
            if named != owner:
                raise ArchiveOwnerError(
                    f"the archive folder {self.root} belongs to the workspace {named} (see its "
                    f"{MARKER}); set archive_dir to a folder of this workspace's own, or, if "
                    f"that workspace is gone or was moved to {owner}, delete the marker")
            return
        if not self.guarded:
            return
        foreign = [e for e in self._entries_written() if e not in known_docs]
        if foreign:
            raise ArchiveOwnerError(
                f"the archive folder {self.root} holds {len(foreign)} archive entries of "
                f"documents this workspace does not have (e.g. {foreign[0]}) and no {MARKER}: "
                "it is another workspace's archive; set archive_dir to a folder of its own")
        try:
            self.ensure_root()
            data = {"ragbench_archive": 1, "workspace": owner,
                    "claimed_at": datetime.now(UTC).isoformat(timespec="seconds")}
            write_new(marker, json.dumps(data, indent=2).encode("utf-8"))
        except FileExistsError as e:  # another process claimed it just now: check again
            raise ArchiveOwnerError(f"the archive folder {self.root} was claimed while "
                                    "opening; open the workspace again") from e
        except OSError as e:
            raise ArchiveError(f"cannot mark the archive folder {self.root}: {e}") from e

    def _written(self, path: Path) -> bool:
        """True when `path` is an entry folder this archive wrote: named by a document id,
        not a symlink, holding a `metadata.json` with that `doc_id`.
        """
        if not DOC_ID.match(path.name) or path.is_symlink() or not path.is_dir():
            return False
        meta = path / "metadata.json"
        try:
            if meta.is_symlink() or not meta.is_file():
                return False
            return bool(json.loads(meta.read_bytes()).get("doc_id") == path.name)
        except (OSError, ValueError, AttributeError):
            return False

    def _entries_written(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if self._written(p))

    def _mine(self, path: Path) -> bool:
        """Whether maintenance may remove `path`: anything in the default archive; in a
        guarded one only entries it wrote and its own temporary folders.
        """
        if not self.guarded:
            return path.name != MARKER
        if _TEMP_NAME.match(path.name):
            return path.is_dir() and not path.is_symlink()
        return self._written(path)

    def ensure_root(self) -> Path:
        """Create the archive root (0o700) and return it resolved."""
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.root.chmod(0o700)
        return self.root.resolve()

    # --- URIs ------------------------------------------------------------------------------

    def uri(self, doc_id: str, rel: str) -> str:
        """The workspace-relative URI of `rel` inside the entry of `doc_id`."""
        return entry_uri(doc_id, rel)

    def path_of(self, uri: str) -> Path:
        """The file an archive URI names, confined to the archive root.

        Raises `ArchivePathError` for URIs outside the archive (`archive/../x`, absolute...).
        """
        posix = PurePosixPath(uri or "")
        if posix.is_absolute() or not posix.parts or posix.parts[0] != ARCHIVE_DIR:
            raise ArchivePathError(f"not an archive URI: {uri!r} (expected {ARCHIVE_DIR}/...)")
        return confined(self.root, *posix.parts[1:])

    # --- writing ---------------------------------------------------------------------------

    @contextmanager
    def publishing(self, items: Sequence[ArchiveItem]) -> Iterator[None]:
        """Write the entry of `items` (root document first) and swap it in; undo on error.

        Use around the catalog transaction that stores the records: the records' archive
        fields are set before the body runs; if it raises, the new entry is removed and the
        previous one restored, so no entry exists for documents the catalog does not have.
        """
        published = self.publish(items)
        try:
            yield
        except BaseException:
            published.undo()
            raise
        published.keep()

    def publish(self, items: Sequence[ArchiveItem], base: Path | None = None) -> Published:
        """Write the entry of `items` (root document first) and swap it in now; the caller
        commits the records, then calls `keep` on the result, or `undo` if the commit failed
        (what `publishing` does around one transaction; a group of files stored in one
        transaction holds one `Published` per file). `base` is `ready_root()`, when the
        caller publishes many entries at once.
        """
        if not items:
            return Published(None, None)
        root_id = check_doc_id(items[0].record.doc_id)
        base = base or self.ready_root()
        token = secrets.token_hex(4)
        # the id is checked above, so these names cannot leave `base`; they are not resolved,
        # so a symlink planted at `target` is moved away, never followed
        tmp, target, old = (base / f".tmp-{root_id}-{token}", base / root_id,
                            base / f".old-{root_id}-{token}")
        try:
            tmp.mkdir(mode=0o700)
            tmp.chmod(0o700)
            build_entry(items, tmp)
        except ArchivePathError:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        except OSError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise ArchiveError(f"cannot write the archive of {root_id}: {e}") from e
        had_old = os.path.lexists(target)
        if had_old and not self._mine(target):
            shutil.rmtree(tmp, ignore_errors=True)
            raise ArchiveError(f"cannot write the archive of {root_id}: {target} exists and "
                               "is not an entry of this archive (left as it is)")
        try:
            if had_old:
                os.rename(target, old)
            os.rename(tmp, target)
        except OSError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            if had_old and not target.exists() and old.exists():
                os.rename(old, target)
            raise ArchiveError(f"cannot swap in the archive of {root_id}: {e}") from e
        return Published(target, old if had_old else None)

    def ready_root(self) -> Path:
        """The archive root, created and resolved (`ArchiveError` when it cannot be)."""
        try:  # a read-only or foreign archive/ is this file's clear error, not a crash
            return self.ensure_root()
        except OSError as e:
            raise ArchiveError(f"cannot write the archive at {self.root}: {e}") from e

    # --- maintenance -----------------------------------------------------------------------

    def remove(self, doc_ids: Sequence[str]) -> None:
        """Delete the entries of these (root) documents; unknown or child ids are ignored."""
        if not self.root.exists():
            return
        for doc_id in doc_ids:
            if DOC_ID.match(doc_id or "") and self._mine(self.root / doc_id):
                discard(self.root / doc_id)

    def entries(self) -> list[str]:
        """Names of the entry folders (root document ids); in a guarded archive only those
        it wrote (other files in the folder are not entries).
        """
        if self.guarded:
            return self._entries_written()
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir()
                      if not p.name.startswith(_TEMP_PREFIXES) and p.name != MARKER)

    def sweep(self, known_roots: set[str], min_age: float = 0.0) -> list[str]:
        """Remove crash leftovers: temporary/replaced folders and entries of unknown documents
        (in a guarded archive only those it wrote, see `_mine`).

        Only folders untouched for `min_age` seconds go, so a workspace opened while another
        process is between writing an entry and committing its documents keeps that entry.
        """
        if not self.root.is_dir():
            return []
        removed = []
        now = time.time()
        for path in self.root.iterdir():
            try:
                if now - path.lstat().st_mtime < min_age:
                    continue
            except OSError:
                continue
            if ((path.name.startswith(_TEMP_PREFIXES) or path.name not in known_roots)
                    and self._mine(path)):
                discard(path)
                removed.append(path.name)
        return sorted(removed)

    def clear(self) -> None:
        """Remove the whole archive: the folder, or, guarded, every entry and temporary
        folder it wrote (other files and the marker stay: the folder is still this
        workspace's).
        """
        if not self.guarded:
            shutil.rmtree(self.root, ignore_errors=True)
            return
        if self.root.is_dir():
            for path in self.root.iterdir():
                if self._mine(path):
                    discard(path)

    def read_text(self, uri: str) -> str:
        """The text of an archive file (a Markdown view), confined to the archive."""
        return self.read_bytes(uri).decode("utf-8", errors="replace")

    def read_bytes(self, uri: str) -> bytes:
        """The bytes of an archive file (an original), confined to the archive.

        A URI that names nothing, or a folder, raises `NotFoundError` naming the URI (it is
        relative to the workspace, so the message shows no server path).
        """
        path = self.path_of(uri)
        try:
            return path.read_bytes()
        except (FileNotFoundError, NotADirectoryError) as e:
            raise NotFoundError(f"no file {uri!r} in the archive") from e
        except IsADirectoryError as e:
            raise NotFoundError(f"{uri!r} is a folder of the archive, not a file") from e
        except OSError as e:
            raise ArchiveError(f"cannot read {uri}: {e.strerror or e}") from e

    def exists(self, uri: str | None) -> bool:
        """True when `uri` names an existing regular file inside the archive."""
        if not uri:
            return False
        try:
            return self.path_of(uri).is_file()
        except ArchivePathError:
            return False
