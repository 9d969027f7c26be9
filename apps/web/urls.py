from django.contrib.auth import views as auth_views
from django.urls import path

from apps.web import connect, views

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "w/<slug:workspace_slug>/connect/<str:platform>/",
        connect.connect_start,
        name="connect-start",
    ),
    path(
        "w/<slug:workspace_slug>/connect/<str:platform>/password/",
        connect.connect_password,
        name="connect-password",
    ),
    path("connect/<str:platform>/callback/", connect.connect_callback, name="connect-callback"),
]
