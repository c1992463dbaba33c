"""The signed-in account, the route guard and sign-out.

The session cookie is HttpOnly: state reads it from the websocket's headers,
which Reflex captures when the socket connects. That is why sign-in ends with
a full page load (see assets/iam.js)."""

from __future__ import annotations

import json

import reflex as rx

from iam_console import workers
from iam_console.api.callers import session_cookie
from iam_console.core import addresses, lookup, navigation
from iam_console.core import builtin as b
from iam_console.core.access import ANONYMOUS, Actor
from iam_console.db import session_scope
from iam_console.i18n import LANGUAGE_NAMES
from iam_console.identity import accounts
from iam_console.oauth import logout
from iam_console.signin import auth, mfa, verifications
from iam_console.ui.routes import LINKABLE
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.theme import CONSOLE_DEFAULT, ConsoleTheme, console_theme

ORGANIZATION_CHOICES_LIMIT = 500


def viewer(db, router) -> Actor:
    """The signed-in account behind this websocket, read afresh for every event
    (a session ended elsewhere ends here too); anonymous without one."""
    found = auth.account_for_token(db, session_cookie(router.headers.cookie))
    return Actor(user=found[0], session_id=found[1].session_id) if found else ANONYMOUS


def client_ip(router) -> str:
    """The address of the browser behind this websocket: the peer of its handshake, or what
    trusted proxies forwarded (core/addresses.py), as the API reads it."""
    raw = router.headers.raw_headers
    peer = raw.get("asgi-scope-client") or router.session.client_ip
    return addresses.client_ip(peer, raw.get("x-forwarded-for", ""))


class Account(rx.State):
    loaded: bool = False
    signed_in: bool = False
    show_page: bool = False
    owner: str = ""
    user_name: str = ""
    display_name: str = ""
    avatar: str = ""
    is_admin: bool = False
    is_global_admin: bool = False
    menu_groups: list[str] = []  # keys of the groups shown
    menu_keys: list[str] = []  # routes of the items shown
    languages: list[str] = []  # the organization's languages the catalog has
    organization_names: list[str] = []  # for the global admin's selector
    # the look of the account's organization (ui/theme.py)
    accent: str = CONSOLE_DEFAULT.accent
    radius: str = CONSOLE_DEFAULT.radius
    compact_theme: bool = CONSOLE_DEFAULT.compact
    # the organization's MFA items for an account without MFA: "Required", "Prompt" or ""
    mfa_rule: str = ""
    mfa_setup_type: str = ""  # the type to set up
    mfa_prompt_dismissed: bool = False  # 'Later'
    impersonator: str = ""  # the global admin (owner/name) acting as this account, if one is
    language: str = ""  # the account's own (its Language field)
    organization_language: str = ""  # the first its organization offers

    def _reset(self) -> None:
        self.signed_in = False
        self.owner = self.user_name = self.display_name = self.avatar = ""
        self.is_admin = self.is_global_admin = False
        self.menu_groups, self.menu_keys, self.organization_names = [], [], []
        self.languages = ["en"]
        self._set_theme(CONSOLE_DEFAULT)
        self.mfa_rule = self.mfa_setup_type = self.impersonator = ""
        self.language = self.organization_language = ""

    def _set_theme(self, theme: ConsoleTheme) -> None:
        self.accent, self.radius, self.compact_theme = theme.accent, theme.radius, theme.compact

    def _load(self) -> str:
        """Read the account behind the cookie; returns the application whose /forget page it
        must go through for a new password, or "" when it needs none."""
        token = session_cookie(self.router.headers.cookie)
        self._reset()
        password_update_app = ""
        with session_scope() as db:
            found = auth.account_for_token(db, token)
            if found is not None:
                user = found[0]
                self.impersonator = found[1].impersonator
                organization = lookup.organization(db, user.owner)
                viewer = navigation.Viewer(user.owner, user.is_admin,
                                           tuple(organization.nav_items) if organization else ())
                groups = navigation.menu_for(viewer, LINKABLE)
                self.signed_in = True
                self.owner, self.user_name = user.owner, user.name
                self.display_name, self.avatar = user.display_name or user.name, user.avatar
                self.is_admin, self.is_global_admin = user.is_admin, viewer.is_global_admin
                self.menu_groups = [group.key for group in groups]
                self.menu_keys = [item.key for group in groups for item in group.items]
                if organization is not None:
                    self._set_theme(console_theme(organization.theme_data))
                offered = organization.languages if organization and organization.languages else []
                self.languages = [code for code in LANGUAGE_NAMES if code in offered or code == "en"]
                self.language = user.language if user.language in LANGUAGE_NAMES else ""
                self.organization_language = next((code for code in offered if code in LANGUAGE_NAMES), "")
                if viewer.is_global_admin:
                    self.organization_names = [name for name, _ in accounts.organization_names(
                        db, Actor(user=user), ORGANIZATION_CHOICES_LIMIT)]
                if user.need_update_password:
                    application = verifications.default_application(db, organization)
                    password_update_app = application.name if application is not None else b.BUILT_IN_APP
                self.mfa_rule = mfa.rule_for(organization, user)
                self.mfa_setup_type = mfa.setup_type(organization) if self.mfa_rule else ""
        self.loaded = True
        return password_update_app

    @rx.event
    async def guard(self):
        """on_load of every guarded page; the account is read on a worker thread (ui/state/service.py)."""
        password_update_app = await workers.run(self._load)
        prefs = await self.get_state(Prefs)  # Prefs.settle, next on the page's load, shows it
        prefs.account_language, prefs.organization_language = self.language, self.organization_language
        url = self.router.url
        path = url.path + (f"?{url.query}" if url.query else "")
        decision = navigation.guard(path, loaded=self.loaded, signed_in=self.signed_in,
                                    needs_password_update=bool(password_update_app),
                                    application=password_update_app or b.BUILT_IN_APP,
                                    mfa_setup_required=self.mfa_setup_type if self.mfa_rule == "Required" else "")
        self.show_page = decision.show
        if decision.redirect:
            return rx.redirect(decision.redirect)

    @rx.event
    async def choose_language(self, code: str):
        """The language menu: this browser's choice, and the signed-in account's Language too
        (the console shows the account's first: Prefs)."""
        if code not in LANGUAGE_NAMES:
            return None
        if self.signed_in:
            await workers.run(self._keep_language, code)
            self.language = code
        return (await self.get_state(Prefs)).choose(code)

    def _keep_language(self, code: str) -> None:
        with session_scope() as db:
            found = auth.account_for_token(db, session_cookie(self.router.headers.cookie))
            if found is not None:
                found[0].language = code
                db.add(found[0])

    @rx.event
    def impersonate(self, owner: str, name: str):
        """A global admin acts as owner/name (the server checks who may): the session cookie
        changes, so the console loads afresh."""
        return rx.call_script(f"window.iamPost('/api/impersonate-user', {json.dumps({'owner': owner, 'name': name})})",
                              callback=Account.impersonation_changed)

    @rx.event
    def exit_impersonation(self):
        return rx.call_script("window.iamPost('/api/exit-impersonate-user')", callback=Account.impersonation_changed)

    @rx.event
    async def impersonation_changed(self, result: dict):
        if (result or {}).get("status") != "ok":
            prefs = await self.get_state(Prefs)
            return rx.toast.error(prefs.say(str((result or {}).get("msg", ""))))
        return rx.call_script("window.location.assign('/')")

    @rx.event
    def later(self):
        """The MFA prompt's 'Later': not again in this tab."""
        self.mfa_prompt_dismissed = True

    @rx.event
    async def refresh(self):
        """on_load of unguarded pages that still show who is signed in."""
        await workers.run(self._load)

    @rx.event
    async def logout(self):
        """The session's applications with a front-channel logout URI are framed by the page the
        server answers a navigation with (oauth/api.py signed_out); else the sign-out is a call."""
        if await workers.run(self._framed):
            self._reset()
            self.show_page = False
            return rx.call_script("window.iamLogoutNavigation()")
        return rx.call_script("window.iamLogout()", callback=Account.logged_out)

    def _framed(self) -> bool:
        with session_scope() as db:
            session_id = viewer(db, self.router).session_id
            return bool(session_id and logout.frames(db, {session_id}))

    @rx.event
    async def logged_out(self, result: dict):
        prefs = await self.get_state(Prefs)
        status, message = (result or {}).get("status"), str((result or {}).get("msg", ""))
        if status == "network":
            return rx.toast.error(prefs.say("Failed to connect to server: %s", message))
        if status != "ok":
            return rx.toast.error(prefs.say("Failed to log out: %s", message))
        target = navigation.after_logout(str(result.get("data2") or ""), self.owner)
        self._reset()
        self.show_page = False
        # the tab stops showing the account's (and its organization's) language: the browser's
        # pick, else Accept-Language's, from now on (docs/extending.md, "Languages")
        prefs.account_language = prefs.organization_language = ""
        shown = prefs._settle()
        toast = rx.toast.success(prefs.say("Logged out successfully"))
        if target.startswith(("http://", "https://")):
            return [shown, toast, rx.call_script(f"window.location.assign({json.dumps(target)})")]
        return [shown, toast, rx.redirect(target)]
