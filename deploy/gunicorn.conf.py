"""gunicorn settings for the web process, all from the environment.

    gunicorn -c deploy/gunicorn.conf.py                           # ASGI: the site and /mcp
    gunicorn -c deploy/gunicorn.conf.py config.wsgi:application   # WSGI: the site, no /mcp

The default serves the ASGI application (`config.asgi`: Django plus the MCP endpoint) with
uvicorn inside gunicorn (`apps.ops.asgi_worker.AsgiWorker`), so gunicorn still manages the
processes, timeouts, recycling and the access log. Naming `config.wsgi:application` (the
command before ASGI became the default), or WEB_INTERFACE=wsgi, keeps the threaded WSGI
worker. Every variable is listed in deploy/.env.example. Web processes are stateless: scale
out by running more of them (more replicas) rather than by raising WEB_CONCURRENCY far.
"""

import os
import sys


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw else default
    except ValueError:
        raise SystemExit(f"{name} must be an integer, not {raw!r}") from None


bind = os.environ.get("GUNICORN_BIND") or f"0.0.0.0:{_int('PORT', 8000)}"  # noqa: S104 - in a container
# WEB_CONCURRENCY is the name platforms and gunicorn itself use for the process count.
workers = _int("WEB_CONCURRENCY", 2)
_interface = os.environ.get("WEB_INTERFACE", "asgi").lower()
if _interface not in ("asgi", "wsgi"):
    raise SystemExit(f"WEB_INTERFACE must be asgi or wsgi, not {_interface!r}")
if any(arg.endswith("wsgi:application") or arg == "config.wsgi" for arg in sys.argv[1:]):
    _interface = "wsgi"
if _interface == "asgi":
    wsgi_app = "config.asgi:application"  # the application gunicorn loads, ASGI here
    worker_class = "apps.ops.asgi_worker.AsgiWorker"
    # The MCP endpoint's sync calls run in threads of their own under ASGI, so connections
    # are pooled per process instead of kept per thread (config/settings.py, DB_POOL); the
    # rest runs in a pool of `threads` threads (a2wsgi, config.asgi).
    os.environ.setdefault("DB_POOL", "true")
else:
    wsgi_app = "config.wsgi:application"
    # Threads: requests wait on PostgreSQL and storage, not on CPU.
    worker_class = "gthread"
threads = _int("GUNICORN_THREADS", 4)
timeout = _int("GUNICORN_TIMEOUT", 30)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)
keepalive = _int("GUNICORN_KEEPALIVE", 5)
# Recycle processes now and then so a slow leak can't grow without bound.
max_requests = _int("GUNICORN_MAX_REQUESTS", 1000)
max_requests_jitter = max(1, max_requests // 10) if max_requests else 0
# Heartbeat files on tmpfs: a container's overlay filesystem can stall them.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None  # noqa: S108
# Proxies whose X-Forwarded-* headers are trusted (the ingress or load balancer).
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")

# No runtime control socket (gunicorn >= 25.1): containers are scaled by replicas, and the
# default path sits in a home directory that is read-only in the image.
control_socket_disable = True

accesslog = "-"
# OAuth codes, signed media tokens and presigned URLs are logged as [redacted].
logger_class = "apps.ops.access_log.RedactingLogger"
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "INFO").lower()
# %(M)s: request duration in milliseconds.
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms "%(f)s" "%(a)s"'

if os.environ.get("LOG_FORMAT", "text") == "json":
    # gunicorn's own lines (access and errors) as JSON too, in the application's format.
    logconfig_dict = {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "apps.ops.log_formats.JsonFormatter"}},
        "handlers": {
            "stdout": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stdout",
            },
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stderr",
            },
        },
        "root": {"level": "INFO", "handlers": ["stderr"]},
        "loggers": {
            "gunicorn.error": {
                "level": loglevel.upper(),
                "handlers": ["stderr"],
                "propagate": False,
            },
            "gunicorn.access": {"level": "INFO", "handlers": ["stdout"], "propagate": False},
        },
    }
