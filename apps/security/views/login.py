"""Logging in: the password step (throttled per account and per IP), the second step for
people with two-factor on, the admin's login (the same two steps), and password reset
requests (throttled)."""

from __future__ import annotations

import time
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django.views.decorators.http import require_http_methods

from apps.accounts.models import User
from apps.security import two_factor
from apps.security.client_ip import client_ip
from apps.security.forms import CodeForm
from apps.security.throttle import Action, Throttled, attempt_begin

# The password was right; the second step must follow within this many seconds.
PENDING_KEY = "security_pending_login"
PENDING_TTL_S = 300


def _throttled(response: HttpResponse, exc: Throttled) -> HttpResponse:
    response.status_code = 429
    response["Retry-After"] = str(exc.retry_after_s)
    return response


class LoginView(auth_views.LoginView):
    """The password step. Whatever went wrong, the page says only that the email and
    password didn't match (an unknown address reads like a wrong password); too many
    failures for the address or from the IP address lock the form for a while."""

    template_name = "registration/login.html"

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        email = request.POST.get("username", "")
        try:
            self.attempt = attempt_begin(action=Action.LOGIN, account=email, ip=client_ip(request))
        except Throttled as exc:
            # An unbound form: a bound one would check the password when the page reads
            # its errors.
            form = self.form_class(request, initial={"username": email.strip()})
            context = self.get_context_data(form=form, throttled=exc.message)
            return _throttled(self.render_to_response(context), exc)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form) -> HttpResponse:
        user = form.get_user()
        self.attempt.succeeded()
        if two_factor.confirmed_device(user) is None:
            return super().form_valid(form)
        self.request.session[PENDING_KEY] = {
            "user": user.pk,
            "backend": user.backend,
            "next": self.get_success_url(),
            "at": time.time(),
        }
        return redirect("login-verify")


def _pending_user(request: HttpRequest) -> tuple[User, dict] | None:
    pending = request.session.get(PENDING_KEY)
    if not pending or time.time() - pending.get("at", 0) > PENDING_TTL_S:
        return None
    user = User.objects.filter(pk=pending["user"], is_active=True).first()
    return (user, pending) if user is not None else None


@never_cache
@csrf_protect
@require_http_methods(["GET", "POST"])
def login_verify(request: HttpRequest) -> HttpResponse:
    """The second step: a code from the authenticator app, or a recovery code."""
    found = _pending_user(request)
    if found is None:
        request.session.pop(PENDING_KEY, None)
        messages.info(request, "Log in again: the code step expired.")
        return redirect("login")
    user, pending = found
    form = CodeForm(request.POST or None)
    status = 200
    if request.method == "POST":
        try:
            attempt = attempt_begin(
                action=Action.TWO_FACTOR, account=f"user:{user.pk}", ip=client_ip(request)
            )
        except Throttled as exc:
            response = render(
                request,
                "security/login_verify.html",
                {"form": CodeForm(), "throttled": exc.message},
            )
            return _throttled(response, exc)
        if form.is_valid() and two_factor.second_factor_verify(
            user=user, code=form.cleaned_data["code"]
        ):
            attempt.succeeded()
            del request.session[PENDING_KEY]
            # login() cycles the session key, so the half-logged-in session can't be reused.
            login(request, user, backend=pending["backend"])
            if two_factor.recovery_codes_left(user) <= 2:
                messages.warning(
                    request,
                    "Few recovery codes are left. Make new ones in your settings.",
                )
            return HttpResponseRedirect(pending["next"])
        form.add_error("code", "That code didn't work. Check the app's current code.")
        status = 400
    return render(request, "security/login_verify.html", {"form": form}, status=status)


@never_cache
def admin_login(request: HttpRequest) -> HttpResponse:
    """The admin logs in through the site's login (throttled, with the second step); its
    own form is never served. Signed-in staff go straight to where they were headed; a
    signed-in person who is not an operator is told the area is not theirs (a login form
    would only invite them to sign in again as themselves)."""
    next_url = request.GET.get("next") or reverse("admin:index")
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = reverse("admin:index")
    if request.user.is_authenticated and request.user.is_staff:
        return HttpResponseRedirect(next_url)
    if request.user.is_authenticated:
        return render(request, "security/operators_only.html", status=403)
    return HttpResponseRedirect(f"{reverse('login')}?{urlencode({'next': next_url})}")


class PasswordResetView(auth_views.PasswordResetView):
    """A reset request: always answered the same whether or not an account uses the
    address (the email only goes out when one does), and limited per address and per IP."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        email = request.POST.get("email", "")
        try:
            attempt_begin(action=Action.PASSWORD_RESET, account=email, ip=client_ip(request))
        except Throttled as exc:
            form = self.form_class(initial={"email": email.strip()})
            context = self.get_context_data(form=form, throttled=exc.message)
            return _throttled(self.render_to_response(context), exc)
        return super().post(request, *args, **kwargs)
