"""Failures: the API's code and message on stderr, and one exit code per kind."""

import json
import socket

from tests.factories import PublicationFactory


def test_a_bad_token_exits_3_with_the_code(cli):
    result = cli("accounts", token="sp_unknown-token-value")

    assert result.code == 3
    assert result.err.startswith("error: INVALID_TOKEN: ")
    assert result.out == ""


def test_a_missing_scope_exits_3(cli, make_token, workspace_a, sandy):
    read_only = make_token(workspace_a, scopes=["read"]).clear

    result = cli("schedule", "Hi", "--to", "@sandy", token=read_only)

    assert result.code == 3
    assert "INSUFFICIENT_SCOPE" in result.err


def test_an_unknown_id_exits_4(cli):
    result = cli("show", "999999999")

    assert result.code == 4
    assert "NOT_FOUND" in result.err


def test_another_workspaces_publication_is_not_found(cli, workspace_b):
    theirs = PublicationFactory(workspace=workspace_b)

    assert cli("show", str(theirs.pk)).code == 4
    assert cli("cancel", str(theirs.pk)).code == 4


def test_an_unknown_handle_exits_4(cli, sandy):
    result = cli("schedule", "Hi", "--to", "@nobody")

    assert result.code == 4
    assert "UNKNOWN_DESTINATION" in result.err


def test_a_reused_reference_key_exits_5_with_the_envelope_in_json(cli, sandy):
    first = cli("compose", "One", "--to", "@sandy", "--reference-key", "launch")
    assert first.code == 0, first.err

    second = cli("compose", "Two", "--to", "@sandy", "--reference-key", "launch", "--json")

    assert second.code == 5
    assert "REFERENCE_KEY_EXISTS" in second.err
    assert json.loads(second.out)["error"]["code"] == "REFERENCE_KEY_EXISTS"


def test_a_repeated_idempotency_key_replays_instead_of_creating_twice(cli, sandy):
    args = ("compose", "Once", "--to", "@sandy", "--idempotency-key", "run-42", "--json")
    first = json.loads(cli(*args).out)
    again = cli(*args)

    assert again.code == 0, again.err
    assert json.loads(again.out)["id"] == first["id"]
    assert json.loads(again.out)["replayed"] is True


def test_a_validation_error_exits_6_with_field_paths(cli):
    result = cli("compose", "Hi", "--at", "2020-01-01T00:00:00Z")

    assert result.code == 6
    assert "SCHEDULE_IN_PAST" in result.err


def test_usage_errors_exit_2(cli, tmp_path):
    assert cli("show", "not-a-number").code == 2
    assert cli("resolve", "1").code == 2  # needs --published, --failed or --retry
    orphan_alt = cli("compose", "Hi", "--alt", "no media")
    assert orphan_alt.code == 2
    assert "--alt" in orphan_alt.err


def test_an_unreachable_server_exits_8(cli, token_a):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]

    result = cli("accounts", SOCIALPOST_URL=f"http://127.0.0.1:{port}")

    assert result.code == 8
    assert "NETWORK_ERROR" in result.err
