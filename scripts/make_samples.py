"""Regenerate the binary and e-mail files of the demo corpus in ``data/samples``.

The demo corpus describes Orrery Works, a fictional company building the analytics
product Almanac, across the six lenses of specs/002 (one folder per lens). Text files
(Markdown, HTML, TXT, CSV) are committed as written; this script produces the formats
that are awkward to edit by hand:

- DOCX (python-docx): real ``Heading N`` styles, lists and a table;
- PDF (fpdf2): extractable text, two or more pages, headings and tables;
- EML (stdlib ``email``): threads with ``Message-ID``/``In-Reply-To``, attachments
  (CSV, DOCX, Markdown), a multipart/alternative body and an RFC 2047 encoded subject.

Output is deterministic: fixed dates, fixed MIME boundaries, no randomness, and DOCX
archives are rewritten with fixed ZIP timestamps, so a rerun produces identical bytes.

Usage::

    python scripts/make_samples.py            # write into data/samples
    python scripts/make_samples.py --check    # exit 1 if any generated file is stale
    python scripts/make_samples.py --out DIR  # write somewhere else

The planted agreements and contradictions are listed in ``data/samples/README.md``.
"""

from __future__ import annotations

import argparse
import io
import sys
import textwrap
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from email.policy import default as default_policy
from email.utils import format_datetime
from pathlib import Path

import docx
from docx.shared import Pt
from fpdf import FPDF
from fpdf.enums import XPos, YPos

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "data" / "samples"
ZIP_DATE = (2026, 1, 1, 0, 0, 0)
DOMAIN = "orreryworks.example"

# --------------------------------------------------------------------------------------
# A tiny markup shared by the DOCX and PDF writers
#
#   # / ## / ###   headings (levels 1-3)
#   - item         bulleted list (continuation lines indented by two spaces)
#   1. item        numbered list
#   | a | b |      table; first row is the header; |---| rows are skipped
#   other lines    paragraph text; consecutive lines are joined with a space
# --------------------------------------------------------------------------------------


@dataclass
class Block:
    """One structural block of a generated document."""

    kind: str  # heading | para | bullets | numbers | table
    text: str = ""
    level: int = 0
    items: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


@dataclass
class Doc:
    """A generated document: metadata plus its blocks."""

    title: str
    subtitle: str
    author: str
    created: datetime
    body: str

    def blocks(self) -> list[Block]:
        """Parse ``body`` into blocks."""
        return parse_markup(self.body)


def parse_markup(text: str) -> list[Block]:
    """Parse the mini markup described above into a list of blocks."""
    blocks: list[Block] = []
    current: Block | None = None

    def close() -> None:
        nonlocal current
        if current is not None:
            blocks.append(current)
        current = None

    for raw in textwrap.dedent(text).splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            close()
            continue
        if stripped.startswith("#"):
            close()
            marks, _, title = stripped.partition(" ")
            blocks.append(Block("heading", text=title.strip(), level=len(marks)))
        elif stripped.startswith("|"):
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if all(set(c) <= set("-: ") for c in cells):
                continue
            if current is None or current.kind != "table":
                close()
                current = Block("table")
            current.rows.append(cells)
        elif stripped.startswith("- "):
            if current is None or current.kind != "bullets":
                close()
                current = Block("bullets")
            current.items.append(stripped[2:])
        elif stripped[:1].isdigit() and ". " in stripped[:4]:
            if current is None or current.kind != "numbers":
                close()
                current = Block("numbers")
            current.items.append(stripped.split(". ", 1)[1])
        elif line.startswith("  ") and current is not None and current.items:
            current.items[-1] += " " + stripped
        else:
            if current is None or current.kind != "para":
                close()
                current = Block("para")
                current.text = stripped
            else:
                current.text += " " + stripped
    close()
    return blocks


# --------------------------------------------------------------------------------------
# DOCX
# --------------------------------------------------------------------------------------


def _normalise_zip(data: bytes) -> bytes:
    """Rewrite a ZIP archive with fixed timestamps and attributes."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            item = zipfile.ZipInfo(info.filename, date_time=ZIP_DATE)
            item.compress_type = zipfile.ZIP_DEFLATED
            item.create_system = 3
            item.external_attr = 0o644 << 16
            dst.writestr(item, src.read(info.filename))
    return out.getvalue()


def render_docx(doc: Doc) -> bytes:
    """Render a document as DOCX bytes with Heading styles, lists and tables."""
    document = docx.Document()
    props = document.core_properties
    props.title = doc.title
    props.subject = doc.subtitle
    props.author = doc.author
    props.last_modified_by = doc.author
    props.created = doc.created.replace(tzinfo=None)
    props.modified = doc.created.replace(tzinfo=None)
    props.last_printed = doc.created.replace(tzinfo=None)
    props.revision = 1
    props.comments = ""
    props.keywords = "Orrery Works; Almanac; demo corpus"

    document.add_heading(doc.title, level=0)
    intro = document.add_paragraph(doc.subtitle)
    intro.runs[0].italic = True
    for block in doc.blocks():
        if block.kind == "heading":
            document.add_heading(block.text, level=block.level)
        elif block.kind == "para":
            document.add_paragraph(block.text)
        elif block.kind in ("bullets", "numbers"):
            style = "List Bullet" if block.kind == "bullets" else "List Number"
            for item in block.items:
                document.add_paragraph(item, style=style)
        elif block.kind == "table":
            header, *body = block.rows
            table = document.add_table(rows=1, cols=len(header))
            table.style = "Table Grid"
            for cell, value in zip(table.rows[0].cells, header, strict=True):
                cell.text = value
                for run in cell.paragraphs[0].runs:
                    run.bold = True
            for row in body:
                cells = table.add_row().cells
                for cell, value in zip(cells, row, strict=True):
                    cell.text = value
            document.add_paragraph()
    document.styles["Normal"].font.size = Pt(11)
    buffer = io.BytesIO()
    document.save(buffer)
    return _normalise_zip(buffer.getvalue())


# --------------------------------------------------------------------------------------
# PDF
# --------------------------------------------------------------------------------------

_PDF_REPLACEMENTS = {
    "\u2014": " - ",
    "\u2013": "-",
    "\u2018": "'",
    "\u2019": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u2026": "...",
    "\u2192": "->",
    "\u2264": "<=",
    "\u00a0": " ",
}


def _latin1(text: str) -> str:
    """Map typographic characters to ones the core PDF fonts can encode."""
    for src, dst in _PDF_REPLACEMENTS.items():
        text = text.replace(src, dst)
    return text.encode("latin-1", errors="replace").decode("latin-1")


class _SamplePDF(FPDF):
    """FPDF with a running header and page-numbered footer."""

    def __init__(self, running_title: str) -> None:
        super().__init__(format="A4")
        self.running_title = running_title

    def header(self) -> None:
        """Draw the running title on every page but the first."""
        if self.page_no() > 1:
            self.set_font("Helvetica", "I", 8)
            self.set_text_color(110, 110, 110)
            self.cell(0, 6, self.running_title, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            self.set_text_color(0, 0, 0)
            self.ln(2)

    def footer(self) -> None:
        """Draw the page number."""
        self.set_y(-14)
        self.set_font("Helvetica", "", 8)
        self.set_text_color(110, 110, 110)
        self.cell(0, 8, f"Page {self.page_no()}/{{nb}}", align="C")
        self.set_text_color(0, 0, 0)


def render_pdf(doc: Doc) -> bytes:
    """Render a document as a text-extractable PDF."""
    pdf = _SamplePDF(_latin1(doc.title))
    pdf.set_title(_latin1(doc.title))
    pdf.set_author(_latin1(doc.author))
    pdf.set_subject(_latin1(doc.subtitle))
    pdf.set_creator("scripts/make_samples.py")
    pdf.set_producer("fpdf2")
    pdf.set_creation_date(doc.created)
    pdf.set_auto_page_break(auto=True, margin=18)
    pdf.set_margins(20, 18, 20)
    pdf.alias_nb_pages()
    pdf.add_page()

    pdf.set_font("Helvetica", "B", 18)
    pdf.multi_cell(0, 9, _latin1(doc.title), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.set_font("Helvetica", "I", 10)
    pdf.multi_cell(0, 6, _latin1(doc.subtitle), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.ln(4)

    sizes = {1: 14, 2: 12, 3: 11}
    for block in doc.blocks():
        if block.kind == "heading":
            text = _latin1(block.text)
            pdf.ln(2)
            pdf.start_section(text, level=block.level - 1)
            pdf.set_font("Helvetica", "B", sizes.get(block.level, 11))
            pdf.multi_cell(0, 7, text, new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.ln(1)
        elif block.kind == "para":
            pdf.set_font("Helvetica", "", 10.5)
            pdf.multi_cell(0, 5.5, _latin1(block.text), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.ln(2)
        elif block.kind in ("bullets", "numbers"):
            pdf.set_font("Helvetica", "", 10.5)
            for number, item in enumerate(block.items, start=1):
                marker = "-" if block.kind == "bullets" else f"{number}."
                pdf.set_x(pdf.l_margin + 4)
                pdf.cell(6, 5.5, marker)
                pdf.multi_cell(0, 5.5, _latin1(item), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
            pdf.ln(2)
        elif block.kind == "table":
            pdf.set_font("Helvetica", "", 9)
            with pdf.table(line_height=5, text_align="LEFT", first_row_as_headings=True) as table:
                for row in block.rows:
                    pdf_row = table.row()
                    for value in row:
                        pdf_row.cell(_latin1(value))
            pdf.ln(3)
    return bytes(pdf.output())


# --------------------------------------------------------------------------------------
# E-mail
# --------------------------------------------------------------------------------------


@dataclass
class Mail:
    """One e-mail message of the corpus."""

    sender: str
    to: list[str]
    subject: str
    date: datetime
    msgid: str
    body: str
    cc: list[str] = field(default_factory=list)
    in_reply_to: str | None = None
    references: list[str] = field(default_factory=list)
    html: str | None = None
    attachments: list[tuple[str, str, str, bytes]] = field(default_factory=list)


def _reflow(text: str, width: int = 72) -> str:
    """Dedent an e-mail body and wrap long paragraphs and bullets (not quotes) to ``width``."""
    out: list[str] = []
    for para in textwrap.dedent(text).strip("\n").split("\n\n"):
        lines = para.splitlines()
        if all(len(line) <= width for line in lines) or any(line.startswith(">") for line in lines):
            out.append(para)
        elif lines[0].startswith("- "):
            items: list[str] = []
            for line in lines:
                if line.startswith("- "):
                    items.append(line)
                else:
                    items[-1] += " " + line.strip()
            out.append("\n".join(textwrap.fill(i, width, subsequent_indent="  ") for i in items))
        else:
            out.append(textwrap.fill(" ".join(lines), width))
    return "\n\n".join(out) + "\n"


def render_eml(mail: Mail, boundary_seed: str) -> bytes:
    """Serialise a message with fixed MIME boundaries."""
    msg = EmailMessage(policy=default_policy)
    msg["From"] = mail.sender
    msg["To"] = ", ".join(mail.to)
    if mail.cc:
        msg["Cc"] = ", ".join(mail.cc)
    msg["Subject"] = mail.subject
    msg["Date"] = format_datetime(mail.date)
    msg["Message-ID"] = mail.msgid
    if mail.in_reply_to:
        msg["In-Reply-To"] = mail.in_reply_to
    if mail.references:
        msg["References"] = " ".join(mail.references)
    msg["X-Mailer"] = "Orrery Works Mail (demo corpus)"
    msg.set_content(_reflow(mail.body))
    if mail.html is not None:
        msg.add_alternative(textwrap.dedent(mail.html).lstrip("\n"), subtype="html")
    for filename, maintype, subtype, payload in mail.attachments:
        if maintype == "text":
            msg.add_attachment(payload.decode("utf-8"), subtype=subtype, filename=filename)
        else:
            msg.add_attachment(payload, maintype=maintype, subtype=subtype, filename=filename)
    for index, part in enumerate(msg.walk()):
        if part.is_multipart():
            part.set_boundary(f"=_orrery_{boundary_seed}_{index}")
    return msg.as_bytes()


def _addr(name: str, local: str, domain: str = DOMAIN) -> str:
    return f"{name} <{local}@{domain}>"


MAREN = _addr("Maren Colquhoun", "maren.colquhoun")
DEV = _addr("Dev Raghunathan", "dev.raghunathan")
TOMASZ = _addr("Tomasz Ferreira", "tomasz.ferreira")
INES = _addr("Ines Carvalho", "ines.carvalho")
SOFIA = _addr("Sofia Brandt", "sofia.brandt")
CALLUM = _addr("Callum Reid", "callum.reid")
OLA = _addr("Ola Nyberg", "ola.nyberg")
JULES = _addr("Jules Armitage", "jules.armitage", "greyline-research.example")


def _msgid(stamp: str, tag: str, domain: str = DOMAIN) -> str:
    """Return a fixed Message-ID (``email.utils.make_msgid`` would add randomness)."""
    return f"<{stamp}.{tag}@{domain}>"


# --------------------------------------------------------------------------------------
# Content: team-structured
# --------------------------------------------------------------------------------------

OKRS = Doc(
    title="Product & Engineering OKRs, H1 2026",
    subtitle="Orrery Works - Almanac product organisation. Approved 27 January 2026. "
    "Owner: Maren Colquhoun (VP Product) and Tomasz Ferreira (CTO).",
    author="Maren Colquhoun",
    created=datetime(2026, 1, 27, 9, 0, tzinfo=UTC),
    body="""
    # How to read this document

    These objectives and key results (OKRs) cover January to June 2026 for the product and
    engineering organisation: 38 engineers in six squads, plus product management and design.
    They follow the 2026 priority stack in the roadmap, in the same order. Each key result has
    one owner, a baseline and a target; confidence is updated at the monthly review on the
    first Tuesday of each month.

    Scoring: 1.0 means the key result was fully met, 0.7 is a good result for a stretch
    target, anything under 0.4 triggers a short written review.

    # Objective 1 - Launch EU data residency (priority #1)

    EU data residency is the company's number one priority for 2026. Two German logistics
    prospects with a combined first-year value above $1.1M have made it a contractual
    condition, and DACH partners report the same requirement in most new RFPs.

    - KR 1.1: Complete the Postgres 16 migration of the production metadata store by
      March 15, 2026 (ADR-007); the Frankfurt region reuses the same automation.
    - KR 1.2: Frankfurt region private preview with two design partners by April 14, 2026.
    - KR 1.3: Frankfurt region generally available by May 19, 2026.
    - KR 1.4: Both German logistics contracts signed by June 30, 2026.

    # Objective 2 - Ship Almanac 4.0

    - KR 2.1: Release candidate to early-access customers on May 12, 2026.
    - KR 2.2: General availability on June 9, 2026.
    - KR 2.3: p95 dashboard load time down from 2.9 seconds to 1.5 seconds on the GA build.
    - KR 2.4: Query cache hit rate of at least 60% on early-access workspaces.

    # Objective 3 - Get Tidepool ready for a Q3 2026 launch

    Tidepool (streaming connectors and live dashboards) goes GA in Q3 2026. In H1 the goal
    is a credible private beta, not the launch itself.

    - KR 3.1: Connector framework v2 merged and running all existing batch connectors by
      April 30, 2026.
    - KR 3.2: Kafka and Postgres CDC connectors pass the beta test plan by June 19, 2026.
    - KR 3.3: Ten design partners signed for the private beta starting July 1, 2026.

    # Objective 4 - Lay the foundations for self-serve onboarding

    Self-serve onboarding is priority four on the stack. H1 work is limited to what the
    Growth squad can do without borrowing people from the other squads.

    - KR 4.1: Compass setup wizard prototype tested with 20 trial users.
    - KR 4.2: Median time to first dashboard down from 11 days to 8 days.
    - KR 4.3: Trial-to-paid conversion of 10% in Q2 2026 (baseline 9% in Q4 2025).

    # Key results at a glance

    | KR | Owner | Baseline | Target | Confidence (Jan) |
    |---|---|---|---|---|
    | 1.1 Postgres 16 migration | Ines Carvalho | Postgres 12 | Complete by March 15, 2026 | 0.8 |
    | 1.3 Frankfurt region GA | Tomasz Ferreira | Not started | May 19, 2026 | 0.7 |
    | 1.4 German contracts | Sofia Brandt | 0 of 2 | 2 of 2 | 0.6 |
    | 2.2 Almanac 4.0 GA | Priya Anand | 3.8 | June 9, 2026 | 0.8 |
    | 2.3 p95 load time | Priya Anand | 2.9 s | 1.5 s | 0.6 |
    | 3.1 Connector framework v2 | Dev Raghunathan | Design only | Merged by April 30 | 0.5 |
    | 3.3 Beta design partners | Dev Raghunathan | 4 | 10 | 0.7 |
    | 4.3 Trial-to-paid | Hana Okoye | 9% | 10% | 0.5 |

    # Dependencies and risks

    1. Tidepool Postgres CDC cannot start integration testing until the Postgres 16 cutover
       is done. A slip in KR 1.1 moves KR 3.2.
    2. The Platform squad (8 engineers) carries both KR 1.1 and KR 1.3.
    3. Compass has no dedicated designer until March.

    # Review cadence

    - Monthly OKR review, first Tuesday of the month, 45 minutes.
    - Mid-quarter check with the leadership team on February 17 and May 12.
    - Final H1 scoring in the first week of July, feeding H2 planning.
    """,
)

# --------------------------------------------------------------------------------------
# Content: engineering
# --------------------------------------------------------------------------------------

EU_RESIDENCY = Doc(
    title="Design: EU Data Residency (Frankfurt Region)",
    subtitle="Engineering design document ED-031. Author: Ines Carvalho (Head of Platform). "
    "Reviewers: Tomasz Ferreira, Security & Trust squad. Status: In review, 9 February 2026.",
    author="Ines Carvalho",
    created=datetime(2026, 2, 9, 14, 30, tzinfo=UTC),
    body="""
    # 1. Summary

    This document describes how Almanac will offer EU data residency through a new region in
    Frankfurt (eu-central). Residency is the company's priority #1 for 2026 and the
    contractual condition of two large German logistics prospects. The region reaches private
    preview on April 14, 2026 and general availability on May 19, 2026. It is built on
    Postgres 16 from day one, so it depends on nothing from the ADR-007 cutover in the UK
    region except the shared automation.

    # 2. Goals and non-goals

    ## Goals

    - Customer data, derived data (extracts, caches, exports) and backups of EU-resident
      workspaces are stored and processed only in Frankfurt.
    - Existing customers can move an existing workspace to Frankfurt with a scheduled,
      one-click migration (Q3 2026).
    - The same Almanac release train runs in both regions; no region-specific features.

    ## Non-goals

    - A US region (not in 2026).
    - Residency for the Starter and Team plans in 2026. Residency is an Enterprise feature.
    - Moving the global control plane (accounts, billing, plan entitlements) out of the UK.

    # 3. Where each kind of data lives

    | Data category | Examples | EU-resident workspace | Notes |
    |---|---|---|---|
    | Customer source data | Extracts, Parquet files | Frankfurt | Never leaves the region |
    | Query results and caches | Query cache, exports | Frankfurt | Cache keys hashed |
    | Workspace metadata | Dashboards, permissions | Frankfurt (Postgres 16) | Per-region cluster |
    | Backups | Nightly snapshots, WAL | Frankfurt, second AZ | 35-day retention |
    | Account and billing | Company name, plan | UK control plane | Covered in the DPA |
    | Application logs | Request logs, query text | UK observability stack | Interim, see 4.3 |
    | Metrics | Latency, error counts | UK observability stack | No customer content |

    # 4. Design

    ## 4.1 Region layout

    The Frankfurt region mirrors the UK region: an ingress tier, the API service, query
    workers, the scheduler and connector workers, a Postgres 16 cluster for metadata and
    object storage for columnar data. A thin routing layer in the global control plane maps
    each workspace to its home region; requests for an EU-resident workspace are redirected
    to Frankfurt before any customer data is read.

    ## 4.2 Keys and encryption

    Each region has its own key hierarchy in a regional key-management service. Enterprise
    customers can bring their own key; the key never leaves the region. Backups are encrypted
    with region keys, so a backup copied out of Frankfurt by mistake cannot be read elsewhere.

    ## 4.3 Logging (interim arrangement)

    Building a second observability stack in Frankfurt is not possible before GA with the
    people available. Until Q4 2026, application logs from the Frankfurt region, including
    query text that can contain customer field names and filter values, are shipped to the
    existing observability stack in the UK, with seven-day retention and restricted access.
    The Security & Trust squad considers this acceptable for the private preview only.
    Product and Sales have not yet been asked whether it is acceptable at GA; this is open
    question 1.

    ## 4.4 Migration of existing workspaces

    A workspace move copies metadata and columnar data to Frankfurt, verifies checksums,
    switches the routing entry and deletes the UK copy after seven days. Expected downtime is
    under 15 minutes for a typical workspace. The tool ships in Q3 2026, after GA.

    # 5. Timeline

    | Milestone | Date | Owner |
    |---|---|---|
    | Infrastructure provisioned | February 27, 2026 | Platform |
    | Postgres 16 cluster and automation ready | March 20, 2026 | Platform |
    | Private preview (two design partners) | April 14, 2026 | Tomasz Ferreira |
    | General availability | May 19, 2026 | Tomasz Ferreira |
    | Workspace migration tool | Q3 2026 | Platform |
    | Frankfurt observability stack (logs stay in EU) | Q4 2026 | Security & Trust |

    # 6. Staffing

    Platform has 8 engineers and Security & Trust has 5, out of 38 engineers in total. Both
    squads are fully allocated to residency and the Postgres 16 migration until GA. No other
    squad is expected to lend people.

    # 7. Open questions

    1. Is shipping Frankfurt application logs to the UK until Q4 2026 acceptable at GA, given
       that the roadmap promises that logs stay in the EU?
    2. Should Team-plan customers be able to buy residency as an add-on in 2027?
    3. Do we need a separate status page for the Frankfurt region?
    """,
)

ARCHITECTURE = Doc(
    title="Almanac Platform Architecture Overview",
    subtitle="Version 2.3, 16 February 2026. Owner: Tomasz Ferreira (CTO). Audience: "
    "engineering, security reviewers and technical due diligence.",
    author="Tomasz Ferreira",
    created=datetime(2026, 2, 16, 10, 0, tzinfo=UTC),
    body="""
    # 1. Purpose and scope

    This document describes the architecture of Almanac, the analytics workspace built by
    Orrery Works, as of February 2026, and the changes planned for 2026: the Postgres 16
    migration, the Frankfurt region for EU data residency, the Almanac 4.0 query engine and
    the Tidepool streaming connectors. It is the starting point for new engineers and for
    security reviews. Detailed decisions live in ADRs and design documents (ADR-007 for
    Postgres 16, ED-031 for EU residency).

    # 2. System context

    Almanac is a multi-tenant SaaS product. Customers connect operational data sources
    (ERP, warehouse management, telematics, spreadsheets), Almanac extracts and stores the
    data in a columnar format, and operations teams build dashboards and alerts on top. There
    are about 410 paying customer accounts and roughly 2,300 active workspaces.

    - Users reach Almanac through the web app and a read-only mobile view.
    - Data arrives through batch connectors today (hourly at best) and through Tidepool
      streaming connectors from the second half of 2026.
    - Identity comes from Almanac accounts or from the customer's identity provider
      through SAML/OIDC and SCIM on the Business and Enterprise plans.

    # 3. Components

    | Component | Responsibility | Language | Owning squad |
    |---|---|---|---|
    | Web app | Dashboard editor and viewer | TypeScript | Dashboards |
    | API service | Workspaces, permissions, dashboards | Kotlin | Platform |
    | Query engine | Executes dashboard queries on columnar data | Rust | Query |
    | Query cache | Shared results per workspace (from 4.0) | Rust | Query |
    | Scheduler | Extract jobs, exports, alerts | Kotlin | Platform |
    | Connector workers | Batch extraction from sources | Kotlin | Connectors |
    | Tidepool gateway | Streaming ingestion and change events | Rust | Connectors |
    | Metadata store | Postgres cluster for all metadata | SQL | Platform |
    | Object storage | Parquet files per workspace | n/a | Platform |

    # 4. Data stores

    ## 4.1 Metadata store and the Postgres 16 migration

    All metadata (workspaces, dashboards, permissions, schedules, connector state) lives in a
    Postgres cluster per region. The UK region has run Postgres 12 since 2020. Per ADR-007 we
    are migrating to Postgres 16 with a blue-green approach based on logical replication. The
    staging rehearsal passed on February 3 with a write pause of 3 minutes 40 seconds. The
    production cutover window is March 7 to 15, and the migration finishes on March 15, 2026.
    The Postgres 12 cluster is decommissioned by the end of March.

    ## 4.2 Columnar storage

    Extracted data is stored as Parquet files in object storage, partitioned by workspace and
    by extract date. The query engine reads these files directly. Almanac 4.0 adds a
    vectorised execution path and a query cache shared by all users of a workspace; 4.0 is
    generally available on June 9, 2026.

    # 5. Tidepool architecture

    Tidepool adds streaming ingestion. Sources publish change events (Kafka topics or
    database change-data-capture); the Tidepool gateway batches them into micro-partitions
    every few seconds and invalidates the affected query-cache entries so that live
    dashboards refresh within 10 seconds.

    ## 5.1 Dependencies

    1. Connector framework v2. The current framework assumes batch extraction with a start
       and an end. Streaming needs long-lived workers, checkpoints and back-pressure. The
       rewrite is the critical path.
    2. Postgres 16 in production, for the logical replication features used by connector
       state and by the Postgres CDC connector test harness.
    3. The Almanac 4.0 query cache, for invalidation.

    ## 5.2 Engineering assessment of dates

    The product roadmap shows a Tidepool private beta on July 1, 2026. From an engineering
    point of view the earliest realistic private beta is August 2026: connector framework v2
    is planned to merge at the end of April, and we need at least eight weeks of soak time
    with the existing batch connectors on the new framework before we put design partners on
    it. Kafka is the most advanced connector; Postgres CDC starts integration testing after
    the Postgres 16 cutover; MySQL CDC has not started.

    # 6. EU region (Frankfurt)

    The Frankfurt region (eu-central) is a full copy of the data plane: API service, query
    workers, scheduler, connector workers, a Postgres 16 metadata cluster and object storage.
    The global control plane (accounts, billing, routing) stays in the UK. The region goes to
    private preview on April 14 and to general availability on May 19, 2026. Details,
    including the interim logging arrangement, are in ED-031.

    # 7. Reliability and security

    | Area | Current state | 2026 target |
    |---|---|---|
    | Availability (monthly) | 99.9% achieved in 11 of 12 months of 2025 | 99.9% per region |
    | Recovery point objective | 24 hours | 15 minutes (WAL shipping) |
    | Recovery time objective | 8 hours | 2 hours |
    | p95 dashboard load | 2.9 seconds | 1.5 seconds with 4.0 |
    | Certifications | ISO 27001 | ISO 27001 and SOC 2 Type II |

    # 8. Team and ownership

    Engineering has 38 engineers in six squads: Platform (8), Query (7), Connectors (7),
    Dashboards (6), Growth (5) and Security & Trust (5). Every component has exactly one
    owning squad, listed in section 3. On-call is per squad, with a shared incident commander
    rota across engineering managers.

    # 9. Risks

    - Large tenants with long-running report jobs could block the Postgres 16 cutover.
      Mitigation: pause scheduled reports during the window, add statement timeouts.
    - The Platform squad carries both the migration and the Frankfurt region in March and
      April.
    - Tidepool's critical path runs through connector framework v2, which has no slack.
    """,
)

# --------------------------------------------------------------------------------------
# Content: external-analyst
# --------------------------------------------------------------------------------------

ANALYST_BRIEF = Doc(
    title="Vendor Brief: Orrery Works (Almanac)",
    subtitle="Greyline Research - Vendor brief GR-2026-009 - Published 26 February 2026 - "
    "Analyst: Jules Armitage. For Greyline subscribers.",
    author="Jules Armitage, Greyline Research",
    created=datetime(2026, 2, 26, 8, 0, tzinfo=UTC),
    body="""
    # Bottom line

    Orrery Works is a focused, well-run vendor of operational analytics for mid-market
    companies with physical operations. Its product, Almanac, is strong on dashboard design
    and batch connectors and weak on data freshness and time-to-value. 2026 is a pivotal
    year: the company is adding an EU (Frankfurt) region, a new query engine (Almanac 4.0) and
    streaming ingestion (Tidepool). If it delivers all three, it becomes a credible shortlist
    candidate across Europe. Our main caution is the streaming timeline: we expect Tidepool
    to reach general availability in Q4 2026, later than some of the company's own material
    implies.

    # Company snapshot

    | Item | Value | Source |
    |---|---|---|
    | Founded | 2019 | Company |
    | Headquarters | Leeds, UK (second office in Porto) | Company |
    | Employees | 142 | Company briefing, January 2026 |
    | Engineers | About 40 | Greyline estimate |
    | Paying customers | Approximately 380 | Greyline estimate from briefing |
    | ARR | $13M to $15M | Greyline estimate |
    | Net revenue retention | Above 110% | Company |
    | Gross logo churn | Below 5% annually | Company briefing |

    # Product

    Almanac lets operations teams connect operational systems (ERP, warehouse management,
    telematics, spreadsheets), model the data lightly and publish dashboards and alerts.
    Customers praise the dashboard editor and the templates for logistics and manufacturing.
    The most common complaints are slow dashboards on large workspaces and data that is
    hours old.

    # Pricing

    | Plan | List price | Notes |
    |---|---|---|
    | Starter | Free | Up to 3 seats |
    | Team | $59 per seat per month | Entry paid tier |
    | Business | $89 per seat per month | SSO, SCIM, audit log |
    | Enterprise | Custom | Residency, private networking |

    In our briefing, partners indicated that the Team plan is priced at $59 per seat per
    month. This places Almanac in the middle of its peer group, above Quarrystone BI and below
    Fathomly. The Business plan is competitive for buyers who need SSO and SCIM.

    # Roadmap assessment

    ## EU data residency

    A Frankfurt region is planned for mid-2026. We regard this as essential for DACH growth;
    German buyers now write residency into their requirements. We have not reviewed the
    technical design, and buyers should ask where logs and support data are processed.

    ## Almanac 4.0

    The new query engine and shared cache are due in mid-2026. Early-access customers we
    spoke with report materially faster dashboards on the release candidate.

    ## Tidepool (streaming)

    Tidepool adds streaming connectors (Kafka and database change-data-capture) and live
    dashboards. Based on our conversations with the company and two of its partners, we
    expect general availability in Q4 2026, with a private beta over the summer. The
    connector framework is being rewritten to support streaming, which is typically where
    such projects slip.

    ## Self-serve onboarding

    Management described self-serve onboarding as its top priority for 2026. This is the
    right call: the customers we interviewed reported one to two weeks from purchase to
    first dashboard, usually with a solutions engineer involved. A setup wizard (Compass) is
    in development.

    # Strengths

    - Deep understanding of operations buyers, reflected in templates and terminology.
    - Strong references in UK logistics and manufacturing.
    - Disciplined scope: no embedded-analytics or data-warehouse ambitions.
    - Healthy retention, with net revenue retention above 110%.

    # Cautions

    - Streaming arrives later than at Fathomly and Meridian Tallyworks.
    - Onboarding depends on people, which limits growth and raises cost.
    - A small engineering team of about 40 is carrying three large initiatives at once.
    - No US hosting; North American buyers are served only through partners.

    # Recommendations for buyers

    1. UK and Irish operations teams with batch data needs should shortlist Almanac today.
    2. DACH buyers should require a signed residency addendum and ask where logs live.
    3. Buyers who need streaming in 2026 should plan for Q4 2026 at the earliest and ask
       for a beta place.
    4. Negotiate on the Business plan; the Team plan is rarely discounted.

    # Methodology

    This brief draws on a vendor briefing in January 2026, conversations with three partners
    and interviews with six customers in February 2026. Figures marked as estimates are
    Greyline's and were not confirmed by the vendor at publication.
    """,
)

# --------------------------------------------------------------------------------------
# Content: attachments and e-mail
# --------------------------------------------------------------------------------------

PRICING_PROPOSAL = Doc(
    title="Proposal: Team Plan Price Change",
    subtitle="Prepared by Sofia Brandt (CRO) for the pricing review of 4 March 2026. "
    "Status: proposal, not approved.",
    author="Sofia Brandt",
    created=datetime(2026, 3, 2, 8, 0, tzinfo=UTC),
    body="""
    # Proposal

    Raise the Team plan from $49 to $59 per seat per month for new customers from the start
    of Q3 2026 (July 1, 2026). Existing Team customers keep $49 for twelve months from the
    change. The Business plan stays at $89 per seat per month.

    # Why

    - Partners in Zurich and Munich report that $49 reads as a departmental tool price and
      that enterprise procurement teams ask whether Almanac is a serious product.
    - Peer list prices for the entry paid tier range from $55 to $70.
    - Team-plan customers expand to Business; a higher entry price narrows the upgrade gap.

    # Partner feedback (summary)

    | Partner region | Feedback | Deals affected (2025) |
    |---|---|---|
    | Zurich | Price undermines bundle with services | 4 |
    | Munich | Procurement questions product maturity | 3 |
    | Vienna | No concern on price | 0 |

    # Expected impact

    - Roughly 6% of ARR if no Team customer churns or downgrades.
    - Finance expects lower trial conversion; the size of that effect is the main question
      for the review.

    # Decision requested

    1. Approve $59 per seat per month for new Team customers from July 1, 2026.
    2. Approve grandfathering of existing Team customers at $49 for twelve months.
    """,
)

TIDEPOOL_SCHEDULE_CSV = """\
connector,stage,roadmap_target,revised_target,dependency,confidence,notes
Kafka,Private beta,2026-07-01,2026-07-01,Connector framework v2,High,Working end to end in the lab
Postgres CDC,Private beta,2026-07-01,2026-08-17,Postgres 16 in production (now April 2026),Medium,\
Integration tests start after the cutover
MySQL CDC,Private beta,2026-07-01,2026-09-14,Two engineers free from March,Low,Not started
Live dashboards,Private beta,2026-07-01,2026-07-01,Almanac 4.0 query cache (June 9),High,\
Cache invalidation prototype done
All three connectors,General availability,2026-09-15,2026-10-20,All of the above,Medium,\
GA moves to Q4 2026 if MySQL CDC is in v1
Kafka + Postgres CDC only,General availability,2026-09-15,2026-09-29,Product agrees two \
connectors count as GA,Medium,Keeps GA in Q3 2026; MySQL CDC in 1.1
"""

FACT_CHECK_MD = """\
# Greyline fact check: Orrery Works (Almanac)

Prepared by Jules Armitage for the next edition of GR-2026-009 and GR-2026-014.
Please mark each row **Confirmed** or give the correct value, with a source we can cite.

| # | Claim as published | Where published | Vendor response |
|---|--------------------|-----------------|-----------------|
| 1 | Tidepool general availability in Q4 2026 | GR-2026-009, GR-2026-014 | |
| 2 | Team plan list price $59 per seat per month | GR-2026-009, GR-2026-014 | |
| 3 | Business plan list price $89 per seat per month | GR-2026-009 | |
| 4 | Approximately 380 paying customers | GR-2026-009, GR-2026-014 | |
| 5 | 142 employees | GR-2026-009, GR-2026-014 | |
| 6 | Gross logo churn below 5% annually | GR-2026-009 | |
| 7 | Self-serve onboarding is the top priority for 2026 | GR-2026-009, GR-2026-014 | |
| 8 | EU (Frankfurt) region in mid-2026 | GR-2026-009, GR-2026-014 | |

## Notes

- Corrections received by 3 April 2026 will appear in the April edition.
- We publish the vendor's corrected value next to our original estimate.
"""


def build_mails(proposal_docx: bytes) -> dict[str, bytes]:
    """Build every .eml file of the corpus, keyed by its path under the sample root."""
    schedule_id = _msgid("20260218094200", "tidepool-schedule")
    reply_id = _msgid("20260218171500", "re-tidepool-schedule")
    pricing_id = _msgid("20260302081500", "team-plan-pricing")
    factcheck_id = _msgid("20260320103000", "factcheck-gr-2026-009", "greyline-research.example")

    schedule = Mail(
        sender=DEV,
        to=[MAREN],
        cc=[TOMASZ],
        subject="Tidepool connector schedule (revised)",
        date=datetime(2026, 2, 18, 9, 42, tzinfo=UTC),
        msgid=schedule_id,
        body="""
        Hi Maren,

        As promised at last week's sync, attached is the revised Tidepool connector
        schedule, with and without MySQL CDC in v1.

        Short version:

        - Kafka and live dashboards are on track for the July 1 private beta.
        - Postgres CDC can't start integration testing until production is on Postgres 16,
          and Tomasz now expects the cutover to finish in April 2026, not mid-March.
        - With all three connectors, my honest GA estimate is October 20, 2026, i.e. Q4 2026.
        - If Product accepts Kafka + Postgres CDC as GA and MySQL CDC follows in 1.1, we can
          hold Q3 (September 29).

        I'd rather we decide which of these we're doing before the board meeting on March 12
        than find out in August.

        Dev

        --
        Dev Raghunathan - Engineering Manager, Connectors - Orrery Works
        """,
        attachments=[
            (
                "tidepool-connector-schedule.csv",
                "text",
                "csv",
                TIDEPOOL_SCHEDULE_CSV.encode("utf-8"),
            )
        ],
    )

    reply = Mail(
        sender=MAREN,
        to=[DEV],
        cc=[TOMASZ],
        subject="Re: Tidepool connector schedule (revised)",
        date=datetime(2026, 2, 18, 17, 15, tzinfo=UTC),
        msgid=reply_id,
        in_reply_to=schedule_id,
        references=[schedule_id],
        body="""
        Thanks Dev, this is exactly what I needed.

        My preference is option two: GA in Q3 2026 with Kafka and Postgres CDC, MySQL CDC in
        1.1. That keeps the date we gave the board and keeps v1 small, which is what I wanted
        anyway. I'll put it to the leadership team on March 3 and then update the roadmap.
        Until then the roadmap keeps saying Q3 2026, and please don't quote October outside
        the team.

        Tomasz - can you and Ines settle the Postgres 16 date this week? ADR-007 and the
        release plan still say March 15; you said April at the sync. Dev's plan depends on
        which one is true.

        Maren

        On 18 Feb 2026, at 09:42, Dev Raghunathan wrote:
        > With all three connectors, my honest GA estimate is October 20,
        > 2026, i.e. Q4 2026.
        > If Product accepts Kafka + Postgres CDC as GA and MySQL CDC follows
        > in 1.1, we can hold Q3 (September 29).
        """,
    )

    pricing = Mail(
        sender=SOFIA,
        to=[MAREN, CALLUM],
        cc=[OLA],
        subject="Team plan pricing \u2013 feedback from Z\u00fcrich & M\u00fcnchen partners",
        date=datetime(2026, 3, 2, 8, 15, tzinfo=UTC),
        msgid=pricing_id,
        body="""
        Hi both,

        Ahead of Wednesday's pricing review, attached is my proposal to move the Team plan
        from $49 to $59 per seat per month for new customers from July 1, 2026, with
        existing customers grandfathered for twelve months.

        The short version of the partner feedback from Z\u00fcrich and M\u00fcnchen: $49 makes
        us look like a departmental tool, and that costs us in enterprise procurement. Seven
        deals in 2025 had the question raised explicitly.

        I know Maren's concern is trial conversion. Ola has the numbers; let's look at them
        together on Wednesday rather than argue by e-mail.

        To be clear, this is a proposal. Nothing has been communicated to customers.

        Sofia

        --
        Sofia Brandt - Chief Revenue Officer - Orrery Works
        """,
        attachments=[
            (
                "pricing-proposal-team-plan.docx",
                "application",
                "vnd.openxmlformats-officedocument.wordprocessingml.document",
                proposal_docx,
            )
        ],
    )

    factcheck = Mail(
        sender=JULES,
        to=[MAREN],
        subject="Fact check: Greyline coverage of Orrery Works (GR-2026-009, GR-2026-014)",
        date=datetime(2026, 3, 20, 10, 30, tzinfo=UTC),
        msgid=factcheck_id,
        body="""
        Dear Maren,

        Thank you for your note about our recent coverage. As discussed, I've attached the
        claims table from our vendor brief (GR-2026-009, 26 February) and the landscape note
        (GR-2026-014, 9 March). Please mark each row as confirmed or give the correct value
        with a source we can cite.

        In particular we would like to confirm the Tidepool GA quarter (we have Q4 2026),
        the Team plan price (we have $59 per seat per month) and the number of paying
        customers (we estimated approximately 380).

        Corrections received by 3 April 2026 will be included in the April edition.

        Kind regards,
        Jules Armitage
        Principal Analyst, Greyline Research
        """,
        html="""
        <html><body>
        <p>Dear Maren,</p>
        <p>Thank you for your note about our recent coverage. As discussed, I've attached the
        claims table from our vendor brief (<b>GR-2026-009</b>, 26 February) and the landscape
        note (<b>GR-2026-014</b>, 9 March). Please mark each row as confirmed or give the
        correct value with a source we can cite.</p>
        <p>In particular we would like to confirm:</p>
        <ul>
          <li>the Tidepool GA quarter (we have <b>Q4 2026</b>),</li>
          <li>the Team plan price (we have <b>$59 per seat per month</b>),</li>
          <li>the number of paying customers (we estimated <b>approximately 380</b>).</li>
        </ul>
        <p>Corrections received by 3 April 2026 will be included in the April edition.</p>
        <p>Kind regards,<br>Jules Armitage<br>Principal Analyst, Greyline Research</p>
        </body></html>
        """,
        attachments=[
            ("greyline-fact-check.md", "text", "markdown", FACT_CHECK_MD.encode("utf-8")),
        ],
    )

    return {
        "team-conversational/2026-02-18_tidepool-connector-schedule.eml": render_eml(
            schedule, "a1"
        ),
        "team-conversational/2026-02-18_re-tidepool-connector-schedule.eml": render_eml(
            reply, "a2"
        ),
        "team-conversational/2026-03-02_team-plan-pricing-partner-feedback.eml": render_eml(
            pricing, "b1"
        ),
        "external-analyst/2026-03-20_greyline-fact-check.eml": render_eml(factcheck, "c1"),
    }


# --------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------


def build_all() -> dict[str, bytes]:
    """Build every generated file, keyed by its path relative to the sample root."""
    renderers: dict[str, tuple[Callable[[Doc], bytes], Doc]] = {
        "team-structured/okrs-h1-2026.docx": (render_docx, OKRS),
        "engineering/eu-residency-design.docx": (render_docx, EU_RESIDENCY),
        "engineering/architecture-overview.pdf": (render_pdf, ARCHITECTURE),
        "external-analyst/greyline-brief-orrery-works-2026.pdf": (render_pdf, ANALYST_BRIEF),
    }
    files = {path: render(doc) for path, (render, doc) in renderers.items()}
    files.update(build_mails(render_docx(PRICING_PROPOSAL)))
    return files


def main(argv: list[str] | None = None) -> int:
    """Write (or check) the generated sample files; return the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="sample root folder")
    parser.add_argument("--check", action="store_true", help="exit 1 if any generated file differs")
    args = parser.parse_args(argv)

    stale: list[str] = []
    for rel, data in sorted(build_all().items()):
        target = args.out / rel
        if args.check:
            if not target.exists() or target.read_bytes() != data:
                stale.append(rel)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        print(f"wrote {target.relative_to(args.out)} ({len(data):,} bytes)")
    if stale:
        print("stale: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
