"""Turning generated text into the bytes a verifier writes: encodings and damage."""

from __future__ import annotations

from hypothesis import strategies as st

from conformance.strategies.picks import pick
from conformance.strategies.weights import pooled

# Characters str.strip() and float() treat as whitespace, and lookalikes they do not
# (zero-width space, BOM, word joiner), so a runner's idea of "blank" is tested too.
WHITESPACE = (" ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0",
              "\u1680", "\u2000", "\u2009", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000")
NOT_WHITESPACE = ("\u200b", "\ufeff", "\u2060", "\x00")

whitespace = st.lists(st.sampled_from(WHITESPACE), max_size=3).map("".join)
# A quarter each: nothing, a newline, whitespace, a lookalike (pooled: one choice for a fixed value).
padding = pooled((4, ("", "\n")), (4, whitespace), (1, NOT_WHITESPACE))

BOM = b"\xef\xbb\xbf"
# Bytes that are not UTF-8: a stray continuation, a truncated sequence, an
# encoded surrogate, an overlong slash, latin-1 text.
INVALID_UTF8 = (b"\xff", b"\x80", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"caf\xe9")


MODES = ("plain",) * 6 + ("crlf", "cr", "bom", "invalid", "utf16")


@st.composite
def encoded(draw: st.DrawFn, texts: st.SearchStrategy[str]) -> bytes:
    """UTF-8 bytes of a drawn text; sometimes with CRLF line ends, a BOM or invalid bytes."""
    text = draw(texts)
    mode = pick(draw, MODES)
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
