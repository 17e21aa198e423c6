"""Hostile inputs at full size (issue 31): peak memory and seconds of one ingest each.

Each case is written to a temporary folder (benchmarks/hostile_files.py, streamed) and
ingested by a child process into an empty workspace, which reports its own peak RSS
(`resource.getrusage`) and the seconds its ingest took. Cases:
- docx_480mib_body: a ~3 MB DOCX whose word/document.xml is 480 MiB of paragraphs (R3);
- xlsx_480mib_shared_strings: an XLSX with 480 MiB of shared strings (R3);
- json_ones_10mb / json_ones_1mb: `[1,1,...]` of 10 MB and 1 MB (R4);
- folder_64x8mb: a folder of 64 files of 8 MB each (unsupported bytes, so each fails right
  after it is read): peak memory is one planning group at most, not the folder (R5);
- pdf_1000_images: 10 text-less pages of 100 images each, with tesseract when installed (R6);
- baseline: one small Markdown file (the model and the stores alone).
`--parse-only` runs the parser instead of the ingest (no model, no stores) for each file case.

    python benchmarks/bench_hostile.py [--cases NAME ...] [--parse-only] [--keep DIR]

Prints one JSON object with the machine (CPU model and flags) and one row per case.
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import hostile_files as hostile  # noqa: E402
from benchmarks.machine import machine_info  # noqa: E402

MiB = 1024 * 1024


def _write(path: Path, make: Callable[[io.BufferedWriter, int], None], size: int) -> Path:
    with path.open("wb") as out:
        make(out, size)  # type: ignore[arg-type]
    return path


def _folder(path: Path, files: int, size: int) -> Path:
    path.mkdir()
    block = bytes(range(256)) * (size // 256)
    for i in range(files):
        (path / f"blob-{i:03d}.bin").write_bytes(block[:-1] + bytes([i % 256]))
    return path


def _pdf_of_images(path: Path, pages: int, per_page: int) -> Path:
    from fpdf import FPDF
    from PIL import Image, ImageDraw

    pdf = FPDF()
    for page in range(pages):
        pdf.add_page()
        for index in range(per_page):
            image = Image.new("RGB", (120, 48), "white")
            ImageDraw.Draw(image).text((4, 16), f"P{page} I{index}", fill="black")
            pdf.image(image, x=10 + 19 * (index % 10), y=10 + 27 * (index // 10), w=18)
    pdf.output(str(path))
    return path


CASES: dict[str, Callable[[Path], Path]] = {
    "baseline": lambda d: (d / "note.md").write_text("# Note\n\nPump 7 was serviced.\n")
    and d / "note.md",
    "docx_480mib_body": lambda d: _write(d / "body.docx", hostile.docx_with_big_body, 480 * MiB),
    "xlsx_480mib_shared_strings": lambda d: _write(
        d / "strings.xlsx", hostile.xlsx_with_big_shared_strings, 480 * MiB),
    "json_ones_10mb": lambda d: _write(d / "ones10.json", hostile.json_ones, 10_000_000),
    "json_ones_1mb": lambda d: _write(d / "ones1.json", hostile.json_ones, 1_000_000),
    "folder_64x8mb": lambda d: _folder(d / "blobs", 64, 8 * MiB),
    "pdf_1000_images": lambda d: _pdf_of_images(d / "images.pdf", 10, 100),
}

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
target, workspace, mode = Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
start = time.perf_counter()
row = {}
if mode == "parse":
    from ragbench.parsers import ParseError, parse_bytes
    try:
        doc = parse_bytes(target.read_bytes(), target.name)
        row = {"status": "parsed", "blocks": len(doc.blocks), "chars": len(doc.text),
               "metadata": {k: v for k, v in doc.metadata.items()
                            if k in ("values", "values_skipped", "ocr_images_skipped")}}
    except ParseError as e:
        row = {"status": "failed", "error": str(e)[:300]}
else:
    from ragbench.config import Settings
    from ragbench.workbench import Workbench
    wb = Workbench(workspace, Settings())
    loaded = time.perf_counter()
    report = wb.library.ingest([target], root=target.parent)
    row = {"totals": report.totals, "open_s": round(loaded - start, 2),
           "errors": sorted({(f.error or "")[:200] for f in report.files if f.error})[:3],
           "metadata": [{k: (len(v) if isinstance(v, list) else v)
                         for k, v in d.metadata.items()
                         if k in ("values", "values_skipped", "ocr_images_skipped",
                                  "ocr_pages", "failed_pages")}
                        for d in wb.catalog.list_documents()][:1]}
row["seconds"] = round(time.perf_counter() - start, 2)
row["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print(json.dumps(row))
"""


def run_case(name: str, folder: Path, parse_only: bool) -> dict[str, Any]:
    """Build the case's file, ingest (or parse) it in a child process, return its row."""
    started = time.perf_counter()
    target = CASES[name](folder)
    built_s = time.perf_counter() - started
    size = (sum(p.stat().st_size for p in target.rglob("*")) if target.is_dir()
            else target.stat().st_size)
    mode = "parse" if parse_only and target.is_file() else "ingest"
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT), str(target), str(folder / "ws"), mode],
        capture_output=True, text=True, timeout=3600)
    row: dict[str, Any] = {"case": name, "mode": mode, "bytes_on_disk": size,
                           "build_s": round(built_s, 2)}
    if proc.returncode != 0:
        row.update(status="child failed", returncode=proc.returncode,
                   stderr=proc.stderr[-1500:])
    else:
        row.update(json.loads(proc.stdout.strip().splitlines()[-1]))
    return row


def main() -> None:
    """Build and ingest each case; print one JSON object."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="*", choices=list(CASES), default=list(CASES))
    ap.add_argument("--parse-only", action="store_true",
                    help="run the parser instead of a whole ingest for file cases")
    ap.add_argument("--keep", type=Path, default=None,
                    help="build the files in DIR and keep them (default: a temporary folder)")
    args = ap.parse_args()
    from ragbench.parsers import base, jsonfile, pdf
    from ragbench.parsers.ocr import resolve_ocr

    result: dict[str, Any] = {
        "machine": machine_info(),
        "limits": {"MAX_XML_PART_MiB": base.MAX_XML_PART // MiB,
                   "MAX_XML_TOTAL_MiB": base.MAX_XML_TOTAL // MiB,
                   "MAX_ZIP_RATIO": base.MAX_ZIP_RATIO, "json_MAX_VALUES": jsonfile.MAX_VALUES,
                   "pdf_MAX_OCR_IMAGES": pdf.MAX_OCR_IMAGES},
        "ocr_engine": getattr(resolve_ocr(True)[0], "name", None),
        "parent_peak_rss_mib": 0.0,
        "cases": [],
    }
    for name in args.cases:
        root = args.keep or Path(tempfile.mkdtemp(prefix="ragbench-hostile-"))
        folder = root / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        try:
            result["cases"].append(run_case(name, folder, args.parse_only))
        finally:
            if args.keep is None:
                shutil.rmtree(root, ignore_errors=True)
        print(json.dumps(result["cases"][-1]), file=sys.stderr)
    result["parent_peak_rss_mib"] = round(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
