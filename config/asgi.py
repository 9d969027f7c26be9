"""ASGI entry point: Django, with the MCP endpoint at /mcp.

Every web process serves it: ``gunicorn -c deploy/gunicorn.conf.py`` runs it with uvicorn
workers (apps.ops.asgi_worker), as ``manage.py serve`` does. The WSGI entry point
(``config.wsgi``) serves everything but /mcp. Here too everything but /mcp is served by
Django's WSGI handler, from a pool of threads per process (apps.ops.threaded_wsgi).
"""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Django is set up first: the MCP tools import models and serializers.
django_wsgi = get_wsgi_application()

from apps.api.mcp.app import with_mcp  # noqa: E402
from apps.ops.threaded_wsgi import ThreadedWsgi  # noqa: E402

# The site and the API are sync code: run in a pool of threads (apps.ops.threaded_wsgi)
# rather than through Django's ASGI handler, which crosses threads three times a request.
application = with_mcp(ThreadedWsgi(django_wsgi))
