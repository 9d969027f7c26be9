"""The chaos soak: publications to misbehaving platforms, worker processes killed at
random, and an account of what happened, counted in each platform's own store.

The run uses the configured database, under organizations of its own (tagged, removed at
the end unless kept). It serves the project with gunicorn on a free local port (the sandbox
platform and the signed media URLs) and runs `run_worker` processes pointed at it; a chaos
loop SIGKILLs one worker at a time and starts a replacement, so every guarantee is exercised
across crashes mid-publish.

The platforms are the sandbox (misbehaving per account) and the fakes of the real platforms
(loadtest.platform_fakes, misbehaving per call), which the real adapters reach through
PROVIDER_API_REDIRECT; see loadtest/soak_fakes.py.

With a chaos mode (loadtest.soak_chaos) the soak also breaks our own infrastructure: the
database restarted, crashed or down (on a private server it starts for the run, see
loadtest.private_pg), a worker frozen past its lease, every free connection taken, or one
organization's destinations hanging while the others' posts fall due (lifted after a while,
as a real outage ends, then the run settles). The account then adds, per run: `stuck`
(renditions owed an outcome that no live job will give), duplicates counted at the
platform by idempotency key and by text, and under `hang` the other organizations' start
delay against a fault-free reference run of the same load.
"""

from __future__ import annotations

import dataclasses
import os
import random
import secrets
import signal
import statistics
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.db.models import CharField, Exists, Min, OuterRef, Q, Value
from django.db.models.functions import Cast, Concat
from django.utils import timezone

from apps.accounts import services as account_services
from apps.accounts.models import Organization, SocialAccount, Workspace
from apps.common.processes import (
    ChildProcess,
    free_port,
    gunicorn_argv,
    manage_argv,
    stop_all,
    web_environment,
)
from apps.jobs.models import WorkerProcess
from apps.providers import catalog
from apps.publishing.services import publication_create
from apps.renditions.models import DeliveryAttempt, FirstComment, Rendition
from apps.sandbox.models import SandboxAccount, SandboxPost
from apps.sandbox.services import sandbox_account_create
from loadtest import soak_replies
from loadtest.platform_fakes import registry
from loadtest.private_pg import PrivatePostgres, copy_database, use_database
from loadtest.progress import ProgressBar, TextOut
from loadtest.soak_chaos import (
    EVENT_MODES,
    HANG,
    KILL,
    MODES,
    PRIVATE_MODES,
    FaultPlayer,
    FaultTimes,
    HangLift,
    db_errors,
)
from loadtest.soak_comments import comment_outcomes, owed_comments, stuck_comments
from loadtest.soak_fakes import (
    APP_SETTINGS,
    FakeFleet,
    comment_marker,
    comment_marker_pattern,
    marker_for,
    marker_pattern,
    media_cleanup,
)

SANDBOX = "sandbox"

PROVIDER_TIMEOUT_S = 2.0
# The lease and the reconciliation timing the soak gives its workers (short, so recoveries
# and settles happen inside a run).
WORKER_STALE_AFTER_S = 4.0
RECONCILE_DELAY_S = 1.0
RECONCILE_SETTLE_S = 20.0
# Unsettled renditions that no live job will move for this long end the wait (the due
# sweep runs every minute and would have given them one).
STUCK_GRACE_S = 90.0
CREATE_THREADS = 4
LISTED = 20  # rendition ids listed per platform for a duplicate or a lost post


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
    # Past the longest settle path: a media post looked for 10 minutes (Reddit), then
    # reconciled.
    timeout_s: float = 1200.0
    seed: int = 1
    keep: bool = False
    # The sandbox and/or real platforms served by their fakes (see resolve_platforms).
    platforms: tuple[str, ...] = (SANDBOX,)
    fault_rate: float = 0.08  # per eligible call, each fault of the fakes' chaos plan
    # The database the soak's processes use (default: this process's DATABASE_URL).
    database_url: str | None = None
    # The fault of our own infrastructure played during the run (soak_chaos.MODES); None
    # or "kill": only the SIGKILLs of kill_every_s.
    chaos: str | None = None
    fault_times: FaultTimes = field(default_factory=lambda: FaultTimes(pause_s=pause_default_s()))
    # Run on a private PostgreSQL started for the run (always for the database modes).
    private_db: bool = False
    # A migrated database whose dump seeds the private one (else it is migrated anew).
    private_db_seed_url: str | None = None
    # Under hang: run the same load without the fault first, for the start delays.
    hang_reference: bool = True
    # Fake account behaviours ("platform:behaviour", see resolve_behaviours): each platform
    # named gets a second account per workspace with its behaviours switched on.
    account_behaviours: tuple[str, ...] = ()
    # Every publication carries a first comment (posted where the platform takes one),
    # counted at the platform like the posts.
    first_comments: bool = False
    # Once the posts are settled, this many visitors' comments under published sandbox posts
    # get a reply from the inbox (workers still killed), each counted at the sandbox.
    replies: int = 0


def pause_default_s() -> float:
    """Long enough for another worker to recover the frozen worker's job, reconcile it and
    settle it (a resend included) before the frozen one resumes: the worst case."""
    return WORKER_STALE_AFTER_S + RECONCILE_DELAY_S + RECONCILE_SETTLE_S + 5.0


def resolve_platforms(spec: str) -> tuple[str, ...]:
    """`sandbox`, `all` (the real platforms of the catalog, through their fakes) or a comma
    list of catalog platforms."""
    known = catalog.platforms()
    if spec.strip() == "all":
        return tuple(p for p in known if p != SANDBOX)
    chosen = tuple(dict.fromkeys(p.strip() for p in spec.split(",") if p.strip()))
    unknown = [p for p in chosen if p not in known]
    if unknown or not chosen:
        raise ValueError(
            f"Unknown platforms {', '.join(unknown) or '(none given)'}; known: {', '.join(known)}."
        )
    return chosen


def resolve_behaviours(specs: list[str], platforms: tuple[str, ...]) -> tuple[str, ...]:
    """`platform:behaviour` entries, or `all` (every account behaviour of every chosen
    platform's fake), checked against what each fake can be switched to."""
    fakes = registry.available()
    offered = [
        f"{platform}:{behaviour}"
        for platform in platforms
        if platform in fakes
        for behaviour in fakes[platform].account_behaviours
    ]
    if any(spec.strip() == "all" for spec in specs):
        return tuple(offered)
    chosen = tuple(dict.fromkeys(spec.strip() for spec in specs if spec.strip()))
    unknown = [spec for spec in chosen if spec not in offered]
    if unknown:
        raise ValueError(
            f"Unknown account behaviours {', '.join(unknown)}; the chosen platforms' fakes "
            f"offer: {', '.join(offered) or 'none'}."
        )
    return chosen


@dataclass
class Soak:
    config: SoakConfig
    progress: TextOut
    tag: str = field(default_factory=lambda: f"soak-{secrets.token_hex(3)}")
    kills: int = 0
    # Platforms asked for that have no fake to serve them, and why.
    skipped: dict[str, str] = field(default_factory=dict)
    _procs: list[ChildProcess] = field(default_factory=list)
    _web: ChildProcess | None = None
    _fleet: FakeFleet | None = None
    _redirect: str = ""
    # rendition id -> (marker, posts its content should make at the platform)
    _marks: dict[int, tuple[str, int]] = field(default_factory=dict)
    # The end of the wait: a retry the platform put off past it is deferred, not lost.
    _wait_until: datetime | None = None
    _logdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="soak-")))
    _stopping: threading.Event = field(default_factory=threading.Event)
    _server: PrivatePostgres | None = None
    _rendition_ids: list[int] = field(default_factory=list)
    # Under hang: the markers of the hanging organization's publications (its fake posts).
    _hang_markers: set[str] = field(default_factory=set)
    # Under hang: the hanging organization's workspace.
    _hang_workspace: int | None = None
    # The first due time, as a monotonic instant (set once the publications are planned).
    _due_from: float | None = None
    # rendition id -> what it was owed at the end, for those not final (see _platform_figures)
    _outcomes: dict[int, str] = field(default_factory=dict)
    # The inbox's replies of this run (see soak_replies).
    _reply_ids: list[int] = field(default_factory=list)

    # -- the run -----------------------------------------------------------------------

    def run(self) -> dict:
        """One soak under `config.chaos`; on a private server when the mode needs one."""
        mode = self.config.chaos
        if mode is not None and mode not in MODES:
            raise ValueError(f"Unknown chaos mode {mode!r}; known: {', '.join(MODES)}.")
        if not (self.config.private_db or mode in PRIVATE_MODES):
            return self._run_mode()
        server = PrivatePostgres().start()
        kept = False
        try:
            url = server.url()
            self.progress.write(f"private database {url} in {server.root}\n")
            self._prepare(server)
            self._server = server
            self.config = dataclasses.replace(self.config, database_url=url)
            with use_database(url):
                figures = self._run_mode()
            if self.config.keep:
                kept = True
                figures["private_database"] = {
                    "url": url,
                    "data_dir": str(server.data_dir),
                    "stop": f"runuser -u postgres -- {server.bin_dir}/pg_ctl -D "
                    f"{server.data_dir} stop (then remove {server.root})",
                }
            return figures
        finally:
            if not kept:
                server.destroy()

    def _prepare(self, server: PrivatePostgres) -> None:
        """The schema on the private server: a copy of a migrated database, or migrated."""
        from django.core.management import call_command

        if self.config.private_db_seed_url:
            copy_database(self.config.private_db_seed_url, server)
            return
        self.progress.write("migrating the private database\n")
        with use_database(server.url()):
            call_command("migrate", interactive=False, verbosity=0)

    def _run_mode(self) -> dict:
        if self.config.chaos != HANG or not self.config.hang_reference:
            return self._run_once()
        # The same load without the fault first, on the same database, as the yardstick.
        self.progress.write("reference run, without the fault:\n")
        reference = Soak(
            config=dataclasses.replace(self.config, chaos=None, private_db=False),
            progress=self.progress,
        ).run()
        self.progress.write("the run with one organization's destinations hanging:\n")
        figures = self._run_once()
        figures["reference"] = {
            key: reference[key]
            for key in (
                "others_start_delay_p50_s",
                "others_start_delay_p99_s",
                "lateness_p50_s",
                "lateness_p99_s",
                "elapsed_s",
                "duplicates",
                "lost",
                "stuck",
            )
        }
        p99, ref_p99 = figures["others_start_delay_p99_s"], reference["others_start_delay_p99_s"]
        figures["others_start_delay_p99_over_reference_s"] = (
            round(p99 - ref_p99, 3) if p99 is not None and ref_p99 is not None else None
        )
        return figures

    def _run_once(self) -> dict:
        rng = random.Random(self.config.seed)  # noqa: S311 - a reproducible load, not a secret
        try:
            platforms = self._serve_fakes()
            base_url = self._start_web()
            pools = self._accounts(platforms)
            for _ in range(self.config.workers):
                self._start_worker(base_url)
            started = time.monotonic()
            # Workers die at random from the first post on, while posts are still created.
            chaos = threading.Thread(target=self._chaos, args=(base_url,), daemon=True)
            chaos.start()
            player = self._fault_player(started)
            faults = threading.Thread(target=player.run, daemon=True) if player else None
            lift: HangLift | None = None
            lifter: threading.Thread | None = None
            try:
                rendition_ids = self._publications(pools, rng)
                self._rendition_ids = rendition_ids
                # The infrastructure faults start once every post exists: a create the
                # fault broke would be retried and could make a second publication, which
                # the witness would count as a duplicate of ours.
                if faults is not None:
                    faults.start()
                if self.config.chaos == HANG:
                    lift = self._hang_lift(started)
                    lifter = threading.Thread(target=lift.run, daemon=True)
                    lifter.start()
                self._wait(rendition_ids)
                if self.config.replies:
                    self._reply_ids = soak_replies.start_replies(
                        rendition_ids, tag=self.tag, count=self.config.replies
                    )
                    soak_replies.wait_replies(self._reply_ids, timeout_s=self.config.timeout_s)
            finally:
                self._stopping.set()
                chaos.join()
                if faults is not None and faults.is_alive():
                    faults.join()
                if lifter is not None and lifter.is_alive():
                    lifter.join()
            elapsed = time.monotonic() - started
            connection.close()  # opened before the faults, perhaps dead since
            figures = self._figures(rendition_ids, pools, platforms, elapsed)
            if self.config.replies:
                figures["replies"] = soak_replies.reply_figures(self._reply_ids)
            if player is not None:
                figures["faults"] = player.as_dicts()
            if lift is not None:
                figures["faults"] = lift.as_dicts()
                figures["hanging_organization"] = self._hanging_figures(rendition_ids)
            return figures
        finally:
            self._stop_all()
            if self._fleet is not None:
                self._fleet.stop()
            if not self.config.keep:
                self._cleanup()

    def _fault_player(self, started: float) -> FaultPlayer | None:
        if self.config.chaos not in EVENT_MODES:
            return None
        return FaultPlayer(
            self.config.chaos,
            times=self.config.fault_times,
            started=started,
            stopping=self._stopping,
            in_flight=lambda: Rendition.objects.filter(
                pk__in=self._rendition_ids, status="publishing"
            ).exists(),
            pause_victim=self._pause_victim,
            server=self._server,
        )

    def hang_window_s(self) -> float:
        """How long the hanging organization's destinations hang from the first due time."""
        hang_s = self.config.fault_times.hang_s
        return self.config.spread_s if hang_s is None else hang_s

    def _hang_lift(self, started: float) -> HangLift:
        return HangLift(
            hang_s=self.hang_window_s(),
            started=started,
            due_from=self._due_from if self._due_from is not None else started,
            stopping=self._stopping,
            lift=self._lift_hang,
        )

    def _lift_hang(self) -> str:
        """The hanging organization's destinations answer in time again: its sandbox
        accounts' hangs are spent (the rows locked, as the sandbox spends them) and the
        fakes stop holding its writes. Says what was lifted."""
        lifted = []
        with transaction.atomic():
            accounts = SandboxAccount.objects.select_for_update().filter(
                workspace_id=self._hanging_workspace()
            )
            for account in accounts.order_by("pk"):
                account.counters["hang_after_accept_times"] = 0
                account.save(update_fields=["counters", "updated_at"])
                lifted.append(account)
        said = [f"{len(lifted)} sandbox accounts"] if lifted else []
        if self._fleet is not None:
            said.append(f"the fakes ({self._fleet.lift_hang()} writes held late)")
        return " and ".join(said) or "nothing hung"

    def _hanging_workspace(self) -> int:
        """The hanging organization's workspace: under hang, the first one made."""
        if self._hang_workspace is None:
            raise RuntimeError("No workspace hangs in this run.")
        return self._hang_workspace

    def _pause_victim(self) -> ChildProcess | None:
        """A running worker of this soak with a publish job in hand."""
        from apps.jobs.models import Job

        running = {self._worker_name(i): p for i, p in enumerate(self._procs) if p.is_running()}
        busy = (
            Job.objects.filter(
                status="processing", type="renditions.publish", locked_by__in=list(running)
            )
            .values_list("locked_by", flat=True)
            .first()
        )
        return running.get(busy) if busy else None

    def _serve_fakes(self) -> list[str]:
        """Start the fakes of the chosen real platforms; returns the platforms this run
        covers. Those without a fake are recorded in `skipped`."""
        fakes, problems = registry.discover()
        wanted = [p for p in self.config.platforms if p != SANDBOX]
        for platform in wanted:
            if platform not in fakes:
                self.skipped[platform] = problems.get(platform, "no fake module yet")
        covered = [p for p in self.config.platforms if p == SANDBOX or p in fakes]
        if not covered:
            raise RuntimeError(f"No platform to soak: {self.skipped}.")
        chosen = {p: fakes[p] for p in wanted if p in fakes}
        if chosen:
            self._fleet = FakeFleet(
                classes=chosen,
                seed=self.config.seed,
                fault_rate=self.config.fault_rate,
                hang_s=PROVIDER_TIMEOUT_S + 1,  # past the client's timeout: an unknown outcome
            )
            self._redirect = self._fleet.start()
            if self.config.chaos == HANG:
                self._fleet.hang_posts_with(self._hang_markers, marker_pattern(self.tag))
        return covered

    def _start_web(self) -> str:
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        log = self._logdir / "web.log"
        self._web = ChildProcess(
            gunicorn_argv(
                f"127.0.0.1:{port}", "--workers", "2", "--threads", "16", "--timeout", "60"
            ),
            env=web_environment(self._env(base_url)),
            log=log,
        )
        if not self._web.wait_http_ok(f"{base_url}/healthz", timeout=60):
            raise RuntimeError(f"The sandbox web server did not start; see {log}.")
        return base_url

    def _env(self, base_url: str) -> dict:
        env = {
            **os.environ,
            "SANDBOX_BASE_URL": base_url,
            "SANDBOX_ENABLED": "true",  # the soak's accounts live on the sandbox
            "SITE_URL": base_url,
            # Media the workers read are the files this process stored.
            "MEDIA_ROOT": str(settings.MEDIA_ROOT),
            "PROVIDER_TIMEOUT_S": str(PROVIDER_TIMEOUT_S),
            "WORKER_HEARTBEAT_S": "1",
            "WORKER_STALE_AFTER_S": str(WORKER_STALE_AFTER_S),
            "WORKER_POLL_S": "0.5",
            "WORKER_GRACE_S": "5",
            "RECONCILE_DELAY_S": str(RECONCILE_DELAY_S),
            "RECONCILE_SETTLE_S": str(RECONCILE_SETTLE_S),
            "PUBLISH_RETRY_BASE_S": "1",
            "PUBLISH_RETRY_CAP_S": "8",
            "LOG_LEVEL": "WARNING",
        }
        if self._redirect:
            env["PROVIDER_API_REDIRECT"] = self._redirect
            for name in APP_SETTINGS:
                env[name] = os.environ.get(name) or f"soak-{name.lower()}"
        if self.config.database_url:
            env["DATABASE_URL"] = self.config.database_url
        return env

    def _start_worker(self, base_url: str) -> None:
        index = len(self._procs)
        argv = manage_argv(
            "run_worker",
            "--threads",
            str(self.config.threads),
            "--name",
            self._worker_name(index),
        )
        # A worker refuses a stale window (4 s here) under 3 times its database lock and
        # statement timeouts: the soak's workers wait and run at most a third of it.
        env = {**self._env(base_url), "DB_LOCK_TIMEOUT_S": "1", "DB_STATEMENT_TIMEOUT_S": "1.3"}
        self._procs.append(ChildProcess(argv, env=env, log=self._logdir / f"worker-{index}.log"))

    def _worker_name(self, index: int) -> str:
        return f"{self.tag}-w{index}"

    def _accounts(self, platforms: list[str]) -> dict[int, dict[str, list[SocialAccount]]]:
        """Per workspace and platform, its accounts: one sandbox account of each behaviour,
        one account opened on each fake."""
        owner = account_services.user_get_or_create(email=f"{self.tag}@soak.invalid")
        pools: dict[int, dict[str, list[SocialAccount]]] = {}
        mix = behaviours(self.config.publications * self.config.destinations)
        # Under hang, the first organization's every account accepts a post and then never
        # answers in time: each of its posts holds a worker thread to the provider timeout.
        hanging = {
            name: {"hang_after_accept_times": 10**6, "hang_s": PROVIDER_TIMEOUT_S + 1}
            for name in mix
        }
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
            pool: dict[str, list[SocialAccount]] = {}
            for platform in platforms:
                if platform == SANDBOX:
                    pool[platform] = [
                        sandbox_account_create(
                            workspace=workspace,
                            handle=f"{self.tag}-{w}-{name}",
                            behaviour=behaviour,
                        )
                        for name, behaviour in (hanging if self._hangs(w) else mix).items()
                    ]
                else:
                    pool[platform] = self._fake_accounts(workspace, platform, w)
            if self._fleet is not None:
                self._fleet.media_create(workspace)
            pools[workspace.pk] = pool
            if self._hangs(w):
                self._hang_workspace = workspace.pk
        return pools

    def _fake_accounts(
        self, workspace: Workspace, platform: str, index: int
    ) -> list[SocialAccount]:
        """One account on the platform's fake, and one more with the behaviours asked for
        this platform switched on (its posts share the pool's turns)."""
        fleet = self._started_fleet()
        handle = f"{self.tag}-{index}-{platform}"
        accounts = [fleet.account_create(workspace=workspace, platform=platform, handle=handle)]
        switched = self._switched(platform)
        if switched:
            accounts.append(
                fleet.account_create(
                    workspace=workspace,
                    platform=platform,
                    handle=f"{handle}-switched",
                    behaviours=switched,
                )
            )
        return accounts

    def _started_fleet(self) -> FakeFleet:
        """The platform fakes, started for any platform but the sandbox."""
        if self._fleet is None:
            raise RuntimeError("The platform fakes were not started.")
        return self._fleet

    def _switched(self, platform: str) -> tuple[str, ...]:
        return tuple(
            spec.split(":", 1)[1]
            for spec in self.config.account_behaviours
            if spec.split(":", 1)[0] == platform
        )

    def _hangs(self, workspace_index: int) -> bool:
        return self.config.chaos == HANG and workspace_index == 0

    def _destinations(
        self, i: int, pool: dict[str, list[SocialAccount]], rng: random.Random, marker: str
    ) -> list[dict]:
        """M destinations: M accounts of the one platform, or one account on each of M
        platforms taken in turn (so every platform gets its share, even in a short run).
        A fake's destination carries its own content and settings."""
        m = self.config.destinations
        if len(pool) == 1:
            (accounts,) = pool.values()
            chosen = rng.sample(accounts, k=min(m, len(accounts)))
        else:
            names = list(pool)
            turn = [names[(i * m + j) % len(names)] for j in range(min(m, len(names)))]
            chosen = [rng.choice(pool[p]) for p in turn]
        return [
            {"account": account.pk}
            if account.platform == SANDBOX
            else self._started_fleet().destination(account, rng, marker)
            for account in chosen
        ]

    def _publications(
        self, pools: dict[int, dict[str, list[SocialAccount]]], rng: random.Random
    ) -> list[int]:
        """Create the publications from a few threads (each with its own connection), due
        over the spread window, never before they exist."""
        bar = ProgressBar(self.progress, "creating", self.config.publications)
        start = timezone.now() + timedelta(seconds=2)
        self._due_from = time.monotonic() + 2
        workspace_ids = list(pools)
        plan = []
        for i in range(self.config.publications):
            marker = marker_for(self.tag, i)
            destinations = self._destinations(
                i, pools[workspace_ids[i % len(workspace_ids)]], rng, marker
            )
            plan.append((i, marker, destinations, rng.uniform(0, self.config.spread_s)))
            if self._hangs(i % len(workspace_ids)):
                self._hang_markers.add(marker)
        workspaces = {
            account.pk: account.workspace
            for pool in pools.values()
            for accounts in pool.values()
            for account in accounts
        }

        def create(item: tuple[int, str, list[dict], float]) -> list[tuple[int, int]]:
            i, marker, destinations, offset = item
            text = f"Soak {self.tag} #{i}" + (f" {marker}" if self._fleet else "")
            try:
                due = max(start + timedelta(seconds=offset), timezone.now() + timedelta(seconds=1))
                publication = publication_create(
                    workspace=workspaces[destinations[0]["account"]],
                    author=None,
                    segments=[{"text": text}],
                    destinations=destinations,
                    scheduled_at=due,
                    status="scheduled",
                    first_comment=f"First comment {comment_marker(marker)}"
                    if self.config.first_comments
                    else None,
                )
                return list(publication.renditions.values_list("pk", "social_account_id"))
            finally:
                connection.close()  # this thread's own connection

        ids: list[int] = []
        with ThreadPoolExecutor(max_workers=CREATE_THREADS) as pool:
            for done, (item, created) in enumerate(
                zip(plan, pool.map(create, plan), strict=True), start=1
            ):
                marker, destinations = item[1], item[2]
                expected = {
                    d["account"]: sum(marker in s["text"] for s in d.get("segments") or [])
                    for d in destinations
                }
                for rendition_id, account_id in created:
                    ids.append(rendition_id)
                    self._marks[rendition_id] = (marker, expected[account_id])
                bar.update(done)
        bar.close()
        return ids

    def _wait(self, rendition_ids: list[int]) -> None:
        """Until every rendition is settled or deferred past the timeout and every first
        comment is out of pending, or those left have been stuck (no live job) for
        STUCK_GRACE_S, or the timeout. The database may be away meanwhile (a fault): the
        wait asks again."""
        bar = ProgressBar(self.progress, "publishing", len(rendition_ids))
        deadline = time.monotonic() + self.config.timeout_s
        self._wait_until = timezone.now() + timedelta(seconds=self.config.timeout_s)
        stuck_since: float | None = None
        while time.monotonic() < deadline:
            try:
                owed = _unsettled(rendition_ids).exclude(_deferred(self._wait_until))
                posts = owed.count()
                stuck = stuck_renditions(owed.values("pk")).count() if posts else 0
                # First comments are owed an outcome too: pending, each with its job.
                comments = owed_comments(rendition_ids)
                pending = comments.count()
                stuck += stuck_comments(comments).count() if pending else 0
            except db_errors():
                connection.close()
                bar.update(bar.done, "(database away)")
                time.sleep(0.5)
                continue
            unsettled = posts + pending
            comments_left = f" comments={pending}" if pending else ""
            extra = f"kills={self.kills} stuck={stuck}{comments_left}"
            bar.update(len(rendition_ids) - posts, extra)
            if unsettled == 0:
                break
            if stuck < unsettled:
                stuck_since = None
            elif stuck_since is None:
                stuck_since = time.monotonic()
            elif time.monotonic() - stuck_since > STUCK_GRACE_S:
                break  # nothing will move them
            time.sleep(0.5)
        bar.close()

    def _chaos(self, base_url: str) -> None:
        """Every kill_every_s, SIGKILL a random working worker (mid-publish, as likely as
        not) and start a replacement, until the run stops. Only a worker that has registered
        (is polling) is a victim: killing one still booting proves nothing, and on a loaded
        machine it would leave no worker alive long enough to work at all."""
        if not self.config.kill_every_s:
            return
        rng = random.Random(self.config.seed + 1)  # noqa: S311 - reproducible chaos
        try:
            while not self._stopping.wait(self.config.kill_every_s):
                try:
                    polling = set(
                        WorkerProcess.objects.filter(name__startswith=f"{self.tag}-w").values_list(
                            "name", flat=True
                        )
                    )
                except db_errors():
                    connection.close()
                    continue
                alive = [
                    p
                    for i, p in enumerate(self._procs)
                    if p.is_running() and self._worker_name(i) in polling
                ]
                if not alive:
                    continue
                victim = rng.choice(alive)
                victim.stop(signal.SIGKILL)
                self.kills += 1
                self._start_worker(base_url)
        finally:
            connection.close()  # this thread's own

    def _stop_all(self) -> None:
        stop_all(self._procs, timeout=30)
        if self._web is not None:
            self._web.stop(timeout=30)

    def _cleanup(self) -> None:
        """Remove the soak's organizations (their workspaces, publications, renditions and
        accounts go with them), its jobs, media files and sandbox accounts."""
        from apps.jobs.models import Job, WorkerProcess

        orgs = Organization.objects.filter(slug__startswith=f"{self.tag}-org-")
        Job.objects.filter(organization__in=orgs).delete()
        for org in orgs:
            workspace_ids = list(org.workspaces.values_list("pk", flat=True))
            Rendition.objects.filter(workspace_id__in=workspace_ids).delete()
            media_cleanup(workspace_ids)
            org.delete()
        SandboxAccount.objects.filter(handle__startswith=f"{self.tag}-").delete()
        WorkerProcess.objects.filter(name__startswith=f"{self.tag}-").delete()

    # -- the account -------------------------------------------------------------------

    def _figures(
        self,
        rendition_ids: list[int],
        pools: dict[int, dict[str, list[SocialAccount]]],
        platforms: list[str],
        elapsed: float,
    ) -> dict:
        renditions = Rendition.objects.filter(pk__in=rendition_ids).select_related("publication")
        statuses = Counter(renditions.values_list("status", flat=True))
        per_platform = {
            platform: self._platform_figures(platform, rendition_ids, pools)
            for platform in platforms
        }
        first_tries = dict(
            DeliveryAttempt.objects.filter(rendition_id__in=rendition_ids, kind="publish")
            .values("rendition_id")
            .annotate(first=Min("started_at"))
            .values_list("rendition_id", "first")
        )
        delays = {
            r.pk: (r.workspace_id, (first_tries[r.pk] - r.effective_scheduled_at).total_seconds())
            for r in renditions
            if r.pk in first_tries and r.effective_scheduled_at
        }
        lateness = sorted(max(delay, 0.0) for _, delay in delays.values())
        # The start delay of the organizations that are not the hanging one (under hang;
        # otherwise of every organization but the first, the same set in a reference run).
        first_workspace = min(pools)
        others = sorted(max(d, 0.0) for ws, d in delays.values() if ws != first_workspace)
        unsettled: Counter = Counter()
        failed_by_kind: Counter = Counter()
        for figures in per_platform.values():
            unsettled.update(figures["unsettled_by_status"])
            failed_by_kind.update(figures["failed_by_kind"])
        return {
            "chaos": self.config.chaos or (KILL if self.config.kill_every_s else None),
            "publications": self.config.publications,
            "renditions": len(rendition_ids),
            "published": statuses.get("published", 0),
            "failed": statuses.get("failed", 0),
            "failed_by_kind": dict(sorted(failed_by_kind.items())),
            "ambiguous": renditions.filter(ambiguous=True).count(),
            "ambiguous_left": sum(f["ambiguous_left"] for f in per_platform.values()),
            "awaiting_reconnect": sum(f["awaiting_reconnect"] for f in per_platform.values()),
            "reconciled": sum(f["reconciled"] for f in per_platform.values()),
            "duplicates": sum(f["duplicates"] for f in per_platform.values()),
            "duplicates_by_key": sum(f["duplicates_by_key"] for f in per_platform.values()),
            "duplicates_by_text": sum(f["duplicates_by_text"] for f in per_platform.values()),
            "lost": sum(f["lost"] for f in per_platform.values()),
            "comment_duplicates": sum(
                f.get("comment_duplicates", 0) for f in per_platform.values()
            ),
            "comments_lost": sum(f.get("comments_lost", 0) for f in per_platform.values()),
            # First comments whose outcome is unknown, left to a person: per platform, by why
            # (see soak_comments); and those still in their scheduled checks at the end.
            "comments_to_person": sum(
                f.get("comments_to_person", 0) for f in per_platform.values()
            ),
            "comments_to_person_why": {
                platform: f["comments_to_person_why"]
                for platform, f in per_platform.items()
                if f.get("comments_to_person_why")
            },
            "comments_still_checking": sum(
                f.get("comments_still_checking", 0) for f in per_platform.values()
            ),
            # Posts a platform holds for a rendition not called published, per platform (the
            # sandbox's witness does not count them).
            "held_not_published": {
                platform: f["held_not_published"]
                for platform, f in per_platform.items()
                if "held_not_published" in f
            },
            "stuck": sum(f["stuck"] for f in per_platform.values()),
            # Unknown outcomes no automatic check will settle: a person verifies. Per
            # platform, counted by why (see left_to_person).
            "to_person": sum(f["to_person"] for f in per_platform.values()),
            "to_person_why": {
                platform: f["to_person_why"]
                for platform, f in per_platform.items()
                if f["to_person_why"]
            },
            "deferred": sum(f["deferred"] for f in per_platform.values()),
            "still_checking": sum(f["still_checking"] for f in per_platform.values()),
            "still_running": sum(f["still_running"] for f in per_platform.values()),
            "unsettled_by_status": dict(unsettled),
            "worker_kills": self.kills,
            "lateness_p50_s": _pct(lateness, 50),
            "lateness_p99_s": _pct(lateness, 99),
            "lateness_max_s": round(lateness[-1], 3) if lateness else None,
            "others_start_delay_p50_s": _pct(others, 50),
            "others_start_delay_p99_s": _pct(others, 99),
            "elapsed_s": round(elapsed, 1),
            "renditions_per_s": round(len(rendition_ids) / elapsed, 2) if elapsed else None,
            "platforms": per_platform,
            "skipped": dict(self.skipped),
        }

    def _platform_figures(
        self,
        platform: str,
        rendition_ids: list[int],
        pools: dict[int, dict[str, list[SocialAccount]]],
    ) -> dict:
        """One platform's outcome, its duplicates and lost posts counted at the platform."""
        renditions = Rendition.objects.filter(pk__in=rendition_ids, platform=platform)
        ids = list(renditions.values_list("pk", flat=True))
        statuses = Counter(renditions.values_list("status", flat=True))
        failed_by_kind = Counter(
            kind or "unknown"
            for kind in renditions.filter(status="failed").values_list(
                "last_error__kind", flat=True
            )
        )
        reconciled = (
            DeliveryAttempt.objects.filter(
                rendition_id__in=ids, kind="reconcile", outcome__in=["found", "absent"]
            )
            .values("rendition_id")
            .distinct()
            .count()
        )
        owed = account_owed(ids, until=self._wait_until or timezone.now())
        stuck, checking, running = owed.stuck, owed.checking, owed.running
        deferred_rows, unsettled_rows, lost = owed.deferred, owed.unsettled, owed.lost
        figures = {
            "renditions": len(ids),
            "stuck": len(stuck),
            "published": statuses.get("published", 0),
            "failed": statuses.get("failed", 0),
            "failed_by_kind": dict(sorted(failed_by_kind.items())),
            "ambiguous_left": renditions.filter(status="failed", ambiguous=True).count(),
            # Of those, the ones whose check waits for their account's reconnect (a lost call
            # on an account whose token lapsed): checked by themselves once it is reconnected.
            "awaiting_reconnect": renditions.filter(
                status="failed", ambiguous=True, last_error__action="reconnect"
            ).count(),
            "reconciled": reconciled,
            # Published with a notice of what the platform made of it (a Reddit post removed
            # as spam, a YouTube video locked private).
            "published_with_notice": published_with_notice(renditions),
            "deferred": len(deferred_rows),
            "still_checking": len(checking),
            "still_running": len(running),
        }
        if self._switched(platform):
            figures["account_behaviours"] = list(self._switched(platform))
        figures.update(_listed(owed))
        if platform == SANDBOX:
            # The witness: posts the sandbox holds under one idempotency key more than once.
            remote_ids = [int(a.remote_id) for pool in pools.values() for a in pool[SANDBOX]]
            posts = SandboxPost.objects.filter(
                account_id__in=remote_ids, is_comment=False, processing_fails=False
            ).values_list("account_id", "idempotency_key", "text")
            by_key, by_text = duplicates_by_key_and_text(posts)
            figures.update(
                duplicates=max(by_key, by_text),
                duplicates_by_key=by_key,
                duplicates_by_text=by_text,
            )
        else:
            figures.update(self._witness(platform, renditions, lost))
        if self.config.first_comments:
            figures.update(self._comment_figures(platform, renditions, pools))
        figures["lost"] = len(lost)
        if lost:  # the rows to look at (kept with --keep)
            figures["lost_renditions"] = sorted(lost)[:LISTED]
        self._outcomes.update(
            {pk: "still_checking" for pk in checking}
            | {pk: "deferred" for pk, _ in deferred_rows}
            | {pk: "still_running" for pk in running}
            | {pk: "stuck" for pk in stuck}
            | {pk: "lost" for pk in lost - set(stuck)}
        )
        figures["unsettled_by_status"] = dict(Counter(status for _, status in unsettled_rows))
        why = left_to_person(ids)
        figures["to_person"] = sum(why.values())
        figures["to_person_why"] = dict(why.most_common())
        return figures

    def _comment_figures(self, platform: str, renditions, pools) -> dict:
        """The first comments of this platform's renditions, by status, matched to the
        comments the platform holds (by comment marker and account)."""
        pattern = comment_marker_pattern(self.tag)
        if platform == SANDBOX:
            remote_ids = [a.remote_id for pool in pools.values() for a in pool[SANDBOX]]
            held: Counter = Counter()
            for account_id, text in SandboxPost.objects.filter(
                account_id__in=remote_ids, is_comment=True
            ).values_list("account_id", "text"):
                held.update((m, str(account_id)) for m in set(pattern.findall(text)))
        else:
            held = self._started_fleet().comments_held(platform, pattern)
        rows = FirstComment.objects.filter(rendition__in=renditions).values_list(
            "rendition_id", "status", "rendition__social_account__remote_id"
        )
        return comment_witness(rows, held, self._marks) | comment_outcomes(renditions)

    def _hanging_figures(self, rendition_ids: list[int]) -> dict:
        """The hanging organization's renditions at the end, once the fault was lifted:
        each should be final (published, failed with its reason, ambiguous and left to a
        person) or still being checked with its job scheduled. `not_final` counts the others
        (still running when the wait ended, deferred, stuck or lost), listed with why."""
        mine = Rendition.objects.filter(
            pk__in=rendition_ids, workspace_id=self._hanging_workspace()
        )
        rows = list(mine.values_list("pk", "status", "ambiguous"))
        left = {pk: self._outcomes[pk] for pk, _, _ in rows if pk in self._outcomes}
        waiting = {pk: why for pk, why in left.items() if why != "still_checking"}
        final = [(status, ambiguous) for pk, status, ambiguous in rows if pk not in left]
        figures: dict[str, int | dict[int, str]] = {
            "renditions": len(rows),
            "published": sum(status == "published" for status, _ in final),
            "failed": sum(status == "failed" for status, _ in final),
            "ambiguous_left": sum(status == "failed" and amb for status, amb in final),
            "still_checking": len(left) - len(waiting),
            "not_final": len(waiting),
        }
        if waiting:
            figures["not_final_renditions"] = dict(sorted(waiting.items())[:LISTED])
        return figures

    def _witness(self, platform: str, renditions, lost: set[int]) -> dict:
        """Match the fake's posts to renditions by (marker, account). Adds to `lost` the
        renditions called published that the platform does not hold."""
        pattern = marker_pattern(self.tag)
        fleet = self._started_fleet()
        held = fleet.held(platform, pattern)
        rows = renditions.values_list("pk", "status", "social_account__remote_id", "ambiguous")
        seen = witness(rows, held, self._marks)
        lost.update(seen.lost)
        by_key, _ = duplicates_by_key_and_text(fleet.keyed_posts(platform, pattern))
        listed = {"duplicate_renditions": seen.twice[:LISTED]} if seen.twice else {}
        return {
            "duplicates": max(seen.duplicates, by_key),
            "duplicates_by_key": by_key,
            # By text: each publication's marker, counted per account against the number of
            # its segments that carry it.
            "duplicates_by_text": seen.duplicates,
            **listed,
            # Posts the platform holds for a rendition not called published (failed or left
            # ambiguous): not lost, but a person would see a post the product denies.
            "held_not_published": seen.held_not_published,
            # Of those, the ones called a plain failure (not ambiguous): the product says
            # failed, or retries it, while the post is live. The ambiguity rules keep it 0.
            "held_called_failed": seen.held_called_failed,
            # Posts with one of this run's markers matching no rendition (a wrong account id
            # in the witness, or a post nobody asked for).
            "unmatched_posts": sum(held.values()) - seen.matched,
            "faults_struck": fleet.faults_struck(platform),
        }


def left_to_person(rendition_ids: list[int]) -> Counter:
    """The unknown outcomes (ambiguous failures) left to a person, counted by why: no
    reconciliation still to run, no reconnect awaited (that check runs by itself once the
    account is back). Each is keyed "<verdict> (<error>)": the verdict is the kind the last
    reconciliation handed it over with (`not_found`, `no_lookup`, `duplicate_unconfirmed`...)
    or `no_check` when none was ever scheduled or none handed it over (the platform gives no
    handle, or a later refusal left nothing to resend); the error is the unknown outcome's
    own code (`ReadTimeout`, `worker_lost`, `refused_after_unknown`, an HTTP status)."""
    from apps.jobs.models import Job

    rows = (
        Rendition.objects.filter(pk__in=rendition_ids, status="failed", ambiguous=True)
        .exclude(_being_checked())
        .exclude(last_error__action="reconnect")
        .values_list("pk", "last_error")
    )
    errors = dict(rows)
    verdicts: dict[str, str] = {}
    handed_over = (
        Job.objects.filter(
            type="renditions.reconcile",
            status=Job.Status.FAILED,
            dedupe_key__in=[f"reconcile:{pk}" for pk in errors],
        )
        .order_by("pk")
        .values_list("dedupe_key", "last_error")
    )
    for key, job_error in handed_over:  # the latest one last
        rendition_id = (key or "").removeprefix("reconcile:")
        verdicts[rendition_id] = (job_error or {}).get("kind") or "errored"
    why: Counter = Counter()
    for pk, error in errors.items():
        error = error or {}
        verdict = verdicts.get(str(pk)) if error.get("reconcile_note") else None
        code = error.get("code") or (
            f"http_{error['http_status']}" if error.get("http_status") else error.get("kind")
        )
        why[f"{verdict or 'no_check'} ({code or 'no error'})"] += 1
    return why


def published_with_notice(renditions) -> int:
    """Renditions published with a notice of what the platform made of the post (the
    checkpoint's `result.notices`: a Reddit post removed as spam, a YouTube video locked
    private)."""
    return renditions.filter(
        status="published", checkpoint__result__notices__0__isnull=False
    ).count()


def _listed(owed: Owed) -> dict:
    """The rendition ids to look at (kept with --keep) of what is not settled."""
    listed: dict = {}
    if owed.checking:
        listed["still_checking_renditions"] = sorted(owed.checking)[:LISTED]
    if owed.running:
        listed["still_running_renditions"] = owed.running[:LISTED]
    if owed.stuck:
        listed["stuck_renditions"] = owed.stuck[:LISTED]
    if owed.deferred:
        listed["deferred_until"] = max(at for _, at in owed.deferred).isoformat()
    return listed


def comment_witness(rows, held: Counter, marks: dict[int, tuple[str, int]]) -> dict:
    """First comments (rendition id, status, account remote id) against the comments the
    platform holds by (comment marker, account): more than one is a duplicate; none for a
    comment called published is lost; one for a comment not called published is held."""
    by_status: Counter = Counter()
    duplicates = lost = held_not_published = 0
    for pk, status, remote_id in rows:
        by_status[status] += 1
        n = held.get((comment_marker(marks[pk][0]), str(remote_id)), 0)
        duplicates += max(0, n - 1)
        if status == FirstComment.Status.PUBLISHED and not n:
            lost += 1
        elif status != FirstComment.Status.PUBLISHED and n:
            held_not_published += 1
    return {
        "comments": sum(by_status.values()),
        "comments_by_status": dict(sorted(by_status.items())),
        "comment_duplicates": duplicates,
        "comments_lost": lost,
        "comments_held_not_published": held_not_published,
    }


@dataclass
class Witnessed:
    """The fake's posts matched to renditions (see `witness`)."""

    duplicates: int = 0
    twice: list[int] = field(default_factory=list)  # renditions posted more than asked
    lost: set[int] = field(default_factory=set)  # called published, not (all) there
    held_not_published: int = 0
    held_called_failed: int = 0  # ...of which a plain failure, not ambiguous
    matched: int = 0


def witness(rows, held: Counter, marks: dict[int, tuple[str, int]]) -> Witnessed:
    """Match a platform's posts, counted by (marker, account), to renditions
    (pk, status, account remote id, ambiguous) each owed `marks[pk]` = (marker, posts of its
    content): more is a duplicate; fewer for a rendition called published is a lost post."""
    seen = Witnessed()
    for pk, status, remote_id, ambiguous in rows:
        marker, expected = marks[pk]
        n = held.get((marker, remote_id), 0)
        seen.matched += n
        seen.duplicates += max(0, n - expected)
        if n > expected:
            seen.twice.append(pk)
        if status == "published" and n < expected:
            seen.lost.add(pk)
        elif status != "published" and n:
            seen.held_not_published += 1
            if status == "failed" and not ambiguous:
                seen.held_called_failed += 1
    seen.twice.sort()
    return seen


def duplicates_by_key_and_text(posts) -> tuple[int, int]:
    """Posts beyond the first per (account, idempotency key), and per (account, text), of
    (account, key, text) rows. Posts without a key count by text only: a resend under a new
    key (a frozen worker's old request landing after a clean retry) is seen by text alone."""
    by_key: Counter = Counter()
    by_text: Counter = Counter()
    for account, key, text in posts:
        if key:
            by_key[(account, key)] += 1
        by_text[(account, text)] += 1
    return (
        sum(n - 1 for n in by_key.values() if n > 1),
        sum(n - 1 for n in by_text.values() if n > 1),
    )


@dataclass
class Owed:
    """The renditions still owed an outcome when the wait ended, by what they wait for."""

    stuck: list[int]  # no live job will give it (see stuck_renditions)
    deferred: list[tuple[int, datetime]]  # a retry the platform put off past the run, and when
    checking: list[int]  # a status poll or a reconciliation scheduled
    running: list[int]  # its publish, retry or reconcile job still to run (the bound came first)
    unsettled: list[tuple[int, str]]  # neither deferred nor being checked: (id, status)
    lost: set[int]  # silently dropped: stuck, or failed with no reason said


def account_owed(rendition_ids: list[int], *, until: datetime) -> Owed:
    """Sort the renditions owed an outcome (see _unsettled) by what they wait for. Lost
    means silently dropped, nothing else: owed an outcome with nothing to give it (stuck),
    or failed without a reason (no error kind); on the fakes the witness adds those called
    published that the platform does not hold. One still owed whose job is still to run
    when the wait ended is `running`, not lost: the run's bound came first."""
    owed = _unsettled(rendition_ids)
    stuck = sorted(stuck_renditions(rendition_ids).values_list("pk", flat=True))
    # A retry the platform asked to put off past the run's end (LinkedIn's daily limit
    # resets at midnight UTC) is still owed, but not lost: reported apart.
    deferred = list(
        owed.filter(_deferred(until)).exclude(pk__in=stuck).values_list("pk", "next_retry_at")
    )
    # Work the platform accepted and still processes (a status poll scheduled), or an
    # unknown outcome whose check is scheduled: owed, each with the job that settles it
    # inside its platform's budget, so not lost; reported apart with their ids.
    checking = sorted(
        owed.exclude(pk__in=[pk for pk, _ in deferred])
        .filter(_being_checked())
        .values_list("pk", flat=True)
    )
    unsettled = list(
        owed.exclude(pk__in=[pk for pk, _ in deferred])
        .exclude(pk__in=checking)
        .values_list("pk", "status")
    )
    lost = set(stuck)
    lost.update(
        Rendition.objects.filter(pk__in=rendition_ids, status="failed")
        .filter(Q(last_error__isnull=True) | Q(last_error__kind__isnull=True))
        .values_list("pk", flat=True)
    )
    running = sorted(pk for pk, _ in unsettled if pk not in lost)
    return Owed(
        stuck=stuck,
        deferred=deferred,
        checking=checking,
        running=running,
        unsettled=unsettled,
        lost=lost,
    )


def stuck_renditions(rendition_ids):
    """Renditions owed an outcome that no live job will give: scheduled, publishing,
    waiting, or failed with a retry pending, and no unfinished publish, poll or reconcile
    job for them (a job held by a dead worker is still unfinished: stale recovery moves it).
    `rendition_ids` is a list or a subquery of pks."""
    from apps.jobs.models import Job

    def live(prefix: str):
        return Exists(
            Job.objects.unfinished().filter(
                dedupe_key=Concat(Value(prefix), Cast(OuterRef("pk"), CharField()))
            )
        )

    return (
        Rendition.objects.filter(pk__in=rendition_ids)
        .filter(
            Q(status__in=["scheduled", "publishing", "waiting"])
            | Q(status="failed", next_retry_at__isnull=False)
        )
        .exclude(live("publish:"))
        .exclude(live("poll:"))
        .exclude(live("reconcile:"))
    )


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


def _being_checked() -> Q:
    """Waiting with a status poll to come, or ambiguous with its reconciliation to come."""
    from apps.jobs.models import Job

    def job(prefix: str):
        return Exists(
            Job.objects.unfinished().filter(
                dedupe_key=Concat(Value(prefix), Cast(OuterRef("pk"), CharField()))
            )
        )

    return Q(status="waiting") & job("poll:") | Q(status="failed", ambiguous=True) & job(
        "reconcile:"
    )


def _deferred(until: datetime) -> Q:
    """A retry pending (not ambiguous) that the platform put off until after `until`."""
    return Q(status="failed", ambiguous=False, next_retry_at__gt=until)


def _pct(values: list[float], pct: int) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], 3)
    return round(statistics.quantiles(values, n=100, method="inclusive")[pct - 1], 3)
