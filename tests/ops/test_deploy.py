"""The deployment files: manifests parse and say what the docs promise, the Dockerfile copies
only what the repository has, gunicorn's config is driven by the environment and serves."""

import json
import os
import re
import runpy
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"


def _k8s_documents() -> list[dict]:
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        docs.extend(doc for doc in yaml.safe_load_all(path.read_text()) if doc)
    return docs


def _one(kind: str, name: str) -> dict:
    found = [d for d in _k8s_documents() if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}"
    return found[0]


def _env_example_keys() -> set[str]:
    text = (DEPLOY / ".env.example").read_text()
    return set(re.findall(r"^([A-Z][A-Z0-9_]*)=", text, re.MULTILINE))


def test_every_manifest_parses_and_names_its_kind():
    docs = _k8s_documents()
    assert {d["kind"] for d in docs} >= {
        "ConfigMap",
        "Secret",
        "Job",
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "Kustomization",
    }
    for doc in docs:
        assert doc["apiVersion"] and doc["kind"]


def test_kustomization_lists_existing_files_but_not_the_secret_example():
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    for resource in kustomization["resources"]:
        assert (K8S / resource).is_file(), resource
    assert "secret.example.yaml" not in kustomization["resources"]


def test_web_pods_are_probed_on_readyz_and_healthz():
    container = _one("Deployment", "socialpost-web")["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert "gunicorn" in container["command"]
    port_names = {p["name"] for p in container["ports"]}
    assert container["readinessProbe"]["httpGet"]["port"] in port_names


def test_the_service_reaches_the_web_pods():
    service = _one("Service", "socialpost-web")
    pod = _one("Deployment", "socialpost-web")["spec"]["template"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    port_names = {p["name"] for p in pod["spec"]["containers"][0]["ports"]}
    assert service["spec"]["ports"][0]["targetPort"] in port_names


def test_workers_get_a_grace_period_and_a_disruption_budget():
    worker = _one("Deployment", "socialpost-worker")
    pod = worker["spec"]["template"]
    assert pod["spec"]["terminationGracePeriodSeconds"] >= 60
    assert pod["spec"]["containers"][0]["command"][-1] == "run_worker"
    assert worker["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()

    budget = _one("PodDisruptionBudget", "socialpost-worker")
    assert budget["spec"]["minAvailable"] >= 1
    assert budget["spec"]["selector"]["matchLabels"] == worker["spec"]["selector"]["matchLabels"]
    web_labels = _one("Deployment", "socialpost-web")["spec"]["template"]["metadata"]["labels"]
    assert not budget["spec"]["selector"]["matchLabels"].items() <= web_labels.items()


def test_every_pod_runs_as_non_root_without_privilege_escalation():
    pods = [
        d["spec"]["template"]["spec"]
        for d in _k8s_documents()
        if d["kind"] in ("Deployment", "Job")
    ]
    assert len(pods) == 3
    for pod in pods:
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] != 0
        for container in pod["containers"]:
            assert container["securityContext"]["allowPrivilegeEscalation"] is False
            assert container["securityContext"]["readOnlyRootFilesystem"] is True
            refs = {next(iter(ref.values()))["name"] for ref in container["envFrom"]}
            assert refs == {"socialpost-config", "socialpost-secrets"}


def test_the_migration_job_migrates_once():
    job = _one("Job", "socialpost-migrate")
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["containers"][0]["command"] == ["python", "manage.py", "migrate", "--noinput"]


def test_config_and_secret_keys_are_documented_settings():
    documented = _env_example_keys()
    config = _one("ConfigMap", "socialpost-config")["data"]
    secret = _one("Secret", "socialpost-secrets")["stringData"]
    assert set(config) - documented == set()
    assert set(secret) - documented == set()
    assert {"SECRET_KEY", "ENCRYPTION_KEYS", "DATABASE_URL"} <= set(secret)
    assert not {"SECRET_KEY", "ENCRYPTION_KEYS", "DATABASE_URL"} & set(config)


def test_compose_runs_postgres_a_migration_web_and_two_workers():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert services["db"]["image"].startswith("postgres")
    assert "healthcheck" in services["db"]
    assert services["migrate"]["command"][-2:] == ["migrate", "--noinput"]
    assert services["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"
    migrated = {"condition": "service_completed_successfully"}
    assert services["web"]["depends_on"]["migrate"] == migrated
    assert "/readyz" in " ".join(services["web"]["healthcheck"]["test"])
    worker = services["worker"]
    assert worker["command"] == ["python", "manage.py", "run_worker"]
    assert worker["deploy"]["replicas"] == 2
    assert worker["depends_on"]["migrate"] == migrated
    assert worker["stop_grace_period"]
    assert services["minio"]["profiles"] == ["s3"]
    assert services["minio-bucket"]["profiles"] == ["s3"]
    for name in ("migrate", "web", "worker"):
        assert services[name]["build"]["dockerfile"] == "deploy/Dockerfile"
        assert (DEPLOY / services[name]["build"]["context"] / "deploy/Dockerfile").is_file()
        assert services[name]["env_file"][0]["path"] == ".env"


def _dockerfile_instructions() -> list[tuple[str, str]]:
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    instructions = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            instructions.append((keyword.upper(), rest.strip()))
    return instructions


def test_the_dockerfile_copies_only_paths_that_exist_in_the_repository():
    copies = [rest for keyword, rest in _dockerfile_instructions() if keyword in ("COPY", "ADD")]
    assert copies
    for rest in copies:
        args = [a for a in rest.split() if not a.startswith("--")]
        assert not rest.startswith("--from"), rest
        for source in args[:-1]:
            assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
            assert not source.startswith(("..", "/")), source


def test_the_dockerfile_builds_a_non_root_gunicorn_image_with_a_healthcheck():
    instructions = _dockerfile_instructions()
    keywords = [k for k, _ in instructions]
    assert instructions[0] == ("FROM", "python:3.11-slim")
    user = [rest for k, rest in instructions if k == "USER"]
    assert user and user[-1] not in ("root", "0")
    # Running as that user comes after every step that needs root.
    assert keywords.index("USER") > max(i for i, k in enumerate(keywords) if k == "RUN")
    assert "/healthz" in dict(instructions)["HEALTHCHECK"]
    assert "gunicorn" in dict(instructions)["CMD"]
    runs = " ".join(rest for k, rest in instructions if k == "RUN")
    assert "pyproject.toml" in runs
    assert "collectstatic" in runs


def _docker_compose() -> list[str] | None:
    docker = shutil.which("docker")
    if docker is None:
        return None
    if subprocess.run([docker, "info"], capture_output=True, timeout=30).returncode != 0:
        return None  # a client without a running engine
    if subprocess.run([docker, "compose", "version"], capture_output=True).returncode != 0:
        return None
    return [docker, "compose"]


def test_docker_compose_accepts_the_compose_file():
    command = _docker_compose()
    if command is None:
        pytest.skip("docker with a running engine and the compose plugin is not available")
    result = subprocess.run(
        [
            *command,
            "--env-file",
            str(DEPLOY / ".env.example"),
            "-f",
            str(DEPLOY / "compose.yaml"),
            "config",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr


def _gunicorn_config(monkeypatch, *argv: str, **env: str) -> dict:
    # The config sets DB_POOL for ASGI processes: on a copy, never this process's own.
    monkeypatch.setattr(os, "environ", os.environ.copy())
    monkeypatch.setattr(sys, "argv", ["gunicorn", "-c", "deploy/gunicorn.conf.py", *argv])
    names = ("GUNICORN_BIND", "PORT", "WEB_CONCURRENCY", "GUNICORN_THREADS", "LOG_FORMAT")
    for name in (*names, "WEB_INTERFACE", "DB_POOL"):
        os.environ.pop(name, None)
    os.environ.update(env)
    config = runpy.run_path(str(DEPLOY / "gunicorn.conf.py"))
    config["environ"] = dict(os.environ)
    return config


def test_gunicorn_serves_the_asgi_application_unless_the_wsgi_one_is_named(monkeypatch):
    asgi = _gunicorn_config(monkeypatch)
    assert asgi["wsgi_app"] == "config.asgi:application"  # the site and /mcp
    assert asgi["worker_class"] == "apps.ops.asgi_worker.AsgiWorker"
    assert asgi["environ"]["DB_POOL"] == "true"  # connections pooled per process

    for old in (("config.wsgi:application",), ("config.wsgi",)):
        wsgi = _gunicorn_config(monkeypatch, *old)  # the command before ASGI
        assert wsgi["worker_class"] == "gthread"
        assert "DB_POOL" not in wsgi["environ"]
    assert _gunicorn_config(monkeypatch, WEB_INTERFACE="wsgi")["worker_class"] == "gthread"
    with pytest.raises(SystemExit, match="WEB_INTERFACE must be asgi or wsgi"):
        _gunicorn_config(monkeypatch, WEB_INTERFACE="cgi")


def test_gunicorn_is_configured_from_the_environment(monkeypatch):
    defaults = _gunicorn_config(monkeypatch)
    assert defaults["bind"] == "0.0.0.0:8000"
    assert (defaults["workers"], defaults["threads"]) == (2, 4)
    assert defaults["accesslog"] == "-"
    assert "logconfig_dict" not in defaults

    tuned = _gunicorn_config(
        monkeypatch,
        PORT="9000",
        WEB_CONCURRENCY="5",
        GUNICORN_THREADS="8",
        GUNICORN_TIMEOUT="60",
        LOG_FORMAT="json",
    )
    assert tuned["bind"] == "0.0.0.0:9000"
    assert (tuned["workers"], tuned["threads"], tuned["timeout"]) == (5, 8, 60)
    assert "JsonFormatter" in str(tuned["logconfig_dict"]["formatters"])


def test_gunicorn_rejects_a_malformed_number(monkeypatch):
    with pytest.raises(SystemExit, match="WEB_CONCURRENCY must be an integer"):
        _gunicorn_config(monkeypatch, WEB_CONCURRENCY="many")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("app", [[], ["config.wsgi"]], ids=["asgi", "wsgi"])
def test_gunicorn_serves_healthz_with_json_access_logs(tmp_path, app):
    port = _free_port()
    env = {
        **os.environ,
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "WEB_CONCURRENCY": "1",
        "LOG_FORMAT": "json",
    }
    log = tmp_path / "access.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", *app],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.DEVNULL,
        )
        try:
            response = None
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    response = httpx.get(f"http://127.0.0.1:{port}/healthz", trust_env=False)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            assert response is not None and response.status_code == 200
            assert response.json() == {"status": "ok"}
            reset = httpx.get(f"http://127.0.0.1:{port}/reset/abc/s3cret-token/", trust_env=False)
            assert reset.status_code in (200, 302, 404)
            mcp = httpx.post(f"http://127.0.0.1:{port}/mcp", json={}, trust_env=False)
            # ASGI serves the MCP endpoint (no token: 401); WSGI has no /mcp (404).
            assert mcp.status_code == (401 if not app else 404)
        finally:
            server.terminate()
            server.wait(timeout=30)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    access = [e["message"] for e in lines if e["logger"] == "gunicorn.access"]
    assert access and '"GET /healthz HTTP/1.1" 200' in access[0]
    assert re.search(
        r'^127\.0\.0\.1 "GET /healthz HTTP/1\.1" 200 \d+ \d+ms "-" "python-httpx', access[0]
    )
    assert any("/reset/abc/[redacted]" in line for line in access)
    assert not any("s3cret-token" in line for line in access)


def test_the_dockerfiles_collectstatic_step_passes_the_production_key_checks(tmp_path):
    """The build step runs with DEBUG off and no keys given: it draws throwaway ones that
    the startup checks accept (an example value would stop the build)."""
    [step] = [
        rest for k, rest in _dockerfile_instructions() if k == "RUN" and "collectstatic" in rest
    ]
    command = step.split("&&")[0].replace("python ", f"{sys.executable} ")
    assert "change-me" not in command and "AAAAAAAA" not in command
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SECRET_KEY", "ENCRYPTION_KEYS", "DEBUG", "DATABASE_URL")
    }
    env.update(DJANGO_SETTINGS_MODULE="config.settings", VAR_DIR=str(tmp_path))
    result = subprocess.run(
        ["sh", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "static").is_dir()
    assert not (tmp_path / "secrets.json").exists()  # nothing generated, nothing kept


def test_the_k8s_config_gets_https_hardening_from_site_url_alone():
    config = _one("ConfigMap", "socialpost-config")["data"]
    assert config["SITE_URL"].startswith("https://")
    assert config["DEBUG"] == "false"
    # Secure cookies, the redirect and HSTS follow from SITE_URL: not repeated here.
    assert not {k for k in config if k.startswith("SECURE_") and k != "SECURE_PROXY_SSL_HEADER"}
    assert config["SECURE_PROXY_SSL_HEADER"] == "X-Forwarded-Proto"  # TLS ends at the ingress


def test_migrations_run_without_a_statement_timeout_and_the_rest_keep_it():
    job = _one("Job", "socialpost-migrate")["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "DB_STATEMENT_TIMEOUT_S", "value": "0"} in job["env"]
    for name in ("socialpost-web", "socialpost-worker"):
        container = _one("Deployment", name)["spec"]["template"]["spec"]["containers"][0]
        assert "DB_STATEMENT_TIMEOUT_S" not in {e["name"] for e in container.get("env", [])}
    assert _one("ConfigMap", "socialpost-config")["data"]["DB_STATEMENT_TIMEOUT_S"] == "30"
    services = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    assert services["migrate"]["environment"]["DB_STATEMENT_TIMEOUT_S"] == "0"
    assert "DB_STATEMENT_TIMEOUT_S" not in services["web"]["environment"]
    # The migrate service keeps the shared settings it overrides one of.
    assert services["migrate"]["environment"]["SECRET_KEY"].startswith("${SECRET_KEY:?")


def test_gunicorn_logs_through_the_redacting_logger(monkeypatch):
    config = _gunicorn_config(monkeypatch)
    assert config["logger_class"] == "apps.ops.access_log.RedactingLogger"
