import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("params", [{}, {"q": "news"}])
def test_the_changelist_renders(admin_client, set_slots, news, params):
    set_slots([(0, "09:00")])
    set_slots([(1, "18:00")], account=news)

    response = admin_client.get(reverse("admin:planning_queueschedule_changelist"), params)

    assert response.status_code == 200
    assert "Slots of @news" in response.content.decode()


def test_the_change_page_shows_the_slots(admin_client, set_slots):
    schedule = set_slots([(0, "09:00")])

    response = admin_client.get(reverse("admin:planning_queueschedule_change", args=[schedule.pk]))

    assert response.status_code == 200
    assert 'value="09:00:00"' in response.content.decode()


def test_the_evergreen_changelist_and_change_page_render(admin_client, workspace_a, alice, news):
    from apps.planning.evergreen import EvergreenSettings, evergreen_mark
    from apps.publishing.services import publication_create

    source = publication_create(
        workspace=workspace_a,
        author=alice,
        segments=[{"text": "Guide"}],
        destinations=[{"account": news.pk}],
    )
    [row] = evergreen_mark(
        workspace=workspace_a, publications=[source], actor=alice, settings=EvergreenSettings()
    )

    listing = admin_client.get(reverse("admin:planning_evergreenpost_changelist"), {"q": "ws-a"})
    page = admin_client.get(reverse("admin:planning_evergreenpost_change", args=[row.pk]))

    assert listing.status_code == 200 and f"Evergreen {row.pk}" in listing.content.decode()
    assert page.status_code == 200
