"""Client links: a token opens its link only while it is genuine, unexpired, unrevoked and
its maker may still approve; a link shows only its workspace's posts in review (and only
those it names, within its period); a client's approval schedules the post and is bound to
what it approved, so a later change, by anyone, sends the post back to review."""

from datetime import timedelta

import pytest
from django.core import signing
from django.utils import timezone

from apps.accounts.models import WorkspaceMembership
from apps.approvals.models import PortalLink, Review, ReviewComment
from apps.approvals.portal import (
    PortalLinkRefused,
    portal_link_create,
    portal_link_open,
    portal_link_revoke,
    portal_publications,
)
from apps.audit.models import AuditEvent
from apps.common.errors import Conflict, NotFound, PermissionDenied, ValidationFailed
from apps.jobs.models import Job
from apps.publications.models import Publication
from apps.publishing.delivery.enqueue import publish_dedupe_key
from apps.publishing.services import publication_reschedule, publication_update
from apps.publishing.services.approval import approval_hash, approval_parts
from apps.publishing.services.media_alt_text import media_alt_text_set
from apps.publishing.services.publications import publication_create
from apps.publishing.services.reviews import (
    review_approve,
    review_hold,
    review_request_changes,
    review_submit,
)
from apps.renditions.models import Rendition
from apps.sandbox.services import sandbox_account_create
from apps.webhooks.models import WebhookEvent
from apps.webhooks.services import webhook_endpoint_create
from tests.factories import MediaAssetFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def account(workspace_a):
    return sandbox_account_create(workspace=workspace_a, handle="client-news")


def in_review(workspace, author, account, text="For the client", hours=48):
    draft = publication_create(
        workspace=workspace,
        author=author,
        segments=[{"text": text}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now() + timedelta(hours=hours),
        first_comment="Link in bio",
    )
    review_submit(publication=draft, expected_revision=draft.revision, actor=author)
    draft.refresh_from_db()
    return draft


def make_link(workspace, actor, **kwargs):
    kwargs.setdefault("expires_at", timezone.now() + timedelta(days=7))
    return portal_link_create(workspace=workspace, actor=actor, label="Acme", **kwargs)


def refused_code(token: str) -> str:
    with pytest.raises(PortalLinkRefused) as caught:
        portal_link_open(token)
    return caught.value.code


# --- the token ----------------------------------------------------------------------------


def test_a_genuine_token_opens_its_link_and_only_a_hash_is_kept(workspace_a, alice):
    link, token = make_link(workspace_a, alice)

    assert portal_link_open(token) == link
    secret = token.split(":")[0].split(".", 1)[1]
    assert secret not in link.secret_hash
    assert AuditEvent.objects.filter(action="portal.link_created", workspace=workspace_a).exists()


def test_a_forged_or_altered_token_is_refused(workspace_a, alice):
    link, token = make_link(workspace_a, alice)
    other, _ = make_link(workspace_a, alice)
    value, signature = token.rsplit(":", 1)

    assert refused_code(f"{other.pk}.{value.split('.', 1)[1]}:{signature}") == "PORTAL_LINK_INVALID"
    assert refused_code(value + ":" + "A" * len(signature)) == "PORTAL_LINK_INVALID"
    assert refused_code("garbage") == "PORTAL_LINK_INVALID"
    # Signed with the site's key but with a secret that is not the link's (a guess, or a
    # link rebuilt from a leaked id): the stored hash refuses it.
    guessed = signing.Signer(salt="apps.approvals.portal").sign(f"{link.pk}.guess")
    assert refused_code(guessed) == "PORTAL_LINK_INVALID"


def test_an_expired_or_revoked_link_is_refused(workspace_a, alice):
    expired, expired_token = make_link(workspace_a, alice)
    PortalLink.objects.filter(pk=expired.pk).update(expires_at=timezone.now())
    revoked, revoked_token = make_link(workspace_a, alice)

    portal_link_revoke(link=revoked, actor=alice)

    assert refused_code(expired_token) == "PORTAL_LINK_EXPIRED"
    assert refused_code(revoked_token) == "PORTAL_LINK_REVOKED"
    assert AuditEvent.objects.filter(action="portal.link_revoked").count() == 1


def test_a_link_stops_when_its_maker_may_no_longer_approve(workspace_a, bob, alice):
    WorkspaceMembership.objects.filter(workspace=workspace_a, user=bob).update(role="admin")
    _link, token = make_link(workspace_a, bob)
    assert portal_link_open(token)

    WorkspaceMembership.objects.filter(workspace=workspace_a, user=bob).update(role="editor")

    assert refused_code(token) == "PORTAL_LINK_INVALID"


def test_only_an_approver_makes_a_link_and_only_for_the_workspaces_posts(
    workspace_a, workspace_b, alice, bob, vera, charlie
):
    foreign = publication_create(
        workspace=workspace_b, author=charlie, segments=[{"text": "B's"}], destinations=[]
    )
    for person in (bob, vera, charlie):
        with pytest.raises(PermissionDenied):
            make_link(workspace_a, person)
    with pytest.raises(NotFound):
        make_link(workspace_a, alice, publications=[foreign.pk])
    with pytest.raises(ValidationFailed):
        make_link(workspace_a, alice, expires_at=timezone.now() + timedelta(days=91))
    assert not PortalLink.objects.exists()


# --- what a link shows --------------------------------------------------------------------


def test_a_link_shows_its_workspaces_posts_in_review_only(
    workspace_a, workspace_b, alice, bob, charlie, account
):
    mine = in_review(workspace_a, bob, account)
    publication_create(
        workspace=workspace_a, author=bob, segments=[{"text": "no review"}], destinations=[]
    )
    b_account = sandbox_account_create(workspace=workspace_b, handle="b-news")
    in_review(workspace_b, charlie, b_account, text="B's post")
    link, _ = make_link(workspace_a, alice)

    assert list(portal_publications(link)) == [mine]


def test_a_link_naming_posts_or_a_period_shows_only_those(workspace_a, alice, bob, account):
    soon = in_review(workspace_a, bob, account, text="soon", hours=5)
    later = in_review(workspace_a, bob, account, text="later", hours=24 * 10)
    named, _ = make_link(workspace_a, alice, publications=[later.pk])
    period, _ = make_link(
        workspace_a,
        alice,
        period_start=timezone.now(),
        period_end=timezone.now() + timedelta(days=2),
    )

    assert list(portal_publications(named)) == [later]
    assert list(portal_publications(period)) == [soon]


# --- deciding through a link --------------------------------------------------------------


def approve(link, publication, note=""):
    return review_approve(
        publication=publication,
        expected_revision=publication.revision,
        actor=link.created_by,
        note=note,
        via=link,
    )


def test_a_clients_approval_schedules_the_post_and_is_the_clients(workspace_a, alice, bob, account):
    post = in_review(workspace_a, bob, account)
    link, _ = make_link(workspace_a, alice)

    review = approve(link, post, note="Lovely")

    post.refresh_from_db()
    assert post.status == Publication.Status.SCHEDULED
    rendition = post.renditions.get()
    assert rendition.status == Rendition.Status.SCHEDULED
    job = Job.objects.unfinished().get(dedupe_key=publish_dedupe_key(rendition.pk))
    assert job.run_at == post.scheduled_at  # the worker publishes it at its time
    assert (review.state, review.decided_by, review.decided_via) == ("approved", None, link)
    assert review.approved_hash == approval_hash(approval_parts(post))
    comment = ReviewComment.objects.get(publication=post, kind="approved")
    assert (comment.author, comment.portal_link, comment.body) == (None, link, "Lovely")
    event = AuditEvent.objects.get(action="review.approved")
    assert event.actor_user is None
    assert event.actor_label == "Client link: Acme"
    assert event.metadata["link"] == link.pk


def test_a_client_asks_for_changes_with_a_note(workspace_a, alice, bob, account):
    post = in_review(workspace_a, bob, account)
    link, _ = make_link(workspace_a, alice)

    with pytest.raises(ValidationFailed):
        review_request_changes(
            publication=post, expected_revision=post.revision, actor=alice, note="", via=link
        )
    review = review_request_changes(
        publication=post, expected_revision=post.revision, actor=alice, note="Warmer", via=link
    )

    assert (review.state, review.decided_via) == (Review.State.CHANGES_REQUESTED, link)
    post.refresh_from_db()
    assert post.status == Publication.Status.DRAFT
    assert AuditEvent.objects.get(action="review.changes_requested").metadata["client"] == "Acme"


@pytest.mark.parametrize("change", ["text", "first_comment", "time"])
def test_any_change_after_a_clients_approval_sends_the_post_back(
    workspace_a, alice, bob, account, change
):
    post = in_review(workspace_a, bob, account)
    link, _ = make_link(workspace_a, alice)
    approve(link, post)
    post.refresh_from_db()

    # An admin's change: free after a member's approval, not after a client's.
    if change == "time":
        publication_reschedule(
            publication=post,
            expected_revision=post.revision,
            scheduled_at=post.scheduled_at + timedelta(hours=1),
            actor=alice,
        )
    else:
        value = [{"text": "Changed"}] if change == "text" else "Another comment"
        field = "segments" if change == "text" else "first_comment"
        publication_update(
            publication=post, expected_revision=post.revision, actor=alice, **{field: value}
        )

    post.refresh_from_db()
    assert post.status == Publication.Status.DRAFT
    assert post.renditions.get().status == Rendition.Status.DRAFT
    assert not Job.objects.unfinished().filter(status="pending").exists()
    review = Review.objects.get(publication=post)
    assert (review.state, review.decided_via, review.approved_hash) == ("in_review", None, "")
    assert list(portal_publications(link)) == [post]  # the client sees it again
    assert "back in review" in ReviewComment.objects.filter(kind="submitted").last().body


def test_a_change_that_keeps_what_the_client_approved_keeps_the_approval(
    workspace_a, alice, bob, account
):
    post = in_review(workspace_a, bob, account)
    link, _ = make_link(workspace_a, alice)
    approve(link, post)
    post.refresh_from_db()

    publication_update(
        publication=post, expected_revision=post.revision, actor=alice, reference_key="k-1"
    )

    post.refresh_from_db()
    assert post.status == Publication.Status.SCHEDULED
    assert Review.objects.get(publication=post).state == Review.State.APPROVED


def test_a_members_approval_is_unchanged_an_admins_edit_keeps_it(workspace_a, alice, bob, account):
    post = in_review(workspace_a, bob, account)
    review_approve(publication=post, expected_revision=post.revision, actor=alice)
    post.refresh_from_db()

    publication_update(
        publication=post, expected_revision=post.revision, actor=alice, first_comment="New"
    )

    post.refresh_from_db()
    assert post.status == Publication.Status.SCHEDULED
    assert Review.objects.get(publication=post).state == Review.State.APPROVED


def test_the_admin_lists_links_without_their_hash(admin_client, workspace_a, alice):
    link, _ = make_link(workspace_a, alice)

    listed = admin_client.get("/admin/approvals/portallink/")
    change = admin_client.get(f"/admin/approvals/portallink/{link.pk}/change/")

    assert listed.status_code == change.status_code == 200
    assert "Acme" in listed.content.decode()
    assert link.secret_hash not in change.content.decode()
    assert admin_client.get("/admin/approvals/portallink/add/").status_code == 403


# --- on hold ------------------------------------------------------------------------------


def hold(link, publication, note=""):
    return review_hold(
        publication=publication,
        expected_revision=publication.revision,
        actor=link.created_by,
        note=note,
        via=link,
    )


def test_a_client_puts_a_post_in_review_on_hold_then_approves_it(workspace_a, alice, bob, account):
    webhook_endpoint_create(workspace=workspace_a, url="https://93.184.215.14/in")
    post = in_review(workspace_a, bob, account)
    link, _ = make_link(workspace_a, alice)

    review = hold(link, post, note="Wait for the launch date")

    post.refresh_from_db()
    assert (review.state, review.decided_via) == (Review.State.ON_HOLD, link)
    assert post.status == Publication.Status.DRAFT
    event = AuditEvent.objects.get(action="review.on_hold")
    assert (event.actor_label, event.metadata["note"]) == (
        "Client link: Acme",
        "Wait for the launch date",
    )
    assert WebhookEvent.objects.filter(type="publication.on_hold").count() == 1
    assert list(portal_publications(link)) == [post]

    approve(link, post)  # a held post is released by approving it

    post.refresh_from_db()
    assert post.status == Publication.Status.SCHEDULED


def test_holding_an_approved_post_takes_it_off_the_schedule(workspace_a, alice, bob, account):
    post = in_review(workspace_a, bob, account)
    link, _ = make_link(workspace_a, alice)
    approve(link, post)
    post.refresh_from_db()

    hold(link, post)

    post.refresh_from_db()
    assert post.status == Publication.Status.DRAFT
    assert post.renditions.get().status == Rendition.Status.DRAFT
    assert not Job.objects.unfinished().filter(status="pending").exists()
    review = Review.objects.get(publication=post)
    assert (review.state, review.approved_hash, review.approved_revision) == ("on_hold", "", None)


def test_only_a_post_in_review_or_approved_is_put_on_hold(workspace_a, alice, bob, account):
    post = in_review(workspace_a, bob, account)
    link, _ = make_link(workspace_a, alice)
    review_request_changes(
        publication=post, expected_revision=post.revision, actor=alice, note="No", via=link
    )
    post.refresh_from_db()

    with pytest.raises(Conflict) as refused:
        hold(link, post)

    assert refused.value.code == "NOT_HOLDABLE"
    assert Review.objects.get(publication=post).state == Review.State.CHANGES_REQUESTED


def test_a_new_default_alt_text_under_a_clients_approval_sends_the_post_back(
    workspace_a, alice, bob, account
):
    asset = MediaAssetFactory(workspace=workspace_a, alt_text="A red bicycle")
    draft = publication_create(
        workspace=workspace_a,
        author=bob,
        segments=[{"text": "Look", "media": [{"id": asset.pk}]}],
        destinations=[{"account": account.pk}],
        scheduled_at=timezone.now() + timedelta(days=2),
    )
    review_submit(publication=draft, expected_revision=draft.revision, actor=bob)
    draft.refresh_from_db()
    link, _ = make_link(workspace_a, alice)
    approve(link, draft)
    draft.refresh_from_db()
    revision = draft.revision

    media_alt_text_set(asset=asset, alt_text="A blue bicycle", actor=alice)

    draft.refresh_from_db()
    assert (draft.status, draft.revision) == (Publication.Status.DRAFT, revision + 1)
    assert Review.objects.get(publication=draft).state == Review.State.IN_REVIEW
    note = ReviewComment.objects.filter(kind="submitted").last().body
    assert note.startswith("A media file's default alt text changed after Acme approved it")
