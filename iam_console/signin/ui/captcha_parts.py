"""The captcha picture and its answer field (signin/ui/captcha_state.py), shown only when asked for."""

from __future__ import annotations

import reflex as rx

from iam_console.ui.text import t


def captcha_fields(state, prefix: str) -> rx.Component:
    """`prefix`-captcha (the picture) and `prefix`-captcha-answer (the field)."""
    return rx.cond(state.captcha_image != "", rx.vstack(
        rx.image(src=state.captcha_image, alt=t("Captcha"), width="200px", height="80px", id=f"{prefix}-captcha"),
        rx.text(rx.el.label(t("Captcha"), html_for=f"{prefix}-captcha-answer"), size="2", weight="medium"),
        rx.input(id=f"{prefix}-captcha-answer", on_change=state.set_captcha_answer, auto_complete="off",
                 width="100%"),
        spacing="1", width="100%"))
