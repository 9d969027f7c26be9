"""The list of posts, and a publication's page: each destination's status, what it was
sent, attempts, errors and the action to take; manual retry, rewriting a refused
destination's text and retrying it, resolving unknown outcomes; cancel and reschedule.

While a destination is in flight (or due within a couple of minutes) its card polls a
fragment every 2 s; scheduled further ahead, every 30 s; settled ones do not poll. A
failed destination with no retry pending waits for a person, so it does not poll either.
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from apps.accounts.models import Workspace
from apps.accounts.permissions import Action
from apps.common.errors import Conflict, DomainError, ValidationFailed
from apps.providers.catalog import PlatformCapabilities, UnknownPlatform
from apps.providers.live.readiness import effective_capabilities, effective_capabilities_for
from apps.publications.models import Publication
from apps.publishing.selectors import publication_detail, publish_due_times
from apps.publishing.services import (
    MANUAL_RETRY_LIMIT,
    first_comment_mark_posted,
    first_comment_retry,
    publication_cancel,
    publication_reschedule,
    publication_retry,
    rendition_resolve,
    rendition_retry,
)
from apps.renditions.models import DeliveryAttempt, FirstComment, Rendition
from apps.renditions.selectors import account_text_limit
from apps.web.access import WorkspaceRequest, is_htmx, permits, workspace_view
from apps.web.composer.destination_retry import destination_edit_and_retry
from apps.web.composer.sent import SentPart, sent_parts
from apps.web.forms.workspace import PublicationFilterForm, RescheduleForm, ResolveForm
from apps.web.portal_posts import SENT_BACK_TO_CLIENT
from apps.web.post_list import read_page
from apps.web.views.common import redirect_to
from apps.web.views.composer import is_editable

R = Rendition.Status
FAST_POLL_S, SLOW_POLL_S = 2, 30
DUE_SOON = timedelta(minutes=2)
DUE_WITHIN = timedelta(hours=1)


def due_times(renditions: list[Rendition]) -> dict[int, datetime | None]:
    """When each scheduled or failed destination's next attempt runs: its pending publish
    job's time (a manual retry runs now, whatever the post's own time), else its effective
    time; one query for them all."""
    waiting = [r for r in renditions if r.status in (R.SCHEDULED, R.FAILED)]
    jobs = publish_due_times(waiting)
    return {r.pk: jobs.get(r.pk) or r.effective_scheduled_at for r in waiting}


def poll_seconds(rendition: Rendition, now: datetime, due: datetime | None) -> int | None:
    """How often the card of this destination refreshes itself, or None."""
    if rendition.status in (R.PUBLISHING, R.WAITING):
        return FAST_POLL_S
    if rendition.is_retry_pending:
        retry_at = rendition.next_retry_at
        assert retry_at is not None  # is_retry_pending says so
        due = retry_at if due is None else min(due, retry_at)
    elif rendition.status != R.SCHEDULED:
        return None
    if due is None or due - now <= DUE_SOON:
        return FAST_POLL_S
    return SLOW_POLL_S if due - now <= DUE_WITHIN else None


@dataclass
class DestinationCard:
    rendition: Rendition
    capabilities: PlatformCapabilities | None
    attempts: list[DeliveryAttempt]
    poll: int | None
    due_at: datetime | None
    url: str
    can_publish: bool
    edit_url: str | None
    resolve_form: ResolveForm | None = None
    message: str = ""
    message_level: str = "success"
    parts: list[SentPart] = field(default_factory=list)
    first_comment: FirstComment | None = None

    @property
    def error(self) -> dict | None:
        return self.rendition.last_error if self.rendition.status == R.FAILED else None

    @property
    def action(self) -> str | None:
        error = self.error
        if self.rendition.ambiguous:
            # While the system checks the platform itself, a person has nothing to do yet;
            # a check that needs the account waits for its reconnect.
            action = (error or {}).get("action")
            if action == "reconnect":
                return action
            return "checking" if action == "wait" else "verify"
        return (error or {}).get("action")

    @property
    def can_retry(self) -> bool:
        r = self.rendition
        return (
            self.can_publish
            and r.status == R.FAILED
            and not r.ambiguous
            and r.manual_retry_count < MANUAL_RETRY_LIMIT
        )

    @property
    def can_edit_and_retry(self) -> bool:
        """The platform refused the content: rewriting this destination's text is the fix."""
        return (
            self.can_retry
            and (self.error or {}).get("action") == "edit"
            and not any(part.is_published for part in self.parts)
        )

    @property
    def can_resolve(self) -> bool:
        return self.can_publish and self.rendition.status == R.FAILED and self.rendition.ambiguous


def _publication(request: WorkspaceRequest, pk: int) -> Publication:
    return get_object_or_404(Publication.objects.for_workspace(request.workspace), pk=pk)


def _rendition(request: WorkspaceRequest, pk: int, rendition_pk: int) -> Rendition:
    return get_object_or_404(
        Rendition.objects.for_workspace(request.workspace).select_related(
            "social_account", "publication"
        ),
        pk=rendition_pk,
        publication_id=pk,
    )


def _detail_url(workspace: Workspace, publication: Publication) -> str:
    return reverse(
        "publication-detail", kwargs={"workspace_slug": workspace.slug, "pk": publication.pk}
    )


def _card(
    request: WorkspaceRequest,
    rendition: Rendition,
    *,
    editable: bool,
    due: dict[int, datetime | None] | None = None,
    catalog: dict[str, PlatformCapabilities] | None = None,
) -> DestinationCard:
    """A destination's card, from what the caller read with the rendition (its attempts,
    first comment, segments and media, its due time among ``due``, the catalog with today's
    readiness as ``catalog``), else loaded here."""
    workspace = request.workspace
    if catalog is not None:
        caps = catalog.get(rendition.platform)
    else:
        try:
            caps = effective_capabilities_for(rendition.platform)
        except UnknownPlatform:
            caps = None
    can_publish = permits(request, workspace, Action.PUBLISH)
    edit_url = None
    if editable and permits(request, workspace, Action.EDIT):
        edit_url = reverse(
            "publication-edit",
            kwargs={"workspace_slug": workspace.slug, "pk": rendition.publication_id},
        )
    due_at = (due if due is not None else due_times([rendition])).get(rendition.pk)
    comment = None
    if rendition.status == R.PUBLISHED:  # a first comment exists only under a live post
        comment = getattr(rendition, "first_comment", None)
    poll = poll_seconds(rendition, timezone.now(), due_at)
    if comment is not None and comment.status == FirstComment.Status.PENDING:
        poll = FAST_POLL_S  # the comment is on its way: show it land
    return DestinationCard(
        rendition=rendition,
        capabilities=caps,
        attempts=list(rendition.delivery_attempts.all()),  # by started_at, then id
        poll=poll,
        first_comment=comment,
        due_at=due_at,
        url=reverse(
            "rendition-card",
            kwargs={
                "workspace_slug": workspace.slug,
                "pk": rendition.publication_id,
                "rendition_pk": rendition.pk,
            },
        ),
        can_publish=can_publish,
        edit_url=edit_url,
        resolve_form=ResolveForm() if rendition.ambiguous and can_publish else None,
        parts=sent_parts(rendition),
    )


def _head_context(request: WorkspaceRequest, publication: Publication) -> dict:
    """What the page head offers: edit, reschedule, retry all, cancel."""
    renditions = list(publication.renditions.all())
    workspace = request.workspace
    retryable = [
        r
        for r in renditions
        if r.status == R.FAILED and not r.ambiguous and r.manual_retry_count < MANUAL_RETRY_LIMIT
    ]
    return {
        "can_edit": is_editable(publication) and permits(request, workspace, Action.EDIT),
        "can_publish": permits(request, workspace, Action.PUBLISH),
        "can_retry_all": len(retryable) > 1,
        "can_cancel": any(
            r.status in Rendition.NOT_STARTED or (r.status == R.FAILED and not r.ambiguous)
            for r in renditions
        ),
        "can_reschedule": any(r.status in Rendition.NOT_STARTED for r in renditions),
    }


def seen_marker(publication: Publication) -> str:
    """What a polling card tells the server about the page it sits on, so the page head
    is sent again only when the publication changed."""
    return f"{publication.status}:{publication.revision}"


def _render_card(
    request: WorkspaceRequest,
    card: DestinationCard,
    *,
    status: int = 200,
    head: bool = True,
    publication: Publication | None = None,
) -> HttpResponse:
    """The card, and the page head when asked or when the publication changed since the
    page was shown (``publication``: as the caller just read it, else read here)."""
    if publication is None:
        publication = Publication.objects.get(pk=card.rendition.publication_id)
    context = {
        "workspace": request.workspace,
        "card": card,
        "publication": publication,
        "with_head": head or request.GET.get("seen") != seen_marker(publication),
    }
    if context["with_head"]:
        context.update(_head_context(request, publication))
    return render(request, "web/publications/_card_response.html", context, status=status)


@workspace_view(Action.VIEW)
@require_GET
def publication_detail_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    """The post's page: one read of the publication with all it shows (its review too),
    and one of its destinations' pending publish jobs, whatever their number."""
    publication = publication_detail(workspace_id=request.workspace.pk, pk=pk, for_page=True)
    if publication is None:
        raise Http404
    Publication.workspace.field.set_cached_value(publication, request.workspace)
    editable = is_editable(publication)
    renditions = sorted(
        publication.renditions.all(),
        key=lambda r: (r.social_account.platform, r.social_account.handle),
    )
    due = due_times(renditions)
    catalog = effective_capabilities()
    cards = [_card(request, r, editable=editable, due=due, catalog=catalog) for r in renditions]
    segments = list(publication.segments.all())  # by position
    context = {
        "workspace": request.workspace,
        "section": "posts",
        "publication": publication,
        "segments": segments,
        "cards": cards,
        **_head_context(request, publication),
    }
    return render(request, "web/publications/detail.html", context)


@workspace_view(Action.VIEW)
@require_GET
def rendition_card(request: WorkspaceRequest, pk: int, rendition_pk: int) -> HttpResponse:
    """One destination's card: what its polling swaps in (and the page's status badge,
    out of band). Read by the one read of its publication, and its pending publish job."""
    publication = publication_detail(workspace_id=request.workspace.pk, pk=pk)
    if publication is None:
        raise Http404
    rendition = next((r for r in publication.renditions.all() if r.pk == rendition_pk), None)
    if rendition is None:
        raise Http404
    card = _card(request, rendition, editable=is_editable(publication))
    return _render_card(request, card, head=False, publication=publication)


@workspace_view(Action.PUBLISH)
@require_POST
def rendition_retry_view(request: WorkspaceRequest, pk: int, rendition_pk: int) -> HttpResponse:
    rendition = _rendition(request, pk, rendition_pk)
    try:
        rendition_retry(rendition=rendition, user=request.user)
    except DomainError as exc:
        text, level = exc.message, "error"
    else:
        text, level = "Retrying now.", "success"
    return _after_action(request, rendition, text, level)


@workspace_view(Action.PUBLISH)
@require_http_methods(["GET", "POST"])
def rendition_resolve_view(request: WorkspaceRequest, pk: int, rendition_pk: int) -> HttpResponse:
    """Settle an unknown outcome. A refused form is shown at this address, so a GET of it
    (a reload) goes back to the post."""
    rendition = _rendition(request, pk, rendition_pk)
    if request.method == "GET":
        return redirect_to(request, _detail_url(request.workspace, rendition.publication))
    form = ResolveForm(request.POST)
    if not form.is_valid():
        card = _card(request, rendition, editable=is_editable(rendition.publication))
        card.resolve_form = form
        if is_htmx(request):
            return _render_card(request, card, status=400, head=False)
        return _render_card_page(request, rendition.publication, card)
    try:
        rendition_resolve(
            rendition=rendition,
            outcome=form.cleaned_data["outcome"],
            provider_url=form.cleaned_data["provider_url"] or "",
            user=request.user,
        )
    except DomainError as exc:
        text, level = exc.message, "error"
    else:
        text, level = (
            {
                "published": "Recorded as published.",
                "failed": "Recorded as failed; it will not be retried.",
                "retry": "Sending it again now.",
            }[form.cleaned_data["outcome"]],
            "success",
        )
    return _after_action(request, rendition, text, level)


def _render_card_page(
    request: WorkspaceRequest, publication: Publication, card: DestinationCard
) -> HttpResponse:
    """Without htmx, a form error shows on a page holding just that destination."""
    context = {"workspace": request.workspace, "publication": publication, "card": card}
    return render(request, "web/publications/card_page.html", context, status=400)


@workspace_view(Action.PUBLISH)
@require_POST
def first_comment_retry_view(request: WorkspaceRequest, pk: int, rendition_pk: int) -> HttpResponse:
    """Post a failed first comment again (or one whose outcome was unknown and that the
    person did not find under the post)."""
    rendition = _rendition(request, pk, rendition_pk)
    comment = get_object_or_404(FirstComment, rendition=rendition)
    try:
        first_comment_retry(comment, actor_note=f"Checked by {request.user.email}: none found.")
    except DomainError as exc:
        text, level = exc.message, "error"
    else:
        text, level = "Posting the first comment again.", "success"
    return _after_action(request, rendition, text, level)


@workspace_view(Action.PUBLISH)
@require_POST
def first_comment_posted_view(
    request: WorkspaceRequest, pk: int, rendition_pk: int
) -> HttpResponse:
    """The person found the comment whose answer never came: record it as posted."""
    rendition = _rendition(request, pk, rendition_pk)
    comment = get_object_or_404(FirstComment, rendition=rendition)
    try:
        first_comment_mark_posted(comment)
    except DomainError as exc:
        text, level = exc.message, "error"
    else:
        text, level = "Recorded the first comment as posted.", "success"
    return _after_action(request, rendition, text, level)


def _after_action(
    request: WorkspaceRequest, rendition: Rendition, text: str, level: str
) -> HttpResponse:
    rendition.refresh_from_db()
    if is_htmx(request):
        card = _card(request, rendition, editable=is_editable(rendition.publication))
        card.message, card.message_level = text, level
        return _render_card(request, card, status=200 if level == "success" else 409)
    getattr(messages, level)(request, text)
    return redirect_to(request, _detail_url(request.workspace, rendition.publication))


@workspace_view(Action.PUBLISH)
@require_POST
def publication_retry_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    publication = _publication(request, pk)
    try:
        retried = publication_retry(publication=publication, user=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Retrying {len(retried)} destination(s) now.")
    return redirect_to(request, _detail_url(request.workspace, publication))


@workspace_view(Action.PUBLISH)
@require_POST
def publication_cancel_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    publication = _publication(request, pk)
    publication_cancel(publication=publication)
    messages.success(
        request,
        "Cancelled what had not gone out. Destinations already published stay on their platforms.",
    )
    return redirect_to(request, _detail_url(request.workspace, publication))


def _safe_next(request: WorkspaceRequest, fallback: str) -> str:
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return fallback


@workspace_view(Action.PUBLISH)
@require_http_methods(["GET", "POST"])
def publication_reschedule_view(request: WorkspaceRequest, pk: int) -> HttpResponse:
    """The quick edit of a post's time (from the calendar or the post's page). It names
    the revision it was opened at: when someone changed the post since, nothing is
    written, the form keeps the new time and says so."""
    publication = _publication(request, pk)
    zone = zoneinfo.ZoneInfo(request.user.display_timezone)
    next_url = _safe_next(request, _detail_url(request.workspace, publication))
    notice = ""
    status = 200
    if request.method == "POST":
        form = RescheduleForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            local = datetime.combine(data["date"], data["time"]).isoformat(timespec="minutes")
            try:
                moved = publication_reschedule(
                    publication=publication,
                    expected_revision=data["revision"],
                    local_time=local,
                    timezone=request.user.display_timezone,
                    actor=request.user,
                )
            except Conflict as exc:
                status = 409
                if exc.code == "REVISION_CONFLICT":
                    current = exc.details.get("current_revision", publication.revision)
                    form = RescheduleForm(initial={**data, "revision": current})
                    notice = (
                        "Someone changed this post after you opened it, so the new time was "
                        "not saved. Your time is kept below: check the post, then save again."
                    )
                else:
                    form.add_error(None, exc.message)
            except DomainError as exc:
                status = 400
                form.add_error(None, _schedule_message(exc, data, zone))
            else:
                sent_back = moved.status == Publication.Status.DRAFT
                messages.success(request, SENT_BACK_TO_CLIENT if sent_back else "Rescheduled.")
                return redirect_to(request, next_url)
        else:
            status = 400
    else:
        shown = publication.scheduled_at.astimezone(zone) if publication.scheduled_at else None
        form = RescheduleForm(
            initial={
                "date": shown.date() if shown else None,
                "time": shown.strftime("%H:%M") if shown else None,
                "revision": publication.revision,
            }
        )
    publication.refresh_from_db()
    context = {
        "workspace": request.workspace,
        "section": "calendar",
        "publication": publication,
        "form": form,
        "notice": notice,
        "next": next_url,
        "zone": request.user.display_timezone,
    }
    template = (
        "web/publications/_reschedule_form.html"
        if is_htmx(request)
        else "web/publications/reschedule.html"
    )
    return render(request, template, context, status=status)


def _schedule_message(exc: DomainError, data: dict, zone: zoneinfo.ZoneInfo) -> str:
    """A refused time in the person's own words and zone (the service speaks UTC)."""
    if exc.code == "SCHEDULE_IN_PAST":
        return (
            f"{data['date']:%a %d %b %Y} at {data['time']:%H:%M} ({zone.key}) has passed. "
            "Pick a later time."
        )
    return exc.message


# --- edit a refused destination's text and retry it ------------------------------------


@workspace_view(Action.PUBLISH)
@require_http_methods(["GET", "POST"])
def rendition_edit_retry_view(
    request: WorkspaceRequest, pk: int, rendition_pk: int
) -> HttpResponse:
    """GET: the destination's parts as it got them, to rewrite. POST: save them as this
    destination's own text and retry it now. Refused input stays in the form, at this
    same address (which answers GET)."""
    rendition = _rendition(request, pk, rendition_pk)
    publication = rendition.publication
    card = _card(request, rendition, editable=is_editable(publication))
    if not card.can_retry:
        messages.warning(
            request,
            f"The {rendition.platform} destination @{rendition.social_account.handle} is "
            f"{rendition.status} and cannot be retried from here.",
        )
        return redirect_to(request, _detail_url(request.workspace, publication))
    texts = [part.text for part in card.parts]
    revision = publication.revision
    errors: list[str] = []
    field_errors: dict[int, list[str]] = {}
    status = 200
    if request.method == "POST":
        texts = [request.POST.get(f"part-{i}", "") for i in range(len(card.parts))]
        posted_revision = request.POST.get("revision", "")
        revision = int(posted_revision) if posted_revision.isdigit() else -1
        try:
            destination_edit_and_retry(
                rendition=rendition, texts=texts, expected_revision=revision, user=request.user
            )
        except Conflict as exc:
            status = 409
            if exc.code == "REVISION_CONFLICT":
                revision = exc.details.get("current_revision", publication.revision)
                errors.append(
                    "Someone changed this post while you were editing. Your text is kept "
                    "below: check the post, then send it again."
                )
            else:
                errors.append(exc.message)
        except ValidationFailed as exc:
            status = 400
            errors, field_errors = _part_errors(exc, len(card.parts))
        except DomainError as exc:
            status = exc.http_status
            errors.append(exc.message)
        else:
            messages.success(
                request,
                f"Saved the new text for @{rendition.social_account.handle} and sending it now.",
            )
            return redirect_to(request, _detail_url(request.workspace, publication))
    context = {
        "workspace": request.workspace,
        "section": "posts",
        "publication": publication,
        "card": card,
        "rendition": rendition,
        "fields": [
            {
                "index": i,
                "part": part,
                "text": texts[i] if i < len(texts) else "",
                "errors": field_errors.get(i, []),
            }
            for i, part in enumerate(card.parts)
        ],
        "revision": revision,
        "errors": errors,
        "limit": _limit(card),
    }
    return render(request, "web/publications/edit_retry.html", context, status=status)


def _limit(card: DestinationCard) -> int | None:
    own = account_text_limit(card.rendition.social_account)
    return own or (card.capabilities.text_limit if card.capabilities else None)


def _part_errors(exc: ValidationFailed, parts: int) -> tuple[list[str], dict[int, list[str]]]:
    """The messages by part ("segments.1.text" is part 2), and those of no part."""
    general: list[str] = []
    by_part: dict[int, list[str]] = {}
    for path, texts in (exc.details or {}).items():
        texts = texts if isinstance(texts, list) else [str(texts)]
        bits = path.split(".")
        if len(bits) >= 2 and bits[0] == "segments" and bits[1].isdigit():
            index = int(bits[1])
            label = f"Part {index + 1}" if parts > 1 else "Text"
            by_part.setdefault(index, []).extend(texts)
            general.extend(f"{label}: {t}" for t in texts)
        else:
            general.extend(texts)
    return general or [exc.message], by_part


# --- the list of posts -----------------------------------------------------------------


def _day_start(day, zone: zoneinfo.ZoneInfo) -> datetime:
    """The instant a local day starts (a DST change at midnight moves it, never skips it)."""
    return datetime.combine(day, time.min).replace(tzinfo=zone, fold=0)


@workspace_view(Action.VIEW)
@require_GET
def publication_list(request: WorkspaceRequest) -> HttpResponse:
    zone = zoneinfo.ZoneInfo(request.user.display_timezone)
    form = PublicationFilterForm(request.GET or None)
    publications = Publication.objects.for_workspace(request.workspace)
    if form.is_valid():
        data = form.cleaned_data
        if data["status"]:
            publications = publications.filter(status=data["status"])
        if data["start"]:
            publications = publications.filter(scheduled_at__gte=_day_start(data["start"], zone))
        if data["end"]:
            publications = publications.filter(
                scheduled_at__lt=_day_start(data["end"] + timedelta(days=1), zone)
            )
    page = read_page(publications, now=timezone.now(), after=request.GET.get("after"))
    query = request.GET.copy()
    query.pop("after", None)
    query.pop("page", None)
    upcoming = [p for p in page.posts if not page.is_past(p)]
    recent = [p for p in page.posts if page.is_past(p)]
    groups = [
        {"title": title, "posts": posts}
        for title, posts in (
            ("Upcoming, soonest first", upcoming),
            ("Recent and unscheduled", recent),
        )
        if posts
    ]
    context = {
        "workspace": request.workspace,
        "section": "posts",
        "form": form,
        "page": page,
        "groups": groups,
        "query": query.urlencode(),
    }
    status = 400 if form.errors else 200
    return render(request, "web/publications/list.html", context, status=status)
