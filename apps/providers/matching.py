"""How reconciliation compares our text with what a platform lists."""


def normalize_text(text: str | None) -> str:
    """Platforms trim and re-space text; reconciliation compares words, not whitespace."""
    return " ".join((text or "").split())
