"""What faces need besides the areas: choices for their widgets and inert renderers.

Faces import the facade only (an import-contract test says so); the constants and pure
display helpers they need are re-exported here, so a page or a CLI command never reaches into
a stage module. Nothing here touches a workspace.
"""

from ragbench import __version__ as VERSION
from ragbench.answer import ChatResponse, Source
from ragbench.answer.anchors import ViewAnchor, anchor_in_view
from ragbench.archive.folder import sanitize_name as archive_safe_name
from ragbench.archive.markdown import md_escape
from ragbench.archive.ops import rewrite_links
from ragbench.archive.render import view_html
from ragbench.graph.model import EDGE_TYPES
from ragbench.graph.view import ego_html
from ragbench.ingest.uploads import ACCEPTED_EXTENSIONS
from ragbench.ingest.uploads import sanitize_name as upload_safe_name
from ragbench.models import CHUNK_TYPES
from ragbench.reports import FORMATS as REPORT_FORMATS
from ragbench.reports import TEMPLATES as REPORT_TEMPLATES
from ragbench.reports import (
    GenerationOptions,
    LensCoverage,
    PartVersion,
    Report,
    ReportBrief,
    ReportCoverage,
    ReportPart,
    ReportSummary,
    Suggestion,
    TemplateInfo,
)
from ragbench.retrieval import MODES

__all__ = [
    "ACCEPTED_EXTENSIONS", "CHUNK_TYPES", "EDGE_TYPES", "MODES", "VERSION", "REPORT_FORMATS",
    "REPORT_TEMPLATES", "ChatResponse", "GenerationOptions", "LensCoverage", "PartVersion",
    "Report", "ReportBrief", "ReportCoverage", "ReportPart", "ReportSummary", "Source",
    "Suggestion", "TemplateInfo", "ViewAnchor", "anchor_in_view", "archive_safe_name", "ego_html",
    "md_escape", "rewrite_links", "view_html", "upload_safe_name",
]
