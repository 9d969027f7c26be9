import socket
from urllib.parse import parse_qs, urlsplit

import boto3
import httpx
import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db.models import FileField
from django.db.models.fields.files import FieldFile
from moto.server import ThreadedMotoServer
from storages.backends.s3 import S3Storage

from apps.common import media_urls
from apps.common.media_urls import signed_media_url


@pytest.fixture
def local_media(settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path)},
        },
    }
    return tmp_path


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path


def test_a_local_signed_url_serves_the_file(client, db, local_media, settings):
    name = default_storage.save("uploads/photo.png", ContentFile(b"\x89PNG fake"))
    url = signed_media_url(name, 60)
    assert url.startswith(settings.SITE_URL + "/media/signed/")
    response = client.get(_path(url))
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"\x89PNG fake"
    assert response["Content-Type"] == "image/png"
    assert response["Cache-Control"].startswith("private, max-age=")


def test_a_local_signed_url_expires(client, db, local_media, monkeypatch):
    name = default_storage.save("a.txt", ContentFile(b"x"))
    url = signed_media_url(name, 60)
    real_time = media_urls.time.time
    monkeypatch.setattr(media_urls.time, "time", lambda: real_time() + 61)
    assert client.get(_path(url)).status_code == 410


def test_a_tampered_or_unknown_link_is_not_found(client, db, local_media):
    name = default_storage.save("a.txt", ContentFile(b"x"))
    path = _path(signed_media_url(name, 60))
    assert client.get(path[:-3] + "AAA").status_code == 404
    default_storage.delete(name)
    assert client.get(path).status_code == 404


def test_a_file_field_value_uses_its_own_name(local_media, settings):
    default_storage.save("doc.pdf", ContentFile(b"%PDF"))
    value = FieldFile(None, FileField(storage=default_storage), "doc.pdf")
    assert signed_media_url(value, 60).startswith(settings.SITE_URL)
    with pytest.raises(ValueError):
        signed_media_url(FieldFile(None, FileField(), ""), 60)
    with pytest.raises(ValueError):
        signed_media_url("doc.pdf", 0)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint():
    """moto's S3 in server mode: real HTTP on 127.0.0.1, nothing leaves the machine."""
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture
def s3_storage(s3_endpoint):
    credentials = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    boto3.client(
        "s3", endpoint_url=s3_endpoint, region_name="us-east-1", **credentials
    ).create_bucket(Bucket="media")
    return S3Storage(
        bucket_name="media",
        endpoint_url=s3_endpoint,
        region_name="us-east-1",
        access_key="testing",
        secret_key="testing",
        file_overwrite=False,
        signature_version="s3v4",
    )


def test_s3_round_trip_with_a_signed_url_fetched_over_http(s3_storage):
    name = s3_storage.save("uploads/hello.txt", ContentFile(b"hello from s3"))
    with s3_storage.open(name) as handle:
        assert handle.read() == b"hello from s3"

    url = signed_media_url(name, 120, storage=s3_storage)
    query = parse_qs(urlsplit(url).query)
    assert query["X-Amz-Expires"] == ["120"]
    assert "X-Amz-Signature" in query

    response = httpx.get(url, trust_env=False, timeout=10)
    assert response.status_code == 200
    assert response.content == b"hello from s3"


def test_s3_file_field_values_are_signed_by_their_storage(s3_storage):
    name = s3_storage.save("clip.mp4", ContentFile(b"\x00\x00 mp4"))
    value = FieldFile(None, FileField(storage=s3_storage), name)
    url = signed_media_url(value, 30)
    assert "X-Amz-Expires=30" in url
    assert httpx.get(url, trust_env=False, timeout=10).content == b"\x00\x00 mp4"
