"""The composer explains a refused upload next to its part and stores nothing."""

from django.core.files.uploadedfile import SimpleUploadedFile

from apps.publications.models import MediaAsset
from tests.publications.test_media import mp4_bytes
from tests.web.test_composer import COMPOSE, HTMX, form


def test_the_composer_explains_a_truncated_video_next_to_its_part(as_alice, news):
    data = form("text", destinations=[news], op="upload")
    data["segment-0-file"] = SimpleUploadedFile("clip.mp4", mp4_bytes()[:60], "video/mp4")
    response = as_alice.post(COMPOSE, data, **HTMX)

    assert response.status_code == 400
    assert "clip.mp4: The video file is incomplete" in response.content.decode()
    assert not MediaAsset.objects.exists()
