"""The organization page's own sections (the screen's `sections`): the theme, the navigation
items and the LDAP servers (a list). Each loads from the record the edit state read and hands back
a field only when it changed; the service layer checks every rule again on save."""

from __future__ import annotations

from typing import Any

import reflex as rx

from iam_console.core import builtin as b
from iam_console.core.errors import ServiceError
from iam_console.core.navigation import menu
from iam_console.identity.kinds.organization import is_color
from iam_console.ui.state.listing import Lists

NAV_KEYS = tuple(item.key for group in menu() for item in group.items)


class Theme(rx.State):
    """themeData: follow the global theme (isEnabled false) or the organization's own."""

    custom: bool = False
    theme_type: str = "default"
    color: str = b.THEME_DEFAULT["colorPrimary"]
    radius: int = b.THEME_DEFAULT["borderRadius"]
    compact: bool = False
    _original: dict[str, Any] = {}
    _loaded: dict[str, Any] = {}

    def _load(self, db, actor, record: dict[str, Any]) -> None:
        stored = record.get("themeData") if isinstance(record.get("themeData"), dict) else {}
        theme = {**b.THEME_DEFAULT, **{k: v for k, v in stored.items() if v not in ("", None)}}
        self.custom = theme["isEnabled"] is True
        self.theme_type = theme["themeType"] if theme["themeType"] in b.THEME_TYPES else "default"
        self.color = str(theme["colorPrimary"])
        radius = theme["borderRadius"]
        self.radius = radius if isinstance(radius, int) and not isinstance(radius, bool) else 0
        self.compact = theme["isCompact"] is True
        self._original = dict(stored)
        self._loaded = self._theme()

    def _theme(self) -> dict[str, Any]:
        return {**self._original, "isEnabled": self.custom, "themeType": self.theme_type,
                "colorPrimary": self.color, "borderRadius": self.radius, "isCompact": self.compact}

    def _changes(self) -> dict[str, Any]:
        theme = self._theme()
        return {"themeData": theme} if theme != self._loaded else {}

    @rx.event
    def set_mode(self, mode: str | list[str]):
        self.custom = mode == "custom"

    @rx.event
    def set_type(self, theme_type: str):
        if theme_type in b.THEME_TYPES:
            self.theme_type = theme_type
            preset = b.THEME_TYPE_PRESETS.get(theme_type, {})
            self.color = preset.get("colorPrimary", self.color)
            self.radius = preset.get("borderRadius", self.radius)

    @rx.event
    def set_color(self, color: str):
        if color in b.THEME_COLORS or is_color(color):
            self.color = color

    @rx.event
    def set_radius(self, value: str | int | float | list):
        """From the slider ([value]) or the number input (text)."""
        try:
            radius = int(float(value[0] if isinstance(value, list) else value))
        except (TypeError, ValueError, IndexError):
            return
        self.radius = max(0, min(b.THEME_RADIUS_MAX, radius))

    @rx.event
    def set_compact(self, compact: bool):
        self.compact = bool(compact)


class NavItems(rx.State):
    """navItems: the menu items the organization's admins see; 'all' means every one.
    Only the global admin changes them (the service refuses anyone else)."""

    checked: list[str] = []
    editable: bool = False
    _loaded: list[str] = []

    def _load(self, db, actor, record: dict[str, Any]) -> None:
        items = [i for i in record.get("navItems") or [] if isinstance(i, str)]
        self.checked = list(NAV_KEYS) if not items or "all" in items else [k for k in NAV_KEYS if k in items]
        self.editable = actor.is_global_admin
        self._loaded = self._items()

    def _items(self) -> list[str]:
        return ["all"] if set(self.checked) >= set(NAV_KEYS) else [k for k in NAV_KEYS if k in self.checked]

    def _changes(self) -> dict[str, Any]:
        items = self._items()
        return {"navItems": items} if self.editable and items != self._loaded else {}

    @rx.var
    def all_checked(self) -> bool:
        return set(self.checked) >= set(NAV_KEYS)

    @rx.var
    def groups_checked(self) -> list[str]:
        return [g.key for g in menu() if all(i.key in self.checked for i in g.items)]

    def _set(self, keys: set[str], on: bool) -> None:
        if self.editable:
            now = set(self.checked) | keys if on else set(self.checked) - keys
            self.checked = [k for k in NAV_KEYS if k in now]

    @rx.event
    def toggle_all(self, on: bool):
        self._set(set(NAV_KEYS), bool(on))

    @rx.event
    def toggle_group(self, key: str, on: bool):
        self._set({i.key for g in menu() if g.key == key for i in g.items}, bool(on))

    @rx.event
    def toggle_item(self, key: str, on: bool):
        self._set({key}, bool(on))  # an unknown key is dropped with the others NAV_KEYS does not hold


class LdapServers(Lists, rx.State):
    """The organization's LDAP servers: their own records (kind 'ldap'), listed on its page.
    Add keeps the new server in the list; viewers who may not read them see no list."""

    def _load(self, db, actor, record: dict[str, Any]) -> None:
        self._start("ldap", str(record.get("name", "")))
        try:
            self._fetch(db, actor, self.scope_organization)
        except ServiceError:
            self.rows, self.total, self.not_authorized = [], 0, True

    def _changes(self) -> dict[str, Any]:
        return {}

    def _opens_added(self) -> bool:
        return False
