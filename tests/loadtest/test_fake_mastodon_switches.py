"""The Mastodon fake's per-account switches of its Idempotency-Key behaviours (`key_lock`,
`key_not_recorded`), as the soak turns them on: what the instance does to one account's
keyed creates, and nothing to the others'."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from loadtest.platform_fakes import FaultPlan
from loadtest.platform_fakes.base import FakeRequest
from loadtest.platform_fakes.mastodon import HOST, TEMPORARY_PROBLEM, MastodonFake
from loadtest.platform_fakes.server import FakeServer
from loadtest.soak import resolve_behaviours


def _opened(fake: MastodonFake, handle: str, *behaviours: str) -> tuple[str, str]:
    """(account id, token) of a new account with `behaviours` switched on."""
    opened = fake.new_account(handle)
    account_id = opened["settings"]["account_id"]
    for behaviour in behaviours:
        fake.switch(account_id, behaviour)
    return account_id, opened["credentials"]["access_token"]


def _create(fake: MastodonFake, token: str, key: str, text: str = "Rye"):
    return fake.handle(
        FakeRequest(
            method="POST",
            host=HOST,
            path="/api/v1/statuses",
            query={},
            headers={
                "authorization": f"Bearer {token}",
                "content-type": "application/json",
                "idempotency-key": key,
            },
            body=json.dumps({"status": text}).encode(),
        )
    )


def test_all_switches_both_mastodon_key_behaviours():
    assert resolve_behaviours(["all"], ("mastodon",)) == (
        "mastodon:key_lock",
        "mastodon:key_not_recorded",
    )
    assert resolve_behaviours(["mastodon:key_lock"], ("mastodon",)) == ("mastodon:key_lock",)


def test_key_lock_refuses_an_overlapping_request_under_the_key_while_the_first_runs():
    fake = MastodonFake(FaultPlan.calm(), key_lock_hold_s=1.0, switched_share=1.0)
    _, token = _opened(fake, "held", "key_lock")
    answers: list[httpx.Response] = []
    with FakeServer([fake]) as server:
        url = f"{server.base_url}/{HOST}/api/v1/statuses"

        def post() -> httpx.Response:
            return httpx.post(
                url,
                json={"status": "Rye"},
                headers={"Authorization": f"Bearer {token}", "Idempotency-Key": "k1"},
                timeout=5.0,
            )

        first = threading.Thread(target=lambda: answers.append(post()))
        started = time.monotonic()
        first.start()
        time.sleep(0.3)
        meanwhile = post()
        first.join()
        after = post()

    assert (meanwhile.status_code, meanwhile.json()["error"]) == (503, TEMPORARY_PROBLEM)
    [answered] = answers
    assert answered.status_code == 200
    assert time.monotonic() - started >= 1.0  # answered only once the create ended
    assert after.status_code == 200 and after.json()["id"] == answered.json()["id"]
    assert len(fake.published()) == 1
    assert fake.faults.struck == {"key_lock": 1}


def test_key_not_recorded_saves_the_status_then_answers_500_and_forgets_the_key():
    fake = MastodonFake(FaultPlan.calm(), switched_share=1.0, dropped_share=0.0)
    _, token = _opened(fake, "forgetful", "key_not_recorded")

    failed = _create(fake, token, "k1")

    assert failed.status == 500
    assert len(fake.published()) == 1 and fake.keys == {}
    again = _create(fake, token, "k1")  # the lock was released: a second status
    assert again.status == 500 and len(fake.published()) == 2


def test_key_not_recorded_can_close_the_connection_leaving_the_lock_to_its_autorelease():
    fake = MastodonFake(FaultPlan.calm(), switched_share=1.0, dropped_share=1.0)
    _, token = _opened(fake, "killed", "key_not_recorded")

    dropped = _create(fake, token, "k1")

    assert dropped.drop is True
    assert len(fake.published()) == 1 and fake.keys == {}
    assert _create(fake, token, "k1").status == 503  # the dead request's lock still stands


def test_a_switch_acts_on_its_account_only_and_on_a_share_of_its_creates():
    fake = MastodonFake(FaultPlan.calm(), dropped_share=0.0)
    _, plain = _opened(fake, "plain")
    _, switched = _opened(fake, "switched", "key_not_recorded")

    plain_answers = {_create(fake, plain, f"p{i}").status for i in range(40)}
    switched_answers = [_create(fake, switched, f"s{i}").status for i in range(40)]

    assert plain_answers == {200}
    assert 0 < switched_answers.count(500) < 40
    assert fake.faults.struck == {"key_not_recorded": switched_answers.count(500)}
    assert len(fake.keys) == 40 + switched_answers.count(200)


@pytest.mark.parametrize("behaviour", ["key_lock", "key_not_recorded"])
def test_an_unkeyed_create_is_left_alone(behaviour):
    fake = MastodonFake(FaultPlan.calm(), switched_share=1.0)
    _, token = _opened(fake, "nokey", behaviour)

    answer = _create(fake, token, "")

    assert (answer.status, answer.delay_s, answer.drop) == (200, 0.0, False)
