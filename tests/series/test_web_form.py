"""The series form's weekday-and-time picker and zone dropdown, which produce the RRULE
(the rule stays available for experts), and rules shown as people read them."""

from datetime import UTC, datetime

import pytest
from django.test import Client

from apps.series.models import Series
from apps.web.series_text import describe_rule, weekly_rule

NOW = datetime(2027, 3, 20, 12, 0, tzinfo=UTC)  # a Saturday


@pytest.fixture(autouse=True)
def _frozen(clock):
    with clock(NOW):
        yield


def login(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def picker(account, **overrides):
    return {
        "name": "Twice a week",
        "text": "Hello",
        "accounts": [account.pk],
        "weekdays": ["0", "3"],
        "time": "09:00",
        "start_date": "2027-03-22",
        "timezone": "Europe/Paris",
        "late_window_minutes": "60",
        **overrides,
    }


URL = "/w/ws-a/series/new/"


@pytest.mark.django_db
def test_the_picker_makes_the_rule(bob, workspace_a, account_a):
    response = login(bob).post(URL, picker(account_a))

    assert response.status_code == 302
    series = Series.objects.get()
    assert (series.rrule, series.dtstart, series.timezone) == (
        "FREQ=WEEKLY;BYDAY=MO,TH",
        "2027-03-22T09:00:00",
        "Europe/Paris",
    )
    page = login(bob).get(response["Location"]).content.decode()
    assert "Every Monday and Thursday at 09:00 (Europe/Paris)" in page


@pytest.mark.django_db
def test_without_a_first_day_the_picker_starts_today_in_the_zone(bob, workspace_a, account_a):
    login(bob).post(URL, picker(account_a, start_date="", timezone="Pacific/Auckland"))

    # 12:00 UTC on the 20th is already the 21st in Auckland.
    assert Series.objects.get().dtstart == "2027-03-21T09:00:00"


@pytest.mark.django_db
def test_the_preview_reads_as_people_read_dates(bob, workspace_a, account_a):
    response = login(bob).post(URL, {**picker(account_a), "preview": "1"})

    page = response.content.decode()
    assert "Every Monday and Thursday at 09:00 (Europe/Paris)" in page
    assert "Monday 22 March 2027, 09:00" in page
    assert "Thursday 25 March 2027, 09:00" in page
    assert "2027-03-29 07:00 UTC" in page  # after the change to summer time
    assert not Series.objects.exists()


@pytest.mark.django_db
def test_days_without_a_time_are_refused(bob, workspace_a, account_a):
    response = login(bob).post(URL, picker(account_a, time=""))

    assert response.status_code == 400
    assert "Pick the time of day." in response.content.decode()
    assert not Series.objects.exists()


@pytest.mark.django_db
def test_neither_days_nor_a_rule_is_refused(bob, workspace_a, account_a):
    response = login(bob).post(URL, picker(account_a, weekdays=[]))

    assert response.status_code == 400
    assert "Pick at least one day, or write a rule below." in response.content.decode()


@pytest.mark.django_db
def test_the_zone_comes_from_the_list(bob, workspace_a, account_a):
    response = login(bob).post(URL, picker(account_a, timezone="Mars/Olympus"))

    assert response.status_code == 400
    assert not Series.objects.exists()
    client = login(bob)
    page = client.get("/w/ws-a/series/").content.decode()
    # The names are offered as one types, from one list the page fetches when needed.
    assert 'list="id_timezone-names"' in page and 'hx-get="/zones/"' in page
    assert '<option value="Europe/Paris">' in client.get("/zones/").content.decode()


@pytest.mark.django_db
def test_the_list_describes_each_series(bob, workspace_a, account_a):
    login(bob).post(URL, picker(account_a))

    page = login(bob).get("/w/ws-a/series/").content.decode()

    assert "Every Monday and Thursday at 09:00 (Europe/Paris)" in page
    assert "<code>FREQ=WEEKLY;BYDAY=MO,TH</code>" in page


def test_weekly_rule_orders_and_dedupes_days():
    assert weekly_rule([3, 0, 3]) == "FREQ=WEEKLY;BYDAY=MO,TH"


@pytest.mark.parametrize(
    ("rule", "reads"),
    [
        ("FREQ=WEEKLY;BYDAY=MO", "Every Monday at 09:00 (Europe/Paris)"),
        (
            "FREQ=WEEKLY;BYDAY=MO,WE,FR",
            "Every Monday, Wednesday and Friday at 09:00 (Europe/Paris)",
        ),
        (
            "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
            "Every weekday (Monday to Friday) at 09:00 (Europe/Paris)",
        ),
        ("FREQ=DAILY", "Every day at 09:00 (Europe/Paris)"),
        ("FREQ=MONTHLY;BYMONTHDAY=1", "On day 1 of every month at 09:00 (Europe/Paris)"),
        ("FREQ=MONTHLY;BYDAY=-1FR", "Repeats FREQ=MONTHLY;BYDAY=-1FR at 09:00 (Europe/Paris)"),
        (
            "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO",
            "Repeats FREQ=WEEKLY;INTERVAL=2;BYDAY=MO at 09:00 (Europe/Paris)",
        ),
    ],
)
def test_rules_read_as_sentences(rule, reads):
    assert describe_rule(rule, "2027-03-22T09:00", "Europe/Paris") == reads


def test_a_count_is_said():
    assert (
        describe_rule("FREQ=DAILY", "2027-03-22T09:00", "UTC", 5)
        == "Every day at 09:00 (UTC), 5 times"
    )
