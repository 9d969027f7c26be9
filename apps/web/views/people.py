"""Signing up, confirming one's email address, and a person's own settings (display zone,
name)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from apps.accounts import verification
from apps.accounts.http import AuthenticatedRequest
from apps.accounts.signup import signup_request
from apps.common.errors import DomainError
from apps.web.access import user_view
from apps.web.forms.auth import ProfileForm, SignupForm

BACKEND = "django.contrib.auth.backends.ModelBackend"


SIGNUP_SENT_TO = "signup_sent_to"


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """The same answer whether or not the address has an account (apps.accounts.signup):
    "check your email", on a page of its own (a reload sends nothing twice)."""
    if request.user.is_authenticated:
        return redirect("home")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        signup_request(
            email=data["email"],
            password=data["password"],
            name=data["name"],
            display_timezone=data["display_timezone"],
        )
        request.session[SIGNUP_SENT_TO] = data["email"]
        return redirect("signup-sent")
    status = 400 if form.errors else 200
    return render(request, "registration/signup.html", {"form": form}, status=status)


@require_GET
def signup_sent(request: HttpRequest) -> HttpResponse:
    email = request.session.get(SIGNUP_SENT_TO)
    if not email:
        return redirect("signup")
    context = {"email": email, "valid_days": verification.VERIFICATION_MAX_AGE.days}
    return render(request, "registration/signup_sent.html", context)


@user_view
@require_http_methods(["GET", "POST"])
def email_verification(request: AuthenticatedRequest) -> HttpResponse:
    """ "Check your email": what an unverified person sees instead of creating or joining
    anything. POST sends a new link."""
    if request.user.is_email_verified:
        return redirect("home")
    if request.method == "POST":
        try:
            verification.email_verification_send(user=request.user)
        except DomainError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(request, f"Sent a new confirmation link to {request.user.email}.")
        return redirect("email-verification")
    context = {"valid_days": verification.VERIFICATION_MAX_AGE.days}
    return render(request, "web/people/verify_email.html", context)


@require_GET
def email_verify(request: HttpRequest, token: str) -> HttpResponse:
    """The emailed link. It verifies only the account it names, signed in: someone who
    signed up with another person's address cannot have that person confirm it for them."""
    try:
        named = verification.user_for_token(token)
    except DomainError as exc:
        return _verify_failed(request, exc.message)
    if named.is_email_verified:
        messages.info(request, f"{named.email} is confirmed already.")
        return redirect("home")
    if not request.user.is_authenticated:
        messages.info(request, f"Log in as {named.email} to confirm the address.")
        return redirect_to_login(request.get_full_path())
    try:
        verification.email_verify(token=token, user=request.user)
    except DomainError as exc:
        return _verify_failed(request, exc.message)
    messages.success(request, f"Thank you: {request.user.email} is confirmed.")
    return redirect("home")


def _verify_failed(request: HttpRequest, message: str) -> HttpResponse:
    context = {"message": message, "valid_days": verification.VERIFICATION_MAX_AGE.days}
    return render(request, "web/people/verify_failed.html", context, status=400)


@user_view
@require_http_methods(["GET", "POST"])
def profile_settings(request: AuthenticatedRequest) -> HttpResponse:
    form = ProfileForm(request.POST or None, instance=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(
            request, f"Saved. Times are now shown in {form.instance.display_timezone}."
        )
        return redirect("profile-settings")
    status = 400 if form.errors else 200
    return render(request, "web/people/settings.html", {"form": form}, status=status)
