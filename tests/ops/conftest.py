import pytest

from apps.ops.services import maintenance_cache_clear


@pytest.fixture(autouse=True)
def _fresh_maintenance_cache():
    """The switch is cached per process: never let one test's reading leak into the next."""
    maintenance_cache_clear()
    yield
    maintenance_cache_clear()
