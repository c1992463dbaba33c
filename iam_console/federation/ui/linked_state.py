"""The linked accounts section of /account and the user edit page: the upstream identity
providers of the application governing the account's links (federation/upstream.account_links),
each linked or not; on the viewer's own account, Link (the flow, method link) and Unlink where
the provider row allows it (federation/federation.unlink). An admin sees the list read-only."""

from __future__ import annotations

import reflex as rx

from iam_console.core import lookup
from iam_console.federation import federation, upstream
from iam_console.identity import accounts
from iam_console.ui.state.account import client_ip
from iam_console.ui.state.service import call, say

ITEM = "3rd-party logins"


class LinkedSection(rx.State):
    rows: list[dict[str, str]] = []
    shown: bool = False
    is_self: bool = False

    def _load(self, db, actor, target) -> None:
        self.is_self = actor.user is not None and (actor.user.owner, actor.user.name) == (target.owner, target.name)
        hidden = accounts.hidden_items(actor, lookup.organization(db, target.owner), target)
        self.rows = upstream.account_links(db, target) if ITEM not in hidden else []
        # the account item is shown wherever the viewer may see it, its providers or none
        self.shown = ITEM not in hidden

    @rx.event
    async def unlink(self, provider_type: str, provider_name: str):
        if not self.is_self:
            return None

        def run(db, actor):
            if actor.user is None:
                return []
            federation.unlink(db, actor.user, actor.user, provider_type, provider_name,
                              client_ip=client_ip(self.router))
            db.flush()
            return upstream.account_links(db, actor.user)

        done = await call(self, run)
        if done.failed:
            return done.event
        self.rows = done.value or []
        return rx.toast.success(await say(self, "Successfully unlinked"))
