"""Signing up, and a person's own settings (display zone, name)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from apps.accounts.models import User
from apps.web.access import user_view
from apps.web.forms.auth import ProfileForm, SignupForm


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("home")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        user = User.objects.create_user(
            email=data["email"],
            password=data["password"],
            name=data["name"],
            display_timezone=data["display_timezone"],
        )
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, "Welcome! Create your organization and first workspace.")
        return redirect("organization-create")
    status = 400 if form.errors else 200
    return render(request, "registration/signup.html", {"form": form}, status=status)


@user_view
@require_http_methods(["GET", "POST"])
def profile_settings(request: HttpRequest) -> HttpResponse:
    form = ProfileForm(request.POST or None, instance=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(
            request, f"Saved. Times are now shown in {form.instance.display_timezone}."
        )
        return redirect("profile-settings")
    status = 400 if form.errors else 200
    return render(request, "web/people/settings.html", {"form": form}, status=status)
