"""The capability catalog says what each adapter builds, no more and no less.

Validation, the composer and the API's /capabilities all trust the catalog, so a kind of
media, a count, a setting, threads or alt text it advertises must exist in the adapter's
publish code (declared as the adapter's `implements`), and what the adapter builds must not
be hidden from them.
"""

import ast
import inspect
from pathlib import Path

import pytest

from apps.providers.base import Implements, SupportsDelete, SupportsFirstComment, get_adapter
from apps.providers.catalog import (
    GIF,
    IMAGE,
    VIDEO,
    PlatformCapabilities,
    get_capabilities,
    platforms,
)


def _mismatches(caps: PlatformCapabilities, built: Implements) -> list[str]:
    found = []

    def differ(what: str, catalog: object, adapter: object) -> None:
        if catalog != adapter:
            found.append(f"{what}: the catalog says {catalog!r}, the adapter builds {adapter!r}")

    for kind in sorted(caps.accepts_media - built.media_kinds):
        found.append(f"the catalog advertises {kind} media, which the adapter does not build")
    for kind in sorted(built.media_kinds - caps.accepts_media):
        found.append(f"the adapter builds {kind} media, which the catalog hides")
    kinds = caps.accepts_media | built.media_kinds
    if IMAGE in kinds:
        differ("max images", caps.max_images, built.max_images)
    if VIDEO in kinds:
        differ("max videos", caps.max_videos, built.max_videos)
    if GIF in kinds and caps.gif_counts_as == GIF:
        differ("max GIFs", caps.max_gifs, built.max_gifs)
    elif built.max_gifs:
        found.append(
            f"the adapter caps GIFs on their own ({built.max_gifs}), the catalog counts them "
            f"as {caps.gif_counts_as}"
        )
    differ("mixed images and videos", caps.mixed_media, built.mixed_media)
    offered = {spec.name for spec in caps.settings}
    for name in sorted(offered - built.settings):
        found.append(f"the catalog offers the setting {name}, which the adapter never reads")
    for name in sorted(built.settings - offered):
        found.append(f"the adapter reads the setting {name}, which the catalog hides")
    differ("threads", caps.supports_threads, built.threads)
    differ("alt text", caps.supports_alt_text, built.alt_text)
    return found


@pytest.mark.parametrize("platform", platforms())
def test_the_catalog_says_what_the_adapter_builds(platform):
    built = getattr(get_adapter(platform), "implements", None)
    assert isinstance(built, Implements), f"{platform}: the adapter declares no `implements`"

    mismatches = _mismatches(get_capabilities(platform), built)
    assert not mismatches, f"{platform}: " + "; ".join(mismatches)


@pytest.mark.parametrize("platform", platforms())
def test_a_first_comment_is_offered_exactly_where_the_adapter_posts_one(platform):
    caps, adapter = get_capabilities(platform), get_adapter(platform)
    posts_comments = isinstance(adapter, SupportsFirstComment)
    assert caps.supports_first_comment == posts_comments, (
        f"{platform}: the catalog says first_comment {caps.supports_first_comment}, the "
        f"adapter {'posts' if posts_comments else 'does not post'} one"
    )
    if posts_comments:
        assert isinstance(adapter.comment_lookup_is_strong, bool)
        assert caps.first_comment_mode in ("comment", "reply")


@pytest.mark.parametrize("platform", platforms())
def test_delete_is_offered_exactly_where_the_adapter_deletes_and_a_refusal_says_whose(platform):
    caps, adapter = get_capabilities(platform), get_adapter(platform)
    deletes = isinstance(adapter, SupportsDelete)
    assert caps.delete_supported == deletes, (
        f"{platform}: the catalog says delete {caps.delete_supported}, the adapter "
        f"{'deletes' if deletes else 'does not delete'}"
    )
    # The platform's own limit is said by the adapter too (the kit tells the operator);
    # one the adapter merely lacks is not blamed on the platform.
    assert (caps.delete_why == "platform") == bool(adapter.delete_unsupported)
    assert not (deletes and adapter.delete_unsupported)
    assert caps.delete_detail


def _settings_read(tree: ast.AST) -> set[str]:
    """Literal keys read from `ctx.settings` (or a local `settings`): .get("k"), ["k"],
    "k" in ..., and keys taken from a literal tuple a for loop walks."""

    def is_settings(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id == "settings"
        return (
            isinstance(node, ast.Attribute)
            and node.attr == "settings"
            and isinstance(node.value, ast.Name)
            and node.value.id == "ctx"
        )

    loop_keys: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.For)
            and isinstance(node.target, ast.Name)
            and isinstance(node.iter, ast.Tuple)
        ):
            values = {e.value for e in node.iter.elts if isinstance(e, ast.Constant)}
            loop_keys.setdefault(node.target.id, set()).update(values)

    def keys(node: ast.AST) -> set[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return {node.value}
        if isinstance(node, ast.Name):
            return loop_keys.get(node.id, set())
        return set()

    read: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and is_settings(node.func.value)
            and node.args
        ):
            read |= keys(node.args[0])
        elif isinstance(node, ast.Subscript) and is_settings(node.value):
            read |= keys(node.slice)
        elif isinstance(node, ast.Compare) and any(is_settings(c) for c in node.comparators):
            read |= keys(node.left)
    return read


@pytest.mark.parametrize("platform", platforms())
def test_the_adapter_declares_every_setting_its_code_reads(platform):
    adapter = get_adapter(platform)
    package = Path(inspect.getfile(type(adapter))).parent
    read = set()
    for source in sorted(package.glob("*.py")):
        read |= _settings_read(ast.parse(source.read_text(encoding="utf-8")))

    undeclared = read - adapter.implements.settings
    assert not undeclared, f"{platform}: the code reads {sorted(undeclared)}, undeclared"


def test_a_catalog_that_overstates_or_hides_is_caught_both_ways():
    caps = get_capabilities("sandbox")
    built = Implements(
        media_kinds=frozenset({"image", "video", "gif"}),
        max_images=1,
        max_videos=1,
        settings=frozenset({"colour"}),
        threads=False,
        alt_text=True,
    )

    assert _mismatches(caps, built) == [
        "max images: the catalog says 4, the adapter builds 1",
        "the adapter reads the setting colour, which the catalog hides",
        "threads: the catalog says True, the adapter builds False",
    ]
