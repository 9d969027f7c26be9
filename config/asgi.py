"""ASGI entry point: Django, with the MCP endpoint at /mcp.

Serve it with ``uvicorn config.asgi:application`` (see the README's "MCP endpoint"). The
WSGI entry point (``config.wsgi``, for gunicorn) serves everything but /mcp.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Django is set up first: the MCP tools import models and serializers.
django_application = get_asgi_application()

from apps.api.mcp.app import with_mcp  # noqa: E402

application = with_mcp(django_application)
