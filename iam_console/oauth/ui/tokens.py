"""Tokens: list and edit (owner always admin; the organization is the global admin's to change).
No page shows a usable token: a row holds the token's fingerprint and the SHA-256 of its code
(docs/security.md). Revoke from the list (expiresIn 0); the edit page's parse box reads a pasted
JWT's header and claims and checks its signature against the application's cert
(oauth/token_parse.py)."""

from __future__ import annotations

import reflex as rx

from iam_console.core import crud
from iam_console.core.resources import REGISTRY
from iam_console.oauth import token_parse
from iam_console.ui.screens import Column, Field, Screen, screen
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.listing import Listing
from iam_console.ui.state.service import call, say
from iam_console.ui.text import t


class TokenParse(rx.State):
    text: str = ""
    header: str = ""
    claims: str = ""
    verdict: str = ""  # valid | invalid | expired; "" when the text is no JWT
    reason: str = ""

    @rx.event
    def clear(self):
        """Each token's page opens with an empty box."""
        self.text = self.header = self.claims = self.verdict = self.reason = ""

    @rx.event
    def set_text(self, value: str):
        self.text = value[:token_parse.MAX_TOKEN + 1]

    @rx.event
    async def parse(self):
        editing = await self.get_state(Editing)
        application = editing.values.get("application", "")
        parsed = await call(self, lambda db, actor: token_parse.parse(db, actor, self.text, application))
        if parsed.failed:
            return parsed.event
        result = parsed.value
        self.header, self.claims, self.verdict = result.header, result.claims, result.verdict
        self.reason = await say(self, result.reason, *result.args) if result.reason else ""


TOKENS = screen(Screen(
    key="token", title="Tokens", list_route="/tokens", edit_route="/tokens/{name}", edit_title="Token",
    parts=lambda: (_parse_box(),), row_actions=lambda row: _revoke(row), after_read=TokenParse.clear,
    columns=(
        Column("name", "Name", link="/tokens/{name}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("application", "Application", link="/applications/{organization}/{application}"),
        Column("organization", "Organization", link="/organizations/{organization}"),
        Column("user", "User", link="/users/{organization}/{user}"),
        Column("code", "Authorization code"),
        Column("accessToken", "Access token"),
        Column("expiresIn", "Expires in", searchable=False),
        Column("scope", "Scope"),
        Column("tokenType", "Token type"),
    ),
    fields=(
        Field("application", "Application", "pick", kind="application"),
        Field("organization", "Organization", "pick", kind="organization", global_admin_only=True),
        Field("user", "User", "pick", kind="user"),
        # the server's alone: the SHA-256 of the code and the token's fingerprint, never the token
        Field("code", "Authorization code", locked_for=lambda record: True),
        Field("accessToken", "Access token", "textarea", locked_for=lambda record: True),
        Field("expiresIn", "Expires in", "number", minimum=0),
        Field("scope", "Scope"),
        Field("tokenType", "Token type"),
    ),
))


class TokenRows(rx.State):
    @rx.event
    async def revoke(self, key: str):
        """expiresIn 0: the token stops working at once (an issued token's lifetime only shortens)."""
        _, _, name = key.partition("/")
        done = await call(self, lambda db, actor: crud.update_record(db, actor, REGISTRY["token"], "admin", name,
                                                                     {"expiresIn": 0}), failed="Failed to revoke: %s")
        if done.failed:
            return done.event
        listing = await self.get_state(Listing)
        await listing._refresh()
        return rx.toast.success(await say(self, "Successfully revoked"))


def _revoke(row: rx.Var) -> list[rx.Component]:
    return [rx.button(t("Revoke"), size="1", variant="soft", color_scheme="orange", class_name="token-revoke",
                      disabled=row["expiresIn"] == "0", on_click=TokenRows.revoke(row["__key"]))]


PRE = {"white_space": "pre-wrap", "word_break": "break-all", "font_size": "12px", "margin": "0"}
VERDICTS = {"valid": ("Signature valid", "green"), "invalid": ("Signature invalid", "red"),
            "expired": ("Token expired", "orange")}


def _parse_box() -> rx.Component:
    verdict = rx.fragment()
    for key, (label, color) in VERDICTS.items():
        verdict = rx.cond(TokenParse.verdict == key, rx.badge(t(label), color_scheme=color, id="token-verdict"),
                          verdict)
    return rx.vstack(
        rx.text(rx.el.label(t("Parse access token"), html_for="token-parse-text"), weight="medium", size="2"),
        rx.text_area(value=TokenParse.text, on_change=TokenParse.set_text, id="token-parse-text", rows="4",
                     width="100%", placeholder=t("Paste a JWT here")),
        rx.button(t("Parse"), on_click=TokenParse.parse, variant="outline", id="token-parse"),
        rx.box(
            verdict,
            rx.cond(TokenParse.reason != "", rx.text(TokenParse.reason, size="2", id="token-parse-reason")),
            rx.cond(TokenParse.header != "", rx.vstack(
                rx.text(t("Header"), weight="medium", size="2"),
                rx.el.pre(TokenParse.header, id="token-parse-header", style=PRE),
                rx.text(t("Claims"), weight="medium", size="2"),
                rx.el.pre(TokenParse.claims, id="token-parse-claims", style=PRE),
                width="100%")),
            id="token-parse-result", width="100%", role="status",
        ),
        width="100%", spacing="2",
    )
