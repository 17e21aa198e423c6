"""OCR (issue 16): image files, image email attachments and scanned PDF pages become text.

Before, a PNG attachment and a scanned PDF failed ("not a supported format", "scanned or
image-only PDF"). Every image here is drawn by the test with Pillow in a large clear font; the
tests that need Debian's tesseract skip when it is not installed (`make ocr-deps` installs it).
"""

from __future__ import annotations

import io
import shutil
from email.message import EmailMessage

import pytest
from PIL import Image, ImageDraw, ImageFont, PngImagePlugin
from pypdf import PdfReader, PdfWriter

from ragbench.ingest.metadata import partial_note
from ragbench.parsers import EmptyDocumentError, ParseError, detect_format, parse_bytes
from ragbench.parsers import ocr as ocr_module
from ragbench.parsers.ocr import OcrError, resolve_ocr
from tests.parsers.conftest import check_blocks, make_pdf

pytestmark = pytest.mark.unit

WORDS = ("Quarterly zebra invoice", "Harbor crane delivery")
needs_tesseract = pytest.mark.skipif(shutil.which("tesseract") is None,
                                     reason="tesseract is not installed (make ocr-deps)")


def draw(lines=WORDS, description: str | None = None) -> bytes:
    """A PNG showing `lines` in a 48 px font, black on white."""
    font = ImageFont.load_default(size=48)
    image = Image.new("RGB", (900, 100 + 100 * len(lines)), "white")
    pen = ImageDraw.Draw(image)
    for index, line in enumerate(lines):
        pen.text((30, 40 + 100 * index), line, fill="black", font=font)
    info = PngImagePlugin.PngInfo()
    if description:
        info.add_text("Description", description)
    buffer = io.BytesIO()
    image.save(buffer, "PNG", pnginfo=info)
    return buffer.getvalue()


def scanned_pdf(png: bytes) -> bytes:
    """A one-page PDF holding only the image (no text layer), as a scanner makes it."""
    buffer = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").save(buffer, "PDF", resolution=150)
    return buffer.getvalue()


def mixed_pdf(png: bytes) -> bytes:
    """Page 1 with a text layer, page 2 scanned."""
    writer = PdfWriter()
    for data in (make_pdf([[("Cover page of the harbor report", 12)]]), scanned_pdf(png)):
        for page in PdfReader(io.BytesIO(data)).pages:
            writer.add_page(page)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def email_with_png(png: bytes) -> bytes:
    message = EmailMessage()
    message["From"], message["To"] = "ops@example.test", "board@example.test"
    message["Subject"] = "Scanned invoice"
    message.set_content("The scan is attached.")
    message.add_attachment(png, maintype="image", subtype="png", filename="invoice-scan.png")
    return message.as_bytes()


class FakeOcr:
    """An `OcrEngine` that returns fixed text (unit tests of the wiring, no tesseract)."""

    name = "fake-ocr 1.0"

    def __init__(self, text: str = "Fake recognized words\n\nSecond paragraph", fail=False):
        self.text, self.fail, self.calls = text, fail, 0

    def recognize(self, image: Image.Image) -> str:
        self.calls += 1
        if self.fail:
            raise OcrError("tesseract failed (exit 1): simulated")
        return self.text


@pytest.fixture(scope="module")
def png() -> bytes:
    return draw()


# --- wiring with a fake engine ---------------------------------------------------------------


def test_image_blocks_are_media_with_name_and_description(png: bytes) -> None:
    assert detect_format(png, "scan.png") == "image"
    assert detect_format(png, "misnamed.txt") == "image"  # content decides
    described = draw(description="Invoice from the harbor office")
    doc = parse_bytes(described, "scans/invoice.png", ocr=FakeOcr())
    check_blocks(doc)
    assert doc.format == "image" and {b.chunk_type for b in doc.blocks} == {"media"}
    texts = [doc.text[b.start_char:b.end_char] for b in doc.blocks]
    assert texts == ["Image: invoice.png\nDescription: Invoice from the harbor office",
                     "Fake recognized words", "Second paragraph"]
    assert doc.metadata["ocr_engine"] == "fake-ocr 1.0" and doc.metadata["width"] == 900


def test_image_without_text_keeps_its_name(png: bytes) -> None:
    doc = parse_bytes(png, "photo.png", ocr=FakeOcr(" \n"))
    assert doc.text == "Image: photo.png\n(no text recognized by OCR)"
    assert doc.metadata["ocr_chars"] == 0


def test_ocr_off_or_missing_fails_with_the_reason(png, monkeypatch) -> None:
    with pytest.raises(ParseError, match=r"scan\.png.*OCR is turned off \(setting ocr = false\)"):
        parse_bytes(png, "scan.png", ocr=False)
    with pytest.raises(EmptyDocumentError, match="scan.pdf.*scanned or image-only.*ocr = false"):
        parse_bytes(scanned_pdf(png), "scan.pdf", ocr=False)
    monkeypatch.setattr(ocr_module.shutil, "which", lambda name: None)
    assert resolve_ocr(True)[0] is None
    with pytest.raises(ParseError, match="tesseract is not installed.*make ocr-deps"):
        parse_bytes(png, "scan.png")


def test_damaged_image_fails_clearly() -> None:
    with pytest.raises(ParseError, match="logo.png as image: not a readable image"):
        parse_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "logo.png", ocr=FakeOcr())


def test_scanned_page_marked_in_metadata_and_text_pages_untouched(png) -> None:
    engine = FakeOcr()
    doc = parse_bytes(mixed_pdf(png), "report.pdf", ocr=engine)
    assert engine.calls == 1  # only the page without a text layer
    assert doc.metadata["ocr_pages"] == ["2"] and "failed_pages" not in doc.metadata
    by_page = {(b.page_number, b.chunk_type) for b in doc.blocks}
    assert by_page == {(1, "text"), (2, "media")}
    assert partial_note(doc.metadata) == ""


def test_scanned_page_without_ocr_is_a_partial_with_the_reason(png) -> None:
    doc = parse_bytes(mixed_pdf(png), "report.pdf", ocr=False)
    assert doc.metadata["failed_pages"] == ["2"]
    note = partial_note(doc.metadata)
    assert note.startswith("1 of 2 pages failed") and "setting ocr = false" in note
    failing = parse_bytes(mixed_pdf(png), "report.pdf", ocr=FakeOcr(fail=True))
    assert failing.metadata["failed_pages"] == ["2"] and "ocr_pages" not in failing.metadata


# --- the real tesseract ------------------------------------------------------------------------


@needs_tesseract
def test_tesseract_reads_png_and_scanned_pdf(png) -> None:
    image = parse_bytes(png, "scan.png")
    pdf = parse_bytes(scanned_pdf(png), "scan.pdf")
    for doc in (image, pdf):
        assert {b.chunk_type for b in doc.blocks} == {"media"}
        for words in WORDS:
            assert words.lower() in doc.text.lower(), (words, doc.text)
    assert pdf.metadata["ocr_pages"] == ["1"]
    assert str(pdf.metadata["ocr_engine"]).startswith("tesseract")


@pytest.fixture(scope="module")
def ocr_workspace(png, tmp_path_factory):
    """One workspace holding the PNG, the scanned PDF and an email with the PNG attached."""
    from ragbench.config import Settings
    from ragbench.workbench import Workbench

    folder = tmp_path_factory.mktemp("ocr_docs")
    (folder / "scan.png").write_bytes(png)
    (folder / "scan.pdf").write_bytes(scanned_pdf(png))
    (folder / "mail.eml").write_bytes(email_with_png(png))
    wb = Workbench(tmp_path_factory.mktemp("ocr_ws"), Settings(chunk_size=128, chunk_overlap=16))
    report = wb.library.ingest([folder], root=folder)
    return wb, report


@needs_tesseract
@pytest.mark.integration
@pytest.mark.slow  # loads the embedding model once for the module (~10 s on an idle machine)
def test_ingested_images_are_searchable_media_chunks(ocr_workspace) -> None:
    wb, report = ocr_workspace
    statuses = {f.path.rsplit("/", 1)[-1]: f.status for f in report.files}
    assert statuses == {"scan.png": "inserted", "scan.pdf": "inserted", "mail.eml": "inserted",
                        "invoice-scan.png": "inserted"}, report.files
    hits = wb.search.query("quarterly zebra invoice", mode="fts", top_k=20)
    found = {hit.file_name: hit for hit in hits}
    assert {"scan.png", "scan.pdf", "invoice-scan.png"} <= set(found)
    for name in ("scan.png", "scan.pdf", "invoice-scan.png"):
        assert found[name].chunk_type == "media"
        assert "zebra" in found[name].text.lower()
    assert found["scan.pdf"].page_number == 1
    (attachment,) = [f for f in report.files if f.path.endswith("invoice-scan.png")]
    assert attachment.parent_doc_id is not None


@pytest.mark.integration
def test_ocr_setting_off_fails_images_with_reason(png, tmp_path) -> None:
    from ragbench.config import Settings
    from ragbench.workbench import Workbench

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "scan.png").write_bytes(png)
    wb = Workbench(tmp_path / "ws", Settings(ocr=False))
    (result,) = wb.library.ingest([tmp_path / "docs"], root=tmp_path / "docs").files
    assert result.status == "failed"
    assert "scan.png" in result.error and "setting ocr = false" in result.error
