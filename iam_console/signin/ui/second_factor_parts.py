"""The second step's form, shared by /login and the OAuth authorize page (ids prefixed
with the page's: login-passcode, authorize-passcode...)."""

from __future__ import annotations

import reflex as rx

from iam_console.signin.ui.second_factor_state import SecondStep
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.text import t


def second_factor_form(prefix: str, on_submit, on_key) -> rx.Component:
    chooser = rx.cond(
        SecondStep.methods.length() > 1,
        rx.select.root(
            rx.select.trigger(width="100%", id=f"{prefix}-mfa-type", aria_label=t("Multi-factor authentication")),
            rx.select.content(rx.foreach(SecondStep.methods, lambda m: rx.select.item(
                Prefs.tr[m["label"]], value=m["mfaType"]))),
            value=SecondStep.mfa_type, on_change=SecondStep.choose, size="2",
        ),
    )
    return rx.vstack(
        rx.heading(t("Multi-factor authentication"), size="4"),
        rx.cond(SecondStep.recovery,
                rx.text(t("Type one of your recovery codes"), size="2", color_scheme="gray"),
                rx.text(t("Type the code of your second factor"), size="2", color_scheme="gray")),
        rx.cond(SecondStep.recovery, rx.fragment(), chooser),
        rx.cond(SecondStep.needs_sending,
                rx.hstack(rx.text(SecondStep.sent_to, size="2", id=f"{prefix}-mfa-dest"),
                          rx.button(t("Send code"), on_click=SecondStep.send_code, variant="soft", size="1",
                                    id=f"{prefix}-mfa-send"),
                          align="center", justify="between", width="100%")),
        rx.input(id=f"{prefix}-passcode", auto_complete="one-time-code", width="100%", auto_focus=True,
                 placeholder=rx.cond(SecondStep.recovery, t("Recovery code"), t("Passcode")),
                 on_key_down=on_key,
                 aria_label=rx.cond(SecondStep.recovery, t("Recovery code"), t("Passcode"))),
        rx.cond(SecondStep.error != "", rx.callout(SecondStep.error, icon="triangle-alert", color_scheme="red",
                                                   width="100%", id=f"{prefix}-mfa-error")),
        rx.button(rx.cond(SecondStep.busy, t("Signing in..."), t("Verify")), on_click=on_submit,
                  loading=SecondStep.busy, width="100%", id=f"{prefix}-mfa-submit"),
        rx.button(rx.cond(SecondStep.recovery, t("Use a passcode"), t("Use a recovery code")),
                  on_click=SecondStep.toggle_recovery, variant="ghost", size="1", id=f"{prefix}-mfa-recovery"),
        spacing="3",
        width="100%",
    )
