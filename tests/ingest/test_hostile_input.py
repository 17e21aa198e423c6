"""Hostile input at ingest: attachment names, zip bombs, oversized files, symlinks (issue 16).

Every probe here is made by the test itself: an e-mail whose attachments are named `..`, carry
an encoded NUL or run to 404 characters; a small docx whose one member inflates to far more
than the limit; files above `max_file_mb`; a symlink leaving the ingest root.
"""

from __future__ import annotations

import base64

import pytest

from ragbench.config import Settings
from ragbench.ingest.uploads import safe_file_name
from ragbench.workbench import Workbench


@pytest.mark.unit
@pytest.mark.parametrize("raw, clean", [
    ("..", "file"),
    (".", "file"),
    ("a\x00b.txt", "ab.txt"),
    ("../../etc/passwd", "passwd"),
    ("C:\\x\\report.pdf", "report.pdf"),
    (".incoming.tmp", "incoming.tmp"),
    ("Quarterly report (final) #2.docx", "Quarterly report (final) #2.docx"),  # unchanged
])
def test_safe_file_name(raw, clean):
    assert safe_file_name(raw) == clean


@pytest.mark.unit
def test_safe_file_name_cuts_long_names_keeping_the_extension():
    name = safe_file_name("é" * 400 + ".txt")
    assert name.endswith(".txt") and len(name.encode("utf-8")) <= 200
    assert safe_file_name("x" * 404) == "x" * 200


def _mail_with_attachments(names: list[str]) -> bytes:
    """A multipart e-mail whose text attachments carry `names` (RFC 2231 encoded)."""
    parts = [
        "From: a@example.org\r\nTo: b@example.org\r\nSubject: hostile names\r\n"
        "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=XX\r\n\r\n"
        "--XX\r\nContent-Type: text/plain\r\n\r\nThe body of the message about the budget.\r\n"
    ]
    for i, name in enumerate(names):
        body = base64.b64encode(f"Attachment {i} says the migration ends in May.".encode())
        parts.append(
            "--XX\r\nContent-Type: text/plain\r\n"
            f"Content-Disposition: attachment; filename*=utf-8''{name}\r\n"
            f"Content-Transfer-Encoding: base64\r\n\r\n{body.decode()}\r\n"
        )
    parts.append("--XX--\r\n")
    return "".join(parts).encode()


@pytest.mark.integration
def test_hostile_attachment_names_do_not_break_the_batch(tmp_path):
    root = tmp_path / "in"
    root.mkdir()
    (root / "a-before.md").write_text("# Before\n\nA file ingested before the hostile mail.")
    (root / "b-mail.eml").write_bytes(
        _mail_with_attachments(["..", "evil%00name.txt", "n" * 400 + ".txt"])
    )
    (root / "c-after.md").write_text("# After\n\nA file ingested after the hostile mail.")
    wb = Workbench(tmp_path / "ws", Settings())
    report = wb.library.ingest([root], root=root)
    by_status = {r.path: r.status for r in report.files}
    assert report.totals["failed"] == 0, report.files
    assert report.totals["inserted"] == 6, by_status  # 3 files + 3 attachments
    docs = wb.catalog.list_documents()
    names = sorted(d.file_name for d in docs)
    assert "evilname.txt" in names
    for doc in docs:  # every original exists under files/<doc_id>/ with a safe name
        stored = tmp_path / "ws" / "files" / doc.doc_id / doc.file_name
        assert stored.is_file() and stored.parent.name == doc.doc_id
        assert len(doc.file_name.encode()) <= 200 and "\x00" not in doc.file_name


def _docx_bytes(text: str) -> bytes:
    import io

    import docx

    document = docx.Document()
    document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _bomb_docx(member_mb: int = 17) -> bytes:
    """A real docx plus one member of `member_mb` MiB of zeros (about 1000x compression)."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(_docx_bytes("A docx with a bomb inside."))) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        dst.writestr("word/media/bomb.bin", b"\0" * (member_mb * 1024 * 1024))
    return out.getvalue()


@pytest.mark.unit
def test_zip_bomb_docx_is_refused_before_parsing():
    from ragbench.parsers import ParseError, parse_bytes

    data = _bomb_docx()
    assert len(data) < 200_000
    with pytest.raises(ParseError, match=r"compression ratio limit of 200x.*zip bomb"):
        parse_bytes(data, "bomb.docx")
    # the same bytes under a neutral name (content detection) and as an xlsx name
    with pytest.raises(ParseError, match="zip bomb"):
        parse_bytes(data, "report.xlsx")
    # an ordinary docx still parses
    assert "ordinary" in parse_bytes(_docx_bytes("An ordinary docx."), "ok.docx").text


@pytest.mark.unit
def test_zip_total_size_limit(monkeypatch):
    from ragbench.parsers import ParseError, base, parse_bytes

    data = _docx_bytes("Total size probe: the package is larger than the lowered limit.")
    monkeypatch.setattr(base, "MAX_ZIP_UNCOMPRESSED", 10_000)
    with pytest.raises(ParseError, match=r"decompresses to more than .*MAX_ZIP_UNCOMPRESSED"):
        parse_bytes(data, "big.docx")


@pytest.mark.integration
def test_bomb_and_oversized_files_fail_alone(tmp_path):
    root = tmp_path / "in"
    root.mkdir()
    (root / "a-first.md").write_text("# First\n\nStored although later files are hostile.")
    (root / "b-bomb.docx").write_bytes(_bomb_docx())
    (root / "c-large.csv").write_bytes(b"a,b\n" + b"1,2\n" * 300_000)  # 1.1 MB
    (root / "d-last.md").write_text("# Last\n\nStored after the hostile files.")
    wb = Workbench(tmp_path / "ws", Settings(max_file_mb=1))
    report = wb.library.ingest([root], root=root)
    by_name = {r.path.rsplit("/", 1)[-1]: r for r in report.files}
    assert by_name["a-first.md"].status == "inserted"
    assert by_name["d-last.md"].status == "inserted"
    assert by_name["b-bomb.docx"].status == "failed"
    assert "zip bomb" in (by_name["b-bomb.docx"].error or "")
    large = by_name["c-large.csv"]
    assert large.status == "failed"
    assert "above the limit of 1 MB (setting max_file_mb)" in (large.error or "")
    # in-memory ingest paths (API, MCP, app) apply the same limit
    again = wb.library.ingest_bytes([("big.txt", b"word " * 300_000)])
    assert again.files[0].status == "failed" and "max_file_mb" in (again.files[0].error or "")


@pytest.mark.integration
def test_symlinks_out_of_the_root_are_not_followed(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("Secret system file that must not be ingested by a link.")
    root = tmp_path / "in"
    root.mkdir()
    (root / "inside.md").write_text("# Inside\n\nA normal file inside the ingest root.")
    (root / "to-inside.md").symlink_to(root / "inside.md")
    (root / "to-outside.txt").symlink_to(outside)
    wb = Workbench(tmp_path / "ws", Settings())
    by_name = {r.path.rsplit("/", 1)[-1]: r for r in wb.library.ingest([root]).files}
    assert by_name["inside.md"].status == "inserted"
    assert by_name["to-inside.md"].status == "skipped"  # resolves to inside.md: the same source
    refused = by_name["to-outside.txt"]
    assert refused.status == "skipped" and "outside the ingest root" in (refused.reason or "")
    assert "follow_symlinks" in (refused.reason or "")
    texts = [wb.library.document_text(d.doc_id) or "" for d in wb.catalog.list_documents()]
    assert not any("Secret system file" in t for t in texts)
    # an explicit `--root` decides the same way, and `always` follows the link
    wb2 = Workbench(tmp_path / "ws2", Settings(follow_symlinks="always"))
    followed = {r.path.rsplit("/", 1)[-1]: r for r in wb2.library.ingest([root], root=root).files}
    assert followed["to-outside.txt"].status == "inserted"
    wb3 = Workbench(tmp_path / "ws3", Settings(follow_symlinks="never"))
    never = {r.path.rsplit("/", 1)[-1]: r for r in wb3.library.ingest([root], root=root).files}
    assert never["to-inside.md"].status == "skipped"
    assert "follow_symlinks = never" in (never["to-inside.md"].reason or "")
    assert never["inside.md"].status == "inserted"
