"""Our signatures match the Standard Webhooks reference implementation byte for byte."""

from datetime import UTC, datetime

from standardwebhooks import Webhook

from apps.webhooks import signing


def test_it_signs_like_the_reference_implementation():
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = '{"type":"rendition.published","data":{"id":1}}'

    ours = signing.sign(
        secret=secret, message_id="evt_1", timestamp=1_700_000_000, body=body.encode()
    )

    reference = Webhook(secret).sign("evt_1", datetime.fromtimestamp(1_700_000_000, tz=UTC), body)
    assert ours == reference


def test_new_secrets_are_random_32_bytes_in_the_whsec_form():
    first, second = signing.new_secret(), signing.new_secret()

    assert first != second
    assert first.startswith("whsec_")
    assert len(signing._key(first)) == 32
