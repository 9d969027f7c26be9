"""`{% site_url %}`: the public base URL (SITE_URL) for links in emails.

Links sent by email are built from SITE_URL, never from the request's Host header, which the
client chooses: a spoofed Host would otherwise put an attacker's address in front of a
password-reset token.
"""

from django import template
from django.conf import settings

register = template.Library()


@register.simple_tag
def site_url() -> str:
    return settings.SITE_URL.rstrip("/")
