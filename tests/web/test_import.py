from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from apps.publications.models import Publication
from apps.renditions.models import Rendition
from apps.web import csv_import

UPLOAD = "/w/ws-a/posts/import/"


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def csv_file(text: str, name: str = "posts.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/csv")


def soon(**delta: float) -> str:
    return (timezone.now() + timedelta(**(delta or {"hours": 2}))).isoformat()


def upload(client, text: str, schedule: bool = True, name: str = "posts.csv"):
    data = {"file": csv_file(text, name)}
    if schedule:
        data["schedule"] = "on"
    return client.post(UPLOAD, data)


def import_id(response) -> str:
    assert response.status_code == 302, response.content[:500]
    return response["Location"].rstrip("/").split("/")[-1]


def run_all(client, ident: str) -> None:
    """Drive the batches as htmx does, until the import redirects to its report."""
    for _ in range(200):
        response = client.post(f"{UPLOAD}{ident}/run/", HTTP_HX_REQUEST="true")
        assert response.status_code == 200
        if "HX-Redirect" in response:
            return
    raise AssertionError("the import never finished")


def test_the_posts_page_links_to_the_import(as_bob):
    response = as_bob.get("/w/ws-a/posts/")

    assert UPLOAD.encode() in response.content


def test_the_preview_shows_each_rows_problem_and_creates_nothing(as_bob, news):
    text = (
        "text,scheduled_at,destinations,reference_key\n"
        f"Good one,{soon()},@news,k1\n"
        f"To nobody,{soon()},@ghost,k2\n"
        f"Too old,{soon(hours=-3)},news,k3\n"
        f",{soon()},news,k4\n"
    )
    ident = import_id(upload(as_bob, text))

    preview = as_bob.get(f"{UPLOAD}{ident}/")

    body = preview.content.decode()
    assert preview.status_code == 200
    assert "Import 4 rows" in body
    assert "No account @ghost in this workspace." in body
    assert "More than 10 minutes in the past." in body
    assert "3 rows have problems" in body
    assert body.count("status-failed") == 3
    assert not Publication.objects.exists()


def test_it_imports_in_batches_and_reports_every_row(as_bob, news, workspace_a):
    other = Publication.objects.create(workspace=workspace_a, reference_key="taken")
    rows = [f"Post {i},{soon(hours=2, minutes=i)},news;{news.pk},key-{i}" for i in range(600)]
    rows[3] = f"Dup,{soon()},news,taken"
    rows[4] = f"Late,{soon(hours=-5)},news,late"
    text = "text,scheduled_at,destinations,reference_key\n" + "\n".join(rows) + "\n"
    ident = import_id(upload(as_bob, text))

    first = as_bob.post(f"{UPLOAD}{ident}/run/", HTTP_HX_REQUEST="true")
    assert b'value="500"' in first.content  # the progress after the first batch
    run_all(as_bob, ident)
    report = as_bob.get(f"{UPLOAD}{ident}/")

    body = report.content.decode()
    assert "598 created, 1 already there, 1 with errors, of 600 rows" in body
    assert f"/w/ws-a/posts/{other.pk}/" in body
    assert "More than 10 minutes in the past." in body
    assert Publication.objects.filter(reference_key__startswith="key-").count() == 598
    created = Publication.objects.get(reference_key="key-0")
    assert created.author.email == "bob@example.com"
    assert created.status == Publication.Status.SCHEDULED
    assert list(created.renditions.values_list("social_account", flat=True)) == [news.pk]
    assert created.renditions.get().status == Rendition.Status.SCHEDULED


def test_running_a_finished_import_again_creates_nothing(as_bob, news):
    ident = import_id(upload(as_bob, f"text,scheduled_at,destinations\nHi,{soon()},news\n"))
    run_all(as_bob, ident)

    again = as_bob.post(f"{UPLOAD}{ident}/run/", HTTP_HX_REQUEST="true")

    assert "HX-Redirect" in again
    assert Publication.objects.count() == 1
    assert Publication.objects.get().reference_key == f"import:{ident}:1"


def test_uploading_the_same_file_twice_with_keys_creates_nothing_twice(as_bob, news):
    text = f"text,scheduled_at,destinations,reference_key\nHi,{soon()},news,once\n"
    run_all(as_bob, import_id(upload(as_bob, text)))

    second = import_id(upload(as_bob, text))
    run_all(as_bob, second)

    assert "0 created, 1 already there" in as_bob.get(f"{UPLOAD}{second}/").content.decode()
    assert Publication.objects.count() == 1


def test_a_time_without_offset_is_read_in_the_users_zone(as_bob, bob, news):
    bob.display_timezone = "Europe/Warsaw"
    bob.save()
    text = "text,scheduled_at,destinations\nLocal,2031-07-01T09:00,news\n"
    run_all(as_bob, import_id(upload(as_bob, text)))

    publication = Publication.objects.get()
    assert publication.scheduled_at.isoformat() == "2031-07-01T07:00:00+00:00"
    assert publication.timezone == "Europe/Warsaw"


def test_without_schedule_rows_become_drafts(as_bob, news):
    run_all(as_bob, import_id(upload(as_bob, "text,scheduled_at,destinations\nD,,news\n", False)))

    assert Publication.objects.get().status == Publication.Status.DRAFT


@pytest.mark.parametrize(
    "content, name, message",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00binary", "photo.csv", "not a CSV file"),
        (b"text,when\nHello,now\n", "posts.csv", "lacks the columns scheduled_at, destinations"),
        (b"", "posts.csv", "empty"),
        (b"text,scheduled_at,destinations\n", "posts.csv", "no rows"),
        ("caf\xe9".encode("latin-1"), "posts.csv", "not UTF-8"),
    ],
)
def test_a_bad_file_is_a_form_message_and_nothing_is_created(as_bob, content, name, message):
    response = as_bob.post(UPLOAD, {"file": SimpleUploadedFile(name, content), "schedule": "on"})

    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Publication.objects.exists()


def test_more_than_the_row_limit_is_refused(as_bob, news, monkeypatch):
    monkeypatch.setattr(csv_import, "MAX_ROWS", 3)
    text = "text,scheduled_at,destinations\n" + "".join(f"P{i},,news\n" for i in range(4))

    response = upload(as_bob, text, schedule=False)

    assert response.status_code == 400
    assert "more than 3 rows" in response.content.decode()
    assert not Publication.objects.exists()


def test_a_viewer_cannot_import(as_vera, news):
    assert as_vera.get(UPLOAD).status_code == 403


def test_an_outsider_cannot_see_anothers_import(as_bob, as_charlie, as_alice, news):
    ident = import_id(upload(as_bob, f"text,scheduled_at,destinations\nHi,{soon()},news\n"))

    assert as_charlie.get(f"{UPLOAD}{ident}/").status_code == 404
    assert as_alice.get(f"{UPLOAD}{ident}/").status_code == 404  # another user's import
    assert as_alice.post(f"{UPLOAD}{ident}/run/").status_code == 404
    assert not Publication.objects.exists()


def test_the_preview_counts_every_row_with_problems_in_words_a_person_reads(as_bob, news):
    text = (
        "text,scheduled_at,destinations\n"
        f"Good one,{soon()},@news\n"
        f"To nobody,{soon()},@ghost\n"
        f",{soon()},news\n"
        "Long ago,2020-01-06T09:00,news\n"
        f"Too old,{soon(hours=-3)},news\n"
    )
    ident = import_id(upload(as_bob, text))

    body = as_bob.get(f"{UPLOAD}{ident}/").content.decode()

    assert "4 rows have problems" in body
    assert "<strong>Text</strong>: Write some text or attach media." in body
    assert "<strong>Time (scheduled_at)</strong>: More than 10 minutes in the past." in body
    assert "segments.0" not in body
    assert "local_time" not in body
    assert "Mon 6 Jan 2020, 09:00" in body  # the row's time as the app shows times
    assert "To nobody" in body  # a row refused on reading still shows its text


def test_the_report_names_each_post_by_its_text(as_bob, news):
    text = f"text,scheduled_at,destinations\nSpring sale starts on Monday,{soon()},news\n"
    ident = import_id(upload(as_bob, text))
    run_all(as_bob, ident)

    body = as_bob.get(f"{UPLOAD}{ident}/").content.decode()

    publication = Publication.objects.get()
    assert f'/w/ws-a/posts/{publication.pk}/">Spring sale starts on Monday</a>' in body
    assert f"Post {publication.pk}" not in body
