"""The soak's side of the platform fakes (loadtest.platform_fakes): serving them, opening
accounts on them, building each publication's content, and counting what each one holds.

Every publication carries a unique marker in its first segment, so a post at a platform
maps to one rendition by (marker, account): more than one is a duplicate, none for a
rendition called published is a lost post.
"""

from __future__ import annotations

import io
import random
import re
import struct
from collections import Counter
from dataclasses import dataclass, field

from django.core.files.base import ContentFile
from PIL import Image

from apps.accounts.models import SocialAccount, Workspace
from apps.accounts.services import social_account_connect
from apps.providers import oauth
from apps.publications.models import MediaAsset
from apps.publications.services import media_asset_create
from loadtest.platform_fakes import FakeRequest, FakeResponse, FaultPlan, PlatformFake
from loadtest.platform_fakes.server import FakeServer, Serves

# Platform app settings a token refresh sends; the fakes accept any value, and an empty one
# would make the adapter refuse before any request (NOT_CONFIGURED).
APP_SETTINGS = (
    "X_CLIENT_ID",
    "X_CLIENT_SECRET",
    "LINKEDIN_CLIENT_ID",
    "LINKEDIN_CLIENT_SECRET",
    "META_APP_ID",
    "META_APP_SECRET",
    "TIKTOK_CLIENT_KEY",
    "TIKTOK_CLIENT_SECRET",
    "GOOGLE_CLIENT_ID",
    "GOOGLE_CLIENT_SECRET",
    "PINTEREST_APP_ID",
    "PINTEREST_APP_SECRET",
    "REDDIT_CLIENT_ID",
    "REDDIT_CLIENT_SECRET",
)


def marker_for(tag: str, index: int) -> str:
    """Letters and digits only (every platform keeps them as written), fixed width so no
    marker is a prefix of another."""
    return f"{tag.replace('-', '')}n{index:06d}"


def marker_pattern(tag: str) -> re.Pattern:
    return re.compile(re.escape(tag.replace("-", "")) + r"n\d{6}")


def comment_marker(marker: str) -> str:
    """The marker of a publication's first comment: its post marker with `c` for `n`, so
    the post pattern never counts a comment as a post."""
    return marker[:-7] + "c" + marker[-6:]


def comment_marker_pattern(tag: str) -> re.Pattern:
    return re.compile(re.escape(tag.replace("-", "")) + r"c\d{6}")


def jpeg_bytes(size: tuple[int, int] = (320, 240)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 60, 30)).save(out, format="JPEG", quality=80)
    return out.getvalue()


def _box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def mp4_bytes(*, duration_s: float = 10.0, width: int = 720, height: int = 1280) -> bytes:
    """A small ISO media file (ftyp, mdat, moov with mvhd and one track header): enough for
    the upload's own checks (type, duration, dimensions); the fakes do not decode it."""
    timescale = 1000
    mvhd = b"\x00\x00\x00\x00" + struct.pack(">IIII", 0, 0, timescale, int(duration_s * 1000))
    mvhd += b"\x00" * 80
    tkhd = b"\x00\x00\x00\x07" + struct.pack(">IIIII", 0, 0, 1, 0, 0) + b"\x00" * 8
    tkhd += b"\x00" * 8 + b"\x00" * 36 + struct.pack(">II", width << 16, height << 16)
    moov = _box(b"moov", _box(b"mvhd", mvhd) + _box(b"trak", _box(b"tkhd", tkhd)))
    ftyp = _box(b"ftyp", b"isom\x00\x00\x02\x00isomiso2mp41")
    return ftyp + _box(b"mdat", b"\x00" * 4096) + moov


@dataclass
class FakeFleet:
    """The fakes of the chosen platforms, each with its own seeded chaos, behind one server."""

    classes: dict[str, type[PlatformFake]]
    seed: int
    fault_rate: float
    hang_s: float
    fakes: dict[str, PlatformFake] = field(default_factory=dict)
    server: FakeServer | None = None
    _media: dict[int, dict[str, int]] = field(default_factory=dict)
    # platform -> {the fake's own account id -> our SocialAccount.remote_id}
    _aliases: dict[str, dict[str, str]] = field(default_factory=dict)
    # Writes answered late by `hang_posts_with`, per platform.
    hung: Counter = field(default_factory=Counter)

    def start(self) -> str:
        """Serve the fakes; returns the base URL PROVIDER_API_REDIRECT points at."""
        owners: dict[str, str] = {}
        for offset, (platform, cls) in enumerate(sorted(self.classes.items())):
            plan = FaultPlan.chaos(
                seed=self.seed * 100 + offset, rate=self.fault_rate, hang_s=self.hang_s
            )
            fake = cls(plan)
            for host in fake.hosts:
                # The server routes by host: two fakes on one host would hide one of them.
                if host in owners:
                    raise RuntimeError(f"{host} is served by both {owners[host]} and {platform}.")
                owners[host] = platform
            self.fakes[platform] = fake
        self.server = FakeServer(list(self.fakes.values())).start()
        return self.server.base_url

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    # -- setting up --------------------------------------------------------------------

    def account_create(
        self,
        *,
        workspace: Workspace,
        platform: str,
        handle: str,
        behaviours: tuple[str, ...] = (),
    ) -> SocialAccount:
        """Open an account on the fake and connect it as the connect flow does (credentials
        sealed, settings kept), with the fake's account `behaviours` switched on."""
        fake = self.fakes[platform]
        with fake.lock:
            before = set(fake.accounts)
        opened = fake.new_account(handle)
        credentials = opened["credentials"]
        # A post names its author by the platform's id, which our remote id may spell
        # differently (Mastodon's is id@instance): learn the accounts this call opened.
        remote_id = str(opened["remote_id"])
        aliases = self._aliases.setdefault(platform, {})
        with fake.lock:
            for key in set(fake.accounts) - before:
                aliases[str(key)] = remote_id
                for behaviour in behaviours:
                    fake.switch(str(key), behaviour)
        return social_account_connect(
            workspace=workspace,
            platform=platform,
            remote_id=remote_id,
            handle=opened["handle"],
            display_name=opened.get("display_name", ""),
            credentials=credentials,
            token_expires_at=oauth.parse_expires_at(credentials.get("expires_at")),
            settings=opened.get("settings") or {},
        )

    def media_create(self, workspace: Workspace) -> None:
        """One JPEG and one MP4 per workspace, shared by its publications."""
        files = {"image": ("soak.jpg", jpeg_bytes()), "video": ("soak.mp4", mp4_bytes())}
        self._media[workspace.pk] = {
            kind: media_asset_create(
                workspace=workspace, file=ContentFile(data, name=name), original_name=name
            ).pk
            for kind, (name, data) in files.items()
        }

    def destination(self, account: SocialAccount, rng: random.Random, marker: str) -> dict:
        """The destination entry (own segments and settings) a publication sends to
        `account`, from its fake's sample content."""
        content = self.fakes[account.platform].sample_content(rng, marker)
        media = self._media[account.workspace_id]
        segments = [
            {
                "text": segment.get("text", ""),
                "media": [{"id": media[kind]} for kind in segment.get("media", [])],
            }
            for segment in content["segments"]
        ]
        if marker not in segments[0]["text"]:
            raise RuntimeError(f"The {account.platform} fake left the marker out of its text.")
        return {
            "account": account.pk,
            "segments": segments,
            "settings": content.get("settings", {}),
        }

    # -- the witness -------------------------------------------------------------------

    def held(self, platform: str, pattern: re.Pattern) -> Counter:
        """Posts the platform holds, counted by (marker, account remote id)."""
        aliases = self._aliases.get(platform, {})
        held: Counter = Counter()
        for post in self.fakes[platform].published():
            account = aliases.get(str(post.account), str(post.account))
            for marker in set(pattern.findall(post.text or "")):
                held[(marker, account)] += 1
        return held

    def comments_held(self, platform: str, pattern: re.Pattern) -> Counter:
        """Comments the platform holds, counted by (comment marker, account remote id):
        replies (Mastodon's and Bluesky's first comments are replies to the post) and the
        comments a fake keeps apart (`comments`: post id -> list of {actor, message}, or
        Facebook's comment id -> {from, message})."""
        fake = self.fakes[platform]
        aliases = self._aliases.get(platform, {})
        texts = [(post.account, post.text) for post in fake.published() if post.reply_to]
        with fake.lock:
            kept = getattr(fake, "comments", None)
            for comments in kept.values() if isinstance(kept, dict) else ():
                for comment in comments if isinstance(comments, list) else ():
                    if isinstance(comment, dict) and isinstance(comment.get("message"), dict):
                        texts.append((comment.get("actor", ""), comment["message"].get("text")))
                # Facebook's: comment id -> {"from": {"id"}, "message": text, ...}.
                if isinstance(comments, dict) and isinstance(comments.get("message"), str):
                    texts.append(((comments.get("from") or {}).get("id", ""), comments["message"]))
        held: Counter = Counter()
        for account, text in texts:
            for marker in set(pattern.findall(text or "")):
                held[(marker, aliases.get(str(account), str(account)))] += 1
        return held

    def keyed_posts(self, platform: str, pattern: re.Pattern) -> list[tuple[str, str, str]]:
        """(account remote id, idempotency key, text) of the posts of this run (their text
        carries one of its markers) that the platform holds under a key."""
        aliases = self._aliases.get(platform, {})
        return [
            (aliases.get(str(post.account), str(post.account)), post.idempotency_key, post.text)
            for post in self.fakes[platform].published()
            if post.idempotency_key and pattern.search(post.text or "")
        ]

    def hang_posts_with(self, markers: set[str], pattern: re.Pattern) -> None:
        """From now on every write whose body carries one of `markers` (a set the caller
        fills) is handled, then answered only after `hang_s`: past the client's timeout, as a
        platform that hangs for one organization's accounts."""
        if self.server is None:
            raise RuntimeError("Start the fleet first.")
        hung: Counter = Counter()
        self.hung = hung
        for host, fake in list(self.server.fakes.items()):
            self.server.fakes[host] = _Hanging(fake, markers, pattern, self.hang_s, hung)

    def lift_hang(self) -> int:
        """End `hang_posts_with`: every fake answers in time again (a write already held
        still comes late). Returns how many writes were answered late."""
        if self.server is not None:
            for host, fake in list(self.server.fakes.items()):
                if isinstance(fake, _Hanging):
                    self.server.fakes[host] = fake.fake
        return sum(self.hung.values())

    def faults_struck(self, platform: str) -> dict[str, int]:
        return dict(sorted(self.fakes[platform].faults.struck.items()))


@dataclass
class _Hanging:
    """A fake seen through a hang: writes carrying one of `markers` are handled as usual,
    then answered `hang_s` late."""

    fake: Serves
    markers: set[str]
    pattern: re.Pattern
    hang_s: float
    hung: Counter

    @property
    def platform(self) -> str:
        return self.fake.platform

    def handle(self, request: FakeRequest) -> FakeResponse:
        response = self.fake.handle(request)
        if request.method != "GET" and self.markers:
            found = self.pattern.findall(request.body.decode("utf-8", "replace"))
            if any(marker in self.markers for marker in found):
                response.delay_s = max(response.delay_s, self.hang_s)
                self.hung[self.fake.platform] += 1
        return response


def media_cleanup(workspace_ids: list[int]) -> None:
    """Remove the soak's media files from storage (the rows go with their workspaces)."""
    for asset in MediaAsset.objects.filter(workspace_id__in=workspace_ids):
        if asset.file.name:  # a file field without a file names nothing to delete
            asset.file.storage.delete(asset.file.name)
