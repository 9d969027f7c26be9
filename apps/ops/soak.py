"""The chaos soak: publications to misbehaving sandbox accounts, worker processes killed at
random, and an account of what happened, counted in the sandbox's own store.

The run uses the configured database, under organizations of its own (tagged, removed at
the end unless kept). It serves the sandbox platform with gunicorn on a free local port and
runs `run_worker` processes pointed at it; a chaos loop SIGKILLs one worker at a time and
starts a replacement, so every guarantee is exercised across crashes mid-publish.
"""

from __future__ import annotations

import os
import random
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TextIO

import httpx
from django.conf import settings
from django.db import connection
from django.db.models import CharField, Count, Exists, Min, OuterRef, Q, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone

from apps.accounts import services as account_services
from apps.accounts.models import Organization, SocialAccount
from apps.common.progress import ProgressBar
from apps.providers.models import SandboxAccount, SandboxPost
from apps.providers.sandbox.services import sandbox_account_create
from apps.publications.services import publication_create
from apps.renditions.models import DeliveryAttempt, Rendition

PROVIDER_TIMEOUT_S = 2.0
CREATE_THREADS = 4


def behaviours(renditions: int) -> dict[str, dict]:
    """The behaviours each workspace's account pool mixes (DESIGN §7 sandbox contract).
    Counted misbehaviours grow with the run, so every size sees them all."""
    times = max(2, renditions // 80)
    hang = {"hang_after_accept_times": max(1, times // 4), "hang_s": PROVIDER_TIMEOUT_S + 1}
    return {
        "ok": {"latency_ms": 20},
        "slow": {"latency_ms": 400},
        "limited": {"rate_limit_times": times, "retry_after_s": 1},
        "flaky": {"server_error_times": times},
        "hangs": hang,
        "hangs-nokey": {**hang, "honours_idempotency_key": False},
        "expired": {"expired_token": True},
    }


@dataclass
class SoakConfig:
    publications: int = 2000
    destinations: int = 3
    workers: int = 4
    workspaces: int = 4
    threads: int = 4
    spread_s: float = 20.0  # publications are due across this window from the start
    kill_every_s: float = 10.0  # 0 disables the chaos
    timeout_s: float = 900.0
    seed: int = 1
    keep: bool = False
    # The database the soak's processes use (default: this process's DATABASE_URL).
    database_url: str | None = None


@dataclass
class Soak:
    config: SoakConfig
    progress: TextIO
    tag: str = field(default_factory=lambda: f"soak-{secrets.token_hex(3)}")
    kills: int = 0
    _procs: list[subprocess.Popen] = field(default_factory=list)
    _web: subprocess.Popen | None = None
    _logdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="soak-")))
    _stopping: threading.Event = field(default_factory=threading.Event)

    # -- the run -----------------------------------------------------------------------

    def run(self) -> dict:
        rng = random.Random(self.config.seed)  # noqa: S311 - a reproducible load, not a secret
        try:
            base_url = self._start_web()
            accounts = self._accounts()
            for _ in range(self.config.workers):
                self._start_worker(base_url)
            started = time.monotonic()
            # Workers die at random from the first post on, while posts are still created.
            chaos = threading.Thread(target=self._chaos, args=(base_url,), daemon=True)
            chaos.start()
            try:
                rendition_ids = self._publications(accounts, rng)
                self._wait(rendition_ids)
            finally:
                self._stopping.set()
                chaos.join()
            elapsed = time.monotonic() - started
            return self._figures(rendition_ids, accounts, elapsed)
        finally:
            self._stop_all()
            if not self.config.keep:
                self._cleanup()

    def _start_web(self) -> str:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        base_url = f"http://127.0.0.1:{port}"
        log = (self._logdir / "web.log").open("w")
        self._web = subprocess.Popen(  # noqa: S603 - fixed argv
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
                "--threads",
                "16",
                "--timeout",
                "60",
            ],
            cwd=settings.BASE_DIR,
            env=self._env(base_url),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base_url}/healthz", timeout=1).status_code == 200:
                    return base_url
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError(f"The sandbox web server did not start; see {log.name}.")

    def _env(self, base_url: str) -> dict:
        env = {
            **os.environ,
            "SANDBOX_BASE_URL": base_url,
            "SITE_URL": base_url,
            "PROVIDER_TIMEOUT_S": str(PROVIDER_TIMEOUT_S),
            "WORKER_HEARTBEAT_S": "1",
            "WORKER_STALE_AFTER_S": "4",
            "WORKER_POLL_S": "0.5",
            "WORKER_GRACE_S": "5",
            "RECONCILE_DELAY_S": "1",
            "RECONCILE_SETTLE_S": "20",
            "PUBLISH_RETRY_BASE_S": "1",
            "PUBLISH_RETRY_CAP_S": "8",
            "LOG_LEVEL": "WARNING",
        }
        if self.config.database_url:
            env["DATABASE_URL"] = self.config.database_url
        return env

    def _start_worker(self, base_url: str) -> None:
        index = len(self._procs)
        log = (self._logdir / f"worker-{index}.log").open("w")
        self._procs.append(
            subprocess.Popen(  # noqa: S603 - fixed argv
                [
                    sys.executable,
                    "manage.py",
                    "run_worker",
                    "--threads",
                    str(self.config.threads),
                    "--name",
                    f"{self.tag}-w{index}",
                ],
                cwd=settings.BASE_DIR,
                env=self._env(base_url),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )

    def _accounts(self) -> dict[int, list[SocialAccount]]:
        """Per workspace, one sandbox account of each behaviour."""
        owner = account_services.user_get_or_create(email=f"{self.tag}@soak.invalid")
        pools: dict[int, list[SocialAccount]] = {}
        mix = behaviours(self.config.publications * self.config.destinations)
        for w in range(self.config.workspaces):
            org = account_services.organization_create(
                name=f"{self.tag} org {w}", slug=f"{self.tag}-org-{w}", owner=owner
            )
            Organization.objects.filter(pk=org.pk).update(
                monthly_post_quota=10 * self.config.publications, inflight_cap=50
            )
            workspace = account_services.workspace_create(
                organization=org, name=f"{self.tag} {w}", slug=f"{self.tag}-ws-{w}"
            )
            pools[workspace.pk] = [
                sandbox_account_create(
                    workspace=workspace, handle=f"{self.tag}-{w}-{name}", behaviour=behaviour
                )
                for name, behaviour in mix.items()
            ]
        return pools

    def _publications(self, pools: dict[int, list[SocialAccount]], rng: random.Random) -> list[int]:
        """Create the publications from a few threads (each with its own connection), due
        over the spread window, never before they exist."""
        bar = ProgressBar(self.progress, "creating", self.config.publications)
        start = timezone.now() + timedelta(seconds=2)
        workspace_ids = list(pools)
        plan = []
        for i in range(self.config.publications):
            pool = pools[workspace_ids[i % len(workspace_ids)]]
            accounts = rng.sample(pool, k=min(self.config.destinations, len(pool)))
            plan.append((i, accounts, rng.uniform(0, self.config.spread_s)))

        def create(item) -> list[int]:
            i, accounts, offset = item
            try:
                due = max(start + timedelta(seconds=offset), timezone.now() + timedelta(seconds=1))
                publication = publication_create(
                    workspace=accounts[0].workspace,
                    author=None,
                    segments=[{"text": f"Soak {self.tag} #{i}"}],
                    destinations=[{"account": account.pk} for account in accounts],
                    scheduled_at=due,
                    status="scheduled",
                )
                return list(publication.renditions.values_list("pk", flat=True))
            finally:
                connection.close()  # this thread's own connection

        ids: list[int] = []
        with ThreadPoolExecutor(max_workers=CREATE_THREADS) as pool:
            for done, created in enumerate(pool.map(create, plan), start=1):
                ids.extend(created)
                bar.update(done)
        bar.close()
        return ids

    def _wait(self, rendition_ids: list[int]) -> None:
        """Until every rendition is settled (or the timeout)."""
        bar = ProgressBar(self.progress, "publishing", len(rendition_ids))
        deadline = time.monotonic() + self.config.timeout_s
        while time.monotonic() < deadline:
            unsettled = _unsettled(rendition_ids).count()
            bar.update(len(rendition_ids) - unsettled, f"kills={self.kills}")
            if unsettled == 0:
                break
            time.sleep(0.5)
        bar.close()

    def _chaos(self, base_url: str) -> None:
        """Every kill_every_s, SIGKILL a random worker (mid-publish, as likely as not) and
        start a replacement, until the run stops."""
        if not self.config.kill_every_s:
            return
        rng = random.Random(self.config.seed + 1)  # noqa: S311 - reproducible chaos
        while not self._stopping.wait(self.config.kill_every_s):
            alive = [p for p in self._procs if p.poll() is None]
            if not alive:
                continue
            victim = rng.choice(alive)
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            self.kills += 1
            self._start_worker(base_url)

    def _stop_all(self) -> None:
        for proc in self._procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self._procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
        if self._web is not None and self._web.poll() is None:
            self._web.send_signal(signal.SIGTERM)
            try:
                self._web.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._web.kill()

    def _cleanup(self) -> None:
        """Remove the soak's organizations (their workspaces, publications and renditions
        go with them), its jobs, and its sandbox accounts."""
        from apps.jobs.models import Job, WorkerProcess

        orgs = Organization.objects.filter(slug__startswith=f"{self.tag}-org-")
        Job.objects.filter(organization__in=orgs).delete()
        for org in orgs:
            for workspace in org.workspaces.all():
                Rendition.objects.filter(workspace=workspace).delete()
            org.delete()
        SandboxAccount.objects.filter(handle__startswith=f"{self.tag}-").delete()
        WorkerProcess.objects.filter(name__startswith=f"{self.tag}-").delete()

    # -- the account -------------------------------------------------------------------

    def _figures(
        self, rendition_ids: list[int], pools: dict[int, list[SocialAccount]], elapsed: float
    ) -> dict:
        renditions = Rendition.objects.filter(pk__in=rendition_ids).select_related("publication")
        statuses = Counter(renditions.values_list("status", flat=True))
        failed_by_kind = Counter(
            kind or "unknown"
            for kind in renditions.filter(status="failed").values_list(
                "last_error__kind", flat=True
            )
        )
        reconciled = (
            DeliveryAttempt.objects.filter(
                rendition_id__in=rendition_ids, kind="reconcile", outcome__in=["found", "absent"]
            )
            .values("rendition_id")
            .distinct()
            .count()
        )
        # The witness: posts the sandbox holds under one idempotency key more than once.
        handles = [account.handle for pool in pools.values() for account in pool]
        per_key = (
            SandboxPost.objects.filter(account__handle__in=handles)
            .values("account_id", "idempotency_key")
            .annotate(n=Count("id"))
            .filter(n__gt=1)
        )
        duplicates = sum(row["n"] - 1 for row in per_key)
        never_attempted = renditions.filter(attempts=0).exclude(
            status__in=["cancelled", "published"]
        )
        unsettled = Counter(_unsettled(rendition_ids).values_list("status", flat=True))
        lost = sum(unsettled.values()) + never_attempted.count()
        first_tries = dict(
            DeliveryAttempt.objects.filter(rendition_id__in=rendition_ids, kind="publish")
            .values("rendition_id")
            .annotate(first=Min("started_at"))
            .values_list("rendition_id", "first")
        )
        lateness = sorted(
            max((first_tries[r.pk] - r.effective_scheduled_at).total_seconds(), 0.0)
            for r in renditions
            if r.pk in first_tries and r.effective_scheduled_at
        )
        return {
            "publications": self.config.publications,
            "renditions": len(rendition_ids),
            "published": statuses.get("published", 0),
            "failed": statuses.get("failed", 0),
            "failed_by_kind": dict(sorted(failed_by_kind.items())),
            "ambiguous": renditions.filter(ambiguous=True).count(),
            "reconciled": reconciled,
            "duplicates": duplicates,
            "lost": lost,
            "unsettled_by_status": dict(unsettled),
            "worker_kills": self.kills,
            "lateness_p50_s": _pct(lateness, 50),
            "lateness_p99_s": _pct(lateness, 99),
            "lateness_max_s": round(lateness[-1], 3) if lateness else None,
            "elapsed_s": round(elapsed, 1),
            "renditions_per_s": round(len(rendition_ids) / elapsed, 2) if elapsed else None,
        }


def _unsettled(rendition_ids: list[int]):
    """Renditions still owed an outcome: not published or cancelled, and not failed for
    good. A failed one with a retry pending, or with reconciliation still to run, is owed
    one; an ambiguous one left for a person is settled (and counted as ambiguous)."""
    from apps.jobs.models import Job

    reconciling = Job.objects.unfinished().filter(
        dedupe_key=Concat(Value("reconcile:"), Cast(OuterRef("pk"), CharField()))
    )
    return (
        Rendition.objects.filter(pk__in=rendition_ids)
        .exclude(status__in=["published", "cancelled"])
        .exclude(Q(status="failed", next_retry_at__isnull=True) & ~Exists(reconciling))
    )


def _pct(values: list[float], pct: int) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], 3)
    return round(statistics.quantiles(values, n=100, method="inclusive")[pct - 1], 3)
