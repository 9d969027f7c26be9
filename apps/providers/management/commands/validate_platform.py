"""`python manage.py validate_platform PLATFORM --account ID`: the live validation kit.

Runs the scripted check of apps.providers.live.services against the real platform with an
operator's connected account, prints one line per step and a summary, and records the
validation. Exit status 0 only when every offered step passed."""

from __future__ import annotations

import functools
import getpass
import io
import mimetypes
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.models import SocialAccount
from apps.common.errors import ValidationFailed
from apps.providers.base import MediaPayload
from apps.providers.catalog import (
    PlatformCapabilities,
    SettingSpec,
    UnknownPlatform,
    get_capabilities,
)
from apps.providers.live.models import VALIDATION_MAX_AGE, PlatformValidation
from apps.providers.live.services import StepResult, platform_validation_run

MARKS = {
    PlatformValidation.StepStatus.PASSED: "ok  ",
    PlatformValidation.StepStatus.FAILED: "FAIL",
    PlatformValidation.StepStatus.NOT_OFFERED: "n/a ",
    PlatformValidation.StepStatus.SKIPPED: "skip",
}


class Command(BaseCommand):
    help = (
        "Check a platform live with a connected account: post a marked test post, look it "
        "up, exercise the idempotency handle, post and find a first comment, delete what was "
        "made. Records the validation; a passing one younger than 90 days makes the "
        "platform 'supported'. Posts for real on the account: use a test account."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("platform", help="The platform to validate (mastodon, x, ...).")
        parser.add_argument(
            "--account", type=int, required=True, help="Id of the connected SocialAccount."
        )
        parser.add_argument(
            "--operator", default=None, help="Who ran it (default: the system user)."
        )
        parser.add_argument(
            "--api-version", default=None, help="Record this API version instead of ours."
        )
        parser.add_argument(
            "--setting",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="A per-post setting the platform needs (subreddit=test, board_id=...).",
        )
        parser.add_argument(
            "--media",
            action="append",
            default=[],
            metavar="PATH",
            help="A file to attach, where the platform requires media (repeatable).",
        )
        parser.add_argument(
            "--media-url",
            default=None,
            help="A public URL of the --media file, for platforms that fetch media.",
        )

    def handle(self, *args, **options) -> None:
        platform = options["platform"]
        try:
            caps = get_capabilities(platform)
        except UnknownPlatform as err:
            raise CommandError(err.message) from err
        account = SocialAccount.objects.filter(pk=options["account"]).first()
        if account is None:
            raise CommandError(f"No account {options['account']}.")
        if account.platform != platform:
            raise CommandError(f"Account {account.pk} is a {account.platform} account.")
        self.stdout.write(
            f"Validating {platform} with {account.handle} (account {account.pk}). "
            "This posts on the account for real."
        )
        try:
            validation = platform_validation_run(
                account=account,
                operator=options["operator"] or _system_user(),
                api_version=options["api_version"],
                media=_media(options["media"], options["media_url"]),
                settings=_settings(options["setting"], caps),
                on_step=self._print_step,
            )
        except ValidationFailed as err:
            raise CommandError(err.message) from err
        self._summary(validation)
        if not validation.passed:
            raise CommandError("Validation failed.", returncode=1)

    def _print_step(self, result: StepResult) -> None:
        mark = MARKS.get(PlatformValidation.StepStatus(result.status), result.status)
        self.stdout.write(f"[{mark}] {result.name:<14} {result.detail}")

    def _summary(self, validation: PlatformValidation) -> None:
        offered = [s for s in validation.steps if s["status"] != "not_offered"]
        passed = validation.steps_passed
        verdict = "PASSED" if validation.passed else "FAILED"
        self.stdout.write(
            f"{verdict}: {len(passed)}/{len(offered)} offered steps passed "
            f"({validation.platform}, {validation.api_version or 'API version unknown'}); "
            f"recorded as validation {validation.pk}."
        )
        if validation.passed:
            until = (validation.finished_at + VALIDATION_MAX_AGE).date()
            self.stdout.write(f"{validation.platform} counts as supported until {until}.")
        for item in validation.leftovers:
            self.stdout.write(
                f"Left on the platform, delete it by hand: {item['what']} "
                f"{item['url'] or item['id']}"
            )


def _settings(pairs: list[str], caps: PlatformCapabilities) -> dict:
    """NAME=VALUE pairs as the platform's settings, each value of its catalog type (a
    boolean is true/false, a list is comma-separated)."""
    specs = {spec.name: spec for spec in caps.settings}
    settings: dict = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise CommandError(f"--setting takes NAME=VALUE, not {pair!r}.")
        spec = specs.get(name)
        if spec is None:
            known = ", ".join(sorted(specs)) or "none"
            raise CommandError(f"{caps.platform} has no setting {name!r} (it has: {known}).")
        settings[name] = _typed(spec, value)
    return settings


def _typed(spec: SettingSpec, value: str) -> object:
    if spec.type == "boolean":
        if value.lower() not in ("true", "false"):
            raise CommandError(f"--setting {spec.name} takes true or false.")
        return value.lower() == "true"
    if spec.type == "integer":
        try:
            return int(value)
        except ValueError:
            raise CommandError(f"--setting {spec.name} takes a whole number.") from None
    if spec.type == "list":
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def _media(paths: list[str], public_url: str | None) -> list[MediaPayload]:
    payloads = []
    for position, name in enumerate(paths, start=1):
        path = Path(name)
        if not path.is_file():
            raise CommandError(f"No file {name}.")
        data = path.read_bytes()
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        kind = "gif" if mime == "image/gif" else mime.split("/")[0]
        if kind not in ("image", "video", "gif"):
            raise CommandError(f"{name} is neither an image nor a video ({mime}).")
        width, height = _dimensions(data) if kind == "image" else (None, None)
        payloads.append(
            MediaPayload(
                media_id=position,
                kind=kind,
                mime_type=mime,
                size_bytes=len(data),
                alt_text="Test image of a platform check",
                open=functools.partial(io.BytesIO, data),
                width=width,
                height=height,
                public_url=public_url if position == 1 else None,
            )
        )
    return payloads


def _dimensions(data: bytes) -> tuple[int | None, int | None]:
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            return image.size
    except OSError:
        return None, None


def _system_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""
