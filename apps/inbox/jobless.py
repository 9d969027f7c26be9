"""Inbox replies left pending with no job: found by the inbox sweep and settled by the
rule in ``apps.publishing.delivery.jobless`` (unknown where a send is in doubt, failed
where nothing was sent). A reply awaiting approval has no job by design: not pending."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from apps.publishing.delivery import jobless

from . import replies
from .models import Reply, ReplyAttempt

# The dedupe key is reply_dedupe_key's, written out so that the jobs' unique index of
# unfinished keys serves it; the candidates come from the partial index of pending
# replies (inbox_reply_pending).
JOBLESS_SQL = """
SELECT r.id FROM inbox_reply r
 WHERE r.status = 'pending'
   AND NOT EXISTS (
       SELECT 1 FROM jobs_job j
        WHERE j.dedupe_key = 'inbox-reply:' || r.id
          AND j.status IN ('pending', 'processing', 'waiting'))
 ORDER BY r.id
 LIMIT %s
"""


def settle_jobless_replies(*, limit: int = jobless.BATCH) -> int:
    """Settle up to `limit` pending replies that no job will ever come back to."""
    ids = jobless.candidate_ids(JOBLESS_SQL, limit=limit)
    return jobless.settle_all(ids, settle_one, replies.WRITE)


def settle_one(reply_id: int) -> bool:
    """Under the reply's lock: False when it is no longer pending, or a job has it."""
    with transaction.atomic():
        reply = (
            Reply.objects.select_for_update()
            .filter(pk=reply_id, status=Reply.Status.PENDING)
            .first()
        )
        if reply is None or jobless.has_live_job(replies.reply_dedupe_key(reply.pk)):
            return False
        # An attempt still in flight belongs to a run that ended: it is lost, as the next
        # run of the job would have recorded it.
        reply.attempts.filter(outcome=ReplyAttempt.Outcome.IN_FLIGHT).update(
            outcome=ReplyAttempt.Outcome.LOST, finished_at=timezone.now()
        )
        last_job = reply.attempts.exclude(job_id=None).order_by("-pk").values_list("job_id").first()
        status, err = jobless.verdict(
            replies.WRITE,
            in_doubt=replies._unanswered(reply) is not None,
            job_error=jobless.last_job_error(last_job[0] if last_job else None),
            check="check the thread, then mark the reply sent or send it again",
        )
        replies._settle(reply, status, err)
    return True
