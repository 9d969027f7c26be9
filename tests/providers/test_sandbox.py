"""The sandbox platform over real HTTP, driven through its adapter. The sandbox's store is
the witness: count its posts, not our rows."""

import io
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from apps.accounts import services as account_services
from apps.common.errors import Conflict, ValidationFailed
from apps.providers.base import MediaPayload, PublishContext, ReplyTarget, SegmentPayload
from apps.providers.errors import Action, ErrorKind, ProviderError
from apps.providers.sandbox.adapter import SandboxAdapter
from apps.sandbox.services import sandbox_account_create
from tests.sandbox.witness import witness_posts

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sandbox(live_server, settings):
    settings.SANDBOX_BASE_URL = live_server.url
    settings.PROVIDER_TIMEOUT_S = 2
    return live_server.url


def _ctx(account, rendition_id=1):
    return PublishContext(
        account=account,
        credentials=account_services.social_account_credentials(account),
        settings={},
        rendition_id=rendition_id,
        idempotency_base=f"r{rendition_id}",
    )


def _witness(base_url, handle):
    return witness_posts(base_url, handle)


def test_it_publishes_and_the_witness_holds_the_post(sandbox, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="happy")
    published = SandboxAdapter().publish_segment(
        _ctx(account), SegmentPayload(0, "hello world"), reply_to=None
    )
    posts = _witness(sandbox, "happy")
    assert [p["text"] for p in posts] == ["hello world"]
    assert posts[0]["id"] == published.provider_post_id
    assert posts[0]["idempotency_key"] == "r1-s0"
    token = account_services.api_token_create(workspace=workspace_a, name="t", scopes=["read"])
    page = httpx.get(published.provider_url, headers={"Authorization": f"Bearer {token.clear}"})
    assert page.status_code == 200
    assert page.json()["id"] == published.provider_post_id


def test_it_answers_429_with_retry_after_then_accepts(sandbox, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a,
        handle="limited",
        behaviour={"rate_limit_times": 1, "retry_after_s": 7},
    )
    before = datetime.now(UTC)
    with pytest.raises(ProviderError) as err:
        SandboxAdapter().publish_segment(_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.RATE_LIMITED
    assert err.value.retryable is True
    assert err.value.http_status == 429
    assert before + timedelta(seconds=6) <= err.value.retry_at <= before + timedelta(seconds=9)
    assert _witness(sandbox, "limited") == []
    SandboxAdapter().publish_segment(_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert len(_witness(sandbox, "limited")) == 1


def test_a_5xx_stores_nothing_and_is_retryable(sandbox, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a, handle="flaky", behaviour={"server_error_times": 2}
    )
    for _ in range(2):
        with pytest.raises(ProviderError) as err:
            SandboxAdapter().publish_segment(_ctx(account), SegmentPayload(0, "x"), reply_to=None)
        assert err.value.kind == ErrorKind.PROVIDER_UNAVAILABLE
        assert err.value.retryable is True
    assert _witness(sandbox, "flaky") == []
    SandboxAdapter().publish_segment(_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert len(_witness(sandbox, "flaky")) == 1


def test_rejected_content_asks_for_an_edit(sandbox, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a, handle="strict", behaviour={"reject_content": True}
    )
    with pytest.raises(ProviderError) as err:
        SandboxAdapter().publish_segment(_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.CONTENT_REJECTED
    assert err.value.action == Action.EDIT
    assert err.value.retryable is False
    assert err.value.as_dict()["code"] == "content_rejected"


def test_an_expired_token_asks_to_reconnect_and_cannot_refresh(sandbox, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a, handle="expired", behaviour={"expired_token": True}
    )
    with pytest.raises(ProviderError) as err:
        SandboxAdapter().publish_segment(_ctx(account), SegmentPayload(0, "x"), reply_to=None)
    assert err.value.kind == ErrorKind.AUTH_EXPIRED
    assert err.value.action == Action.RECONNECT
    account.token_expires_at = datetime.now(UTC)
    with pytest.raises(ProviderError) as err:
        SandboxAdapter().refresh_credentials(account, _ctx(account).credentials)
    assert err.value.kind == ErrorKind.AUTH_EXPIRED


def test_a_token_near_expiry_is_refreshed(sandbox, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="refresh")
    adapter = SandboxAdapter()
    assert adapter.refresh_credentials(account, _ctx(account).credentials) is None
    account.token_expires_at = datetime.now(UTC) + timedelta(minutes=1)
    fresh = adapter.refresh_credentials(account, _ctx(account).credentials)
    assert fresh["access_token"] != _ctx(account).credentials["access_token"]
    account_services.social_account_store_credentials(account=account, credentials=fresh)
    adapter.publish_segment(_ctx(account), SegmentPayload(0, "after refresh"), reply_to=None)
    assert len(_witness(sandbox, "refresh")) == 1


def test_accept_then_hang_is_an_unknown_outcome_and_the_key_prevents_a_duplicate(
    sandbox, settings, workspace_a
):
    settings.PROVIDER_TIMEOUT_S = 0.5
    account = sandbox_account_create(
        workspace=workspace_a,
        handle="hangs",
        behaviour={"hang_after_accept_times": 1, "hang_s": 1.5},
    )
    adapter = SandboxAdapter()
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(_ctx(account), SegmentPayload(0, "once"), reply_to=None)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert err.value.retryable is False
    assert err.value.action == Action.VERIFY
    assert len(_witness(sandbox, "hangs")) == 1  # it was stored before the hang
    assert adapter.is_retry_safe(account) is True
    again = adapter.publish_segment(_ctx(account), SegmentPayload(0, "once"), reply_to=None)
    assert [p["id"] for p in _witness(sandbox, "hangs")] == [again.provider_post_id]


def test_without_key_support_a_resend_duplicates_and_lookup_finds_the_first(sandbox, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a, handle="nokeys", behaviour={"honours_idempotency_key": False}
    )
    adapter = SandboxAdapter()
    assert adapter.is_retry_safe(account) is False
    first = adapter.publish_segment(_ctx(account), SegmentPayload(0, "dup"), reply_to=None)
    found = adapter.lookup_segment(
        _ctx(account), SegmentPayload(0, "dup"), not_before=datetime.now(UTC) - timedelta(hours=1)
    )
    assert found.provider_post_id == first.provider_post_id
    adapter.publish_segment(_ctx(account), SegmentPayload(0, "dup"), reply_to=None)
    assert len(_witness(sandbox, "nokeys")) == 2  # the witness counts the duplicate


def test_lookup_of_a_post_never_made_is_none(sandbox, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="empty")
    found = SandboxAdapter().lookup_segment(
        _ctx(account), SegmentPayload(0, "x"), not_before=datetime.now(UTC)
    )
    assert found is None


def test_text_limit_is_counted_in_graphemes(sandbox, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a, handle="short", behaviour={"text_limit": 3}
    )
    adapter = SandboxAdapter()
    adapter.publish_segment(_ctx(account), SegmentPayload(0, "👩‍👩‍👧e\u0301!"), reply_to=None)
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(_ctx(account, 2), SegmentPayload(0, "abcd"), reply_to=None)
    assert err.value.code == "text_too_long"


def test_threads_reply_to_the_previous_segment(sandbox, workspace_a):
    account = sandbox_account_create(workspace=workspace_a, handle="thread")
    adapter = SandboxAdapter()
    root = adapter.publish_segment(_ctx(account), SegmentPayload(0, "1/2"), reply_to=None)
    reply = adapter.publish_segment(
        _ctx(account), SegmentPayload(1, "2/2"), reply_to=ReplyTarget(root=root, parent=root)
    )
    posts = {p["id"]: p for p in _witness(sandbox, "thread")}
    assert posts[reply.provider_post_id]["reply_to"] == root.provider_post_id


def test_media_is_uploaded_with_alt_text(sandbox, workspace_a):
    from apps.sandbox.models import SandboxMedia

    account = sandbox_account_create(workspace=workspace_a, handle="media")
    media = MediaPayload(
        media_id=1,
        kind="image",
        mime_type="image/png",
        size_bytes=4,
        alt_text="A red square",
        open=lambda: io.BytesIO(b"\x89PNG"),
    )
    SandboxAdapter().publish_segment(
        _ctx(account), SegmentPayload(0, "pic", [media]), reply_to=None
    )
    post = _witness(sandbox, "media")[0]
    assert SandboxMedia.objects.get(pk=post["media"][0]).alt_text == "A red square"


def test_behaviour_is_validated(workspace_a):
    with pytest.raises(ValidationFailed) as err:
        sandbox_account_create(
            workspace=workspace_a, handle="bad", behaviour={"latency_ms": "slow", "boom": 1}
        )
    assert set(err.value.details) == {"behaviour.latency_ms", "behaviour.boom"}


def test_a_handle_taken_in_the_workspace_is_a_conflict(workspace_a, workspace_b):
    sandbox_account_create(workspace=workspace_a, handle="taken")
    with pytest.raises(Conflict) as err:
        sandbox_account_create(workspace=workspace_a, handle="taken")
    assert err.value.code == "HANDLE_TAKEN"
    # Handles are unique per workspace: another workspace may use the same one.
    assert sandbox_account_create(workspace=workspace_b, handle="taken").handle == "taken"


def test_the_sandbox_can_be_disabled(sandbox, settings, workspace_a):
    sandbox_account_create(workspace=workspace_a, handle="off")
    settings.SANDBOX_ENABLED = False
    assert httpx.get(f"{sandbox}/sandbox/posts", params={"handle": "off"}).status_code == 404


def test_a_lost_answer_is_an_unknown_outcome_that_holds_no_thread(sandbox, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a, handle="lossy", behaviour={"lost_answer_times": 1}
    )
    adapter = SandboxAdapter()
    with pytest.raises(ProviderError) as err:
        adapter.publish_segment(_ctx(account), SegmentPayload(0, "lost"), reply_to=None)
    assert err.value.kind == ErrorKind.OUTCOME_UNKNOWN
    assert len(_witness(sandbox, "lossy")) == 1  # stored, though the client heard nothing
    again = adapter.publish_segment(_ctx(account), SegmentPayload(0, "lost"), reply_to=None)
    assert [p["id"] for p in _witness(sandbox, "lossy")] == [again.provider_post_id]


def test_an_account_that_refuses_listing_makes_lookup_fail_not_find_nothing(sandbox, workspace_a):
    account = sandbox_account_create(
        workspace=workspace_a, handle="unlisted", behaviour={"lists_posts": False}
    )
    adapter = SandboxAdapter()
    adapter.publish_segment(_ctx(account), SegmentPayload(0, "hidden"), reply_to=None)
    with pytest.raises(ProviderError) as err:
        adapter.lookup_segment(
            _ctx(account), SegmentPayload(0, "hidden"), not_before=datetime.now(UTC)
        )
    assert err.value.kind == ErrorKind.PERMISSION_MISSING  # never "absent": that would resend


@pytest.mark.parametrize(("percent", "stored"), [(100, 0), (0, 1)])
def test_server_error_percent_fails_that_share_of_posts_storing_nothing(
    sandbox, workspace_a, percent, stored
):
    account = sandbox_account_create(
        workspace=workspace_a, handle=f"flaky{percent}", behaviour={"server_error_percent": percent}
    )
    adapter = SandboxAdapter()
    try:
        adapter.publish_segment(_ctx(account), SegmentPayload(0, "maybe"), reply_to=None)
    except ProviderError as err:
        assert err.kind == ErrorKind.PROVIDER_UNAVAILABLE and err.retryable
    assert len(_witness(sandbox, f"flaky{percent}")) == stored


def test_server_error_percent_over_100_is_refused(workspace_a):
    with pytest.raises(ValidationFailed):
        sandbox_account_create(
            workspace=workspace_a, handle="odd", behaviour={"server_error_percent": 101}
        )
