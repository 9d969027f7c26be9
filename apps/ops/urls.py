from django.urls import path

from apps.ops import health

# HealthCheckMiddleware answers these first; the routes keep them reversible and working
# should the middleware be left out.
urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
]
