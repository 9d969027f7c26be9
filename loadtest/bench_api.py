"""`bench_api`: the token API under load, through gunicorn over real HTTP.

It serves the project with gunicorn on a free local port, creates a workspace with a token
and sandbox accounts, then runs two phases from a pool of client threads: publication
creates (each to N destinations, scheduled a day ahead so nothing publishes meanwhile) and
publication detail reads. Creates run twice: one at a time (``serial_creates``, the
latency of one create: ``create_c1_latency_p50_ms``), then from ``concurrency`` threads
(``create_requests_per_s``). Each phase reports requests per second and latency
percentiles.

With ``bulk`` it runs one phase instead: ``bulk_items`` publications (one destination each,
spread over ``bulk_accounts`` sandbox accounts, scheduled a day ahead, each with its own
reference_key) sent to POST /publications/bulk in requests of ``bulk_batch`` items; it
reports items per second, the total time and the per-request latency.
"""

from __future__ import annotations

import os
import secrets
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from apps.accounts import services as account_services
from apps.accounts.models import Organization
from apps.common.processes import ChildProcess, free_port, gunicorn_argv, web_environment
from apps.sandbox.models import SandboxAccount
from apps.sandbox.services import sandbox_account_create
from loadtest.progress import ProgressBar, TextOut


@dataclass
class ApiBenchConfig:
    creates: int = 1000
    # Creates sent one at a time first: the latency of a create on an otherwise idle server.
    serial_creates: int = 200
    reads: int = 3000
    destinations: int = 3
    concurrency: int = 8
    web_workers: int = 2
    web_threads: int = 8
    keep: bool = False
    bulk: bool = False
    bulk_items: int = 40_000
    bulk_accounts: int = 20
    bulk_batch: int = 500
    # Bulk requests in flight at once (each holds its organization's row lock while it
    # writes, so more than a couple only queue).
    bulk_concurrency: int = 2
    # The database gunicorn uses (default: this process's DATABASE_URL).
    database_url: str | None = None
    # Serve the WSGI application with threaded workers instead of ASGI (the default).
    wsgi: bool = False


@dataclass
class ApiBench:
    config: ApiBenchConfig
    progress: TextOut
    tag: str = field(default_factory=lambda: f"bench-api-{secrets.token_hex(3)}")
    _web: ChildProcess | None = None
    _logdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="bench-api-")))

    def run(self) -> dict:
        try:
            base_url = self._start_web()
            if self.config.bulk:
                return self._run_bulk(base_url)
            token, account_ids = self._workspace(self.config.destinations)
            client = httpx.Client(
                base_url=f"{base_url}/api/v1",
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
                limits=httpx.Limits(max_connections=self.config.concurrency * 2),
            )
            with client:
                due = (datetime.now(UTC) + timedelta(days=1)).isoformat()
                body = {
                    "text": "Benchmark post",
                    "destinations": [{"account": pk} for pk in account_ids],
                    "scheduled_at": due,
                    "status": "scheduled",
                }
                created: list[int] = []
                lock = threading.Lock()

                def create(i: int) -> float:
                    started = time.perf_counter()
                    response = client.post(
                        "/publications", json=body, headers={"Idempotency-Key": f"{self.tag}-{i}"}
                    )
                    took = time.perf_counter() - started
                    if response.status_code != 201:
                        raise RuntimeError(
                            f"create answered {response.status_code}: {response.text}"
                        )
                    with lock:
                        created.append(response.json()["id"])
                    return took

                serial = self._phase(
                    "create, one at a time", self.config.serial_creates, create, concurrency=1
                )
                creates = self._phase("create", self.config.creates, create, offset=len(created))

                def read(i: int) -> float:
                    started = time.perf_counter()
                    response = client.get(f"/publications/{created[i % len(created)]}")
                    took = time.perf_counter() - started
                    if response.status_code != 200:
                        raise RuntimeError(f"read answered {response.status_code}: {response.text}")
                    return took

                reads = self._phase("detail read", self.config.reads, read)
            return {
                "interface": "wsgi" if self.config.wsgi else "asgi",
                "destinations": self.config.destinations,
                "concurrency": self.config.concurrency,
                "web_workers": self.config.web_workers,
                "web_threads": self.config.web_threads,
                **{f"create_c1_{k}": v for k, v in serial.items()},
                **{f"create_{k}": v for k, v in creates.items()},
                **{f"read_{k}": v for k, v in reads.items()},
            }
        finally:
            self._stop_web()
            if not self.config.keep:
                self._cleanup()

    def _run_bulk(self, base_url: str) -> dict:
        config = self.config
        token, account_ids = self._workspace(config.bulk_accounts)
        due = datetime.now(UTC) + timedelta(days=1)
        batches = [
            range(start, min(start + config.bulk_batch, config.bulk_items))
            for start in range(0, config.bulk_items, config.bulk_batch)
        ]
        client = httpx.Client(
            base_url=f"{base_url}/api/v1",
            headers={"Authorization": f"Bearer {token}"},
            timeout=300,
            limits=httpx.Limits(max_connections=config.bulk_concurrency * 2),
        )

        def send(batch_no: int) -> float:
            items = [
                {
                    "text": f"Bulk post {i}",
                    "destinations": [{"account": account_ids[i % len(account_ids)]}],
                    "scheduled_at": (due + timedelta(seconds=i)).isoformat(),
                    "status": "scheduled",
                    "reference_key": f"{self.tag}-{i}",
                }
                for i in batches[batch_no]
            ]
            started = time.perf_counter()
            response = client.post(
                "/publications/bulk",
                json={"items": items},
                headers={"Idempotency-Key": f"{self.tag}-bulk-{batch_no}"},
            )
            took = time.perf_counter() - started
            if response.status_code != 200:
                raise RuntimeError(f"bulk answered {response.status_code}: {response.text[:500]}")
            body = response.json()
            if body["created"] != len(items):
                raise RuntimeError(f"bulk created {body['created']} of {len(items)} items")
            return took

        with client:
            bar = ProgressBar(self.progress, "bulk create", config.bulk_items)
            latencies: list[float] = []
            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=config.bulk_concurrency) as pool:
                done = 0
                for batch_no, took in enumerate(pool.map(send, range(len(batches)))):
                    latencies.append(took)
                    done += len(batches[batch_no])
                    bar.update(done)
            elapsed = time.perf_counter() - started
            bar.close()
        latencies.sort()
        return {
            "bulk_items": config.bulk_items,
            "bulk_accounts": config.bulk_accounts,
            "bulk_batch": config.bulk_batch,
            "bulk_concurrency": config.bulk_concurrency,
            "web_workers": config.web_workers,
            "web_threads": config.web_threads,
            "bulk_requests": len(batches),
            "bulk_total_s": round(elapsed, 2),
            "bulk_items_per_s": round(config.bulk_items / elapsed, 1),
            "bulk_request_p50_ms": round(_pct(latencies, 50) * 1000, 1),
            "bulk_request_p99_ms": round(_pct(latencies, 99) * 1000, 1),
        }

    def _phase(
        self, label: str, count: int, call, *, concurrency: int | None = None, offset: int = 0
    ) -> dict:
        """call(i) for i in offset..offset+count from `concurrency` threads (default: the
        configured one); requests/s and latency percentiles."""
        if count <= 0:
            return {"requests": 0}
        bar = ProgressBar(self.progress, label, count)
        latencies: list[float] = []
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=concurrency or self.config.concurrency) as pool:
            calls = pool.map(call, range(offset, offset + count))
            for done, took in enumerate(calls, start=1):
                latencies.append(took)
                bar.update(done)
        elapsed = time.perf_counter() - started
        bar.close()
        latencies.sort()
        return {
            "requests": count,
            "requests_per_s": round(count / elapsed, 1),
            "latency_p50_ms": round(_pct(latencies, 50) * 1000, 1),
            "latency_p99_ms": round(_pct(latencies, 99) * 1000, 1),
        }

    def _start_web(self) -> str:
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        env = {
            **os.environ,
            "API_THROTTLE_RATE": "",  # measure the API, not the rate limit
            "LOG_LEVEL": "WARNING",
        }
        if self.config.database_url:
            env["DATABASE_URL"] = self.config.database_url
        log = self._logdir / "web.log"
        self._web = ChildProcess(
            gunicorn_argv(
                f"127.0.0.1:{port}",
                "--workers",
                str(self.config.web_workers),
                "--threads",
                str(self.config.web_threads),
                wsgi=self.config.wsgi,
            ),
            env=web_environment(env, wsgi=self.config.wsgi),
            log=log,
        )
        if not self._web.wait_http_ok(f"{base_url}/healthz", timeout=60):
            raise RuntimeError(f"gunicorn did not start; see {log}.")
        return base_url

    def _workspace(self, accounts: int) -> tuple[str, list[int]]:
        owner = account_services.user_get_or_create(email=f"{self.tag}@bench.invalid")
        org = account_services.organization_create(
            name=self.tag, slug=f"{self.tag}-org", owner=owner
        )
        quota = 10 * max(self.config.creates, self.config.bulk_items if self.config.bulk else 0)
        Organization.objects.filter(pk=org.pk).update(monthly_post_quota=quota)
        workspace = account_services.workspace_create(
            organization=org, name=self.tag, slug=f"{self.tag}-ws"
        )
        created = [
            sandbox_account_create(workspace=workspace, handle=f"{self.tag}-{i}")
            for i in range(accounts)
        ]
        token = account_services.api_token_create(
            workspace=workspace, name="bench", scopes=["read", "write", "publish"]
        )
        return token.clear, [account.pk for account in created]

    def _stop_web(self) -> None:
        if self._web is not None:
            self._web.stop(timeout=30)

    def _cleanup(self) -> None:
        from apps.jobs.models import Job

        orgs = Organization.objects.filter(slug=f"{self.tag}-org")
        Job.objects.filter(organization__in=orgs).delete()
        for org in orgs:
            for workspace in org.workspaces.all():
                workspace.renditions.all().delete()
            org.delete()
        SandboxAccount.objects.filter(handle__startswith=f"{self.tag}-").delete()


def _pct(values: list[float], pct: int) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[pct - 1]
