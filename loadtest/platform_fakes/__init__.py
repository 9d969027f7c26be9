"""Protocol-faithful fakes of the real platforms, served over real HTTP.

Each module here fakes one platform as its public API documents it (not as our adapter
happens to speak it): OAuth refresh, posting, media flows, status polls that take time,
listings that lag, the platform's own idempotency and its window, and rate-limit headers as
the platform sends them. Every fake stores what it published, so duplicates are counted at
the platform, and each can be told to misbehave per call (see `faults.FaultPlan`).

The adapters reach a fake through `PROVIDER_API_REDIRECT`: with it set, a request for
`https://<host>/<path>` goes to `<redirect>/<host>/<path>`, and the fake server routes it by
host to the platform that owns that host.
"""

from loadtest.platform_fakes.base import FakeRequest, FakeResponse, PlatformFake, StoredPost
from loadtest.platform_fakes.faults import FaultPlan

__all__ = ["FakeRequest", "FakeResponse", "FaultPlan", "PlatformFake", "StoredPost"]
