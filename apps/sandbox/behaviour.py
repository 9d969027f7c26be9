"""What a sandbox account can be told to do (DESIGN §7, the sandbox contract).

Time behaviours are bounded: an answer the sandbox holds back holds a web thread, so its
latency plus its hang stay within SANDBOX_MAX_DELAY_S; the times that hold no thread
(Retry-After, processing) stay within an hour, the longest a client polls for.
"""

import math

from django.conf import settings

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
    "lost_answer_times": (
        int,
        0,
        "store the post, then answer 504 as a gateway that lost the answer, that many times",
    ),
    "server_error_percent": (int, 0, "answer 503 to that share of posts (0-100), storing nothing"),
    "lists_posts": (bool, True, "the account's posts can be listed; false refuses listing (403)"),
    "honours_idempotency_key": (bool, True, "a repeated Idempotency-Key returns the first post"),
    "text_limit": (int, 500, "longest text accepted, in grapheme clusters"),
    # Asynchronous platforms (TikTok, YouTube, Instagram containers): a post is accepted as
    # `processing`, becomes `published` after a while, and its status is polled.
    "processing_s": (float, 0.0, "a new post processes this long before it is published"),
    "processing_fail_times": (int, 0, "that many posts end their processing failed"),
    "status_rate_limit_times": (int, 0, "answer 429 to that many status polls first"),
}
# Seconds a time behaviour that holds no web thread may ask for.
MAX_WAIT_S = 3600
COUNTED = (
    "rate_limit_times",
    "server_error_times",
    "hang_after_accept_times",
    "lost_answer_times",
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
            # Null means "the default" only where the default is itself no value (hang_s).
            if default is None:
                clean[key] = None
            else:
                errors[f"behaviour.{key}"] = [f"Must be a {kind.__name__}, not null."]
            continue
        ok = (
            isinstance(value, bool)
            if kind is bool
            else (isinstance(value, int | float) and not isinstance(value, bool))
        )
        if not ok:
            errors[f"behaviour.{key}"] = [f"Must be a {kind.__name__}."]
            continue
        if kind is not bool and not math.isfinite(value):
            errors[f"behaviour.{key}"] = ["Must be a finite number."]
            continue
        if kind is not bool and value < 0:
            errors[f"behaviour.{key}"] = ["Must not be negative."]
            continue
        clean[key] = kind(value)
    errors.update(_time_errors(clean))
    if errors:
        raise ValidationFailed("The sandbox behaviour is not valid.", details=errors)
    return clean


def _time_errors(clean: dict) -> dict[str, list[str]]:
    """Time behaviours beyond their bounds (see the module docstring)."""
    budget = settings.SANDBOX_MAX_DELAY_S
    errors: dict[str, list[str]] = {}
    latency_s = (clean.get("latency_ms") or 0) / 1000
    if latency_s > budget:
        errors["behaviour.latency_ms"] = [f"At most {budget * 1000:g} ms."]
    hang_s = clean.get("hang_s")
    if hang_s is not None and latency_s + hang_s > budget:
        errors["behaviour.hang_s"] = [
            f"latency_ms plus hang_s may hold an answer at most {budget:g} s in all."
        ]
    if clean.get("server_error_percent", 0) > 100:
        errors["behaviour.server_error_percent"] = ["At most 100."]
    for key in ("retry_after_s", "processing_s"):
        if clean.get(key, 0) > MAX_WAIT_S:
            errors[f"behaviour.{key}"] = [f"At most {MAX_WAIT_S} s."]
    return errors


def held_seconds(behaviour: dict, *, hang: bool) -> tuple[float, float]:
    """(latency, hang) in seconds an answer is held, within SANDBOX_MAX_DELAY_S in all
    (accounts made before the bound, or under a larger one, are held no longer either)."""
    budget = settings.SANDBOX_MAX_DELAY_S
    latency_s = min((behaviour.get("latency_ms") or 0) / 1000, budget)
    if not hang:
        return latency_s, 0.0
    # By default past the client's timeout, so the answer comes too late.
    hang_s = behaviour.get("hang_s")
    if hang_s is None:
        hang_s = settings.PROVIDER_TIMEOUT_S + 2
    return latency_s, max(0.0, min(hang_s, budget - latency_s))
