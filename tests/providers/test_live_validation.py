"""The live validation kit against the platform fakes: Mastodon (an idempotency handle and
self-reply comments) and X (no handle, no first comments), a failing step, the refusal of an
account that is not connected, and the record the catalog reads."""

from __future__ import annotations

import contextlib
import io
import time

import pytest
from django.core.management import CommandError, call_command

from apps.accounts import services as account_services
from apps.accounts.installation import installation_id
from apps.accounts.models import SocialAccount
from apps.providers import httpcall
from apps.providers.base import MediaPayload, SupportsDelete, get_adapter
from apps.providers.catalog import get_capabilities
from apps.providers.live.models import PlatformValidation
from apps.providers.live.services import platform_validation_run
from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.bluesky import BlueskyFake
from loadtest.platform_fakes.instagram import InstagramFake
from loadtest.platform_fakes.linkedin import MEMBER_SCOPES, LinkedInFake
from loadtest.platform_fakes.mastodon import MastodonFake
from loadtest.platform_fakes.pinterest import PinterestFake
from loadtest.platform_fakes.server import FakeServer
from loadtest.platform_fakes.threads import ThreadsFake
from loadtest.platform_fakes.x import XFake
from tests.factories import SocialAccountFactory
from tests.providers.social_helpers import make_account

pytestmark = pytest.mark.django_db

STEP_NAMES = ["publish", "lookup", "idempotency", "first_comment", "delete"]


class Clock:
    """The platform's clock, moved by the kit's waits (so lookups retried take no time)."""

    def __init__(self) -> None:
        self.now = time.time()
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(httpcall, "sleep", clock.sleep)
    return clock


def _serve(fake, settings):
    server = FakeServer([fake]).start()
    settings.PROVIDER_API_REDIRECT = server.base_url
    settings.PROVIDER_TIMEOUT_S = 0.5
    return server


@pytest.fixture
def mastodon(clock, settings):
    fake = MastodonFake(FaultPlan(hang_s=1.0))
    fake.clock = clock
    server = _serve(fake, settings)
    yield fake
    server.stop()


@pytest.fixture
def x_fake(clock, settings):
    settings.X_CLIENT_ID = "x-client"
    settings.X_CLIENT_SECRET = "x-secret"
    fake = XFake(FaultPlan(hang_s=1.0))
    fake.clock = clock
    server = _serve(fake, settings)
    yield fake
    server.stop()


@pytest.fixture
def linkedin(clock, settings):
    settings.LINKEDIN_CLIENT_ID = "li-client"
    settings.LINKEDIN_CLIENT_SECRET = "li-secret"
    settings.LINKEDIN_API_VERSION = "202609"
    fake = LinkedInFake(FaultPlan(hang_s=1.0))
    fake.clock = clock
    server = _serve(fake, settings)
    yield fake
    server.stop()


# A member token that may read its own posts back (r_member_social), which confirming a
# duplicate refusal and listing comments need.
READING_MEMBER = MEMBER_SCOPES | {"r_member_social"}


def _account(workspace, platform: str, fake, **opening) -> SocialAccount:
    opened = fake.new_account("operator", **opening)
    opened.pop("display_name", None)
    return make_account(workspace, platform, **opened)


def _statuses(validation: PlatformValidation) -> dict[str, str]:
    return {step["name"]: step["status"] for step in validation.steps}


def test_mastodon_passes_every_step_and_leaves_nothing_behind(workspace_a, mastodon):
    account = _account(workspace_a, "mastodon", mastodon)
    seen = []

    validation = platform_validation_run(account=account, operator="ops", on_step=seen.append)

    assert [r.name for r in seen] == STEP_NAMES
    assert _statuses(validation) == dict.fromkeys(STEP_NAMES, "passed")
    assert validation.passed
    assert validation.steps_passed == STEP_NAMES
    assert validation.leftovers == []
    assert (validation.platform, validation.api_version) == ("mastodon", "Mastodon 4.3.2")
    assert (validation.account, validation.account_handle) == (account, account.handle)
    assert validation.operator == "ops"
    # One post and its comment were made (the resend under the same key made nothing), and
    # both are gone.
    assert mastodon.published() == []
    post, comment = sorted(mastodon.deleted.values(), key=lambda p: int(p.id))
    assert post.idempotency_key.removesuffix("-s0") == comment.idempotency_key.removesuffix(
        "-comment"
    )
    assert comment.reply_to == post.id
    assert "platform check" in post.text


def test_x_reports_the_steps_it_does_not_offer_and_still_passes(workspace_a, x_fake):
    account = _account(workspace_a, "x", x_fake)

    validation = platform_validation_run(account=account)

    assert _statuses(validation) == {
        "publish": "passed",
        "lookup": "passed",
        "idempotency": "not_offered",
        "first_comment": "not_offered",
        "delete": "passed",
    }
    assert validation.passed
    assert validation.steps_passed == ["publish", "lookup", "delete"]
    assert validation.api_version == "API v2"
    assert x_fake.published() == []
    assert len(x_fake.deleted) == 1


def test_bluesky_resends_under_the_record_key_and_deletes_its_records(workspace_a, clock, settings):
    installation_id.cache_clear()
    fake = BlueskyFake(FaultPlan(hang_s=1.0))
    server = _serve(fake, settings)
    try:
        account = _account(workspace_a, "bluesky", fake)
        validation = platform_validation_run(account=account)
    finally:
        server.stop()
        installation_id.cache_clear()

    assert _statuses(validation) == dict.fromkeys(STEP_NAMES, "passed")
    assert "same handle returned at://" in validation.steps[2]["detail"]
    assert validation.api_version == "AT Protocol (app.bsky)"
    assert fake.published() == [] and len(fake.deleted) == 2  # the post and its reply


def test_an_asynchronous_post_is_waited_for_then_deleted(workspace_a, clock, settings):
    fake = ThreadsFake(FaultPlan(rates={}, processing_s=30.0, hang_s=1.0))
    fake.clock = clock
    server = _serve(fake, settings)
    try:
        account = _account(workspace_a, "threads", fake)
        out = io.StringIO()
        call_command("validate_platform", "threads", account=account.pk, stdout=out)
    finally:
        server.stop()

    validation = PlatformValidation.objects.get()
    assert _statuses(validation) == {
        "publish": "passed",
        "lookup": "passed",
        "idempotency": "not_offered",
        "first_comment": "not_offered",
        "delete": "passed",
    }
    [post] = fake.deleted.values()  # polled until Threads published it, then deleted
    assert validation.steps[0]["detail"].startswith(post.id)
    assert validation.leftovers == [] and fake.published() == []
    assert validation.passed
    assert "Left on the platform" not in out.getvalue()


def test_what_the_platform_cannot_delete_is_listed_with_its_reason(
    workspace_a, clock, settings, tmp_path
):
    from PIL import Image

    picture = tmp_path / "check.jpg"
    Image.new("RGB", (60, 40), (20, 120, 30)).save(picture)
    fake = InstagramFake(FaultPlan(rates={}, processing_s=30.0, hang_s=1.0))
    fake.clock = clock
    server = _serve(fake, settings)
    try:
        account = _account(workspace_a, "instagram", fake)
        out = io.StringIO()
        # A step this test is not about may fail on the fake (the first comment).
        with contextlib.suppress(CommandError):
            call_command(
                "validate_platform",
                "instagram",
                account=account.pk,
                media=[str(picture)],
                media_url="https://media.example.com/check.jpg",
                stdout=out,
            )
    finally:
        server.stop()

    validation = PlatformValidation.objects.get()
    delete = validation.steps[-1]
    assert (delete["status"], _statuses(validation)["publish"]) == ("not_offered", "passed")
    assert delete["detail"].startswith("Instagram's API cannot delete a post")
    [post] = fake.published()
    # The first comment under it stays with it: both are listed for the operator.
    left = [(item["what"], item["id"]) for item in validation.leftovers]
    assert left[0] == ("post", post.id)
    assert [what for what, _ in left] == ["post", "comment"]
    assert out.getvalue().splitlines()[-1].startswith("Left on the platform, delete it by hand")


def test_a_platform_that_needs_media_and_a_board_takes_them_from_the_command(
    workspace_a, clock, settings, tmp_path
):
    from PIL import Image

    settings.PINTEREST_APP_ID = "pin-app"
    settings.PINTEREST_APP_SECRET = "pin-secret"
    picture = tmp_path / "check.png"
    Image.new("RGB", (60, 40), (200, 30, 30)).save(picture)
    fake = PinterestFake(FaultPlan(rates={}, hang_s=1.0))
    server = _serve(fake, settings)
    try:
        account = _account(workspace_a, "pinterest", fake)
        board = account.settings["board_id"]
        call_command(
            "validate_platform",
            "pinterest",
            account=account.pk,
            setting=[f"board_id={board}", "title=Platform check"],
            media=[str(picture)],
            media_url="https://media.example.com/check.png",
            stdout=io.StringIO(),
        )
    finally:
        server.stop()

    validation = PlatformValidation.objects.get()
    assert _statuses(validation) == {
        "publish": "passed",
        "lookup": "passed",
        "idempotency": "not_offered",
        "first_comment": "not_offered",
        "delete": "passed",
    }
    [pin] = fake.deleted.values()
    assert (pin.extra["title"], pin.extra["board_id"]) == ("Platform check", board)
    assert fake.published() == []


def test_linkedin_settles_the_resend_on_the_duplicate_refusal_naming_the_post(
    workspace_a, linkedin
):
    account = _account(workspace_a, "linkedin", linkedin, scopes=READING_MEMBER)

    validation = platform_validation_run(account=account)

    assert _statuses(validation) == {
        "publish": "passed",
        "lookup": "not_offered",
        "idempotency": "passed",
        "first_comment": "passed",
        "delete": "passed",
    }
    [post] = linkedin.deleted.values()
    assert "refused as a duplicate of " + post.id in validation.steps[2]["detail"]
    assert validation.api_version == "LinkedIn-Version 202609"
    assert validation.passed and validation.leftovers == []
    assert linkedin.published() == [] and linkedin.comments == {}


def test_linkedin_without_read_access_cannot_prove_the_duplicate_or_find_the_comment(
    workspace_a, linkedin
):
    account = _account(workspace_a, "linkedin", linkedin)  # w_member_social only

    validation = platform_validation_run(account=account)

    statuses = _statuses(validation)
    assert (statuses["idempotency"], statuses["first_comment"]) == ("failed", "failed")
    assert "may not read" in validation.steps[2]["detail"]
    assert statuses["delete"] == "passed"  # the post, and its comment with it
    assert not validation.passed
    assert linkedin.published() == []


def test_a_resend_that_makes_a_second_post_fails_the_run_and_both_are_deleted(
    workspace_a, clock, settings
):
    # An instance that forgets idempotency keys at once: the resend is a second status.
    fake = MastodonFake(FaultPlan(hang_s=1.0), idempotency_ttl_s=0)
    fake.clock = clock
    server = _serve(fake, settings)
    try:
        account = _account(workspace_a, "mastodon", fake)
        out = io.StringIO()
        with pytest.raises(CommandError) as failed:
            call_command("validate_platform", "mastodon", account=account.pk, stdout=out)
    finally:
        server.stop()

    assert failed.value.returncode == 1
    validation = PlatformValidation.objects.get()
    assert not validation.passed
    assert _statuses(validation)["idempotency"] == "failed"
    assert "second post" in validation.steps[2]["detail"]
    assert _statuses(validation)["delete"] == "passed"
    assert fake.published() == [] and len(fake.deleted) == 3  # post, duplicate, comment
    lines = out.getvalue().splitlines()
    assert any(line.startswith("[FAIL] idempotency") for line in lines)
    assert lines[-1].startswith("FAILED: 4/5 offered steps passed")


def test_the_command_prints_each_step_and_the_summary(workspace_a, x_fake):
    account = _account(workspace_a, "x", x_fake)
    out = io.StringIO()

    call_command("validate_platform", "x", account=account.pk, operator="ops", stdout=out)

    lines = out.getvalue().splitlines()
    assert [line[7:].split()[0] for line in lines[1:6]] == STEP_NAMES
    assert lines[1].startswith("[ok  ] publish")
    assert lines[3].startswith("[n/a ] idempotency")
    assert lines[6].startswith("PASSED: 3/3 offered steps passed (x, API v2)")
    assert "supported until" in lines[7]


def test_a_failed_publish_skips_the_steps_that_need_the_post(workspace_a, mastodon):
    account = _account(workspace_a, "mastodon", mastodon)
    mastodon.tokens.clear()  # the token was revoked on the instance

    validation = platform_validation_run(account=account)

    statuses = _statuses(validation)
    assert statuses["publish"] == "failed"
    assert "auth" in validation.steps[0]["detail"]
    assert [statuses[name] for name in STEP_NAMES[1:]] == ["skipped"] * 4
    assert not validation.passed
    assert validation.steps_passed == []


def test_an_account_that_is_not_connected_is_refused(workspace_a, mastodon):
    account = _account(workspace_a, "mastodon", mastodon)
    account.status = SocialAccount.Status.NEEDS_RECONNECT
    account.save(update_fields=["status"])

    with pytest.raises(CommandError, match="not connected"):
        call_command("validate_platform", "mastodon", account=account.pk, stdout=io.StringIO())

    assert not PlatformValidation.objects.exists()
    assert mastodon.calls == []


def test_the_account_must_be_on_the_platform_named(workspace_a, mastodon):
    account = _account(workspace_a, "mastodon", mastodon)

    with pytest.raises(CommandError, match="is a mastodon account"):
        call_command("validate_platform", "x", account=account.pk, stdout=io.StringIO())


def test_what_an_adapter_cannot_delete_is_listed_for_the_operator(
    workspace_a, mastodon, monkeypatch
):
    monkeypatch.setattr("apps.providers.live.services.SupportsDelete", _NeverDeletes)
    account = _account(workspace_a, "mastodon", mastodon)

    validation = platform_validation_run(account=account)

    assert _statuses(validation)["delete"] == "not_offered"
    assert validation.passed
    assert [item["what"] for item in validation.leftovers] == ["post", "comment"]
    assert len(mastodon.published()) == 2


class _NeverDeletes:
    """Stands in for SupportsDelete: no adapter is an instance."""


@pytest.mark.parametrize(
    "platform",
    [
        "mastodon",
        "x",
        "linkedin",
        "bluesky",
        "pinterest",
        "threads",
        "facebook",
        "youtube",
        "reddit",
    ],
)
def test_these_adapters_delete(platform):
    assert isinstance(get_adapter(platform), SupportsDelete)


def test_a_platform_needing_settings_or_media_says_what_to_pass(workspace_a):
    reddit = SocialAccountFactory(workspace=workspace_a, platform="reddit", handle="ops")
    pinterest = SocialAccountFactory(workspace=workspace_a, platform="pinterest", handle="ops")

    without_settings = platform_validation_run(account=reddit)
    without_media = platform_validation_run(account=pinterest, settings={"board_id": "1"})

    assert without_settings.steps[0] == {
        "name": "publish",
        "status": "failed",
        "detail": "needs --setting for: subreddit, title",
    }
    assert without_media.steps[0]["detail"] == "this platform needs media: pass --media"
    assert _statuses(without_media)["delete"] == "skipped"  # nothing was made
    assert not without_settings.passed and not without_media.passed


def test_the_command_reads_settings_and_media_files(tmp_path):
    from PIL import Image

    from apps.providers.management.commands import validate_platform as command

    picture = tmp_path / "check.png"
    Image.new("RGB", (40, 30), (0, 90, 200)).save(picture)

    [media] = command._media([str(picture)], "https://media.example/check.png")

    assert (media.kind, media.mime_type, media.width, media.height) == (
        "image",
        "image/png",
        40,
        30,
    )
    assert media.public_url == "https://media.example/check.png"
    assert media.open().read() == picture.read_bytes()
    reddit, mastodon = get_capabilities("reddit"), get_capabilities("mastodon")
    assert command._settings(["subreddit=test", "title=A = B"], reddit) == {
        "subreddit": "test",
        "title": "A = B",
    }
    assert command._settings(["sensitive=true", "visibility=unlisted"], mastodon) == {
        "sensitive": True,
        "visibility": "unlisted",
    }
    with pytest.raises(CommandError):
        command._settings(["subreddit"], reddit)
    with pytest.raises(CommandError, match="has no setting 'board_id'"):
        command._settings(["board_id=1"], reddit)
    with pytest.raises(CommandError, match="true or false"):
        command._settings(["sensitive=yes"], mastodon)
    with pytest.raises(CommandError):
        command._media([str(tmp_path / "missing.png")], None)


def test_an_error_of_ours_in_a_step_fails_it_and_the_clean_up_still_runs(
    workspace_a, mastodon, monkeypatch
):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(type(get_adapter("mastodon")), "find_comment", broken)
    account = _account(workspace_a, "mastodon", mastodon)

    validation = platform_validation_run(account=account)

    assert validation.steps[3] == {
        "name": "first_comment",
        "status": "failed",
        "detail": "error: RuntimeError: a bug",
    }
    assert _statuses(validation)["delete"] == "passed"
    assert not validation.passed
    assert mastodon.published() == [] and validation.leftovers == []


def test_a_token_near_expiry_is_refreshed_and_stored_before_posting(workspace_a, x_fake):
    opened = x_fake.new_account("operator")
    opened.pop("display_name")
    opened["credentials"]["expires_at"] = "2020-01-01T00:00:00+00:00"
    account = make_account(workspace_a, "x", **opened)

    validation = platform_validation_run(account=account)

    assert validation.passed
    account.refresh_from_db()
    stored = account_services.social_account_credentials(account)
    assert stored["refresh_token"] != opened["credentials"]["refresh_token"]
    assert stored["expires_at"] > "2026"


def _facebook_video_run(workspace, settings, *, sessions_open: bool) -> tuple:
    from loadtest.platform_fakes.facebook import FacebookFake
    from loadtest.soak_fakes import mp4_bytes

    settings.META_APP_ID = "4321"
    video_bytes = mp4_bytes()
    video = MediaPayload(
        1, "video", "video/mp4", len(video_bytes), "", lambda: io.BytesIO(video_bytes)
    )
    fake = FacebookFake(FaultPlan(rates={}, processing_s=0.0, hang_s=1.0))
    fake.page_tokens_open_upload_sessions = sessions_open
    server = _serve(fake, settings)
    try:
        account = _account(workspace, "facebook", fake)
        validation = platform_validation_run(account=account, media=[video])
    finally:
        server.stop()
    return validation, fake


def test_facebook_checks_which_video_upload_a_page_token_may_use(workspace_a, clock, settings):
    validation, fake = _facebook_video_run(workspace_a, settings, sessions_open=False)

    statuses = _statuses(validation)
    assert [s["name"] for s in validation.steps][-2:] == ["video_upload", "delete"]
    assert (statuses["publish"], statuses["lookup"]) == ("passed", "passed")
    step = validation.steps[-2]
    assert step["status"] == "passed"
    assert step["detail"].startswith("a Page token finished an upload_phase upload (video ")
    assert "may not open a Resumable Upload API session: permission_missing/10" in step["detail"]
    assert ("POST", "/v23.0/4321/uploads") in fake.calls
    # The video was uploaded in phases, then deleted again.
    assert statuses["delete"] == "passed" and fake.published() == []
    assert [m for m, p in fake.calls if p.endswith("/videos")] == ["POST"] * 3


def test_facebook_records_a_page_token_opening_a_resumable_session(workspace_a, clock, settings):
    validation, fake = _facebook_video_run(workspace_a, settings, sessions_open=True)

    detail = validation.steps[-2]["detail"]
    assert detail.startswith("the video went up by the Resumable Upload API and was published")
    assert "it may open a Resumable Upload API session (upload:" in detail
    # One videos call with the handle, not upload_phase's start, transfer and finish.
    assert [m for m, p in fake.calls if p.endswith("/videos")] == ["POST"]


def test_facebook_without_a_video_does_not_offer_the_video_check(workspace_a, clock, settings):
    from loadtest.platform_fakes.facebook import FacebookFake

    fake = FacebookFake(FaultPlan(rates={}, hang_s=1.0))
    server = _serve(fake, settings)
    try:
        validation = platform_validation_run(account=_account(workspace_a, "facebook", fake))
    finally:
        server.stop()

    assert _statuses(validation)["video_upload"] == "not_offered"
    assert _statuses(validation)["delete"] == "passed"
