"""Writing: answers and report parts as prose built from the sources' own sentences.

`understand` reads a question (kind, aspects); `write` turns a wide pool of retrieved chunks
into a cited, themed summary of a requested length (see `writer`).
"""

from ragbench.writing.question import Question, understand
from ragbench.writing.writer import DEFAULT_WORDS, Written, statement_key, write

__all__ = ["DEFAULT_WORDS", "Question", "Written", "statement_key", "understand", "write"]
