"""``conformance cache``: what the oracle answer cache holds, and clearing it."""

from __future__ import annotations

from rich.markup import escape

from conformance.cli.console import out
from conformance.oracle import answers


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 100_000 else f"{count / 1e3:.1f} kB"


def info() -> None:
    """Where the oracle answer cache is, its size, and its answers by oracle and surface."""
    found = answers.info()
    out.print(f"oracle answer cache: {escape(str(found.folder))} ({_size(found.bytes)}, {found.entries} answer(s); "
              f"at most {answers.MAX_ENTRIES}, the oldest go first)", highlight=False)
    if found.problem:
        out.print(f"[red]unreadable[/red]: {escape(found.problem)} (`conformance cache clear` removes it)",
                  highlight=False)
    if not found.by_oracle:
        return
    # A line per oracle, then one per surface: no table, whose cells a narrow terminal would wrap.
    for oracle, by_surface in sorted(found.by_oracle.items()):
        out.print(escape(oracle), highlight=False, soft_wrap=True)
        for surface, count in sorted(by_surface.items()):
            out.print(f"  {escape(surface)}: {count} answer(s)", highlight=False)


def clear() -> None:
    """Remove every stored oracle answer; the next run asks the oracle again."""
    found = answers.info()
    freed = answers.clear()
    out.print(f"removed {found.entries} answer(s), {_size(freed)}, from {escape(str(found.folder))}", highlight=False)
