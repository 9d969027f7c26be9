"""One publication's total text is capped (PUBLICATION_MAX_CONTENT_CHARS): its segments and
every destination's own text together. Past it, the create is refused with the envelope
and nothing is stored."""

from apps.publications.models import Publication
from apps.renditions.models import Rendition
from tests.api.helpers import error
from tests.factories import SocialAccountFactory

URL = "/api/v1/publications"


def _accounts(workspace, n):
    return [
        SocialAccountFactory(workspace=workspace, platform="sandbox", handle=f"s{i}")
        for i in range(n)
    ]


def test_the_default_cap_refuses_a_publication_over_200000_characters(api_a, workspace_a):
    body = {"segments": [{"text": "x" * 60_000} for _ in range(4)]}

    response = api_a.post(URL, body, format="json")

    assert response.status_code == 400
    problem = error(response)
    assert problem["code"] == "PUBLICATION_TOO_LARGE"
    assert "240,000" in problem["message"] and "200,000" in problem["message"]
    assert problem["details"]["segments"] == [problem["message"]]
    assert not Publication.objects.exists()


def test_destination_overrides_count_toward_the_cap(api_a, workspace_a, settings):
    settings.PUBLICATION_MAX_CONTENT_CHARS = 1_000
    accounts = _accounts(workspace_a, 3)
    body = {
        "segments": [{"text": "a" * 400}],
        "destinations": [
            {"account": accounts[0].pk, "segments": [{"text": "b" * 400}]},
            {"account": accounts[1].pk, "segments": [{"text": "c" * 400}]},
            {"account": accounts[2].pk},
        ],
    }

    response = api_a.post(URL, body, format="json")

    assert error(response)["code"] == "PUBLICATION_TOO_LARGE"
    assert not Publication.objects.exists()
    assert not Rendition.objects.exists()

    del body["destinations"][1]["segments"]  # 800 characters: within the cap
    assert api_a.post(URL, body, format="json").status_code == 201


def test_an_edit_past_the_cap_is_refused_and_changes_nothing(api_a, workspace_a, settings):
    settings.PUBLICATION_MAX_CONTENT_CHARS = 1_000
    created = api_a.post(URL, {"text": "short"}, format="json").json()

    response = api_a.patch(
        f"{URL}/{created['id']}",
        {"revision": created["revision"], "segments": [{"text": "z" * 1_001}]},
        format="json",
    )

    assert error(response)["code"] == "PUBLICATION_TOO_LARGE"
    assert Publication.objects.get().segments.get().text == "short"


def test_a_bulk_item_past_the_cap_is_that_items_error(api_a, workspace_a, settings):
    settings.PUBLICATION_MAX_CONTENT_CHARS = 100
    items = [{"text": "fits"}, {"text": "y" * 101}]

    response = api_a.post(f"{URL}/bulk", {"items": items}, format="json")

    assert response.status_code == 200
    rows = response.json()["items"]
    assert rows[0]["status"] == "created"
    assert rows[1]["status"] == "error"
    assert rows[1]["error"]["code"] == "PUBLICATION_TOO_LARGE"
    assert Publication.objects.count() == 1
