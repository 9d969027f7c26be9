"""Which platform fakes exist: every module of this package that defines `FAKE`."""

from __future__ import annotations

import importlib
import pkgutil

import loadtest.platform_fakes as package
from loadtest.platform_fakes.base import PlatformFake

# The framework's own modules, never a platform.
FRAMEWORK = frozenset({"base", "faults", "server", "registry"})


def discover() -> tuple[dict[str, type[PlatformFake]], dict[str, str]]:
    """(platform -> fake class, module -> why it was not usable). A module that fails to
    import or whose FAKE is not a PlatformFake is reported, not skipped silently."""
    found: dict[str, type[PlatformFake]] = {}
    problems: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name in FRAMEWORK or info.name.startswith("_") or info.ispkg:
            continue
        try:
            module = importlib.import_module(f"{package.__name__}.{info.name}")
        except Exception as exc:  # noqa: BLE001 - a half-written fake must not hide the others
            problems[info.name] = f"import failed: {type(exc).__name__}: {exc}"
            continue
        fake = getattr(module, "FAKE", None)
        if fake is None:
            continue  # a helper module of the fakes, not a platform
        if not (isinstance(fake, type) and issubclass(fake, PlatformFake) and fake.platform):
            problems[info.name] = "FAKE is not a PlatformFake subclass naming its platform"
            continue
        found[fake.platform] = fake
    return found, problems


def available() -> dict[str, type[PlatformFake]]:
    """Platform name -> fake class, for every fake module that imports cleanly."""
    return discover()[0]
