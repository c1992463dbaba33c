"""/mfa/setup?mfaType=app|email|sms: set up a multi-factor method.

App: the secret and its QR code (SVG made on the server from the otpauth URL, refused over
2000 characters), a code from the authenticator app; email and sms: a code sent to the
account's own address. Then the recovery code, shown once, and Enable."""

from __future__ import annotations

import reflex as rx

from iam_console.signin.ui.mfa_state import MfaSetup
from iam_console.ui.routes import page
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.text import t


def _prove() -> rx.Component:
    app = rx.vstack(
        rx.text(t("Scan the QR code with your authenticator app, or type the secret into it"), size="2"),
        rx.image(src=MfaSetup.qr, width="200px", height="200px", id="mfa-qr", alt=t("QR code")),
        rx.hstack(rx.text(t("Secret"), size="2", weight="medium"),
                  rx.code(MfaSetup.secret, id="mfa-secret"), align="center"),
        spacing="3",
    )
    sent = rx.hstack(
        rx.text(Prefs.tr["The code goes to %s"].replace("%s", MfaSetup.secret), size="2", id="mfa-dest"),
        rx.button(t("Send code"), on_click=MfaSetup.send_code, loading=MfaSetup.sending, variant="soft",
                  size="1", id="mfa-send"),
        align="center",
    )
    return rx.vstack(
        rx.cond(MfaSetup.mfa_type == "app", app, sent),
        rx.input(placeholder=t("Passcode"), value=MfaSetup.passcode, on_change=MfaSetup.set_passcode,
                 on_key_down=MfaSetup.passcode_key, auto_complete="one-time-code", id="mfa-passcode",
                 width="16em", auto_focus=True, aria_label=t("Passcode")),
        rx.button(t("Verify"), on_click=MfaSetup.verify, id="mfa-verify"),
        spacing="3",
    )


def _enable() -> rx.Component:
    return rx.vstack(
        rx.callout(t("Save this recovery code: it is shown only once, and signs you in once if you lose "
                     "your second factor"), icon="key-round", color_scheme="orange"),
        rx.code(MfaSetup.recovery_code, size="4", id="mfa-recovery-code"),
        rx.button(t("Enable"), on_click=MfaSetup.enable, id="mfa-enable"),
        spacing="3",
    )


@page("/mfa/setup", "Multi-factor authentication", on_load=MfaSetup.open)
def mfa_setup_page() -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.heading(t("Multi-factor authentication"), size="5"),
            rx.hstack(*[rx.link(rx.button(t(label), variant=rx.cond(MfaSetup.mfa_type == kind, "solid", "outline"),
                                          size="1", id=f"mfa-type-{kind}"),
                                href=f"/mfa/setup?mfaType={kind}")
                        for kind, label in (("app", "Authenticator app"), ("email", "Email"), ("sms", "SMS"))]),
            rx.cond(MfaSetup.error != "",
                    rx.callout(MfaSetup.error, icon="triangle-alert", color_scheme="red", id="mfa-error"),
                    rx.cond(MfaSetup.verified, _enable(), _prove())),
            spacing="4",
        ),
        max_width="40em",
    )
