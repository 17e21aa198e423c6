"""Test utility: writes small, valid Outlook .msg files (no .msg sample ships with the tests).

`build_msg` returns the bytes of an OLE compound file (MS-CFB version 3: 512-byte sectors,
64-byte mini sectors, streams under 4096 bytes in the mini stream) laid out as MS-OXMSG says:
the root `__properties_version1.0` stream (32-byte header: recipient/attachment ids and counts,
then one 16-byte entry per property: tag, flags, value or size), one `__substg1.0_PPPPTTTT`
stream per variable-length property (strings UTF-16LE without terminator, binaries as is),
`__recip_version1.0_#N` and `__attach_version1.0_#N` storages (8-byte header) and the named
property storage `__nameid_version1.0`. Siblings form a balanced tree in CFB name order.
"""

from __future__ import annotations

import struct
from datetime import UTC, datetime

SECTOR, MINI, CUTOFF = 512, 64, 4096
FREE, END, FATSECT, NOSTREAM = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF
STRING, BINARY, INT32, TIME = 0x001F, 0x0102, 0x0003, 0x0040
STRING8 = 0x001E  # 8-bit string in the message's code page: the value given as encoded bytes


def _props(values: list[tuple[int, int, object]], header: bytes, tree: dict) -> None:
    """Add the properties stream (after `header`) and the value streams of `values` to `tree`."""
    entries = b""
    for pid, ptyp, value in values:
        if ptyp in (STRING, STRING8, BINARY):
            raw = value.encode("utf-16-le") if ptyp == STRING else bytes(value)
            tree[f"__substg1.0_{pid:04X}{ptyp:04X}"] = raw
            terminator = {STRING: 2, STRING8: 1}.get(ptyp, 0)
            payload = struct.pack("<II", len(raw) + terminator, 0)
        elif ptyp == TIME:
            ticks = int((value - datetime(1601, 1, 1, tzinfo=UTC)).total_seconds()) * 10**7
            payload = struct.pack("<Q", ticks)
        else:
            payload = struct.pack("<iI", value, 0)
        entries += struct.pack("<HHI", ptyp, pid, 6) + payload  # flags: readable | writable
    tree["__properties_version1.0"] = header + entries


def build_msg(subject: str = "", body: str | None = None, *, sender: tuple[str, str] | None = None,
              to: list[tuple[str, str]] = (), cc: list[tuple[str, str]] = (),
              sent: datetime | None = None, html: bytes | None = None, headers: str | None = None,
              message_id: str | None = None, in_reply_to: str | None = None,
              references: str | None = None,
              attachments: list[tuple[str, bytes | None, str]] = (),
              extra: list[tuple[int, int, object]] = ()) -> bytes:
    """An IPM.Note with these properties; `sender`/`to`/`cc` are (name, address) pairs,
    `attachments` (file name, data, MIME type) triples attached by value (data None: an
    embedded message without its storage), `extra` more (property id, type, value) triples.
    """
    props: list[tuple[int, int, object]] = [(0x001A, STRING, "IPM.Note"), (0x0037, STRING, subject),
                                            (0x340D, INT32, 0x00040000)]  # store: Unicode OK
    for pid, value in ((0x1000, body), (0x0C1A, sender and sender[0]),
                       (0x0C1F, sender and sender[1]), (0x0C1E, sender and "SMTP"),
                       (0x0E04, "; ".join(n for n, _ in to)), (0x0E03, "; ".join(n for n, _ in cc)),
                       (0x007D, headers), (0x1035, message_id), (0x1042, in_reply_to),
                       (0x1039, references)):
        if value:
            props.append((pid, STRING, value))
    if html is not None:
        props.append((0x1013, BINARY, html))
        props.append((0x3FDE, INT32, 65001))  # internet code page: UTF-8
    if sent is not None:
        props += [(0x0039, TIME, sent), (0x0E06, TIME, sent)]
    props += extra
    recipients = [(n, a, 1) for n, a in to] + [(n, a, 2) for n, a in cc]
    root: dict = {"__nameid_version1.0": {"__substg1.0_00020102": b"",
                                          "__substg1.0_00030102": b"",
                                          "__substg1.0_00040102": b""}}
    for i, (name, address, kind) in enumerate(recipients):
        storage: dict = {}
        _props([(0x0C15, INT32, kind), (0x3001, STRING, name), (0x3003, STRING, address),
                (0x39FE, STRING, address), (0x3002, STRING, "SMTP")], bytes(8), storage)
        root[f"__recip_version1.0_#{i:08X}"] = storage
    for i, (name, data, mime) in enumerate(attachments):
        storage = {}
        values = [(0x3705, INT32, 1 if data is not None else 5), (0x3707, STRING, name),
                  (0x3704, STRING, name[:12]), (0x370E, STRING, mime), (0x0E21, INT32, i)]
        _props(values + [(0x3701, BINARY, data)] * (data is not None), bytes(8), storage)
        root[f"__attach_version1.0_#{i:08X}"] = storage
    header = struct.pack("<8x4I8x", len(recipients), len(attachments), len(recipients),
                         len(attachments))
    _props(props, header, root)
    return compound_file(root)


def _key(name: str) -> tuple[int, str]:
    return len(name), name.upper()  # CFB sibling order: shorter names first, then by upper case


def compound_file(root: dict) -> bytes:
    """A CFB v3 file holding `root`: {name: bytes (a stream) or dict (a storage)}."""
    entries: list[list] = [["Root Entry", 5, None, NOSTREAM, NOSTREAM, NOSTREAM]]

    def add(name: str, node: bytes | dict) -> int:
        entries.append([name, 1 if isinstance(node, dict) else 2, node, NOSTREAM, NOSTREAM,
                        NOSTREAM])
        index = len(entries) - 1
        if isinstance(node, dict):
            entries[index][5] = tree(sorted(node.items(), key=lambda kv: _key(kv[0])))
        return index

    def tree(items: list) -> int:  # a balanced binary tree of siblings, its root's index
        if not items:
            return NOSTREAM
        middle = len(items) // 2
        index = add(*items[middle])
        entries[index][3], entries[index][4] = tree(items[:middle]), tree(items[middle + 1:])
        return index

    entries[0][5] = tree(sorted(root.items(), key=lambda kv: _key(kv[0])))
    mini, minifat, big = bytearray(), [], []  # mini stream; mini FAT; big streams
    starts = {}
    for i, (_, kind, node, *_) in enumerate(entries):
        if kind != 2 or not node:
            continue
        if len(node) < CUTOFF:
            first, count = len(mini) // MINI, -(-len(node) // MINI)
            minifat += [first + k + 1 for k in range(count - 1)] + [END]
            mini += node + bytes(count * MINI - len(node))
            starts[i] = first
        else:
            big.append((i, node))
    n_dir = -(-len(entries) // 4)
    n_minifat = -(-len(minifat) // 128)
    n_mini = -(-len(mini) // SECTOR)
    sectors = [n_dir, n_minifat, n_mini] + [-(-len(node) // SECTOR) for _, node in big]
    used = sum(sectors)
    n_fat = 1
    while n_fat * 128 < used + n_fat:
        n_fat += 1
    fat: list[int] = []
    firsts = []
    for count in sectors:
        firsts.append(len(fat) if count else END)
        fat += [len(fat) + k + 1 for k in range(count - 1)] + [END] * bool(count)
    fat += [FATSECT] * n_fat
    fat += [FREE] * (n_fat * 128 - len(fat))
    for (i, _), first in zip(big, firsts[3:], strict=True):
        starts[i] = first
    directory = bytearray()
    for i, (name, kind, node, left, right, child) in enumerate(entries):
        encoded = name.encode("utf-16-le") + b"\0\0"
        size = len(mini) if i == 0 else len(node) if kind == 2 else 0
        start = firsts[2] if i == 0 else starts.get(i, END) if kind == 2 else 0
        directory += struct.pack("<64sHBBIII16sIQQIQ", encoded, len(encoded), kind, 1, left,
                                 right, child, bytes(16), 0, 0, 0, start, size)
    directory += bytes(n_dir * SECTOR - len(directory))
    unused = struct.pack("<64sHBBIII16sIQQIQ", b"", 0, 0, 0, NOSTREAM, NOSTREAM, NOSTREAM,
                         bytes(16), 0, 0, 0, 0, 0)
    directory[len(entries) * 128:] = unused * (n_dir * 4 - len(entries))
    body = bytes(directory)
    body += struct.pack(f"<{n_minifat * 128}I", *minifat, *[FREE] * (n_minifat * 128 - len(minifat)))
    body += bytes(mini) + bytes(n_mini * SECTOR - len(mini))
    for _, node in big:
        body += node + bytes(-len(node) % SECTOR)
    body += struct.pack(f"<{len(fat)}I", *fat)
    difat = list(range(used, used + n_fat)) + [FREE] * (109 - n_fat)
    header = struct.pack("<8s16sHHHHH6sIIIIIIIII109I", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
                         bytes(16), 0x3E, 3, 0xFFFE, 9, 6, bytes(6), 0, n_fat, firsts[0], 0,
                         CUTOFF, firsts[1], n_minifat, END, 0, *difat)
    return header + body
