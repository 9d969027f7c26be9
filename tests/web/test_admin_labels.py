"""What operators read in the admin: plural names spelled right, and the zone of its times."""

import pytest
from django.test import Client

from tests.factories import UserFactory


@pytest.mark.django_db
def test_the_admin_index_spells_plurals_and_names_its_time_zone():
    staff = UserFactory(email="ops@example.com", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)
    page = client.get("/admin/").content.decode()
    assert "Worker processes" in page and "Worker processs" not in page
    assert "Webhook deliveries" in page and "Webhook deliverys" not in page
    assert "Times in UTC" in page


def test_initials_stand_for_a_person():
    from types import SimpleNamespace

    from apps.web.templatetags.platform_icons import initials

    assert initials(SimpleNamespace(name="Dana Maria Scully", email="d@x")) == "DS"
    assert initials(SimpleNamespace(name="Ola", email="o@x")) == "O"
    assert initials(SimpleNamespace(name="", email="zed@example.com")) == "ZE"
