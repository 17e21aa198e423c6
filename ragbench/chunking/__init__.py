"""Token chunking: cl100k token windows over a parsed document's blocks (specs/002 sizes).

`tokenizer` encodes offline (bpe-openai, tiktoken as reference and fallback) and maps tokens
to characters; `chunker` cuts exact slices of the document text with specs/003 metadata and
specs/004 ids.
"""

from ragbench.chunking.chunker import ChunkingError, chunk_document, chunk_documents

__all__ = ["ChunkingError", "chunk_document", "chunk_documents"]
