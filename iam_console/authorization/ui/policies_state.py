"""An enforcer's policy table (docs/architecture.md, "The enforcer page"): the rules of its
adapter, not a field of the record, so each row is written through the service as it is saved
or deleted (authorization/enforcement.py, the same calls as the API's add-, update- and
remove-policy) and the table pages on the server, 100 rules a page. The `Rows` mixin's
one-row-at-a-time mode does the editing; `Paging` the pager."""

from __future__ import annotations

from typing import Any

import reflex as rx

from iam_console.authorization import enforcement, policy_store
from iam_console.core.kinds.common import is_built_in_casbin
from iam_console.ui.screens import Cell, Field
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.listing import Paging
from iam_console.ui.state.rows import Rows, options
from iam_console.ui.state.service import call, say

PAGE_SIZE = 100
VALUES = tuple(f"V{i}" for i in range(policy_store.FIELDS))
# Ptype plus V0 to V5; the model's policy definition names the values (Rows._set_heads)
POLICIES = Field("policies", "Policies", "rows", one_at_a_time=True, columns=(
    Cell("Ptype", "Rule type", "select", options=("p",), default="p"),
    *[Cell(key, key) for key in VALUES],
))


def built_in(record: dict[str, Any]) -> bool:
    """The built-in organization's Casbin objects are read-only."""
    return is_built_in_casbin(str(record.get("owner", "")), str(record.get("name", "")))


class EnforcerPolicies(Paging, Rows, rx.State):
    ready: bool = False  # the saved enforcer names a model and an adapter whose policies were read
    frozen: bool = True  # nothing may change: not ready, or a built-in enforcer
    _enforcer: str = ""  # owner/name
    _ptypes: list[str] = ["p"]

    def _row_fields(self) -> dict[str, Field]:
        return {POLICIES.key: POLICIES}

    def _row_locked(self, key: str) -> bool:
        return self.frozen

    def _row_options(self, key: str, column: Cell, items: list[dict[str, Any]], index: int) -> list[str]:
        if column.key == "Ptype":  # the rule types of the model
            return list(self._ptypes)
        return options(column, items, index)

    @rx.event
    async def load(self):
        """After the edit page read the enforcer (and after each save): its first page."""
        editing = await self.get_state(Editing)
        record = editing._record
        self._enforcer = f"{editing.saved_owner}/{editing.saved_name}"
        self.page, self.page_size = 1, PAGE_SIZE
        if not record.get("model") or not record.get("adapter"):
            # nothing to read yet (a new enforcer): no error, an empty table
            self._empty()
            return None
        return await self._turned()

    def _empty(self) -> None:
        self.ready, self.frozen, self.total = False, True, 0
        self._set_heads(POLICIES.key, {})
        self._load_rows(POLICIES.key, [])

    async def _turned(self) -> Any:
        """The page shown: a row being edited on another page is dropped, as Cancel would."""
        enforcer, page, size = self._enforcer, self.page, self.page_size
        await self._read_language()
        done = await call(self, lambda db, actor: enforcement.policy_page(db, actor, enforcer, page, size),
                          failed="Failed to sync policies: %s")
        if done.failed:
            self._empty()
            return done.event
        found: enforcement.PolicyPage = done.value
        self.total, self.page, self._ptypes = found.total, found.page, found.ptypes
        editing = await self.get_state(Editing)
        self.ready, self.frozen = True, built_in(editing._record)
        self._set_heads(POLICIES.key, {"Ptype": "", **dict(zip(VALUES, found.heads, strict=False))})
        self._load_rows(POLICIES.key, found.rows)
        return None

    def _rule(self, row: dict[str, Any]) -> dict[str, str]:
        return {"Ptype": str(row.get("Ptype") or "p"), **{k: str(row.get(k) or "") for k in VALUES}}

    async def _row_commit(self, key: str, before: dict[str, Any] | None, after: dict[str, Any]) -> tuple[bool, Any]:
        enforcer, rule = self._enforcer, self._rule(after)
        if before is None:
            action, body, failed, succeeded = "add-policy", rule, "Failed to add: %s", "Successfully added"
        else:
            old = self._rule(before)
            if old == rule:
                return True, None  # nothing changed
            action, body, failed, succeeded = "update-policy", [old, rule], "Failed to save: %s", "Successfully saved"
        done = await call(self, lambda db, actor: enforcement.write_policy(db, actor, action, enforcer, body),
                          failed=failed)
        if done.failed:
            return False, done.event
        if not done.value:  # the rule was no longer there (changed elsewhere): the row stays edited
            return False, rx.toast.error(await say(self, failed, await say(self, "The policy rule does not exist")))
        if before is None:
            self.total += 1
        return True, rx.toast.success(await say(self, succeeded))

    async def _row_drop(self, key: str, item: dict[str, Any]) -> tuple[bool, Any]:
        enforcer, rule = self._enforcer, self._rule(item)
        done = await call(self, lambda db, actor: enforcement.write_policy(db, actor, "remove-policy", enforcer, rule),
                          failed="Failed to delete: %s")
        if done.failed:
            return False, done.event
        if not done.value:
            return False, rx.toast.error(await say(self, "Failed to delete: %s",
                                                   await say(self, "The policy rule does not exist")))
        self.total = max(0, self.total - 1)
        return True, rx.toast.success(await say(self, "Successfully deleted"))
