"""E-mail threads in the archive (issue 16): a reply is a document of its own, so a thread
showed "Messages: 1". Messages are grouped by their Message-ID / In-Reply-To / References
links (subject only as a fallback) and a message's thread view lists them all in date order."""

import re

import pytest

from ragbench.archive.render import view_html
from ragbench.archive.threads import Mail, group_threads, normalize_subject
from ragbench.config import Settings
from ragbench.parsers import parse_bytes
from ragbench.workbench import Workbench


def mail(subject, date, mid=None, in_reply_to=None, references=None, body="Text.", sender=None,
         attachment=None):
    head = [f"From: {sender or 'Ana Lima <ana@example.com>'}", "To: Bo Chen <bo@example.com>",
            f"Subject: {subject}", f"Date: {date}"]
    if mid:
        head.append(f"Message-ID: {mid}")
    if in_reply_to:
        head.append(f"In-Reply-To: {in_reply_to}")
    if references:
        head.append(f"References: {references}")
    head.append("MIME-Version: 1.0")
    if attachment is None:
        return ("\r\n".join(head) + "\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
                + body + "\r\n").encode()
    name, text = attachment
    return ("\r\n".join(head) + '\r\nContent-Type: multipart/mixed; boundary="zz"\r\n\r\n'
            f"--zz\r\nContent-Type: text/plain\r\n\r\n{body}\r\n--zz\r\nContent-Type: text/plain"
            f"\r\nContent-Disposition: attachment; filename={name}\r\n\r\n{text}\r\n--zz--\r\n"
            ).encode()


ROOT_ID, R1_ID, R2_ID = ("<budget-1@example.com>", "<budget-2@example.com>",
                         "<budget-3@example.com>")
THREAD = {
    # the first message, with an attachment
    "budget.eml": mail("Q3 budget review", "Mon, 02 Mar 2026 09:00:00 +0000", ROOT_ID,
                       body="The Q3 budget is attached; travel is capped at 40k.",
                       attachment=("budget-notes.txt", "Travel cap 40k. Hiring freeze to June.")),
    # a reply with References only (no In-Reply-To), written later than the next one
    "re-budget-late.eml": mail("RE: Q3 budget review", "Wed, 04 Mar 2026 16:30:00 +0100", R2_ID,
                               references=f"{ROOT_ID} {R1_ID}", sender="Cy <cy@example.com>",
                               body="Agreed on the cap. <img src=http://x.example/t.png> "
                                    "![beacon](http://x.example/b.png)"),
    # a reply with In-Reply-To only
    "re-budget.eml": mail("Re: Q3 budget review", "Tue, 03 Mar 2026 11:00:00 +0000", R1_ID,
                          in_reply_to=ROOT_ID, sender="Bo Chen <bo@example.com>",
                          body="Can we raise travel to 45k for the summit?"),
    # same words in the subject, no reply prefix, no links: another conversation
    "other.eml": mail("Q3 budget review", "Thu, 05 Mar 2026 08:00:00 +0000",
                      "<unrelated@example.com>", body="Different team, same subject line."),
}


@pytest.mark.unit
def test_parser_records_thread_headers():
    doc = parse_bytes(THREAD["re-budget-late.eml"], "re-budget-late.eml")
    assert doc.metadata["message_id"] == R2_ID
    assert doc.metadata["references"] == [ROOT_ID, R1_ID]
    assert "in_reply_to" not in doc.metadata
    doc = parse_bytes(THREAD["re-budget.eml"], "re-budget.eml")
    assert doc.metadata["in_reply_to"] == ROOT_ID and "references" not in doc.metadata


@pytest.mark.unit
def test_subject_normalisation():
    assert normalize_subject("RE: Fwd:  AW: Q3   Budget") == "q3 budget"
    assert normalize_subject("Re[2]: Plan") == "plan"
    assert normalize_subject("Regarding the plan") == "regarding the plan"


@pytest.mark.unit
def test_grouping_by_links_and_subject_fallback():
    def m(doc_id, subject, date, **meta):
        return Mail(doc_id=doc_id, metadata={"subject": subject, "date": date, **meta})

    mails = [
        m("c", "Re: Plan", "Wed, 04 Mar 2026 10:00:00 +0000", message_id="<c@x>",
          references=["<a@x>", "<b@x>"]),
        m("a", "Plan", "Mon, 02 Mar 2026 10:00:00 +0000", message_id="<a@x>"),
        m("b", "Re: Plan", "Tue, 03 Mar 2026 10:00:00 +0000", message_id="<b@x>",
          in_reply_to="<a@x>"),
        # two replies to a parent the archive does not have meet through the parent's id
        m("d", "Re: Launch", "Mon, 02 Mar 2026 10:00:00 +0000", in_reply_to="<gone@x>"),
        m("e", "Re: Launch", "Tue, 03 Mar 2026 10:00:00 +0000", references=["<gone@x>"]),
        # no headers at all: a "Fwd:" joins its original by subject, a same subject without a
        # prefix is no reply
        m("f", "Offsite", "Mon, 02 Mar 2026 10:00:00 +0000"),
        m("g", "Fwd: offsite", "Tue, 03 Mar 2026 10:00:00 +0000"),
        m("h", "Status", "Mon, 02 Mar 2026 10:00:00 +0000", message_id="<h@x>"),
        m("i", "Status", "Tue, 03 Mar 2026 10:00:00 +0000", message_id="<i@x>"),
        # a reply whose links reach an archived message is not also joined by subject
        m("j", "Re: Status", "Wed, 04 Mar 2026 10:00:00 +0000", in_reply_to="<i@x>"),
    ]
    groups = sorted([[r.doc_id for r in g] for g in group_threads(mails)])
    assert groups == [["a", "b", "c"], ["d", "e"], ["f", "g"], ["h"], ["i", "j"]]


@pytest.fixture(scope="module")
def thread_wb(tmp_path_factory):
    src = tmp_path_factory.mktemp("mail")
    for name, data in THREAD.items():
        (src / name).write_bytes(data)
    wb = Workbench(tmp_path_factory.mktemp("ws"), Settings())
    report = wb.library.ingest([src], root=src)
    assert report.totals["failed"] == 0
    return wb


def ids_by_name(wb):
    return {d.file_name: d.doc_id for d in wb.catalog.list_documents()}


@pytest.mark.integration
def test_archive_groups_a_thread_in_date_order(thread_wb):
    ids = ids_by_name(thread_wb)
    threads = thread_wb.archive.threads()
    expected = [ids["budget.eml"], ids["re-budget.eml"], ids["re-budget-late.eml"]]
    for name in ("budget.eml", "re-budget.eml", "re-budget-late.eml"):
        assert threads[ids[name]] == expected
    assert ids["other.eml"] not in threads, "same subject, no reply: a thread of its own"
    assert ids["budget-notes.txt"] not in threads, "attachments stay under their message"


@pytest.mark.integration
def test_thread_view_lists_every_message_and_marks_the_current_one(thread_wb):
    ids = ids_by_name(thread_wb)
    view = thread_wb.archive.thread_view(ids["re-budget.eml"])
    assert "**Messages:** 3" in view
    headings = re.findall(r"^## Message (\d)( \(this message\))?$", view, re.MULTILINE)
    assert headings == [("1", ""), ("2", " (this message)"), ("3", "")]
    order = [view.index(s) for s in ("travel is capped at 40k", "raise travel to 45k",
                                     "Agreed on the cap")]
    assert order == sorted(order)
    assert view.count("**From:**") == 3 and "Cy \\<cy@example.com\\>" in view
    assert "**Date:** 2026-03-04 16\\:30" in view
    assert "[budget-notes.txt](" in view, "the first message's attachment is listed"

    # rendered inert, with links to each message's own view only
    doc = thread_wb.catalog.get_document(ids["re-budget.eml"])
    by_uri = {d.archive_browse_uri: f"?doc={d.doc_id}" for d in thread_wb.catalog.list_documents()}
    html = view_html(view, doc.archive_browse_uri, by_uri.get)
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert sorted(hrefs) == sorted([f"?doc={ids['budget.eml']}", f"?doc={ids['budget-notes.txt']}",
                                    f"?doc={ids['re-budget-late.eml']}"])
    assert not re.search(r"<img\b", html) and "x.example" in html  # the URL as text only


@pytest.mark.integration
def test_a_lone_message_has_no_thread_view_beyond_itself(thread_wb):
    ids = ids_by_name(thread_wb)
    assert "**Messages:** 1" in thread_wb.archive.thread_view(ids["other.eml"])
    assert thread_wb.archive.thread_view(ids["budget-notes.txt"]) is None
