"""What a sandbox account can be told to do (DESIGN §7, the sandbox contract)."""

from apps.common.errors import ValidationFailed

# key -> (type, default, help)
BEHAVIOUR_KEYS: dict[str, tuple[type, object, str]] = {
    "latency_ms": (int, 0, "delay before every answer"),
    "rate_limit_times": (int, 0, "answer 429 that many times first"),
    "retry_after_s": (int, 1, "Retry-After sent with those 429s"),
    "server_error_times": (int, 0, "answer 503 that many times first, storing nothing"),
    "reject_content": (bool, False, "refuse every post as a content error (422)"),
    "expired_token": (bool, False, "refuse the token (401) and refuse to refresh it"),
    "hang_after_accept_times": (int, 0, "store the post, then answer too late, that many times"),
    "hang_s": (float, None, "how long such an answer is held (default: provider timeout + 2 s)"),
    "honours_idempotency_key": (bool, True, "a repeated Idempotency-Key returns the first post"),
    "text_limit": (int, 500, "longest text accepted, in grapheme clusters"),
    # Asynchronous platforms (TikTok, YouTube, Instagram containers): a post is accepted as
    # `processing`, becomes `published` after a while, and its status is polled.
    "processing_s": (float, 0.0, "a new post processes this long before it is published"),
    "processing_fail_times": (int, 0, "that many posts end their processing failed"),
    "status_rate_limit_times": (int, 0, "answer 429 to that many status polls first"),
}
COUNTED = (
    "rate_limit_times",
    "server_error_times",
    "hang_after_accept_times",
    "processing_fail_times",
    "status_rate_limit_times",
)


def behaviour_clean(raw: dict | None) -> dict:
    """Validate a behaviour and fill defaults; unknown keys and wrong types are refused."""
    raw = raw or {}
    if not isinstance(raw, dict):
        raise ValidationFailed("behaviour must be an object.", details={"behaviour": ["object"]})
    errors: dict[str, list[str]] = {}
    for key in raw:
        if key not in BEHAVIOUR_KEYS:
            errors[f"behaviour.{key}"] = [f"Unknown key. Known: {', '.join(BEHAVIOUR_KEYS)}."]
    clean: dict = {}
    for key, (kind, default, _help) in BEHAVIOUR_KEYS.items():
        value = raw.get(key, default)
        if value is None:
            clean[key] = None
            continue
        ok = (
            isinstance(value, bool)
            if kind is bool
            else (isinstance(value, int | float) and not isinstance(value, bool))
        )
        if not ok:
            errors[f"behaviour.{key}"] = [f"Must be a {kind.__name__}."]
            continue
        if kind is not bool and value < 0:
            errors[f"behaviour.{key}"] = ["Must not be negative."]
            continue
        clean[key] = kind(value)
    if errors:
        raise ValidationFailed("The sandbox behaviour is not valid.", details=errors)
    return clean
