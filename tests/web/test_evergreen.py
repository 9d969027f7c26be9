"""The evergreen pages: marking posts evergreen, the list, a post's page with its next turn
per destination (a repeat X would refuse is said so), its settings, pause, resume, skip and
stop; another workspace's evergreen posts are 404 and a viewer changes nothing."""

import re
from datetime import UTC, datetime, time

import pytest
import time_machine

from apps.planning.evergreen import EvergreenSettings, evergreen_mark
from apps.planning.models import EvergreenPost, EvergreenShare
from apps.planning.services import queue_slots_replace
from apps.publishing.services import publication_create
from tests.factories import SocialAccountFactory

pytestmark = pytest.mark.django_db

LIST = "/w/ws-a/evergreen/"
NOW = datetime(2027, 1, 1, 10, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _frozen():
    with time_machine.travel(NOW, tick=False):
        yield


@pytest.fixture
def post(workspace_a, alice, news):
    return publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Our evergreen guide"}],
        destinations=[{"account": news.pk}],
    )


@pytest.fixture
def evergreen(workspace_a, alice, post):
    [row] = evergreen_mark(
        workspace=workspace_a, publications=[post], actor=alice, settings=EvergreenSettings()
    )
    return row


def settings_form(**changes):
    data = {"every_days": "14", "min_gap_days": "7", "max_shares": "", "ends_on": ""}
    data["variations"] = "Second text\n---\nThird text"
    data.update(changes)
    return data


def test_a_post_is_marked_evergreen_from_the_list(as_alice, post):
    page = as_alice.get(LIST, {"post": post.pk})
    assert page.status_code == 200
    assert re.search(rf'name="posts" value="{post.pk}"[^>]* checked', page.content.decode())

    response = as_alice.post(LIST + "mark/", {"posts": [post.pk], **settings_form()})

    assert response.status_code == 302
    row = EvergreenPost.objects.get(source=post)
    assert (row.every_days, row.variations) == (14, ["Second text", "Third text"])
    listing = as_alice.get(LIST).content.decode()
    assert "Our evergreen guide" in listing and f"/w/ws-a/evergreen/{row.pk}/" in listing


def test_marking_with_bad_settings_shows_the_form_again(as_alice, post):
    response = as_alice.post(LIST + "mark/", {"posts": [post.pk], **settings_form(every_days="0")})

    assert response.status_code == 400
    assert not EvergreenPost.objects.exists()


def test_the_page_says_where_a_repeat_would_be_refused(as_alice, workspace_a, alice, news):
    x = SocialAccountFactory(workspace=workspace_a, platform="x", handle="onx")
    source = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Same words"}],
        destinations=[{"account": news.pk}, {"account": x.pk}],
        status="scheduled",
    )
    [row] = evergreen_mark(
        workspace=workspace_a, publications=[source], actor=alice, settings=EvergreenSettings()
    )

    page = as_alice.get(f"{LIST}{row.pk}/").content.decode()

    assert 'data-platform="x" data-refused="yes"' in page
    assert "refuses a post identical to one it already has" in page
    assert 'data-platform="sandbox" data-refused="no"' in page


def test_settings_pause_resume_skip_and_stop(as_alice, evergreen, workspace_a):
    queue_slots_replace(workspace=workspace_a, slots=[(0, time(9))], timezone="Europe/Warsaw")
    base = f"{LIST}{evergreen.pk}/"

    assert as_alice.post(base + "settings/", settings_form(every_days="3")).status_code == 302
    assert as_alice.post(base + "pause/").status_code == 302
    paused = as_alice.get(base).content.decode()
    assert 'id="evergreen-status">Paused' in paused and "Resume" in paused
    assert as_alice.post(base + "resume/").status_code == 302
    assert as_alice.post(base + "skip/").status_code == 302
    assert as_alice.post(base + "stop/").status_code == 302

    evergreen.refresh_from_db()
    assert (evergreen.every_days, evergreen.status) == (3, "ended")
    assert EvergreenShare.objects.get().status == "skipped"
    assert as_alice.post(base + "launch/").status_code == 404


def test_a_get_of_an_action_leads_back_to_the_page(as_alice, evergreen):
    response = as_alice.get(f"{LIST}{evergreen.pk}/pause/")

    assert response.status_code == 302
    assert response["Location"] == f"{LIST}{evergreen.pk}/"


def test_another_workspaces_evergreen_posts_are_404(as_charlie, evergreen, post):
    own = f"/w/ws-b/evergreen/{evergreen.pk}/"
    for url in (f"{LIST}", f"{LIST}{evergreen.pk}/", own):
        assert as_charlie.get(url).status_code == 404, url
    for action in ("pause", "stop", "settings"):
        assert as_charlie.post(f"{own}{action}/", settings_form()).status_code == 404
    marked = as_charlie.post("/w/ws-b/evergreen/mark/", {"posts": [post.pk], **settings_form()})
    assert marked.status_code == 400  # not one of its posts
    evergreen.refresh_from_db()
    assert evergreen.status == "active" and EvergreenPost.objects.count() == 1


def test_a_viewer_reads_but_changes_nothing(as_vera, evergreen, post):
    assert as_vera.get(LIST).status_code == 200
    assert as_vera.get(f"{LIST}{evergreen.pk}/").status_code == 200
    assert as_vera.post(f"{LIST}{evergreen.pk}/pause/").status_code == 403
    evergreen.refresh_from_db()
    assert evergreen.status == "active"


def test_a_posts_page_links_to_marking_it(as_alice, as_vera, post):
    link = f"/w/ws-a/evergreen/?post={post.pk}#mark-heading"

    assert link in as_alice.get(f"/w/ws-a/posts/{post.pk}/").content.decode()
    assert link not in as_vera.get(f"/w/ws-a/posts/{post.pk}/").content.decode()


def test_the_queue_marks_a_re_share(as_alice, evergreen, workspace_a):
    from apps.planning.recycling import evergreen_recycle

    queue_slots_replace(workspace=workspace_a, slots=[(0, time(9))], timezone="Europe/Warsaw")
    share = evergreen_recycle(evergreen=evergreen).share
    assert share is not None

    page = as_alice.get("/w/ws-a/queue/").content.decode()

    assert page.count('title="Shared again by an evergreen post">evergreen</span>') == 1
    turns = as_alice.get(f"{LIST}{evergreen.pk}/").content.decode()
    assert (
        f'href="/w/ws-a/posts/{share.publication_id}/"><span class="badge status-scheduled">'
        in (turns)
    )


def test_without_posts_the_page_says_where_to_write_one(as_alice):
    page = as_alice.get(LIST).content.decode()

    assert 'id="no-posts"' in page and 'href="/w/ws-a/compose/"' in page


def test_the_list_shows_active_then_paused_then_ended(as_alice, workspace_a, alice, news):
    from apps.planning.evergreen import evergreen_pause, evergreen_stop

    rows = []
    for text in ("Stopped one", "Paused one", "Active one"):
        source = publication_create(
            workspace=workspace_a,
            author=alice,
            segments=[{"text": text}],
            destinations=[{"account": news.pk}],
        )
        rows += evergreen_mark(
            workspace=workspace_a, publications=[source], actor=alice, settings=EvergreenSettings()
        )
    evergreen_stop(evergreen=rows[0])
    evergreen_pause(evergreen=rows[1])

    page = as_alice.get(LIST).content.decode()

    assert page.index("Active one") < page.index("Paused one") < page.index("Stopped one")
