"""The domain apps never import the webhooks app: they emit events, and it subscribes."""

import ast
from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parents[2] / "apps"
DOMAIN_APPS = ["accounts", "publications", "renditions", "series"]


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


@pytest.mark.parametrize("app", DOMAIN_APPS)
def test_a_domain_app_does_not_import_webhooks(app):
    files = sorted((APPS / app).rglob("*.py"))
    assert files
    offending = {
        str(path.relative_to(APPS)): sorted(
            m
            for m in imported_modules(path)
            if m == "apps.webhooks" or m.startswith("apps.webhooks.")
        )
        for path in files
    }
    assert {path: mods for path, mods in offending.items() if mods} == {}


def test_the_import_walk_sees_a_webhooks_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from apps import webhooks\n    import apps.webhooks.events\n")
    assert {"apps.webhooks", "apps.webhooks.events"} <= imported_modules(sample)
