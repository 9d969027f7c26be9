from tests.api.helpers import bearer, error


def test_a_token_over_its_rate_gets_429_with_retry_after(settings, workspace_a, make_token):
    settings.API_THROTTLE_RATE = "2/min"
    busy = bearer(make_token(workspace_a).clear)
    calm = bearer(make_token(workspace_a).clear)

    assert busy.get("/api/v1/me").status_code == 200
    assert busy.get("/api/v1/me").status_code == 200
    response = busy.get("/api/v1/me")

    assert response.status_code == 429
    err = error(response)
    assert err["code"] == "RATE_LIMITED"
    retry_after = int(response["Retry-After"])
    assert 1 <= retry_after <= 60
    assert err["details"] == {"retry_after_s": retry_after}
    # The limit is per token: another token of the same workspace is not slowed down.
    assert calm.get("/api/v1/me").status_code == 200


def test_an_empty_rate_turns_throttling_off(settings, api_a):
    settings.API_THROTTLE_RATE = ""
    assert all(api_a.get("/api/v1/me").status_code == 200 for _ in range(5))
