from django.contrib import admin
from django.urls import include, path

from apps.common import media_urls
from apps.security.views.login import admin_login

urlpatterns = [
    path("", include("apps.ops.urls")),  # first: /admin/dashboard/ sits under /admin/
    path("admin/login/", admin_login),  # the site's login, with its throttle and second step
    path("admin/", admin.site.urls),
    path("api/", include("apps.api.urls")),
    path("sandbox/", include("apps.sandbox.urls")),
    path("media/signed/<str:token>", media_urls.serve_signed_media, name="signed-media"),
    path("", include("apps.security.urls")),
    path("", include("apps.web.urls")),
]

# Errors Django answers itself: the API's JSON envelope on /api/ paths, Django's pages elsewhere.
handler400 = "apps.api.errors.handler400"
handler403 = "apps.api.errors.handler403"
handler404 = "apps.api.errors.handler404"
handler500 = "apps.api.errors.handler500"
