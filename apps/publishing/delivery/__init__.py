"""Delivery: one publish job per rendition (DESIGN §7).

A run loads the account (refreshing its token when near expiry), validates the rendition
against the capability catalog, then publishes its segments in order through the platform's
adapter (``publish``). Each segment's provider id is stored the moment it exists, so a retry
never sends a segment (or a rendition) that already succeeded. Outcomes are written only
while the job's lease holds, so a worker that lost its lease cannot overwrite the worker
that took over.

Failures follow the provider's classification (``failures``):
- retryable kinds are retried with backoff (a Retry-After is the floor; a rate limit snoozes
  the job without spending an attempt), the next attempt time stored on the rendition and on
  the job;
- an unknown outcome (sent, no answer) is never resent blindly: the rendition fails with
  ``ambiguous`` and a reconciliation job looks for the post (``reconcile``); a later
  attempt's refusal (a rate limit, a 5xx, a rejection) settles nothing about it, so the
  rendition stays ambiguous until the check does (``failures.unsettled_request``);
- an expired token fails the rendition with the action ``reconnect`` and marks the account;
- everything else fails the rendition for a person to act on.

Accepted work is never created anew (``waiting``, ``poll``): once a platform has accepted a
segment that it is still processing, the waiting state owns it until it ends published,
failed at the platform, or handed to a person.

The jobs themselves are enqueued by ``enqueue`` and declared in ``apps.publishing.jobs``.
"""
