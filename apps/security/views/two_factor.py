"""A person's two-factor settings: enroll an authenticator app, see how many recovery
codes are left, make new ones, turn it off (those two need the password and a code)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from apps.accounts.http import AuthenticatedRequest
from apps.security import two_factor
from apps.security.client_ip import client_ip
from apps.security.forms import EnrollConfirmForm, PasswordAndCodeForm
from apps.security.throttle import Action, Throttled, attempt_begin

TEMPLATE = "security/two_factor.html"


def _page(
    request: AuthenticatedRequest,
    *,
    form: PasswordAndCodeForm | None = None,
    status: int = 200,
    throttled: str = "",
) -> HttpResponse:
    device = two_factor.confirmed_device(request.user)
    context = {
        "device": device,
        "codes_left": two_factor.recovery_codes_left(request.user) if device else 0,
        "form": form or PasswordAndCodeForm(user=request.user),
        "throttled": throttled,
    }
    return render(request, TEMPLATE, context, status=status)


def _codes(request: HttpRequest, codes: list[str]) -> HttpResponse:
    # Shown once (the views that call this are never_cache); only hashes are stored.
    return render(request, "security/recovery_codes.html", {"codes": codes})


@login_required
@require_http_methods(["GET"])
def two_factor_settings(request: AuthenticatedRequest) -> HttpResponse:
    return _page(request)


@login_required
@never_cache
@require_http_methods(["GET", "POST"])
def two_factor_enroll(request: AuthenticatedRequest) -> HttpResponse:
    """POST from the settings page starts; the page shows the QR code and the secret, and
    a right code from the app confirms and shows the recovery codes."""
    user = request.user
    if two_factor.confirmed_device(user) is not None:
        messages.info(request, "Two-factor authentication is already on.")
        return redirect("two-factor")
    if request.method == "POST" and "start" in request.POST:
        two_factor.totp_enroll_start(user=user)
        return redirect("two-factor-enroll")
    device = two_factor.enrolling_device(user)
    if device is None:
        return redirect("two-factor")
    form = EnrollConfirmForm(request.POST if request.method == "POST" else None)
    status = 200
    if form.is_bound:
        codes = None
        if form.is_valid():
            codes = two_factor.totp_enroll_confirm(user=user, code=form.cleaned_data["code"])
        if codes is not None:
            messages.success(request, "Two-factor authentication is on.")
            return _codes(request, codes)
        form.add_error("code", "That code didn't match. Check the app's current code.")
        status = 400
    secret = two_factor.device_secret(device)
    context = {
        "form": form,
        "qr": two_factor.provisioning_qr_svg(device),
        "uri": two_factor.provisioning_uri(device),
        "secret": " ".join(secret[i : i + 4] for i in range(0, len(secret), 4)),
    }
    return render(request, "security/two_factor_enroll.html", context, status=status)


def _refusal(request: AuthenticatedRequest) -> HttpResponse | None:
    """None when the password and code posted are right (checked under the two-factor
    throttle), else the page to answer with."""
    form = PasswordAndCodeForm(request.POST, user=request.user)
    try:
        attempt = attempt_begin(
            action=Action.TWO_FACTOR, account=f"user:{request.user.pk}", ip=client_ip(request)
        )
    except Throttled as exc:
        response = _page(request, status=429, throttled=exc.message)
        response["Retry-After"] = str(exc.retry_after_s)
        return response
    if not form.is_valid():
        return _page(request, form=form, status=400)
    attempt.succeeded()
    return None


@login_required
@require_POST
def two_factor_disable(request: AuthenticatedRequest) -> HttpResponse:
    if two_factor.confirmed_device(request.user) is None:
        return redirect("two-factor")
    refused = _refusal(request)
    if refused is not None:
        return refused
    two_factor.totp_disable(user=request.user)
    messages.success(request, "Two-factor authentication is off.")
    return redirect("two-factor")


@login_required
@never_cache
@require_POST
def recovery_codes_regenerate(request: AuthenticatedRequest) -> HttpResponse:
    if two_factor.confirmed_device(request.user) is None:
        return redirect("two-factor")
    refused = _refusal(request)
    if refused is not None:
        return refused
    codes = two_factor.recovery_codes_regenerate(user=request.user)
    messages.success(request, "New recovery codes made; the old ones no longer work.")
    return _codes(request, codes)
