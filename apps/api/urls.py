from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from apps.api import views

# One router for every resource; apps register their viewsets in apps/api/routes.py.
router = DefaultRouter(trailing_slash="/?")
router.include_root_view = False

v1 = [
    path("me", views.MeView.as_view(), name="me"),
    path("", include(router.urls)),
]

urlpatterns = [
    path("v1/", include((v1, "api"), namespace="v1")),
    path(
        "schema/",
        SpectacularAPIView.as_view(permission_classes=[], authentication_classes=[]),
        name="schema",
    ),
    # The split view serves its start-up script as a file: the site's CSP allows no inline script.
    path(
        "docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="schema", permission_classes=[], authentication_classes=[]
        ),
        name="docs",
    ),
]
