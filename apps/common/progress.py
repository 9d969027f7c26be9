"""One-line text progress bars: the load harnesses and `serve` redraw their line with "\r"."""

import time
from typing import Protocol


class TextOut(Protocol):
    """Where progress goes: a terminal, a log, a StringIO or a management command's
    stdout/stderr wrapper (write and flush are all the harnesses use)."""

    def write(self, text: str, /) -> object: ...

    def flush(self) -> object: ...


class ProgressBar:
    """Rewrites one line on `out` (a terminal or a log) with done/total and the rate."""

    def __init__(self, out: TextOut, label: str, total: int, width: int = 30) -> None:
        self.out, self.label, self.total, self.width = out, label, total, width
        self.started = time.monotonic()
        self._last = 0.0
        self.done = 0

    def update(self, done: int, extra: str = "", *, force: bool = False) -> None:
        self.done = done
        now = time.monotonic()
        if not force and now - self._last < 0.2 and done < self.total:
            return
        self._last = now
        filled = int(self.width * done / self.total) if self.total else self.width
        elapsed = now - self.started
        rate = done / elapsed if elapsed > 0 else 0.0
        bar = "#" * filled + "." * (self.width - filled)
        counts = f"{done}/{self.total} {rate:,.1f}/s {elapsed:5.0f}s"
        self.out.write(f"\r{self.label:<14} [{bar}] {counts} {extra}  ")
        self.out.flush()

    def close(self) -> None:
        self.update(self.done, force=True)
        self.out.write("\n")
        self.out.flush()


def draw_rate_bar(out: TextOut, label: str, done: int, total: int, elapsed: float) -> None:
    """Redraw one line with done/total and the rate (the queue benchmark's bar)."""
    width = 30
    filled = int(width * done / total) if total else width
    rate = done / elapsed if elapsed > 0 else 0.0
    out.write(
        f"\r{label:<17} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {rate:,.0f}/s  "
    )
    out.flush()
