"""Imports every platform's adapter module, `apps.providers.<platform>.adapter`, so each
registers itself: adding a platform is adding a package with an adapter.py."""

import importlib
import pkgutil
from pathlib import Path

import apps.providers


def adapter_modules() -> list[str]:
    """Every `<package>.adapter` under apps/providers. Each folder is asked separately:
    a folder without __init__.py is a namespace package, which pkgutil does not list
    among the package's children."""
    names = []
    for root in apps.providers.__path__:
        for folder in sorted(Path(root).iterdir()):
            if not folder.is_dir() or folder.name.startswith(("_", ".")):
                continue
            if any(module.name == "adapter" for module in pkgutil.iter_modules([str(folder)])):
                names.append(f"{apps.providers.__name__}.{folder.name}.adapter")
    return names


for _name in adapter_modules():
    importlib.import_module(_name)
