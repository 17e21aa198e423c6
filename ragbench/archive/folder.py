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

Safe by construction: file names are sanitised (`archive_safe_name`), every path is resolved and
must stay under the archive root (`confined`), files are created exclusively with mode 0o600
and folders with 0o700, never following symlinks.

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
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from ragbench.archive.markdown import (
    MARKDOWN_EXTENSIONS,
    AttachmentLink,
    FileInfo,
    Message,
    render_email,
    render_preview,
    split_thread,
    strip_header_block,
)
from ragbench.errors import (  # noqa: F401
    ArchiveError,
    ArchiveOwnerError,
    ArchivePathError,
    NotFoundError,
)
from ragbench.models import Block, DocumentRecord

ARCHIVE_DIR = "archive"
"""Folder of the archive inside the workspace (the default `archive_dir`); URIs start with it."""

MARKER = ".ragbench-archive.json"
"""The file in a guarded archive folder naming the workspace that owns it."""

RESERVED_NAMES = frozenset({"metadata.json", "attachments", "email.eml", "email.eml.md",
                            "email.msg", "email.msg.md"})
EMAIL_FORMATS = frozenset({"eml", "msg"})
"""Formats archived as e-mails: `email.<format>` beside its `email.<format>.md` view."""
MAX_NAME_BYTES = 120
"""Longest sanitised file name (UTF-8 bytes), leaving room for `.md` and `~N` under 255."""

_DOC_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_UNSAFE = re.compile(r"[^\w.\-+=@,() ]", re.UNICODE)
_TEMP_PREFIXES = (".tmp-", ".old-")
_TEMP_NAME = re.compile(r"^\.(tmp|old)-[A-Za-z0-9_-]{1,64}-[0-9a-f]{8}$")
"""A temporary or replaced entry folder exactly as `Archive.publishing` names it."""


def archive_root(workspace: Path, setting: str = "") -> tuple[Path, bool]:
    """(the archive folder, whether it is guarded) for the `archive_dir` setting: empty =
    `<workspace>/archive` (not guarded); else the path (`~` expanded, relative to the
    workspace), guarded unless it is that same default folder. The workspace itself, or a
    folder holding it, is refused (`ArchiveOwnerError`): its sweep would look at the workspace.
    """
    default = workspace / ARCHIVE_DIR
    if not setting.strip():
        return default, False
    path = Path(setting.strip()).expanduser()
    path = path if path.is_absolute() else workspace / path
    resolved, home = path.resolve(), workspace.resolve()
    if home.is_relative_to(resolved):
        raise ArchiveOwnerError(
            f"archive_dir {setting!r} is the workspace or a folder holding it ({resolved}); "
            "choose a folder of its own, e.g. one next to the workspace")
    return path, resolved != default.resolve()




def archive_safe_name(name: str, fallback: str = "file") -> str:
    r"""A safe single file name for `name` (an attachment name or a source path).

    Only the last path component is kept (both `/` and `\\` separate), Unicode is NFC-normalised,
    control characters (NUL included) are dropped, anything but letters, digits and
    `. - _ + = @ , ( )` and spaces becomes `_`, leading dots and spaces are removed (no hidden
    files, no `..`), and the result is cut to `MAX_NAME_BYTES` keeping the extension.
    An empty result becomes `fallback`.
    """
    text = unicodedata.normalize("NFC", str(name))
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C")
    text = text.replace("\\", "/").rstrip("/ ").split("/")[-1]
    text = _UNSAFE.sub("_", text)
    text = re.sub(r"\s+", " ", text).strip().lstrip(". ").rstrip(". ")
    if not text or set(text) <= {"_", "."}:
        text = fallback
    return _truncate(text, MAX_NAME_BYTES)


def _truncate(name: str, limit: int) -> str:
    """`name` cut to `limit` UTF-8 bytes, keeping a short extension."""
    if len(name.encode("utf-8")) <= limit:
        return name
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem or len(ext) > 16:
        stem, ext = name, ""
    suffix = f".{ext}" if ext else ""
    budget = limit - len(suffix.encode("utf-8"))
    cut = stem.encode("utf-8")[:budget].decode("utf-8", errors="ignore").rstrip(". ")
    return (cut or "file") + suffix


def confined(root: Path, *parts: str) -> Path:
    """`root / parts`, resolved; raises `ArchivePathError` unless it stays strictly inside root."""
    base = root.resolve()
    for part in parts:
        if "\x00" in part or PurePosixPath(part).is_absolute() or Path(part).is_absolute():
            raise ArchivePathError(f"unsafe archive path component {part!r}")
    target = base.joinpath(*parts).resolve()
    if target == base or not target.is_relative_to(base):
        raise ArchivePathError(f"path {'/'.join(parts)!r} leads outside the archive")
    return target


URI_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
"""The scheme of an absolute link (`https:`, `mailto:`): such a link is not into the archive."""


def normalize_uri(path: PurePosixPath) -> str | None:
    """`path` as an archive URI with `.` and `..` resolved; None when it climbs above the root."""
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts)


def _check_doc_id(doc_id: str) -> str:
    if not _DOC_ID.match(doc_id or ""):
        raise ArchivePathError(f"invalid document id for the archive: {doc_id!r}")
    return doc_id


def _mkdir(path: Path) -> None:
    path.mkdir(mode=0o700, exist_ok=True)
    path.chmod(0o700)


def _write(path: Path, data: bytes) -> None:
    """Create `path` (it must not exist; never through a symlink) with owner-only permissions."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    os.chmod(path, 0o600)


def _write_original(path: Path, data: bytes, source: Path | None) -> None:
    """Create `path` holding `data`: a hard link to `source` when that file holds exactly
    these bytes (one copy on disk for the workspace's original and the archive's), else a
    written copy (no source, other bytes, or a filesystem without hard links).
    """
    if source is not None:
        try:
            if not source.is_symlink() and source.read_bytes() == data:
                os.link(source, path)
                os.chmod(path, 0o600)
                return
        except OSError:
            path.unlink(missing_ok=True)
    _write(path, data)


@dataclass
class ArchiveItem:
    """One document to archive: its catalog record, text, parsed blocks and original bytes.

    `blocks` give the page/slide/sheet markers (None: plain paragraphs); `data` None means the
    original is not available (the view is still written, without a download link). `source`
    is a file that may hold the same bytes (the workspace's stored original), hard-linked
    instead of written when it does.
    """

    record: DocumentRecord
    text: str
    blocks: Sequence[Block] | None = None
    data: bytes | None = None
    parse_seconds: float | None = None
    source: Path | None = None


@dataclass
class _Placed:
    item: ArchiveItem
    original: str | None  # path of the original inside the entry folder
    view: str  # path of the Markdown view inside the entry folder


def _is_markdown(name: str) -> bool:
    return Path(name).suffix.lower() in MARKDOWN_EXTENSIONS


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
            _write(marker, json.dumps(data, indent=2).encode("utf-8"))
        except FileExistsError as e:  # another process claimed it just now: check again
            raise ArchiveOwnerError(f"the archive folder {self.root} was claimed while "
                                    "opening; open the workspace again") from e
        except OSError as e:
            raise ArchiveError(f"cannot mark the archive folder {self.root}: {e}") from e

    def _written(self, path: Path) -> bool:
        """True when `path` is an entry folder this archive wrote: named by a document id,
        not a symlink, holding a `metadata.json` with that `doc_id`.
        """
        if not _DOC_ID.match(path.name) or path.is_symlink() or not path.is_dir():
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
        return f"{ARCHIVE_DIR}/{doc_id}/{rel}"

    def path_of(self, uri: str) -> Path:
        """The file an archive URI names, confined to the archive root.

        Raises `ArchivePathError` for URIs outside the archive (`archive/../x`, absolute...).
        """
        posix = PurePosixPath(uri or "")
        if posix.is_absolute() or not posix.parts or posix.parts[0] != ARCHIVE_DIR:
            raise ArchivePathError(f"not an archive URI: {uri!r} (expected {ARCHIVE_DIR}/...)")
        return confined(self.root, *posix.parts[1:])

    # --- writing ---------------------------------------------------------------------------

    def _place(self, items: Sequence[ArchiveItem]) -> list[_Placed]:
        """Decide every file name of an entry (sanitised, unique case-insensitively)."""
        root = items[0]
        taken = {n.lower() for n in RESERVED_NAMES}
        placed: list[_Placed] = []
        if root.record.format in EMAIL_FORMATS:
            original = f"email.{root.record.format}"
            placed.append(_Placed(root, original if root.data is not None else None,
                                  f"{original}.md"))
        else:
            name = self._unique(archive_safe_name(root.record.file_name, "document"), taken)
            markdown = _is_markdown(name) and root.data is not None
            placed.append(_Placed(root, name if root.data is not None else None,
                                  name if markdown else f"{name}.md"))
        for item in items[1:]:
            name = self._unique(archive_safe_name(item.record.file_name, "attachment"), taken)
            markdown = _is_markdown(name) and item.data is not None
            placed.append(_Placed(item, f"attachments/{name}" if item.data is not None else None,
                                  f"attachments/{name}" if markdown else f"attachments/{name}.md"))
        return placed

    @staticmethod
    def _unique(name: str, taken: set[str]) -> str:
        """`name`, or `stem~N.ext`, not yet in `taken` (neither it nor its `.md` companion)."""
        stem, dot, ext = name.rpartition(".")
        if not dot or not stem:
            stem, ext = name, ""
        candidate, n = name, 1
        while candidate.lower() in taken or f"{candidate}.md".lower() in taken:
            n += 1
            candidate = _truncate(stem, MAX_NAME_BYTES - 8) + f"~{n}" + (f".{ext}" if ext else "")
        taken.update({candidate.lower(), f"{candidate}.md".lower()})
        return candidate

    def _build(self, items: Sequence[ArchiveItem], folder: Path) -> None:
        """Write a whole entry into `folder` and set the archive fields of every record."""
        root_id = _check_doc_id(items[0].record.doc_id)
        placed = self._place(items)
        by_doc = {p.item.record.doc_id: p for p in placed}
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        if len(placed) > 1:
            _mkdir(folder / "attachments")
        for p in placed:
            record = p.item.record
            record.archive_path = f"{ARCHIVE_DIR}/{root_id}"
            record.archive_browse_uri = self.uri(root_id, p.view)
            record.archive_download_uri = self.uri(root_id, p.original) if p.original else None
            if p.original is not None and p.item.data is not None:
                _write_original(confined(folder, *p.original.split("/")), p.item.data,
                                p.item.source)
            if p.view != p.original:
                text = self._markdown(p, placed, stamp)
                _write(confined(folder, *p.view.split("/")), text.encode("utf-8"))
        meta = self._metadata(placed, by_doc, stamp)
        _write(confined(folder, "metadata.json"),
               json.dumps(meta, indent=2, ensure_ascii=False).encode("utf-8"))

    def _markdown(self, p: _Placed, placed: Sequence[_Placed], stamp: str) -> str:
        record = p.item.record
        here = PurePosixPath(p.view).parent

        def rel(target: str | None) -> str | None:
            return None if target is None else os.path.relpath(target, here).replace(os.sep, "/")

        meta = record.metadata
        info = FileInfo(
            name=record.file_name, format=record.format, size=record.size_bytes,
            title=record.title, pages=_int(meta.get("pages")), slides=_int(meta.get("slides")),
            sheets=_count(meta.get("sheets")),
            extracted=stamp, parse_seconds=p.item.parse_seconds, download=rel(p.original),
            error=record.error if record.status == "failed" else None,
        )
        if record.format not in EMAIL_FORMATS or record.status == "failed":
            return render_preview(info, p.item.text, p.item.blocks)
        links = [
            AttachmentLink(c.item.record.file_name, rel(c.original), rel(c.view),
                           f"not extracted: {c.item.record.error}"
                           if c.item.record.status == "failed" else "")
            for c in placed if c.item.record.parent_doc_id == record.doc_id
        ]
        top = Message(sender=_str(meta.get("from")), to=_str(meta.get("to")),
                      cc=_str(meta.get("cc")), date=_str(meta.get("date")),
                      subject=_str(meta.get("subject")),
                      body=strip_header_block(p.item.text), attachments=links)
        subject = _str(meta.get("subject")) or record.title or record.file_name
        return render_email(subject, split_thread(top), rel(p.original), info)

    def _metadata(
        self, placed: Sequence[_Placed], by_doc: dict[str, _Placed], stamp: str
    ) -> dict[str, Any]:
        def entry(p: _Placed) -> dict[str, Any]:
            r = p.item.record
            return {
                "doc_id": r.doc_id, "source_id": r.source_id, "file_name": r.file_name,
                "title": r.title, "format": r.format, "size_bytes": r.size_bytes,
                "file_hash": r.file_hash, "status": r.status, "error": r.error,
                "parent_doc_id": r.parent_doc_id, "depth": r.depth, "path": r.path,
                "browse_uri": r.archive_browse_uri, "download_uri": r.archive_download_uri,
            }

        root = placed[0]
        out = entry(root)
        out.update({"lens": root.item.record.lens, "generated_at": stamp,
                    "archive_path": root.item.record.archive_path})
        record = root.item.record
        meta = record.metadata
        out["subject"] = _str(meta.get("subject")) or record.title or record.file_name
        out["participants"] = participants(meta)
        if record.format in EMAIL_FORMATS:
            out["email"] = {k: meta.get(k) for k in ("subject", "from", "to", "cc", "date",
                                                     "message_id") if meta.get(k)}
            out["email_browse_uri"] = record.archive_browse_uri
            out["email_download_uri"] = record.archive_download_uri
        # specs/004's attachment map: archived file name -> its entry (with its URIs)
        out["attachments"] = {PurePosixPath(p.original or p.view).name: entry(p)
                              for p in placed[1:]}
        return out

    @contextmanager
    def publishing(self, items: Sequence[ArchiveItem]) -> Iterator[None]:
        """Write the entry of `items` (root document first) and swap it in; undo on error.

        Use around the catalog transaction that stores the records: the records' archive
        fields are set before the body runs; if it raises, the new entry is removed and the
        previous one restored, so no entry exists for documents the catalog does not have.
        """
        if not items:
            yield
            return
        root_id = _check_doc_id(items[0].record.doc_id)
        try:  # a read-only or foreign archive/ is this file's clear error, not a crash
            base = self.ensure_root()
        except OSError as e:
            raise ArchiveError(f"cannot write the archive at {self.root}: {e}") from e
        token = secrets.token_hex(4)
        # the id is checked above, so these names cannot leave `base`; they are not resolved,
        # so a symlink planted at `target` is moved away, never followed
        tmp, target, old = (base / f".tmp-{root_id}-{token}", base / root_id,
                            base / f".old-{root_id}-{token}")
        try:
            tmp.mkdir(mode=0o700)
            tmp.chmod(0o700)
            self._build(items, tmp)
        except ArchivePathError:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        except OSError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise ArchiveError(f"cannot write the archive of {root_id}: {e}") from e
        had_old = target.exists() or target.is_symlink()
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
        try:
            yield
        except BaseException:
            _discard(target)
            if had_old:
                os.rename(old, target)
            raise
        if had_old:
            _discard(old)

    # --- maintenance -----------------------------------------------------------------------

    def remove(self, doc_ids: Sequence[str]) -> None:
        """Delete the entries of these (root) documents; unknown or child ids are ignored."""
        if not self.root.exists():
            return
        for doc_id in doc_ids:
            if _DOC_ID.match(doc_id or "") and self._mine(self.root / doc_id):
                _discard(self.root / doc_id)

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
                _discard(path)
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
                    _discard(path)

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


def participants(meta: dict[str, Any]) -> list[str]:
    """The addresses of an e-mail's From, To and Cc headers, in order, each once (specs/004's
    `participants`); [] for a document that is no e-mail.
    """
    from email.utils import getaddresses

    fields = [_str(meta.get(k)) for k in ("from", "to", "cc") if meta.get(k)]
    out: list[str] = []
    for name, address in getaddresses(fields):
        value = address or name
        if value and value not in out:
            out.append(value)
    return out


def _discard(path: Path) -> None:
    """Remove a folder tree, or a file or symlink (never following it)."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)


def _str(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _count(value: object) -> int | None:
    return len(value) if isinstance(value, list) else None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
