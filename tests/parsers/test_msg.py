"""Outlook .msg (issue 16): an Outlook message (an OLE compound file of MAPI properties) is
parsed by python-oxmsg into the document an .eml gives: header block, body, thread ids and
attachments as child documents; a .msg reply joins its thread in the archive. A damaged .msg
fails naming the file as an Outlook message and the rest of a batch goes on; a file named .msg
that is no OLE compound file is refused as not an Outlook .msg message, not read as text.

The .msg files are written by `msg_writer.build_msg` (no .msg sample ships with the tests).
"""

from datetime import UTC, datetime

import pytest

from ragbench.parsers import (
    EmptyDocumentError,
    ParseError,
    UnsupportedFormatError,
    detect_format,
    parse_bytes,
)

from ..conftest import FIXTURES
from .msg_writer import BINARY, INT32, STRING, _props, build_msg, compound_file

pytestmark = pytest.mark.unit

SENT = datetime(2026, 3, 4, 10, 30, tzinfo=UTC)
BODY = ("Hello Bob,\r\n\r\nThe launch of the Zephyr portal moves to Q3 2026.\r\n\r\n"
        "- budget approved\r\n- vendor chosen\r\n")


def plan_msg(**changes) -> bytes:
    fields = dict(subject="Zephyr launch plan", body=BODY, sender=("Ann Example", "ann@example.com"),
                  to=[("Bob Builder", "bob@example.com"), ("Dee", "dee@example.com")],
                  cc=[("Cy Young", "cy@example.com")], sent=SENT,
                  message_id="<plan-2@example.com>", in_reply_to="<plan-1@example.com>",
                  references="<plan-0@example.com> <plan-1@example.com>",
                  attachments=[("milestones.csv", b"milestone,quarter\nportal launch,Q3 2026\n",
                                "text/csv")])
    fields.update(changes)
    return build_msg(**fields)


def test_the_writer_makes_a_valid_compound_file():
    olefile = pytest.importorskip("olefile")
    data = plan_msg(attachments=[("big.txt", b"line of text\n" * 400, "text/plain")])
    assert olefile.isOleFile(data=data)
    ole = olefile.OleFileIO(data, raise_defects=olefile.DEFECT_INCORRECT)  # strict: no defects
    assert ole.parsing_issues == []
    streams = {"/".join(path) for path in ole.listdir()}
    assert {"__properties_version1.0", "__substg1.0_0037001F", "__substg1.0_1000001F",
            "__substg1.0_0C1F001F", "__substg1.0_0C1A001F", "__substg1.0_0E04001F",
            "__substg1.0_001A001F", "__attach_version1.0_#00000000/__substg1.0_37010102",
            "__attach_version1.0_#00000000/__substg1.0_3707001F"} <= streams
    assert ole.openstream("__substg1.0_0037001F").read().decode("utf-16-le") == "Zephyr launch plan"
    big = "__attach_version1.0_#00000000/__substg1.0_37010102"  # >= 4096 bytes: regular sectors
    assert ole.openstream(big).read() == b"line of text\n" * 400
    ole.close()


def test_subject_sender_recipients_date_body_and_thread_ids_are_parsed():
    doc = parse_bytes(plan_msg(), "plan.msg")
    assert doc.format == "msg" and doc.title == "Zephyr launch plan"
    assert doc.text.startswith(
        "From: Ann Example <ann@example.com>\n"
        "To: Bob Builder <bob@example.com>, Dee <dee@example.com>\n"
        "Cc: Cy Young <cy@example.com>\n"
        "Date: Wed, 04 Mar 2026 10:30:00 +0000\n"
        "Subject: Zephyr launch plan\n\nHello Bob,\n\nThe launch of the Zephyr portal moves")
    assert "\r" not in doc.text
    assert [b.list_style for b in doc.blocks if b.list_style] == ["bullet"]
    meta = doc.metadata
    assert meta["from"] == "Ann Example <ann@example.com>" and meta["subject"] == "Zephyr launch plan"
    assert meta["date"] == "Wed, 04 Mar 2026 10:30:00 +0000" and meta["cc"] == "Cy Young <cy@example.com>"
    assert meta["message_id"] == "<plan-2@example.com>"
    assert meta["in_reply_to"] == "<plan-1@example.com>"
    assert meta["references"] == ["<plan-0@example.com>", "<plan-1@example.com>"]
    assert meta["message_class"] == "IPM.Note" and "unread" not in meta
    [attachment] = doc.attachments
    assert attachment.name == "milestones.csv" and attachment.content_type == "text/csv"
    assert attachment.data == b"milestone,quarter\nportal launch,Q3 2026\n"


def test_transport_headers_of_a_received_message_come_first():
    headers = ("Received: from mx.example.com\r\nFrom: \"Ann E.\" <ann@example.com>\r\n"
               "To: team@example.com\r\nDate: Tue, 03 Mar 2026 09:00:00 +0100\r\n"
               "Message-ID: <t-2@example.com>\r\nIn-Reply-To: <t-1@example.com>\r\n"
               "References: <t-1@example.com>\r\nSubject: Zephyr\r\n\r\n")
    doc = parse_bytes(build_msg("Zephyr", "Body.", sender=("Ann", "ann@example.com"),
                                to=[("Bob", "bob@example.com")], sent=SENT, headers=headers),
                      "received.msg")
    meta = doc.metadata
    assert meta["from"] == "\"Ann E.\" <ann@example.com>" and meta["to"] == "team@example.com"
    assert meta["date"] == "Tue, 03 Mar 2026 09:00:00 +0100"
    assert meta["message_id"] == "<t-2@example.com>" and meta["in_reply_to"] == "<t-1@example.com>"
    assert meta["references"] == ["<t-1@example.com>"]


def test_display_lists_stand_in_for_a_missing_recipient_table():
    data = build_msg("Note", "Body.", extra=[(0x0E04, STRING, "Bob Builder; Dee")])
    assert parse_bytes(data, "n.msg").metadata["to"] == "Bob Builder; Dee"


def test_an_html_only_body_is_rendered_as_text():
    html = b"<html><body><p>Launch is <b>Q3 2026</b>.</p><ul><li>portal</li></ul></body></html>"
    doc = parse_bytes(build_msg("Html note", html=html), "h.msg")
    assert doc.text == "Subject: Html note\n\nLaunch is Q3 2026.\n\n- portal"


def test_what_is_not_read_is_listed_not_dropped_silently():
    rtf = (0x1009, BINARY, b"\x10\x00\x00\x00" * 4)  # PidTagRtfCompressed, no plain/HTML body
    doc = parse_bytes(build_msg("Rtf only", extra=[rtf],
                                attachments=[("inner.msg", None, "application/vnd.ms-outlook")]),
                      "r.msg")
    assert doc.metadata["unread"] == [
        "body: compressed RTF only (no plain-text or HTML body)",
        "attachment inner.msg: an embedded Outlook message"]
    assert doc.attachments == []


def test_an_outlook_message_is_detected_by_content_under_another_name():
    assert detect_format(plan_msg(), "mail.bin") == "msg"
    assert parse_bytes(plan_msg(), "attachment-1.bin").title == "Zephyr launch plan"


def test_an_empty_message_is_an_empty_document():
    with pytest.raises(EmptyDocumentError, match=r"empty\.msg as msg: empty Outlook message"):
        parse_bytes(build_msg(""), "empty.msg")


def test_a_legacy_office_file_named_msg_is_refused_as_not_a_message():
    data = compound_file({"WordDocument": b"\xec\xa5" + bytes(600), "\x01CompObj": bytes(80)})
    with pytest.raises(UnsupportedFormatError, match=r"old\.msg as msg: an OLE compound file "
                       r"without the __properties_version1\.0 stream.*legacy Office"):
        parse_bytes(data, "old.msg")


def _missing_subject_stream() -> bytes:
    tree: dict = {}
    _props([(0x001A, STRING, "IPM.Note"), (0x0037, STRING, "lost"), (0x0E08, INT32, 1)],
           bytes(32), tree)
    del tree["__substg1.0_0037001F"]
    return compound_file(tree)


@pytest.mark.parametrize(("make", "reason"), [
    (lambda: plan_msg()[:1000], r"1000 bytes is too short for an OLE compound file"),
    (lambda: plan_msg()[:3000], r"the OLE compound file cannot be read \(OleFileError"),
    (lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(2040), r"cannot be read"),
    (_missing_subject_stream, r"KeyError: '__substg1\.0_0037001F'"),
], ids=["too-short", "truncated", "zero-header", "missing-stream"])
def test_a_damaged_msg_fails_naming_an_outlook_message(make, reason):
    with pytest.raises(ParseError) as info:
        parse_bytes(make(), "mail.msg")
    assert not isinstance(info.value, UnsupportedFormatError)
    assert str(info.value).startswith("cannot parse mail.msg as msg: damaged Outlook message "
                                      "(.msg): ")
    assert info.match(reason)


@pytest.mark.parametrize("data", [b"From: a@example.com\nSubject: hi\n\nplain text saved as .msg\n",
                                  b"just some notes\n", b"\x00\x01\x02binary\xff" * 20])
def test_a_non_ole_file_named_msg_is_refused_naming_the_format(data):
    with pytest.raises(UnsupportedFormatError,
                       match=r"cannot parse note\.msg: not an Outlook \.msg message \(no OLE"):
        parse_bytes(data, "note.msg")


def test_shared_msg_fixtures_are_read_as_outlook_messages():
    found = sorted(FIXTURES.rglob("*.msg")) if FIXTURES.exists() else []
    if not found:
        pytest.skip(f"no .msg file under {FIXTURES} (shared fixtures absent or hold none)")
    for path in found:
        try:
            doc = parse_bytes(path.read_bytes(), path.name)
        except ParseError as e:
            assert "Outlook" in str(e), e
        else:
            assert doc.format == "msg" and doc.text


@pytest.mark.integration
def test_an_attachment_becomes_a_child_document_and_a_damaged_msg_does_not_stop_the_batch(
        tmp_path):
    from ragbench.config import Settings
    from ragbench.workbench import Workbench

    root = tmp_path / "in"
    root.mkdir()
    (root / "a-before.md").write_text("# Before\n\nA note ingested before the messages.")
    (root / "a-original.eml").write_bytes(
        b"From: bob@example.com\nTo: ann@example.com\nSubject: Zephyr launch\n"
        b"Date: Mon, 02 Mar 2026 09:00:00 +0000\nMessage-ID: <plan-1@example.com>\n\n"
        b"When does the Zephyr portal launch?\n")
    (root / "b-plan.msg").write_bytes(plan_msg())
    (root / "c-broken.msg").write_bytes(plan_msg()[:3000])
    (root / "d-after.md").write_text("# After\n\nA note ingested after the messages.")
    wb = Workbench(tmp_path / "ws", Settings(chunk_size=64, chunk_overlap=8))
    report = wb.library.ingest([root], root=root)
    by_path = {f.source_id: f for f in report.files}
    parent = by_path["b-plan.msg"]
    assert parent.status == "inserted", report.files
    child = next(f for f in report.files if f.path.endswith("milestones.csv"))
    assert child.status == "inserted" and child.parent_doc_id == parent.doc_id
    record = wb.catalog.get_document(child.doc_id)
    assert record.root_doc_id == parent.doc_id and record.path == ["b-plan.msg", "milestones.csv"]
    message = wb.catalog.get_document(parent.doc_id)
    assert message.format == "msg" and message.title == "Zephyr launch plan"
    assert message.metadata["message_id"] == "<plan-2@example.com>"
    broken = by_path["c-broken.msg"]
    assert broken.status == "failed"
    assert "damaged Outlook message (.msg)" in broken.error
    assert by_path["a-before.md"].status == by_path["d-after.md"].status == "inserted"
    hits = wb.search.query("portal launch milestone", mode="fts")
    assert any(h.doc_id == child.doc_id for h in hits)
    # the .msg reply (In-Reply-To <plan-1@...>) joins the .eml original's thread, in date order
    original = by_path["a-original.eml"].doc_id
    assert wb.archive.threads()[parent.doc_id] == [original, parent.doc_id]
    view = wb.archive.thread_view(parent.doc_id) or ""
    assert "**Messages:** 2" in view and "When does the Zephyr portal launch?" in view
    assert "## Message 2 (this message)\n**From:** Ann Example" in view
    # archived as an e-mail: the original as email.msg, the e-mail view with its attachment
    entry = wb.workspace / message.archive_path
    assert (entry / "email.msg").read_bytes() == (root / "b-plan.msg").read_bytes()
    archived_view = (entry / "email.msg.md").read_text()
    assert "Zephyr launch plan" in archived_view and "milestones.csv" in archived_view
    assert "Email (Outlook)" in archived_view or "Ann Example" in archived_view
