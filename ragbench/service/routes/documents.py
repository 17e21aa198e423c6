"""Documents over HTTP: list, upload (multipart), show and delete (`/v1/documents`).

Uploads and deletes take the server's write lock, so two batches never interleave. On a
PostgreSQL workspace an upload is stored and queued, not ingested in the request: the answer
is 202 with one job per file (`GET /v1/jobs/{id}` follows it; `ragbench worker` runs it).
"""

from __future__ import annotations

import threading
from typing import Annotated

from fastapi import APIRouter, File, Form, Query, UploadFile
from fastapi.responses import JSONResponse

from ragbench.models import DocumentRecord, IngestReport
from ragbench.workbench import Workbench
from ragbench.workbench.jobs import QueuedUploads
from ragbench.workbench.results import DeleteResult, DocumentDetail


def routes(wb: Workbench, writes: threading.Lock) -> APIRouter:
    """`/documents` and `/documents/{doc_id}` over `wb`; changes hold `writes`."""
    router = APIRouter()

    @router.get("/documents", response_model=list[DocumentRecord], tags=["documents"])
    def documents(status: Annotated[str, Query(pattern="^(indexed|failed)$")] = "indexed",
                  ) -> list[DocumentRecord]:
        """Indexed (or failed) documents."""
        return wb.library.documents(status)

    @router.post("/documents", response_model=IngestReport, tags=["documents"],
                 responses={202: {"model": QueuedUploads,
                                  "description": "PostgreSQL workspace: queued for workers"}})
    def upload(files: Annotated[list[UploadFile], File(description="files to ingest")],
               lens: Annotated[str | None, Form(description="lens of the files")] = None,
               ) -> IngestReport | JSONResponse:
        """Ingest uploaded files (multipart) into a lens; each file is reported on its own
        (inserted, updated, skipped or failed with the reason), nothing half-stored. On a
        PostgreSQL workspace the files are queued instead: 202 with their jobs at once.
        """
        items = [(f.filename or "upload", f.file.read()) for f in files]
        if wb.jobs.deferred:
            queued = wb.jobs.submit_uploads(items, lens=lens or None)
            return JSONResponse(queued.model_dump(mode="json"), status_code=202)
        with writes:
            return wb.library.ingest_uploads(items, lens=lens or None)

    @router.get("/documents/{doc_id}", response_model=DocumentDetail, tags=["documents"])
    def document(doc_id: str) -> DocumentDetail:
        """A document: metadata, plaintext, chunks with offsets, attachments."""
        return wb.library.show(doc_id)

    @router.delete("/documents/{doc_id}", response_model=DeleteResult, tags=["documents"])
    def delete_document(doc_id: str) -> DeleteResult:
        """Delete a document with its chunks, vectors, original and archive entry."""
        with writes:
            return wb.library.delete(doc_id)

    return router
