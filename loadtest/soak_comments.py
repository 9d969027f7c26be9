"""What became of the soak's first comments, reported the way its posts are: published,
failed (counted by reason), unknown and left to a person (counted by why), still in their
scheduled checks when the run ended, or stuck (pending with no job to come back to them).

A comment is owed an outcome while it is pending; the soak's wait covers it as it covers
a post, so that the figures are taken once comments are final or the run's bound came.
"""

from __future__ import annotations

from collections import Counter

from django.db.models import CharField, Exists, OuterRef, QuerySet, Value
from django.db.models.functions import Cast, Concat

from apps.jobs.models import Job
from apps.publishing.delivery.comment import comment_idempotency_key
from apps.renditions.models import DeliveryAttempt, FirstComment

# A send with one of these outcomes may have made the comment (the write left in doubt).
IN_DOUBT = ("in_flight", "unknown", "lost")


def owed_comments(renditions) -> QuerySet:
    """The first comments of `renditions` (ids, or a queryset of them) still pending."""
    return FirstComment.objects.filter(
        rendition_id__in=renditions, status=FirstComment.Status.PENDING
    )


def _live_job() -> Exists:
    return Exists(
        Job.objects.unfinished().filter(
            dedupe_key=Concat(Value("comment:"), Cast(OuterRef("pk"), CharField()))
        )
    )


def stuck_comments(owed: QuerySet) -> QuerySet:
    """Of the pending comments `owed`, those no unfinished job will come back to."""
    return owed.exclude(_live_job())


def comment_outcomes(renditions) -> dict:
    """The first comments of `renditions`, by outcome (see the module's docstring)."""
    comments = FirstComment.objects.filter(rendition_id__in=renditions)
    owed = owed_comments(renditions)
    stuck = stuck_comments(owed).count()
    failed = comments.filter(status=FirstComment.Status.FAILED)
    unknown = comments.filter(status=FirstComment.Status.UNKNOWN)
    why = Counter(_to_person_why(c) for c in unknown)
    return {
        "comments_published": comments.filter(status=FirstComment.Status.PUBLISHED).count(),
        "comments_failed": failed.count(),
        "comments_failed_why": dict(
            Counter(error_code(e) for e in failed.values_list("last_error", flat=True))
        ),
        "comments_to_person": sum(why.values()),
        "comments_to_person_why": dict(why.most_common()),
        "comments_still_checking": owed.count() - stuck,
        "comments_stuck": stuck,
    }


def error_code(error: dict | None) -> str:
    """An error's code, else its HTTP status, else its kind."""
    error = error or {}
    if error.get("code"):
        return str(error["code"])
    if error.get("http_status"):
        return f"http_{error['http_status']}"
    return error.get("kind") or "no error"


def _to_person_why(comment: FirstComment) -> str:
    """ "<verdict> (<cause>)": the verdict of the last lookup before it went to a person
    (`not_listed`: the post's comments did not show it; `lookup_failed`: the lookup itself
    failed on the last try; `no_check`: none ran) and the cause, the answer the send in
    doubt got (its error code, an HTTP status, or `lost`: no answer was recorded)."""
    attempts = DeliveryAttempt.objects.filter(
        rendition_id=comment.rendition_id,
        idempotency_key=comment_idempotency_key(comment.rendition_id),
    ).order_by("pk")
    lookup = attempts.filter(kind=DeliveryAttempt.Kind.RECONCILE).last()
    verdict = "no_check" if lookup is None else "lookup_failed" if lookup.error else "not_listed"
    send = attempts.filter(kind=DeliveryAttempt.Kind.COMMENT, outcome__in=IN_DOUBT).last()
    if send is None:
        cause = error_code(comment.last_error)
    elif send.error:
        cause = error_code(send.error)
    else:
        cause = "lost"
    return f"{verdict} ({cause})"
