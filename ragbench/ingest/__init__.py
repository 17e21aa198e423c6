"""Ingest: decide (insert/update/skip/reprocess), parse, chunk, add context, embed, store.

`ingestor` runs one file and its attachments atomically, `versioning` decides and finds stale
documents, `context` builds the text a chunk is embedded with, `uploads` screens browser files.
"""

from ragbench.ingest.ingestor import Ingestor
from ragbench.ingest.ingestor_base import Planned, Progress

__all__ = ["Ingestor", "Planned", "Progress"]
