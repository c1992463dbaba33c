"""The one contract through which a feature joins the product (docs/extending.md).

A feature is an `Extension` value: the kinds it adds with their rules, its extra tables, API
routes, console pages and menu entries, scheduled jobs, webhook event names, translations and
migrations. The built-in features are named in BUILT_IN; an installed distribution names its own
in the entry point group `iam_console.extensions` (`name = "module:attribute"`). Both are found
the same way, by their import path, when a registry is first read (`extensions()`), and
IAM_EXTENSIONS_DISABLED (names, comma-separated) leaves installed ones out.

The registries the rest of the product reads (the kinds, their rules, the menu...) are `Gathered`
from every extension: none of them names a feature, so a feature left out leaves no trace. A
declaration names web parts (routers, page modules) by import path, so that reading it imports
no web framework: the API imports the routers, the console the pages.

An extension that cannot be loaded, or that declares what another already declared, stops the
start with an `ExtensionError` naming it: a server never runs with half of one.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from sqlmodel import Session

    from iam_console.core.kinds.common import KindRules
    from iam_console.core.resources import Kind

T = TypeVar("T")
ENTRY_POINT_GROUP = "iam_console.extensions"
DISABLED_VARIABLE = "IAM_EXTENSIONS_DISABLED"
# the built-in features: the shared ones in one declaration, then those that are packages of their own
BUILT_IN = ("iam_console.features:CORE", "iam_console.commerce.extension:COMMERCE")
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
SEEN_BY = ("admins", "global admins", "everyone")


class ExtensionError(RuntimeError):
    """An extension that cannot join: the message names it and says why."""


@dataclass(frozen=True)
class MenuGroup:
    """A group of the console's menu; an extension adds entries to its own groups or to others'."""

    key: str  # "/business": also what an organization's navItems may name
    label: str  # an English catalog key
    after: str = ""  # the key of the group it follows; "" after every group declared before it


@dataclass(frozen=True)
class MenuEntry:
    group: str  # the key of the group it joins
    route: str  # the page it opens; also what an organization's navItems may name
    label: str  # an English catalog key
    seen_by: str = "admins"  # "admins" (of any organization), "global admins", or "everyone" signed in


@dataclass(frozen=True)
class Job:
    """Scheduled work: `run()` is called on a thread of its own at every scheduler tick, and asks
    the database what is due (claiming it, so that with several workers each run happens once)."""

    name: str
    run: Callable[[], None]


@dataclass(frozen=True)
class Extension:
    name: str  # lowercase letters, digits and underscores: also the Alembic branch of its migrations
    kinds: tuple[Kind, ...] = ()  # each joins the generic routes, the isolation test, OpenAPI and fuzzing
    rules: Mapping[str, KindRules] = field(default_factory=dict)  # by kind name: validation, defaults...
    tables: tuple[type, ...] = ()  # tables of its own that are no kind's (a kind brings its model)
    routers: tuple[str, ...] = ()  # "module:attribute" of FastAPI routers
    pages: tuple[str, ...] = ()  # console modules: importing one declares its screens and pages
    menu_groups: tuple[MenuGroup, ...] = ()
    menu: tuple[MenuEntry, ...] = ()
    jobs: tuple[Job, ...] = ()
    webhook_events: tuple[str, ...] = ()  # event names a webhook may subscribe to
    translations: str = ""  # a folder of <language>.json catalogs (English keys)
    migrations: str = ""  # a folder of Alembic revisions, on the branch labelled with the name
    # first-start data: called with a database session at every start, after the product's own; it
    # adds what is missing (never changes what is there), committed with the product's
    seed: Callable[[Session], None] | None = None
    # folders of the files directory holding each organization's files ({folder}/{organization}/...):
    # they go with the organization, and /files/ never serves them (the extension serves its own)
    file_folders: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not NAME.match(self.name):
            raise ExtensionError(f"The extension name {self.name[:60]!r} must be lowercase letters, digits and "
                                 "underscores, starting with a letter")
        for entry in self.menu:
            if entry.seen_by not in SEEN_BY:
                raise ExtensionError(f"The extension {self.name}: menu entry {entry.route} is seen by "
                                     f"{entry.seen_by!r}, not one of {', '.join(SEEN_BY)}")


def disabled() -> frozenset[str]:
    """The installed extensions IAM_EXTENSIONS_DISABLED leaves out, by name."""
    return frozenset(n.strip() for n in os.environ.get(DISABLED_VARIABLE, "").split(",") if n.strip())


def _load(path: str, source: str) -> Extension:
    found = imported(path, source)
    if not isinstance(found, Extension):
        raise ExtensionError(f"The extension {source} ({path}) is a {type(found).__name__}, not an Extension")
    return found


def imported(path: str, source: str) -> object:
    """What a declaration names by "module:attribute" (an extension, a router) or "module" (a page
    module), imported when it is used; whatever the import raises stops the start, naming the
    extension (`source`)."""
    module_name, _, attribute = path.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attribute) if attribute else module
    except Exception as exc:
        raise ExtensionError(f"The extension {source} ({path}) could not be loaded: "
                             f"{type(exc).__name__}: {exc}") from exc


def installed() -> list[tuple[str, str]]:
    """(name, "module:attribute") of every installed distribution's extension, by name."""
    return sorted((point.name, point.value) for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def discover() -> tuple[Extension, ...]:
    """The built-in features, then the installed extensions not disabled, each loaded once."""
    found = [_load(path, "built-in") for path in BUILT_IN]
    off = disabled()
    for name, path in installed():
        if name in off:
            continue
        extension = _load(path, name)
        if extension.name != name:
            raise ExtensionError(f"The extension {name} ({path}) declares the name {extension.name}: "
                                 "its entry point must carry the same name")
        found.append(extension)
    names = [e.name for e in found]
    for name in names:
        if names.count(name) > 1:
            raise ExtensionError(f"The extension {name} is declared twice")
    return tuple(found)


_lock = threading.RLock()
_found: tuple[Extension, ...] | None = None
_registries: list[Gathered] = []


_discovering = threading.local()


def extensions() -> tuple[Extension, ...]:
    """Every extension of this process, discovered on first use."""
    global _found
    with _lock:
        if _found is None:
            if getattr(_discovering, "now", False):
                raise ExtensionError("A registry was read while the extensions were being loaded: a module that "
                                     "a declaration imports reads one at its import (read it where it is used)")
            _discovering.now = True
            try:
                _found = discover()
            finally:
                _discovering.now = False
        return _found


def menu_declarations() -> tuple[list[MenuGroup], list[tuple[str, MenuEntry]]]:
    """Every extension's menu groups, and its entries with the extension's name, in their order;
    an entry must join a group some extension declares."""
    groups: list[MenuGroup] = []
    for extension in extensions():
        for group in extension.menu_groups:
            keys = [other.key for other in groups]
            if group.after and group.after not in keys:
                raise ExtensionError(f"The extension {extension.name}: menu group {group.key} follows the group "
                                     f"{group.after}, which no extension declared before it")
            groups.insert(keys.index(group.after) + 1 if group.after else len(groups), group)
    entries = [(extension.name, entry) for extension in extensions() for entry in extension.menu]
    keys = {group.key for group in groups}
    for name, entry in entries:
        if entry.group not in keys:
            raise ExtensionError(f"The extension {name}: menu entry {entry.route} joins the group {entry.group}, "
                                 "which no extension declares")
    return groups, entries


def check() -> None:
    """Load every extension, import everything each names (routers, page modules) and gather every
    registry: an extension that cannot join stops the start here, named (iam_console/serve.py)."""
    for extension in extensions():
        for path in (*extension.routers, *extension.pages):
            imported(path, extension.name)
    for registry in list(_registries):
        registry._gathered()
    menu_declarations()


def rediscover() -> None:
    """Forget what was found, so that the next read discovers again (tests)."""
    global _found
    with _lock:
        _found = None
        for registry in _registries:
            registry._items = None


class Gathered(Mapping[str, T], Generic[T]):
    """A registry read from every extension on first use: `pick` says what of an extension's
    declaration it holds, as (key, value) pairs. Two extensions declaring one key stop the start."""

    def __init__(self, what: str, pick: Callable[[Extension], Iterable[tuple[str, T]]]) -> None:
        self._what, self._pick = what, pick
        self._items: dict[str, T] | None = None
        _registries.append(self)

    def _gathered(self) -> dict[str, T]:
        if self._items is None:
            with _lock:
                if self._items is None:
                    items: dict[str, T] = {}
                    owners: dict[str, str] = {}
                    for extension in extensions():
                        for key, value in self._pick(extension):
                            if key in items:
                                raise ExtensionError(f"The extension {extension.name} declares the {self._what} "
                                                     f"{key}, which {owners[key]} declares already")
                            items[key], owners[key] = value, extension.name
                    self._items = items
        return self._items

    def __getitem__(self, key: str) -> T:
        return self._gathered()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._gathered())

    def __len__(self) -> int:
        return len(self._gathered())

    def __repr__(self) -> str:
        return f"Gathered({self._what}: {', '.join(self._gathered())})"
