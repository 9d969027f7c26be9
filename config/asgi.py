"""ASGI entry point: Django, with the MCP endpoint at /mcp.

Every web process serves it: ``gunicorn -c deploy/gunicorn.conf.py`` runs it with uvicorn
workers (apps.ops.asgi_worker), as ``manage.py serve`` does. The WSGI entry point
(``config.wsgi``) serves everything but /mcp.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Django is set up first: the MCP tools import models and serializers.
django_application = get_asgi_application()

from apps.api.mcp.app import with_mcp  # noqa: E402

application = with_mcp(django_application)
