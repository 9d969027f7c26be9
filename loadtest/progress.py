"""The progress bars the load harnesses draw live in `apps.common.progress` (`serve` draws
them too); the harnesses import them from here."""

from apps.common.progress import ProgressBar, TextOut, draw_rate_bar

__all__ = ["ProgressBar", "TextOut", "draw_rate_bar"]
