"""Event types, job type and delivery limits of outgoing webhooks."""

from datetime import timedelta

from apps.jobs.registry import Backoff

PUBLICATION_SCHEDULED = "publication.scheduled"
PUBLICATION_COMPLETED = "publication.completed"
RENDITION_PUBLISHED = "rendition.published"
RENDITION_FAILED = "rendition.failed"
RENDITION_AMBIGUOUS = "rendition.ambiguous"
ACCOUNT_NEEDS_RECONNECT = "account.needs_reconnect"
PUBLICATION_REVIEW_REQUESTED = "publication.review_requested"
PUBLICATION_APPROVED = "publication.approved"
PUBLICATION_CHANGES_REQUESTED = "publication.changes_requested"
PUBLICATION_ON_HOLD = "publication.on_hold"
COMMENT_RECEIVED = "comment.received"
COMMENT_REPLIED = "comment.replied"
POST_ENGAGEMENT_REACHED = "post.engagement_reached"
# The webhook event of each review state a publication enters.
REVIEW_EVENTS = {
    "in_review": PUBLICATION_REVIEW_REQUESTED,
    "approved": PUBLICATION_APPROVED,
    "changes_requested": PUBLICATION_CHANGES_REQUESTED,
    "on_hold": PUBLICATION_ON_HOLD,
}

EVENT_TYPES = (
    PUBLICATION_SCHEDULED,
    PUBLICATION_COMPLETED,
    RENDITION_PUBLISHED,
    RENDITION_FAILED,
    RENDITION_AMBIGUOUS,
    ACCOUNT_NEEDS_RECONNECT,
    PUBLICATION_REVIEW_REQUESTED,
    PUBLICATION_APPROVED,
    PUBLICATION_CHANGES_REQUESTED,
    PUBLICATION_ON_HOLD,
    COMMENT_RECEIVED,
    COMMENT_REPLIED,
    POST_ENGAGEMENT_REACHED,
)

# Sent only when an admin asks for it (the endpoint page's "Send test event"), to that one
# endpoint; never subscribed to, so it is not among EVENT_TYPES.
WEBHOOK_TEST = "webhook.test"

DELIVER_JOB = "webhooks.deliver"
PRUNE_JOB = "webhooks.prune"
# A delivery that keeps failing is retried for at least this long after it was queued
# (or released by switching its endpoint on again), then given up.
RETRY_FOR = timedelta(days=3)
# The wait after the n-th failed attempt: a random time between half and all of the
# backoff's ceiling (30 s doubling to 6 h), so the retries span RETRY_FOR in a bounded
# number of attempts. MAX_ATTEMPTS is only a safety net above that number (the waits'
# lower bounds add up to RETRY_FOR after 33 retries; a test holds it).
BACKOFF = Backoff(base_s=30.0, cap_s=6 * 3600.0)
MAX_ATTEMPTS = 40
# A receiver's Retry-After is honoured up to this many seconds.
MAX_RETRY_AFTER_S = 24 * 3600.0

# Bytes of a receiver's response that are read, and how many of them are kept.
MAX_RESPONSE_READ_BYTES = 64 * 1024
MAX_RESPONSE_KEPT_CHARS = 2048

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
USER_AGENT = "socialpost-webhooks/1.0"
