"""Import boundaries, read from the source with `ast`: the product never depends on the load
harnesses, and ops never depends on the API."""

import ast
from pathlib import Path

from django.conf import settings

APPS = Path(settings.BASE_DIR) / "apps"

# The operator commands that run a harness: the one way from the product into loadtest.
HARNESS_COMMANDS = {
    APPS / "ops" / "management" / "commands" / "soak.py",
    APPS / "ops" / "management" / "commands" / "bench_api.py",
    APPS / "ops" / "management" / "commands" / "bench_pages.py",
    APPS / "jobs" / "management" / "commands" / "bench_queue.py",
}


def _imported(path: Path) -> set[str]:
    """Every absolute module name `path` imports (`from a import b` counts `a` and `a.b`)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _imports_package(path: Path, package: str) -> bool:
    return any(name == package or name.startswith(f"{package}.") for name in _imported(path))


def test_no_production_module_imports_loadtest():
    offenders = [
        str(path.relative_to(APPS.parent))
        for path in sorted(APPS.rglob("*.py"))
        if path not in HARNESS_COMMANDS and _imports_package(path, "loadtest")
    ]

    assert offenders == []


def test_the_harness_commands_run_loadtest():
    # The exemption above names real modules that do import the harnesses.
    assert all(_imports_package(path, "loadtest") for path in HARNESS_COMMANDS)


def test_ops_never_imports_the_api():
    offenders = [
        str(path.relative_to(APPS.parent))
        for path in sorted((APPS / "ops").rglob("*.py"))
        if _imports_package(path, "apps.api")
    ]

    assert offenders == []
