from django.urls import path

from apps.ops import dashboard, health, metrics

# HealthCheckMiddleware answers these first; the routes keep them reversible and working
# should the middleware be left out.
urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics, name="metrics"),
    path("admin/dashboard/", dashboard.dashboard, name="ops-dashboard"),
]
