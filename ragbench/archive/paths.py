"""Safe names and paths of the archive: where the archive lives (`archive_root`), sanitised
file names (`archive_safe_name`), confinement under the archive root (`confined`), archive
URIs (`entry_uri`, `normalize_uri`) and the low-level writes (files created exclusively with
mode 0o600 and folders with 0o700, never through a symlink; hard-linked originals).

The primitives every part of the archive builds on, kept apart from the entry's layout
(`entry`) and the folder's ownership and maintenance (`folder`).
"""

from __future__ import annotations

import os
import re
import shutil
import unicodedata
from pathlib import Path, PurePosixPath

from ragbench.errors import ArchiveOwnerError, ArchivePathError

ARCHIVE_DIR = "archive"
"""Folder of the archive inside the workspace (the default `archive_dir`); URIs start with it."""

RESERVED_NAMES = frozenset({"metadata.json", "attachments", "email.eml", "email.eml.md",
                            "email.msg", "email.msg.md"})
EMAIL_FORMATS = frozenset({"eml", "msg"})
"""Formats archived as e-mails: `email.<format>` beside its `email.<format>.md` view."""
MAX_NAME_BYTES = 120
"""Longest sanitised file name (UTF-8 bytes), leaving room for `.md` and `~N` under 255."""

DOC_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""A document id that may name an entry folder."""
_UNSAFE = re.compile(r"[^\w.\-+=@,() ]", re.UNICODE)


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
    text = _UNSAFE.sub("_", last_component(text))
    text = re.sub(r"\s+", " ", text).strip().lstrip(". ").rstrip(". ")
    if not text or set(text) <= {"_", "."}:
        text = fallback
    return truncate_name(text, MAX_NAME_BYTES)


def last_component(name: str) -> str:
    """The last component of a path written with `/` or a backslash (trailing ones ignored)."""
    return name.replace("\\", "/").rstrip("/ ").split("/")[-1]


def truncate_name(name: str, limit: int) -> str:
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


def confined(root: Path, *parts: str, resolved: bool = False) -> Path:
    """`root / parts`, resolved; raises `ArchivePathError` unless it stays strictly inside root.

    `resolved`: `root` is resolved already (the caller confines many paths to it).
    """
    base = root if resolved else root.resolve()
    for part in parts:
        if "\x00" in part or PurePosixPath(part).is_absolute() or Path(part).is_absolute():
            raise ArchivePathError(f"unsafe archive path component {part!r}")
    target = base.joinpath(*parts).resolve()
    if target == base or not target.is_relative_to(base):
        raise ArchivePathError(f"path {'/'.join(parts)!r} leads outside the archive")
    return target


def within_new(folder: Path, rel: str) -> Path:
    """`folder / rel` for a path `rel` an entry names inside the folder it is being written
    into, checked by its parts alone (`ArchivePathError` for an empty part, `.`, `..`, a
    separator or NUL): that folder was just created by this process with owner-only
    permissions and files in it are created exclusively without following symlinks, so nothing
    in it can lead elsewhere, and no component needs resolving (a path lookup per component
    per file, for every entry an ingest writes).
    """
    parts = rel.split("/")
    for part in parts:
        if part in ("", ".", "..") or "\\" in part or "\x00" in part:
            raise ArchivePathError(f"unsafe archive path component {part!r} in {rel!r}")
    return folder.joinpath(*parts)


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


def entry_uri(doc_id: str, rel: str) -> str:
    """The workspace-relative URI of `rel` inside the entry of `doc_id`."""
    return f"{ARCHIVE_DIR}/{doc_id}/{rel}"


def check_doc_id(doc_id: str) -> str:
    """`doc_id` when it may name an entry folder (`DOC_ID`); else `ArchivePathError`."""
    if not DOC_ID.match(doc_id or ""):
        raise ArchivePathError(f"invalid document id for the archive: {doc_id!r}")
    return doc_id


def make_dir(path: Path) -> None:
    """Create the folder `path` (if missing) with owner-only permissions."""
    path.mkdir(mode=0o700, exist_ok=True)
    path.chmod(0o700)


def write_new(path: Path, data: bytes) -> None:
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


def write_original(path: Path, data: bytes, source: Path | None) -> None:
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
    write_new(path, data)


def discard(path: Path) -> None:
    """Remove a folder tree, or a file or symlink (never following it)."""
    if path.is_symlink() or path.is_file():
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
