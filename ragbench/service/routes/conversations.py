"""Conversations over HTTP: list, show, rename, delete and export (`/v1/conversations`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from ragbench.service.routes.common import attachment_headers
from ragbench.service.schemas import RenameRequest
from ragbench.workbench import Workbench


def routes(wb: Workbench) -> APIRouter:
    """`/conversations` and `/conversations/{conversation_id}[/export]` over `wb`."""
    router = APIRouter()

    @router.get("/conversations", tags=["chat"])
    def conversations(limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[Any]:
        """Conversations, most recently changed first."""
        return [c.model_dump() for c in wb.chats.list(limit)]

    @router.get("/conversations/{conversation_id}", tags=["chat"])
    def conversation(conversation_id: str) -> dict[str, Any]:
        """A conversation with every turn (answers with sources and references)."""
        return wb.chats.get(conversation_id).model_dump()

    @router.patch("/conversations/{conversation_id}", tags=["chat"])
    def rename_conversation(conversation_id: str, request: RenameRequest) -> dict[str, Any]:
        """Retitle a conversation."""
        return wb.chats.rename(conversation_id, request.title).model_dump()

    @router.delete("/conversations/{conversation_id}", tags=["chat"])
    def delete_conversation(conversation_id: str) -> dict[str, Any]:
        """Delete a conversation and its answers."""
        return {"conversation_id": conversation_id,
                "turns_deleted": wb.chats.delete(conversation_id)}

    @router.get("/conversations/{conversation_id}/export", tags=["chat"])
    def export_conversation(conversation_id: str,
                            format: Annotated[str, Query(pattern="^(md|json)$")] = "md",
                            ) -> Response:
        """The conversation as Markdown (numbered sources with links) or JSON."""
        text = wb.chats.export(conversation_id, format)
        kind = "text/markdown" if format == "md" else "application/json"
        return Response(text, media_type=f"{kind}; charset=utf-8",
                        headers=attachment_headers(f"conversation-{conversation_id}.{format}"))

    return router
