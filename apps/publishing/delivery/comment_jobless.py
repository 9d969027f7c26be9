"""First comments left pending with no job: found by the due sweep and settled by the rule
in ``jobless`` (unknown where a send is in doubt, failed where nothing was sent)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from apps.publishing.delivery import comment as commenting
from apps.publishing.delivery import jobless
from apps.renditions.models import DeliveryAttempt, FirstComment

# The dedupe key is comment_dedupe_key's, written out so that the jobs' unique index of
# unfinished keys serves it; the candidates come from the partial index of pending
# comments (first_comment_pending).
JOBLESS_SQL = """
SELECT c.id FROM renditions_firstcomment c
 WHERE c.status = 'pending'
   AND NOT EXISTS (
       SELECT 1 FROM jobs_job j
        WHERE j.dedupe_key = 'comment:' || c.id
          AND j.status IN ('pending', 'processing', 'waiting'))
 ORDER BY c.id
 LIMIT %s
"""


def settle_jobless_comments(*, limit: int = jobless.BATCH) -> int:
    """Settle up to `limit` pending first comments that no job will ever come back to."""
    ids = jobless.candidate_ids(JOBLESS_SQL, limit=limit)
    return jobless.settle_all(ids, settle_one, commenting.WRITE)


def settle_one(comment_id: int) -> bool:
    """Under the comment's lock: False when it is no longer pending, or a job has it."""
    with transaction.atomic():
        comment = (
            FirstComment.objects.select_for_update()
            .filter(pk=comment_id, status=FirstComment.Status.PENDING)
            .first()
        )
        if comment is None or jobless.has_live_job(commenting.comment_dedupe_key(comment.pk)):
            return False
        attempts = commenting._attempts(comment)
        # An attempt still in flight belongs to a run that ended: it is lost, as the next
        # run of the job would have recorded it.
        attempts.filter(outcome=DeliveryAttempt.Outcome.IN_FLIGHT).update(
            outcome=DeliveryAttempt.Outcome.LOST, finished_at=timezone.now()
        )
        last_job = attempts.exclude(job_id=None).order_by("-pk").values_list("job_id").first()
        status, err = jobless.verdict(
            commenting.WRITE,
            in_doubt=commenting._unanswered(comment) is not None,
            job_error=jobless.last_job_error(last_job[0] if last_job else None),
            check="check the post, then mark the comment posted or post it again",
        )
        commenting._settle(comment, status, err)
    return True
