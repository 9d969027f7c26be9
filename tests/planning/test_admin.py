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
