"""The organization page's structured fields: the account
items, MFA items, theme and navigation items tables, each a section of the
edit page (the screen's `sections`), and the organization's LDAP servers (a list).

Each section holds display strings only, loads from the record the edit state
read, and hands back a field only when it changed (so a viewer who never
touched a table sends the stored value back as it was). Every rule they apply
while editing comes from the service layer, which checks them again on save."""

from __future__ import annotations

from typing import Any

import reflex as rx

from ...services import accounts
from ...services import builtin as b
from ...services.errors import ServiceError
from ...services.kinds.organization import is_color
from ...services.navigation import MENU
from .listing import Lists
from .prefs import Prefs

NAV_KEYS = tuple(item.key for group in MENU for item in group.items)


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _account_row(item: dict[str, Any]) -> dict[str, str]:
    name, view = str(item.get("name", "")), str(item.get("viewRule") or "")
    return {
        "name": name, "visible": _flag(item.get("visible", True) is not False), "viewRule": view,
        "modifyRule": str(item.get("modifyRule") or ""), "regex": str(item.get("regex") or ""),
        # what the row's widgets allow, from the service's rules
        "__placeholder": _flag(name == b.ACCOUNT_ITEM_PLACEHOLDER),
        "__pattern": _flag(name in accounts.PATTERN_ITEMS),
        "__admin_only": _flag("Self" not in accounts.modify_rules(name, view)),
    }


class AccountItems(rx.State):
    rows: list[dict[str, str]] = []
    _loaded: list[dict[str, Any]] = []
    _originals: dict[str, dict[str, Any]] = {}  # keys this editor does not show are kept

    def _load(self, db, actor, record: dict[str, Any]) -> None:
        items = [i for i in (record.get("accountItems") or b.default_account_items()) if isinstance(i, dict)]
        self._originals = {str(i.get("name", "")): i for i in items}
        self.rows = [_account_row(i) for i in items]
        self._loaded = self._items()

    def _items(self) -> list[dict[str, Any]]:
        return [{**self._originals.get(r["name"], {}), "name": r["name"], "visible": r["visible"] == "true",
                 "viewRule": r["viewRule"], "modifyRule": r["modifyRule"], "regex": r["regex"]} for r in self.rows]

    def _changes(self) -> dict[str, Any]:
        items = self._items()
        return {"accountItems": items} if items != self._loaded else {}

    @rx.var
    def free_names(self) -> list[str]:
        """The item names no row uses yet: the choices of a new row."""
        used = {row["name"] for row in self.rows}
        return [name for name in b.ACCOUNT_ITEM_NAMES if name not in used]

    def _row(self, index: int) -> dict[str, str] | None:
        return self.rows[index] if 0 <= index < len(self.rows) else None

    def _put(self, index: int, item: dict[str, Any]) -> None:
        self.rows[index] = _account_row(item)

    def _item(self, index: int) -> dict[str, Any]:
        row = self.rows[index]
        return {"name": row["name"], "visible": row["visible"] == "true", "viewRule": row["viewRule"],
                "modifyRule": row["modifyRule"], "regex": row["regex"]}

    @rx.event
    def add_row(self):
        self.rows.append(_account_row({"name": b.ACCOUNT_ITEM_PLACEHOLDER, "visible": True, "viewRule": "Public",
                                       "modifyRule": "Self", "regex": ""}))

    @rx.event
    def delete_row(self, index: int):
        if self._row(index) is not None:
            self.rows.pop(index)

    @rx.event
    def move_row(self, index: int, step: int):
        target = index + step
        if self._row(index) is not None and self._row(target) is not None:
            self.rows[index], self.rows[target] = self.rows[target], self.rows[index]

    @rx.event
    def set_name(self, index: int, name: str):
        if self._row(index) is None or name not in self.free_names:
            return
        item = self._item(index) | {"name": name}
        if name not in accounts.PATTERN_ITEMS:
            item["regex"] = ""
        if item["modifyRule"] not in accounts.modify_rules(name, item["viewRule"]):
            item["modifyRule"] = "Admin"
        self._put(index, item)

    @rx.event
    def set_visible(self, index: int, visible: bool):
        if self._row(index) is not None:
            self._put(index, self._item(index) | {"visible": bool(visible)})

    @rx.event
    def set_view_rule(self, index: int, rule: str):
        if self._row(index) is None or rule not in b.VIEW_RULES:
            return
        item = self._item(index) | {"viewRule": rule}
        if item["modifyRule"] not in accounts.modify_rules(item["name"], rule):
            item["modifyRule"] = "Admin"  # Self is no longer allowed
        self._put(index, item)

    @rx.event
    def set_modify_rule(self, index: int, rule: str):
        row = self._row(index)
        if row is not None and rule in accounts.modify_rules(row["name"], row["viewRule"]):
            self._put(index, self._item(index) | {"modifyRule": rule})

    @rx.event
    def set_regex(self, index: int, regex: str):
        row = self._row(index)
        if row is not None and row["__pattern"] == "true":
            self._put(index, self._item(index) | {"regex": regex[:500]})


class MfaItems(rx.State):
    rows: list[dict[str, str]] = []
    _loaded: list[dict[str, Any]] = []

    def _load(self, db, actor, record: dict[str, Any]) -> None:
        self.rows = [{"name": str(i.get("name", "")), "rule": str(i.get("rule") or "Optional")}
                     for i in record.get("mfaItems") or [] if isinstance(i, dict)]
        self._loaded = [dict(i) for i in record.get("mfaItems") or [] if isinstance(i, dict)]

    def _changes(self) -> dict[str, Any]:
        items = [dict(row) for row in self.rows]
        return {"mfaItems": items} if items != self._loaded else {}

    @rx.var
    def free_methods(self) -> list[str]:
        used = {row["name"] for row in self.rows}
        return [name for name in b.MFA_METHODS if name not in used]

    @rx.var
    def full(self) -> bool:
        """At most one row per method."""
        return len(self.rows) >= len(b.MFA_METHODS)

    @rx.event
    def add_row(self):
        free = self.free_methods
        if free and not self.full:
            self.rows.append({"name": free[0], "rule": "Optional"})

    @rx.event
    def delete_row(self, index: int):
        if 0 <= index < len(self.rows):
            self.rows.pop(index)

    @rx.event
    def set_name(self, index: int, name: str):
        if 0 <= index < len(self.rows) and name in self.free_methods:
            self.rows[index] = {**self.rows[index], "name": name}

    @rx.event
    async def set_rule(self, index: int, rule: str):
        if not 0 <= index < len(self.rows) or rule not in b.MFA_RULES:
            return
        if rule == "Required" and any(r["rule"] == "Required" for i, r in enumerate(self.rows) if i != index):
            prefs = await self.get_state(Prefs)
            return rx.toast.error(prefs.say("Only 1 MFA methods can be required"))
        self.rows[index] = {**self.rows[index], "rule": rule}


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
        if isinstance(value, list):
            value = value[0] if value else 0
        try:
            radius = int(float(value))
        except (TypeError, ValueError):
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
        return [g.key for g in MENU if all(i.key in self.checked for i in g.items)]

    def _set(self, keys: set[str], on: bool) -> None:
        if self.editable:
            now = set(self.checked) | keys if on else set(self.checked) - keys
            self.checked = [k for k in NAV_KEYS if k in now]

    @rx.event
    def toggle_all(self, on: bool):
        self._set(set(NAV_KEYS), bool(on))

    @rx.event
    def toggle_group(self, key: str, on: bool):
        self._set({i.key for g in MENU if g.key == key for i in g.items}, bool(on))

    @rx.event
    def toggle_item(self, key: str, on: bool):
        if key in NAV_KEYS:
            self._set({key}, bool(on))


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
