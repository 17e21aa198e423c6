"""Optical character recognition behind a small Protocol, with Debian's tesseract as the engine.

Parsers never call tesseract directly: they get an `OcrEngine` (or `None` plus the reason OCR
is unavailable) from `resolve_ocr`, so tests can pass a fake and the `ocr` setting can turn it
off. `TesseractOcr` runs the `tesseract` command (package `tesseract-ocr`, installed by
`make ocr-deps`) on a PNG fed through stdin, with a timeout and one thread per call (the
machine is shared; tesseract's OpenMP threads only contend with each other on two cores).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from functools import cache
from typing import Protocol

from PIL import Image

from ragbench.errors import ParseError

OCR_TIMEOUT_SECONDS = 60.0
"""Longest a single tesseract call may run before the image (or page) is given up."""

MAX_OCR_PIXELS = 40_000_000
"""Images larger than this (e.g. 8000 x 5000) are scaled down before recognition."""

INSTALL_HINT = "install it with `make ocr-deps` (apt-get install tesseract-ocr tesseract-ocr-eng)"


class OcrError(ParseError):
    """Recognition itself failed (the engine crashed, timed out or refused the image)."""


class OcrEngine(Protocol):
    """Turns an image into the text it shows."""

    @property
    def name(self) -> str:
        """Engine and version, recorded in document metadata (e.g. "tesseract 5.3.0")."""
        ...

    def recognize(self, image: Image.Image) -> str:
        """The text in `image` (may be empty); raises `OcrError` when recognition fails."""
        ...


class TesseractOcr:
    """`OcrEngine` running the tesseract command line program on one image at a time."""

    def __init__(
        self, binary: str, language: str = "eng", timeout: float = OCR_TIMEOUT_SECONDS
    ) -> None:
        self.binary = binary
        self.language = language
        self.timeout = timeout

    @property
    def name(self) -> str:
        """`tesseract <version>` as the binary reports it."""
        return _tesseract_version(self.binary)

    def recognize(self, image: Image.Image) -> str:
        """Run tesseract on `image` (sent as PNG on stdin) and return its text output."""
        buffer = io.BytesIO()
        prepared(image).save(buffer, format="PNG")
        env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
        try:
            # page segmentation 1 = automatic with orientation detection (OSD), so a page
            # scanned sideways or upside down is read the right way up; 3 = automatic, no OSD
            psm = "1" if "osd" in _tesseract_languages(self.binary) else "3"
            done = subprocess.run(
                [self.binary, "stdin", "stdout", "-l", self.language, "--psm", psm],
                input=buffer.getvalue(), capture_output=True, timeout=self.timeout, env=env,
                check=False,
            )
        except subprocess.TimeoutExpired as e:
            raise OcrError(f"tesseract took longer than {self.timeout:.0f} s on one image") from e
        except OSError as e:
            raise OcrError(f"tesseract could not be run ({self.binary}): {e}") from e
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = lines[-1] if lines else "no output"
            raise OcrError(f"tesseract failed (exit {done.returncode}): {detail}")
        return done.stdout.decode("utf-8", "replace")


def prepared(image: Image.Image) -> Image.Image:
    """`image` in a mode tesseract reads (L/RGB), flattened on white, scaled to `MAX_OCR_PIXELS`."""
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGB", rgba.size, "white")
        background.paste(rgba, mask=rgba.getchannel("A"))
        image = background
    elif image.mode not in ("L", "RGB", "1"):
        image = image.convert("RGB")
    pixels = image.width * image.height
    if pixels > MAX_OCR_PIXELS:
        scale = (MAX_OCR_PIXELS / pixels) ** 0.5
        image = image.resize((max(1, int(image.width * scale)), max(1, int(image.height * scale))))
    return image


@cache
def _tesseract_version(binary: str) -> str:
    """First line of `tesseract --version` ("tesseract 5.3.0"), or "tesseract" if unknown."""
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "tesseract"
    lines = (done.stdout or done.stderr).decode("utf-8", "replace").strip().splitlines()
    return lines[0].strip() if lines else "tesseract"


@cache
def _tesseract_languages(binary: str) -> frozenset[str]:
    """The trained data tesseract has ("eng", "osd", ...); empty when it cannot say."""
    try:
        done = subprocess.run([binary, "--list-langs"], capture_output=True, timeout=10,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    lines = done.stdout.decode("utf-8", "replace").splitlines()[1:]  # after the header line
    return frozenset(line.strip() for line in lines if line.strip())


def find_tesseract() -> str | None:
    """Path of the tesseract binary on PATH, or None when it is not installed."""
    return shutil.which("tesseract")


def resolve_ocr(ocr: bool | OcrEngine | None) -> tuple[OcrEngine | None, str]:
    """`(engine, why_not)` for the `ocr` option of `parse_bytes`.

    `True` (the default, the `ocr` setting on) gives tesseract when it is installed; `False` or
    `None` turns OCR off; an `OcrEngine` is used as it is. When the engine is None, `why_not`
    says why, for the failed or partial reason of files that needed OCR.
    """
    if ocr is None or ocr is False:
        return None, "OCR is turned off (setting ocr = false)"
    if ocr is True:
        binary = find_tesseract()
        if binary is None:
            return None, f"OCR unavailable: tesseract is not installed; {INSTALL_HINT}"
        return TesseractOcr(binary), ""
    return ocr, ""
