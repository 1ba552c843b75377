"""Turning generated text into the bytes a verifier writes: encodings and damage."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.strategies.labels import composite
from conformance.strategies.picks import pick
from conformance.strategies.weights import pooled

# Characters str.strip() and float() treat as whitespace, and lookalikes they do not
# (zero-width space, BOM, word joiner), so a runner's idea of "blank" is tested too.
WHITESPACE = (" ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0",
              "\u1680", "\u2000", "\u2009", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000")
NOT_WHITESPACE = ("\u200b", "\ufeff", "\u2060", "\x00")

# One string choice (st.text over the characters; "\r\n" is "\r" then "\n"), not a list of picks.
whitespace = st.text("".join(dict.fromkeys("".join(WHITESPACE))), max_size=3)
# A quarter each: nothing, a newline, whitespace, a lookalike (pooled: one choice for a fixed value).
padding = pooled((4, ("", "\n")), (4, whitespace), (1, NOT_WHITESPACE))

BOM = b"\xef\xbb\xbf"
# Bytes that are not UTF-8: a stray continuation, a truncated sequence, an
# encoded surrogate, an overlong slash, latin-1 text.
INVALID_UTF8 = (b"\xff", b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"caf\xe9")


MODES = ("plain",) * 6 + ("crlf", "cr", "bom", "invalid", "utf16")


@composite
def encoded_as(draw: st.DrawFn, texts: st.SearchStrategy[str], mode: str) -> bytes:
    """UTF-8 bytes of a drawn text, as ``mode`` says: plain, with CRLF line ends or a CR at the end, a BOM,
    invalid bytes put in, or UTF-16."""
    text = draw(texts)
    if mode == "crlf":
        text = text.replace("\n", "\r\n") if "\n" in text else text + "\r\n"
    elif mode == "cr":
        text = text + "\r"
    data = text.encode("utf-8", "surrogatepass")
    if mode == "bom":
        return BOM + data
    if mode == "invalid":
        at = draw(st.integers(0, len(data)))
        return data[:at] + pick(draw, INVALID_UTF8) + data[at:]
    if mode == "utf16":
        return text.encode("utf-16", "surrogatepass")
    return data


def encodings(weight: int, texts: st.SearchStrategy[str]) -> tuple[tuple[int, st.SearchStrategy[bytes]], ...]:
    """Branches for ``pooled``: a drawn text's bytes in each of MODES, ``weight`` apiece (plain six times).

    Each mode is a branch of the pool that holds them, so the mode costs no choice of its own.
    """
    return tuple((weight * MODES.count(mode), encoded_as(texts, mode)) for mode in dict.fromkeys(MODES))


def encoded(texts: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    """UTF-8 bytes of a drawn text; sometimes with CRLF line ends, a BOM or invalid bytes."""
    return pooled(*encodings(1, texts))
