"""Where the CLI keeps its URL and token: ``$XDG_CONFIG_HOME/socialpost/config.json``
(``~/.config/socialpost/config.json`` by default), readable by its owner only.

``SOCIALPOST_URL`` and ``SOCIALPOST_TOKEN`` override the stored values one by one, so a
script or CI job can run without a login and without writing a file.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

ENV_URL = "SOCIALPOST_URL"
ENV_TOKEN = "SOCIALPOST_TOKEN"
API_SUFFIX = "/api/v1"


class ConfigError(Exception):
    """The stored configuration cannot be read or written."""


@dataclass(frozen=True)
class Credentials:
    url: str
    token: str


def config_path() -> Path:
    """The config file; XDG_CONFIG_HOME counts only when it is an absolute path (XDG spec)."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".config"
    return root / "socialpost" / "config.json"


def normalize_url(url: str) -> str:
    """The site's base URL: scheme and host, no trailing slash, no /api/v1 suffix."""
    url = url.strip().rstrip("/")
    if url.endswith(API_SUFFIX):
        url = url[: -len(API_SUFFIX)]
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{url!r} is not an http(s) URL, e.g. https://post.example.com")
    return url


def load() -> dict:
    """The stored values, or {} when nothing is stored."""
    path = config_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror}") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON; run `socialpost login` again.") from exc
    return data if isinstance(data, dict) else {}


def save(*, url: str, token: str) -> Path:
    """Store url and token, replacing the file atomically. The file is created 0600 (the
    token never exists on disk with wider permissions) in a 0700 directory."""
    path = config_path()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".config-", dir=path.parent)  # mkstemp: mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"url": url, "token": token}, out, indent=2)
                out.write("\n")
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise ConfigError(f"Cannot write {path}: {exc.strerror}") from exc
    return path


def remove() -> bool:
    """Delete the stored values; False when there were none."""
    try:
        config_path().unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise ConfigError(f"Cannot remove {config_path()}: {exc.strerror}") from exc
    return True


def credentials() -> Credentials | None:
    """URL and token from the environment, else from the config file; None if either is
    missing."""
    stored = load()
    url = os.environ.get(ENV_URL) or stored.get("url") or ""
    token = os.environ.get(ENV_TOKEN) or stored.get("token") or ""
    if not url or not token:
        return None
    return Credentials(url=normalize_url(url), token=token.strip())
