"""`socialpost`: argument parsing, one handler per command, and error reporting.

Every handler returns the API's JSON (printed as is with ``--json``) and a function that
prints it for people. Failures are CliErrors: their code and message go to stderr and
their exit code is the process's (see ``socialpost_cli.client``).
"""

from __future__ import annotations

import argparse
import getpass
import os
import socket
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from socialpost_cli import __version__, config
from socialpost_cli.client import (
    EXIT_AUTH,
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_VALIDATION,
    ApiError,
    Client,
    CliError,
)
from socialpost_cli.compose import (
    build_body,
    check_media,
    read_segments,
    resolve_destinations,
    upload_media,
    usage,
)
from socialpost_cli.output import EMPTY, handle, print_json, shorten, table, when

Printer = Callable[[Any], None]
Result = tuple[Any, Printer, int]  # (API JSON, human printer, exit code)

EPILOG = """\
exit codes: 0 ok, 2 usage, 3 auth (401/403), 4 not found, 5 conflict (409),
6 validation (400/413/415, or problems found), 7 rate limited (429), 8 server or network.
Credentials: `socialpost login`, or SOCIALPOST_URL and SOCIALPOST_TOKEN in the environment."""


# --- plumbing -------------------------------------------------------------------------------


def connect() -> Client:
    try:
        creds = config.credentials()
    except ValueError as exc:  # a malformed SOCIALPOST_URL or stored URL
        raise usage(str(exc)) from exc
    if creds is None:
        raise CliError(
            "NOT_LOGGED_IN",
            "Not logged in: run `socialpost login --url URL --token TOKEN`, "
            f"or set {config.ENV_URL} and {config.ENV_TOKEN}.",
            exit_code=EXIT_AUTH,
        )
    return Client(url=creds.url, token=creds.token)


def _idempotency_key(args: argparse.Namespace) -> str:
    """One key per invocation: every POST it makes is safe to resend."""
    key = args.idempotency_key or uuid.uuid4().hex
    if not (0 < len(key) <= 200 and all(" " <= c <= "~" for c in key)):
        raise usage("--idempotency-key takes 1 to 200 printable ASCII characters.")
    return key


# --- printers -------------------------------------------------------------------------------


def _rendition_status(rendition: dict) -> str:
    status = rendition["status"]
    return f"{status} (ambiguous)" if rendition.get("ambiguous") else status


def _rendition_when(rendition: dict) -> str:
    if rendition.get("published_at"):
        return when(rendition["published_at"])
    if rendition["status"] == "failed" and rendition.get("next_retry_at"):
        return "retry " + when(rendition["next_retry_at"])
    return when(rendition.get("scheduled_at"))


def _current_error(rendition: dict) -> dict:
    """The error, while it is the current state (a retried destination keeps its last
    error on record, but it no longer describes the destination)."""
    return (rendition.get("error") or {}) if rendition["status"] == "failed" else {}


def _rendition_row(rendition: dict) -> list:
    error = _current_error(rendition)
    action = error.get("action") or ("resolve" if rendition.get("ambiguous") else None)
    return [
        rendition["id"],
        handle(rendition.get("account_handle")),
        rendition["platform"],
        _rendition_status(rendition),
        rendition.get("attempts", 0),
        _rendition_when(rendition),
        error.get("kind"),
        action,
        rendition.get("provider_url"),
    ]


RENDITION_HEADERS = [
    "RENDITION",
    "DESTINATION",
    "PLATFORM",
    "STATUS",
    "ATTEMPTS",
    "WHEN",
    "ERROR",
    "ACTION",
    "URL",
]


def _error_lines(renditions: list[dict]) -> list[str]:
    lines = []
    for rendition in renditions:
        error = _current_error(rendition)
        if not error:
            continue
        facts = [f"HTTP {error['http_status']}" if error.get("http_status") else None]
        facts.append(f"code {error['code']}" if error.get("code") else None)
        facts.append("retryable" if error.get("retryable") else None)
        facts_text = ", ".join(f for f in facts if f)
        line = f"  {rendition['id']} {handle(rendition.get('account_handle'))}: {error['kind']}"
        line += f" ({facts_text})" if facts_text else ""
        line += f": {error['message']}" if error.get("message") else ""
        lines.append(line)
    return lines


def print_publication(publication: dict, heading: str = "") -> None:
    if heading:
        print(heading)
    print(
        f"Publication {publication['id']}: {publication['status']} "
        f"(revision {publication['revision']})"
    )
    zone = f" ({publication['timezone']})" if publication.get("scheduled_at") else ""
    print(f"  scheduled:  {when(publication.get('scheduled_at'))}{zone}")
    if publication.get("reference_key"):
        print(f"  reference:  {publication['reference_key']}")
    segments = publication.get("segments") or []
    for segment in segments:
        media = len(segment.get("media") or [])
        extra = f"  [+{media} media]" if media else ""
        label = "text:" if len(segments) == 1 else f"segment {segment['position'] + 1}:"
        print(f"  {label:<11} {shorten(segment.get('text'), 60) or EMPTY}{extra}")
    renditions = publication.get("renditions") or []
    print()
    if not renditions:
        print("No destinations.")
        return
    print(table(RENDITION_HEADERS, [_rendition_row(r) for r in renditions]))
    errors = _error_lines(renditions)
    if errors:
        print()
        print("Errors:")
        print("\n".join(errors))


def _created(data: dict) -> Printer:
    heading = "Replayed: this request was already made." if data.get("replayed") else ""
    return lambda pub: print_publication(pub, heading)


# --- commands -------------------------------------------------------------------------------


def _browser_login(url: str) -> str:
    """A token confirmed in the browser: start a login, show its code and link (on stderr,
    so --json keeps stdout clean), and poll until a person confirms it there."""
    with Client(url=url, token="") as anonymous:
        anonymous.http.headers.pop("Authorization", None)  # these calls come before a token
        started = anonymous.request(
            "POST", "cli/login", json={"client_name": socket.gethostname()[:60]}
        )
        print(
            f"Open {started['verification_url_complete']}\n"
            f"and confirm the code {started['user_code']} "
            f"(within {max(1, started['expires_in'] // 60)} minutes). Waiting...",
            file=sys.stderr,
            flush=True,
        )
        deadline = time.monotonic() + started["expires_in"]
        while True:
            time.sleep(started["interval"])
            try:
                issued = anonymous.request(
                    "POST", "cli/login/token", json={"device_code": started["device_code"]}
                )
            except ApiError as exc:
                if exc.code == "AUTHORIZATION_PENDING" and time.monotonic() < deadline:
                    continue
                raise
            return str(issued["token"])


def cmd_login(args: argparse.Namespace) -> Result:
    url = args.url or os.environ.get(config.ENV_URL)
    if not url:
        raise usage(f"Give --url (or set {config.ENV_URL}).")
    try:
        url = config.normalize_url(url)
    except ValueError as exc:
        raise usage(str(exc)) from exc
    token = args.token or os.environ.get(config.ENV_TOKEN)
    if args.browser:
        if args.token:
            raise usage("Give --browser or --token, not both.")
        token = _browser_login(url)
    elif token == "-" or (token is None and not sys.stdin.isatty()):
        token = sys.stdin.readline()
    elif token is None:
        token = getpass.getpass("API token: ")
    token = token.strip()
    if not token:
        raise usage("No token given.")
    with Client(url=url, token=token) as client:
        me = client.get("me")  # refuses a bad token before anything is stored
    path = config.save(url=url, token=token)

    def human(me: dict) -> None:
        ws, tok = me["workspace"], me["token"]
        print(f"Logged in to {url}: workspace {ws['name']} ({ws['slug']}).")
        print(f"Token {tok['name']} ({tok['prefix']}...), scopes: {', '.join(tok['scopes'])}.")
        print(f"Saved to {path} (readable by you only).")

    return me, human, EXIT_OK


def cmd_logout(args: argparse.Namespace) -> Result:
    path = config.config_path()
    removed = config.remove()

    def human(data: dict) -> None:
        if removed:
            print(f"Logged out: removed {path}. The token itself is still valid until revoked.")
        else:
            print("Not logged in: nothing to remove.")
        if os.environ.get(config.ENV_TOKEN):
            print(f"{config.ENV_TOKEN} is still set in this environment.")

    return {"logged_out": removed, "config": str(path)}, human, EXIT_OK


def cmd_whoami(args: argparse.Namespace) -> Result:
    with connect() as client:
        me = client.get("me")
        url = client.url

    def human(me: dict) -> None:
        ws, tok = me["workspace"], me["token"]
        print(f"url:        {url}")
        print(f"workspace:  {ws['name']} ({ws['slug']}), organization {ws['organization']}")
        print(f"time zone:  {ws['timezone']}")
        print(f"token:      {tok['name']} ({tok['prefix']}...)")
        print(f"scopes:     {', '.join(tok['scopes'])}")

    return me, human, EXIT_OK


def cmd_accounts(args: argparse.Namespace) -> Result:
    with connect() as client:
        page = client.collect("accounts")

    def human(page: dict) -> None:
        rows = [
            [a["id"], a["platform"], handle(a["handle"]), a["status"], a.get("display_name")]
            for a in page["results"]
        ]
        if not rows:
            print("No accounts: connect one in the web app.")
            return
        print(table(["ID", "PLATFORM", "HANDLE", "STATUS", "NAME"], rows))

    return page, human, EXIT_OK


def _compose(args: argparse.Namespace, *, scheduled: bool, path: str) -> Any:
    """Read the inputs, resolve destinations, upload media, then POST the body to path."""
    segments = read_segments(args)
    media = check_media(args)
    key = _idempotency_key(args)
    with connect() as client:
        account_ids = resolve_destinations(client, args.to or [])
        assets = upload_media(client, media, key)
        body = build_body(
            args,
            segments=segments,
            account_ids=account_ids,
            media_ids=[asset["id"] for asset in assets],
            scheduled=scheduled,
        )
        return client.post(path, key=key, json=body)


def cmd_compose(args: argparse.Namespace) -> Result:
    publication = _compose(args, scheduled=False, path="publications")
    return publication, _created(publication), EXIT_OK


def cmd_schedule(args: argparse.Namespace) -> Result:
    publication = _compose(args, scheduled=not args.draft, path="publications")
    return publication, _created(publication), EXIT_OK


def cmd_validate(args: argparse.Namespace) -> Result:
    report = _compose(args, scheduled=not args.draft, path="publications/validate")

    def human(report: dict) -> None:
        if report["valid"]:
            print("Valid: no problems found.")
            return
        problems = report["problems"]
        print(f"{len(problems)} problem{'s' if len(problems) != 1 else ''}:")
        rows = [
            [p.get("path") or EMPTY, p["code"], p["message"], p.get("limit"), p.get("actual")]
            for p in problems
        ]
        print(table(["PATH", "CODE", "MESSAGE", "LIMIT", "ACTUAL"], rows))

    return report, human, EXIT_OK if report["valid"] else EXIT_VALIDATION


def cmd_list(args: argparse.Namespace) -> Result:
    statuses = ",".join(s for value in args.status or [] for s in value.split(",") if s)
    with connect() as client:
        page = client.collect(
            "publications",
            limit=None if args.all else args.limit,
            status=statuses or None,
            scheduled_after=args.after,
            scheduled_before=args.before,
            reference_key=args.reference_key,
        )

    def human(page: dict) -> None:
        rows = []
        for pub in page["results"]:
            segments = pub.get("segments") or []
            destinations = " ".join(
                f"{handle(r.get('account_handle'))}:{_rendition_status(r)}"
                for r in pub.get("renditions") or []
            )
            text = shorten(segments[0]["text"] if segments else "", 40)
            scheduled = when(pub.get("scheduled_at"))
            rows.append([pub["id"], pub["status"], scheduled, text, destinations])
        if not rows:
            print("No publications match.")
            return
        print(table(["ID", "STATUS", "SCHEDULED", "TEXT", "DESTINATIONS"], rows))
        if page.get("next"):
            print("(more: raise --limit, or use --all)")

    return page, human, EXIT_OK


def cmd_show(args: argparse.Namespace) -> Result:
    with connect() as client:
        publication = client.get(f"publications/{args.id}")
    return publication, print_publication, EXIT_OK


def cmd_retry(args: argparse.Namespace) -> Result:
    key = _idempotency_key(args)
    with connect() as client:
        publication = client.post(f"publications/{args.id}/retry", key=key)
    heading = "Retrying the failed destinations."
    return publication, lambda pub: print_publication(pub, heading), EXIT_OK


def cmd_cancel(args: argparse.Namespace) -> Result:
    with connect() as client:
        publication = client.delete(f"publications/{args.id}")
    heading = "Cancelled what had not gone out (published destinations stay on their platforms)."
    return publication, lambda pub: print_publication(pub, heading), EXIT_OK


def cmd_resolve(args: argparse.Namespace) -> Result:
    if args.published is not None:
        body = {"outcome": "published"}
        field = "provider_url" if "://" in args.published else "provider_post_id"
        body[field] = args.published
    else:
        body = {"outcome": "failed" if args.failed else "retry"}
    key = _idempotency_key(args)
    with connect() as client:
        rendition = client.post(f"renditions/{args.id}/resolve", key=key, json=body)

    def human(rendition: dict) -> None:
        print(f"Resolved rendition {rendition['id']} as {body['outcome']}.")
        print(table(RENDITION_HEADERS, [_rendition_row(rendition)]))

    return rendition, human, EXIT_OK


# --- parser ---------------------------------------------------------------------------------


def _positive_int(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not an id (a positive whole number)")
    return int(value)


def _content_arguments(parser: argparse.ArgumentParser) -> None:
    text = parser.add_argument_group("text")
    text.add_argument("text", nargs="?", help='the text ("-" reads standard input)')
    text.add_argument("--file", metavar="PATH", help='read the text from a file ("-": stdin)')
    text.add_argument(
        "--segment", action="append", metavar="TEXT", help="one post of a thread (repeat)"
    )
    text.add_argument(
        "--thread", action="store_true", help="split the text into a thread on the separator"
    )
    text.add_argument(
        "--separator",
        metavar="LINE",
        help='with --thread: a line holding only this ends a segment (default "---")',
    )
    media = parser.add_argument_group("media")
    media.add_argument("--media", action="append", metavar="PATH", help="a file to attach (repeat)")
    media.add_argument(
        "--alt", action="append", metavar="TEXT", help="alt text of the --media at its position"
    )
    where = parser.add_argument_group("destinations and time")
    where.add_argument(
        "--to",
        action="append",
        metavar="DEST",
        help="@handle, platform:handle or account id (repeat)",
    )
    at = where.add_mutually_exclusive_group()
    at.add_argument("--at", metavar="ISO", help="an instant with offset: 2027-03-28T09:00+02:00")
    at.add_argument("--local-time", metavar="LOCAL", help="a wall-clock time: 2027-03-28T09:00")
    where.add_argument("--timezone", metavar="ZONE", help="IANA zone of --local-time")
    parser.add_argument("--reference-key", metavar="KEY", help="your own unique key")
    parser.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help="re-use a key to make re-running this command safe (default: a new one)",
    )


def build_parser() -> argparse.ArgumentParser:
    json_flag = argparse.ArgumentParser(add_help=False)
    json_flag.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print the API's JSON instead of tables",
    )
    parser = argparse.ArgumentParser(
        prog="socialpost",
        description="Compose, schedule and follow social posts through the publishing API.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--json", action="store_true", help="print the API's JSON")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, handler: Callable, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[json_flag], help=help, description=help)
        p.set_defaults(handler=handler)
        return p

    p = command("login", cmd_login, "check a token and store it with the site's URL")
    p.add_argument("--url", help=f"the site, e.g. https://post.example.com ({config.ENV_URL})")
    p.add_argument("--token", help=f'the API token ("-": read stdin; {config.ENV_TOKEN})')
    p.add_argument(
        "--browser",
        action="store_true",
        help="get a new token by confirming a code in the browser, signed in to the site",
    )
    command("logout", cmd_logout, "forget the stored URL and token")
    command("whoami", cmd_whoami, "the token's workspace and scopes")
    command("accounts", cmd_accounts, "the workspace's destination accounts")

    p = command("compose", cmd_compose, "create a draft publication")
    _content_arguments(p)
    p = command("schedule", cmd_schedule, "create a scheduled publication (publish scope)")
    _content_arguments(p)
    p.add_argument("--draft", action="store_true", help="keep it a draft")
    p = command("validate", cmd_validate, "check a publication without creating it")
    _content_arguments(p)
    p.add_argument("--draft", action="store_true", help="check it as a draft (no scheduling)")

    p = command("list", cmd_list, "publications, newest first")
    p.add_argument("--status", action="append", help="e.g. scheduled,failed (repeat)")
    p.add_argument("--after", metavar="ISO", help="scheduled at or after this instant")
    p.add_argument("--before", metavar="ISO", help="scheduled before this instant")
    p.add_argument("--reference-key", metavar="KEY")
    p.add_argument("--limit", type=_positive_int, default=20, help="rows to show (default 20)")
    p.add_argument("--all", action="store_true", help="every matching row")

    p = command("show", cmd_show, "a publication and each destination's status")
    p.add_argument("id", type=_positive_int, metavar="ID")
    p = command("retry", cmd_retry, "send the failed destinations again (publish scope)")
    p.add_argument("id", type=_positive_int, metavar="ID")
    p.add_argument("--idempotency-key", metavar="KEY")
    p = command("cancel", cmd_cancel, "cancel the destinations that have not gone out")
    p.add_argument("id", type=_positive_int, metavar="ID")
    p = command("resolve", cmd_resolve, "settle an ambiguous destination (publish scope)")
    p.add_argument("id", type=_positive_int, metavar="RENDITION_ID")
    outcome = p.add_mutually_exclusive_group(required=True)
    outcome.add_argument("--published", metavar="URL", help="the post exists: its URL (or its id)")
    outcome.add_argument("--failed", action="store_true", help="there is no post; leave it failed")
    outcome.add_argument("--retry", action="store_true", help="there is no post; send it again")
    p.add_argument("--idempotency-key", metavar="KEY")
    return parser


# --- entry point ----------------------------------------------------------------------------


def _report(exc: CliError, as_json: bool) -> None:
    print(f"error: {exc.code}: {exc.message}", file=sys.stderr)
    for field, messages in exc.details.items():
        if isinstance(messages, list):
            for message in messages:
                print(f"  {field}: {message}", file=sys.stderr)
        elif field == "retry_after_s":
            print(f"  retry after {messages} s", file=sys.stderr)
    if as_json:
        body = exc.body or {
            "error": {"code": exc.code, "message": exc.message, "details": exc.details}
        }
        print_json(body)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    as_json = bool(getattr(args, "json", False))
    try:
        data, human, code = args.handler(args)
        if as_json:
            print_json(data)
        else:
            human(data)
        return code
    except CliError as exc:
        _report(exc, as_json)
        return exc.exit_code
    except config.ConfigError as exc:
        _report(CliError("CONFIG_ERROR", str(exc), exit_code=EXIT_FAILURE), as_json)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `socialpost list | head`
        sys.stderr.close()
        return EXIT_OK
