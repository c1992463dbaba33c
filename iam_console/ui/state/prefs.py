"""Per-browser preferences: language, theme and the chosen organization."""

from __future__ import annotations

import reflex as rx

from iam_console.i18n import DEFAULT_LANGUAGE, LANGUAGE_NAMES, catalog, translate
from iam_console.ui.routes import reload_on_organization

ALL_ORGANIZATIONS = "__all__"


# a WebAuthn sign-in the browser ended: no credential it holds was offered, or the user cancelled
NO_PASSKEY = "No passkey of this account was found on this device, or the sign-in was cancelled"


class Prefs(rx.State):
    lang: str = rx.LocalStorage(DEFAULT_LANGUAGE, name="iam_lang", sync=True)
    # Default and Dark exclude each other (Reflex's color mode, which
    # it keeps in localStorage itself); Compact adds to either.
    compact: str = rx.LocalStorage("0", name="iam_theme_compact", sync=True)
    organization: str = rx.LocalStorage(ALL_ORGANIZATIONS, name="iam_organization", sync=True)

    @rx.var
    def tr(self) -> dict[str, str]:
        return catalog(self.lang if self.lang in LANGUAGE_NAMES else DEFAULT_LANGUAGE)

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

    @rx.event
    def set_language(self, lang: str):
        if lang in LANGUAGE_NAMES:
            self.lang = lang

    @rx.event
    def toggle_compact(self):
        self.compact = "0" if self.compact == "1" else "1"

    @rx.event
    def set_organization(self, name: str):
        self.organization = name or ALL_ORGANIZATIONS
        return reload_on_organization(self.router.url.path)  # the page shows the new organization's figures
