"""Turning `compose`/`schedule`/`validate` arguments into a POST /publications body.

The CLI adds no rules of its own: it reads the text, uploads the media, turns handles into
account ids and passes the time as given. Limits, time rules and platform checks are the
API's, and its answers are what the user sees.
"""

from __future__ import annotations

import argparse
import mimetypes
import re
import sys
from pathlib import Path

from socialpost_cli.client import EXIT_NOT_FOUND, EXIT_USAGE, Client, CliError

# --thread: a line holding only the separator ("---" unless --separator says) ends a segment.
DEFAULT_SEPARATOR = re.compile(r"^[ \t]*---[ \t]*$", re.MULTILINE)


def usage(message: str) -> CliError:
    return CliError("USAGE", message, exit_code=EXIT_USAGE)


def _read(source: str) -> str:
    """The contents of a file, or of standard input for "-"."""
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise usage(f"No such file: {source}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise usage(f"Cannot read {source} as UTF-8 text: {exc}") from exc


def read_segments(args: argparse.Namespace) -> list[str]:
    """The texts of the segments, in thread order (empty: no text given)."""
    sources = [args.text is not None, args.file is not None, bool(args.segment)]
    if sum(sources) > 1:
        raise usage("Give the text once: as an argument, with --file, or with --segment.")
    if args.segment:
        if args.thread:
            raise usage("--thread splits one text; --segment already gives each segment.")
        return list(args.segment)
    if args.file is not None:
        text = _read(args.file).rstrip()
    elif args.text == "-":
        text = _read("-").rstrip()
    elif args.text is not None:
        text = args.text
    else:
        return []
    if not args.thread:
        return [text]
    separator = DEFAULT_SEPARATOR
    if args.separator:
        separator = re.compile(rf"^[ \t]*{re.escape(args.separator)}[ \t]*$", re.MULTILINE)
    parts = separator.split(text)
    return [part.strip() for part in parts if part.strip()]


def _normal(handle: str) -> str:
    return handle[1:].lower() if handle.startswith("@") else handle.lower()


def resolve_destinations(client: Client, targets: list[str]) -> list[int]:
    """Account ids for ``--to`` values: ``@handle``, ``platform:handle`` or an id."""
    if not targets:
        return []
    accounts = client.collect("accounts")["results"]
    ids: list[int] = []
    for target in targets:
        if target.isdigit():
            matches = [a for a in accounts if a["id"] == int(target)]
        else:
            platform, _, name = target.partition(":") if ":" in target else ("", "", target)
            matches = [
                a
                for a in accounts
                if _normal(a["handle"]) == _normal(name)
                and (not platform or a["platform"] == platform)
            ]
        if not matches:
            raise CliError(
                "UNKNOWN_DESTINATION",
                f"No account matches {target!r}; `socialpost accounts` lists them.",
                exit_code=EXIT_NOT_FOUND,
            )
        if len(matches) > 1:
            names = ", ".join(f"{a['platform']}:{a['handle']} (id {a['id']})" for a in matches)
            raise usage(f"{target!r} matches several accounts: {names}. Name one of them.")
        if matches[0]["id"] not in ids:
            ids.append(matches[0]["id"])
    return ids


def check_media(args: argparse.Namespace) -> list[tuple[Path, str | None]]:
    """(path, alt text) per --media, in order; --alt values pair with --media by position."""
    paths = [Path(p) for p in args.media or []]
    alts = list(args.alt or [])
    if len(alts) > len(paths):
        raise usage("More --alt than --media: each --alt describes the --media in its position.")
    for path in paths:
        if not path.is_file():
            raise usage(f"No such file: {path}")
    return [(path, alts[i] if i < len(alts) else None) for i, path in enumerate(paths)]


def upload_media(client: Client, media: list[tuple[Path, str | None]], key: str) -> list[dict]:
    """POST /media for each file; each upload has its own key derived from the command's,
    so re-running the command with the same --idempotency-key uploads nothing twice."""
    uploaded = []
    for i, (path, alt) in enumerate(media):
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        with path.open("rb") as handle:
            asset = client.post(
                "media",
                key=f"{key}-media-{i}",
                files={"file": (path.name, handle, mime)},
                data={"alt_text": alt} if alt is not None else {},
            )
        uploaded.append(asset)
    return uploaded


def build_body(
    args: argparse.Namespace,
    *,
    segments: list[str],
    account_ids: list[int],
    media_ids: list[int],
    scheduled: bool,
) -> dict:
    """The POST /publications (or /publications/validate) body."""
    body: dict = {"segments": [{"text": text} for text in segments]}
    if media_ids:
        if not body["segments"]:
            body["segments"].append({"text": ""})
        body["segments"][0]["media"] = [{"id": media_id} for media_id in media_ids]
    body["destinations"] = [{"account": account_id} for account_id in account_ids]
    body["status"] = "scheduled" if scheduled else "draft"
    if args.at:
        body["scheduled_at"] = args.at
    if args.local_time:
        body["local_time"] = args.local_time
    if args.timezone:
        body["timezone"] = args.timezone
    if args.reference_key is not None:
        body["reference_key"] = args.reference_key
    return body
