"""Per-call misbehaviour of a platform fake, drawn from a seeded random source."""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field

# The misbehaviours a fake can show. Each fake applies those that make sense where it
# makes sense (a status poll for `poll_rate_limit`, an upload chunk for `drop_mid_upload`).
FAULTS = (
    "rate_limit",  # 429 with the platform's own rate-limit headers, nothing stored
    "server_error_before",  # 5xx before anything is stored
    "server_error_after",  # the write is stored, then a 5xx is answered
    "timeout_after_accept",  # the write is stored, then no answer in time (sleep past timeout)
    "poll_rate_limit",  # 429 on a status poll / lookup
    "drop_mid_upload",  # the connection drops during an upload chunk (nothing stored)
    "slow_processing",  # asynchronous processing takes several polls longer
    "processing_fails",  # asynchronous processing ends in failure (the platform says so)
    "listing_lag",  # a new post shows in listings/searches only after a while
    # The create is still being processed when the client gives up: the post is saved at
    # the end of `hang_s` (a platform's per-key idempotency lock is held meanwhile).
    "slow_create",
    # The post is saved, then the server fails before recording its idempotency key (5xx):
    # a resend under the same key makes a second post (Mastodon).
    "key_not_recorded",
    # An upload session expires under a chunk: the chunk is answered 404 (or 410) and
    # nothing of it is kept (YouTube's resumable sessions live about a week).
    "session_expires",
)


@dataclass
class FaultPlan:
    """How often each fault strikes (probability per eligible call), and how long a
    `timeout_after_accept` holds the answer (past the client's timeout)."""

    rates: dict[str, float] = field(default_factory=dict)
    seed: int = 1
    hang_s: float = 3.0
    retry_after_s: int = 1
    processing_s: float = 1.0  # normal asynchronous processing time
    listing_lag_s: float = 2.0
    _rng: random.Random = field(init=False, repr=False)
    _lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)
    struck: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)  # noqa: S311 - a test's dice, not a secret

    def strikes(self, fault: str) -> bool:
        """Whether `fault` strikes this call (counted in `struck` when it does)."""
        if fault not in FAULTS:
            raise ValueError(f"Unknown fault {fault!r}.")
        rate = self.rates.get(fault, 0.0)
        if rate <= 0:
            return False
        with self._lock:
            hit = self._rng.random() < rate
            if hit:
                self.struck[fault] = self.struck.get(fault, 0) + 1
        return hit

    @classmethod
    def calm(cls) -> FaultPlan:
        return cls(rates={})

    @classmethod
    def chaos(cls, *, seed: int = 1, rate: float = 0.08, hang_s: float = 3.0) -> FaultPlan:
        """Every fault at `rate` (the soak's default mix)."""
        return cls(rates=dict.fromkeys(FAULTS, rate), seed=seed, hang_s=hang_s)
