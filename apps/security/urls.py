from django.urls import path

from apps.security.views import login, two_factor

urlpatterns = [
    path("login/verify/", login.login_verify, name="login-verify"),
    path("settings/two-factor/", two_factor.two_factor_settings, name="two-factor"),
    path("settings/two-factor/enroll/", two_factor.two_factor_enroll, name="two-factor-enroll"),
    path("settings/two-factor/disable/", two_factor.two_factor_disable, name="two-factor-disable"),
    path(
        "settings/two-factor/recovery-codes/",
        two_factor.recovery_codes_regenerate,
        name="two-factor-recovery-codes",
    ),
]
