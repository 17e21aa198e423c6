"""Outlook .msg (issue 16): an Outlook message was called "legacy Office". A real .msg (an OLE
compound file) is named as an Outlook message and refused with the way out (save as .eml): no
offline .msg reader is installed (see README). A file named .msg that is no OLE compound file
is refused too, saying it is not an Outlook .msg message, instead of being ingested as text."""

import pytest

from ragbench.parsers import UnsupportedFormatError, parse_bytes

from ..conftest import FIXTURES

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("data", [b"From: a@example.com\nSubject: hi\n\nplain text saved as .msg\n",
                                  b"just some notes\n", b"\x00\x01\x02binary\xff" * 20])
def test_a_non_ole_file_named_msg_is_refused_naming_the_format(data):
    with pytest.raises(UnsupportedFormatError,
                       match=r"cannot parse note\.msg: not an Outlook \.msg message \(no OLE"):
        parse_bytes(data, "note.msg")


def test_an_ole_file_named_msg_is_called_an_outlook_message():
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504
    with pytest.raises(UnsupportedFormatError, match=r"Outlook message \(\.msg.*save it as \.eml"):
        parse_bytes(ole, "mail.msg")


def test_shared_msg_fixtures_are_named_as_outlook_messages():
    found = sorted(FIXTURES.rglob("*.msg")) if FIXTURES.exists() else []
    if not found:
        pytest.skip(f"no .msg file under {FIXTURES} (shared fixtures absent or hold none)")
    for path in found:
        with pytest.raises(UnsupportedFormatError, match=r"Outlook"):
            parse_bytes(path.read_bytes(), path.name)
