"""App boundaries, read from the source with `ast`: the domain apps never import the
webhooks app (they emit events, and it subscribes); publications never reach up into
renditions, and neither reaches up into publishing, the flow across both."""

import ast
from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parents[2] / "apps"
DOMAIN_APPS = ["accounts", "publications", "renditions", "publishing", "series"]

# app -> the apps above it that it must never import.
NEVER_IMPORTS = {
    "publications": ["apps.renditions", "apps.publishing"],
    "renditions": ["apps.publishing"],
}


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


def _offending(root: Path, forbidden: list[str]) -> dict[str, list[str]]:
    """Files under root that import a forbidden package (or one of its modules)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        mods = sorted(
            m
            for m in imported_modules(path)
            if any(m == name or m.startswith(f"{name}.") for name in forbidden)
        )
        if mods:
            found[str(path.relative_to(root.parent))] = mods
    return found


@pytest.mark.parametrize("app", sorted(NEVER_IMPORTS))
def test_a_lower_app_does_not_import_the_apps_above_it(app):
    assert list((APPS / app).rglob("*.py"))
    assert _offending(APPS / app, NEVER_IMPORTS[app]) == {}


def test_the_boundary_walk_sees_an_import_upwards(tmp_path):
    app = tmp_path / "publications"
    (app / "services").mkdir(parents=True)
    (app / "services" / "write.py").write_text(
        "from apps.publishing.delivery import enqueue\n"
        "def f():\n    from apps.renditions.models import Rendition\n"
    )
    (app / "rules.py").write_text("from apps.publications.models import Publication\n")
    assert _offending(app, NEVER_IMPORTS["publications"]) == {
        "publications/services/write.py": [
            "apps.publishing.delivery",
            "apps.publishing.delivery.enqueue",
            "apps.renditions.models",
            "apps.renditions.models.Rendition",
        ]
    }


def test_the_import_walk_sees_a_webhooks_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from apps import webhooks\n    import apps.webhooks.events\n")
    assert {"apps.webhooks", "apps.webhooks.events"} <= imported_modules(sample)
