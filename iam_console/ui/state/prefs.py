"""Per-browser preferences: language, theme and the chosen organization."""

from __future__ import annotations

import reflex as rx

from iam_console.i18n import DEFAULT_LANGUAGE, LANGUAGE_NAMES, catalog, language_from_header, shown_language, translate
from iam_console.i18n.formats import direction
from iam_console.ui.routes import reload_on_organization

ALL_ORGANIZATIONS = "__all__"


# a WebAuthn sign-in the browser ended: no credential it holds was offered, or the user cancelled
NO_PASSKEY = "No passkey of this account was found on this device, or the sign-in was cancelled"


class Prefs(rx.State):
    # The language shown (docs/extending.md, "Languages"): the account's, else the one this
    # browser chose in the language menu, else the organization's, else Accept-Language's.
    lang: str = DEFAULT_LANGUAGE
    chosen: str = rx.LocalStorage("", name="iam_lang", sync=True)
    account_language: str = ""  # set while signed in (ui/state/account.py)
    organization_language: str = ""
    browser_language: str = ""  # Accept-Language's
    # Default and Dark exclude each other (Reflex's color mode, which
    # it keeps in localStorage itself); Compact adds to either.
    compact: str = rx.LocalStorage("0", name="iam_theme_compact", sync=True)
    organization: str = rx.LocalStorage(ALL_ORGANIZATIONS, name="iam_organization", sync=True)

    @rx.var
    def tr(self) -> dict[str, str]:
        """The texts pages show as they are; a counted message is said with its count (say)."""
        shown = catalog(self.lang if self.lang in LANGUAGE_NAMES else DEFAULT_LANGUAGE)
        return {key: text for key, text in shown.items() if isinstance(text, str)}

    def _settle(self):
        """Work out the language shown and tell the page (<html lang dir>, read by assets/iam.js
        for the API's Accept-Language)."""
        return self.show_language(shown_language(self.account_language, self.chosen, self.organization_language,
                                                  self.browser_language))

    def show_language(self, lang: str):
        """Show the page in `lang` (one of LANGUAGE_NAMES) and tell it; also a page's own choice for
        this visit, made after settle: the authorize page's ui_locales (oauth/ui/authorize.py)."""
        self.lang = lang
        return rx.call_script(f"window.iamSetLanguage({lang!r}, {direction(lang)!r})")

    @rx.event
    def settle(self):
        """on_load of every page (iam_console/iam_console.py), after the account is read."""
        self.browser_language = language_from_header(self.router.headers.accept_language, default="")
        return self._settle()

    @rx.var
    def is_compact(self) -> bool:
        return self.compact == "1"

    def script_failure(self, result: dict | None) -> str | None:
        """What to show for the answer of a sign-in script of assets/iam.js: the server's
        message, or the unreachable server; None while the browser is being redirected."""
        status, message = (result or {}).get("status"), str((result or {}).get("msg", ""))
        if status == "redirecting":
            return None
        if status == "no-passkey":
            return self.say(NO_PASSKEY)
        return self.say("Failed to connect to server: %s", message) if status == "network" else message

    def wallet_failure(self, result: dict | None) -> str | None:
        """As script_failure, for the wallet sign-in script (window.iamWalletLogin): no wallet in
        the browser ('MetaMask plugin not detected'), or the wallet refused ('Failed to obtain
        MetaMask authorization: %s' and its Web3-Onboard twin)."""
        status, message = (result or {}).get("status"), str((result or {}).get("msg", ""))
        if status == "no-wallet":
            return self.say("MetaMask plugin not detected")
        if status == "wallet":
            failure = "Failed to obtain Web3-Onboard authorization: %s" if (result or {}).get("type") == \
                "Web3Onboard" else "Failed to obtain MetaMask authorization: %s"
            return self.say(failure, message)
        return self.script_failure(result)

    def say(self, key: str, *args: object) -> str:
        """A catalog string for messages built in Python (toasts)."""
        return translate(key, self.lang, *args)

    def choose(self, lang: str):
        """The language menu's choice (ui/state/account.py Account.choose_language keeps it for
        the signed-in account too)."""
        if lang in LANGUAGE_NAMES:
            self.chosen = lang
            if self.account_language:
                self.account_language = lang
        return self._settle()

    @rx.event
    def toggle_compact(self):
        self.compact = "0" if self.compact == "1" else "1"

    @rx.event
    def set_organization(self, name: str):
        self.organization = name or ALL_ORGANIZATIONS
        return reload_on_organization(self.router.url.path)  # the page shows the new organization's figures
