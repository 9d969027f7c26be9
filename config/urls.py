from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("apps.api.urls")),
    path("sandbox/", include("apps.providers.sandbox.urls")),
    path("", include("apps.web.urls")),
]
