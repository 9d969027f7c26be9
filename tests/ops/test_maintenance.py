import pytest
from django.http import HttpResponse
from django.urls import reverse

from apps.ops import services
from apps.ops.middleware import MaintenanceModeMiddleware
from apps.ops.models import MaintenanceSwitch


def test_api_writes_answer_503_in_the_error_envelope_when_the_setting_is_on(api_a, settings):
    settings.MAINTENANCE_MODE = True
    response = api_a.post("/api/v1/publications", {"text": "hi"}, format="json")
    assert response.status_code == 503
    assert response["Retry-After"] == "300"
    assert response.json() == {
        "error": {"code": "MAINTENANCE", "message": services.DEFAULT_MESSAGE, "details": {}}
    }


@pytest.mark.parametrize("method", ["put", "patch", "delete"])
def test_every_write_method_is_refused(api_a, settings, method):
    settings.MAINTENANCE_MODE = True
    response = getattr(api_a, method)("/api/v1/publications/1", {}, format="json")
    assert response.status_code == 503


def test_api_reads_keep_working(api_a, settings):
    settings.MAINTENANCE_MODE = True
    assert api_a.get("/api/v1/me").status_code == 200


def test_web_writes_get_a_readable_page(client, bob, settings):
    settings.MAINTENANCE_MODE = True
    client.force_login(bob)
    response = client.post("/", {"anything": "1"})
    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    assert response["Retry-After"] == "300"
    assert b"Under maintenance" in response.content
    assert client.get("/").status_code == 200


def test_the_admin_switch_turns_it_on_with_its_message_and_retry_after(api_a):
    services.maintenance_set(is_enabled=True, message="Upgrading the database.", retry_after_s=90)
    response = api_a.post("/api/v1/publications", {}, format="json")
    assert response.status_code == 503
    assert response["Retry-After"] == "90"
    assert response.json()["error"]["message"] == "Upgrading the database."


def test_operators_switch_it_off_in_the_admin_while_it_is_on(admin_client, api_a):
    services.maintenance_set(is_enabled=True)
    assert api_a.post("/api/v1/publications", {}, format="json").status_code == 503

    url = reverse("admin:ops_maintenanceswitch_change", args=[MaintenanceSwitch.SINGLETON_PK])
    response = admin_client.post(url, {"message": "", "retry_after_s": "300"})
    assert response.status_code == 302

    assert MaintenanceSwitch.load().is_enabled is False
    assert api_a.post("/api/v1/publications", {}, format="json").status_code != 503


def test_it_is_off_by_default(api_a):
    assert services.maintenance_state().is_on is False
    assert api_a.post("/api/v1/publications", {}, format="json").status_code != 503


def test_the_switch_is_read_once_per_cache_window(
    db, settings, monkeypatch, django_assert_num_queries
):
    settings.MAINTENANCE_CACHE_S = 5
    clock = [1000.0]
    monkeypatch.setattr(services.time, "monotonic", lambda: clock[0])
    with django_assert_num_queries(1):
        assert services.maintenance_state().is_on is False
        assert services.maintenance_state().is_on is False

    # Another process flips it: this one notices once its cached reading expires.
    MaintenanceSwitch.objects.create(pk=1, is_enabled=True)
    clock[0] += 4
    assert services.maintenance_state().is_on is False
    clock[0] += 2
    state = services.maintenance_state()
    assert (state.is_on, state.source) == (True, "admin")


@pytest.mark.parametrize(
    "path",
    [
        "/admin/ops/maintenanceswitch/1/change/",
        "/admin/login/",
        "/login/",
        "/logout/",
        "/sandbox/api/v1/posts",
    ],
)
def test_exempt_paths_stay_writable(rf, settings, path):
    settings.MAINTENANCE_MODE = True
    middleware = MaintenanceModeMiddleware(lambda request: HttpResponse("passed"))
    assert middleware(rf.post(path)).content == b"passed"


def test_reads_never_look_the_switch_up(rf, monkeypatch):
    def boom():
        raise AssertionError("a read must not check maintenance")

    monkeypatch.setattr("apps.ops.middleware.maintenance_state", boom)
    middleware = MaintenanceModeMiddleware(lambda request: HttpResponse("passed"))
    assert middleware(rf.get("/api/v1/me")).content == b"passed"
    assert middleware(rf.head("/")).content == b"passed"


def test_admin_changelist_opens_the_single_switch(admin_client):
    response = admin_client.get(reverse("admin:ops_maintenanceswitch_changelist"))
    assert response.status_code == 302
    assert response["Location"].endswith("/admin/ops/maintenanceswitch/1/change/")
    page = admin_client.get(response["Location"])
    assert page.status_code == 200
    assert b"Retry-After" in page.content
    assert MaintenanceSwitch.objects.count() == 1


def test_the_switch_refuses_a_second_row(db):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError):
        MaintenanceSwitch(id=2).full_clean()
