"""One error root for everything ragbench raises on purpose, with one subclass per area.

Every face (CLI, app pages, HTTP, MCP) catches `RagbenchError` once and shows its message as
one line; anything else is a bug and keeps its traceback. Messages name the bad value and,
where there are choices, the valid ones. Areas raise their own subclass, so a caller that
cares (the HTTP face maps `NotFoundError` to 404, `InvalidRequestError` to 400) can tell them
apart without parsing text.
"""

from __future__ import annotations


class RagbenchError(Exception):
    """Root of every error ragbench raises deliberately; the message is for the user."""


class InvalidRequestError(RagbenchError):
    """A request with a bad value (empty question, unknown mode, bad format...)."""


class NotFoundError(RagbenchError):
    """An id or name that the workspace does not hold (document, chunk, answer, report)."""


class SettingsError(InvalidRequestError):
    """A setting has a bad value; the message names it and the valid choices."""


class ParseError(RagbenchError):
    """A file could not be turned into a document; the message says why, for the user."""


class UnsupportedFormatError(ParseError):
    """The file's format is not one ragbench can parse."""


class EmptyDocumentError(ParseError):
    """The file parsed but holds no text worth indexing."""


class EncryptedDocumentError(ParseError):
    """The file is password-protected."""


class IdCollisionError(RagbenchError):
    """Two different things hashed to the same id; never overwrite, report it."""


class ChunkingError(InvalidRequestError):
    """Chunk settings are invalid (the message names them)."""


class EmbeddingError(RagbenchError):
    """The embedding backend failed or is misconfigured; the message says how to fix it."""


class RetrievalError(InvalidRequestError):
    """A retrieval request that cannot be served; the message names the bad value."""


class GraphError(InvalidRequestError):
    """A graph request that cannot be served (unknown chunk, bad edge type, no graph)."""


class LLMError(RagbenchError):
    """The model endpoint failed; the message says which endpoint and why."""


class ContextWindowError(LLMError):
    """The prompt does not fit the model's context window; carries the numbers when known."""

    def __init__(self, message: str, prompt_tokens: int | None = None,
                 context_window: int | None = None) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.context_window = context_window


class GenerationStopped(RagbenchError):
    """Work stopped on request (its client went away); nothing was stored for it."""


class StoreError(RagbenchError):
    """The catalog cannot be opened or migrated (e.g. written by a newer ragbench)."""


class BackendUnsupportedError(StoreError):
    """The configured storage backend (PostgreSQL) does not implement this operation yet; the
    message names the operation (docs/team.md lists what is implemented).
    """


class DamagedIndexError(StoreError):
    """A derived index (the Chroma vectors) cannot be read; `ragbench doctor` rebuilds it."""


class ArchiveError(RagbenchError):
    """The archive could not be written or read; the message says what and where."""


class ArchiveOwnerError(ArchiveError):
    """The archive folder (`archive_dir`) belongs to another workspace or holds another
    archive's entries; the message names the folder, its owner and what to do.
    """


class ArchivePathError(ArchiveError):
    """A name or URI would lead outside the archive root, or is not a valid archive name."""


class EvalError(InvalidRequestError):
    """The dataset folder is not in BEIR format; the message names what is missing."""
