"""The application's captcha on a public page (sign-up, sign-in with a code, a forgotten
password): the picture when its rule asks this visitor for one, the typed answer, and a new
picture after each use (a solved captcha is good for one request; signin/captcha.py); and the
end of the code send it guards. A state that mixes it in has `busy`, `error` and `countdown`."""

from __future__ import annotations

import reflex as rx

from iam_console.signin import captcha, verifications
from iam_console.ui.state.account import client_ip
from iam_console.ui.state.service import Outcome, call, message, say


class Captcha(rx.State, mixin=True):
    captcha_image: str = ""  # a data: URI; "" when the application asks for no captcha
    captcha_id: str = ""
    _captcha_answer: str = ""

    @rx.event
    def set_captcha_answer(self, value: str):
        self._captcha_answer = value[:20]

    async def new_captcha(self, application: str) -> None:
        """A fresh picture of `application`'s captcha (owner/name or name), or none."""
        ip = client_ip(self.router)
        shown = await call(self, lambda db, actor: captcha.challenge(db, application, ip), quiet=True)
        value = shown.value or {}
        self.captcha_id, self._captcha_answer = str(value.get("captchaId", "")), ""
        self.captcha_image = f"data:image/png;base64,{value['captchaImage']}" if value.get("captchaImage") else ""

    def solved(self) -> tuple[str, str, str]:
        """(captchaType, captchaToken, the captcha id) as the services take them."""
        return (captcha.DEFAULT, self._captcha_answer, self.captcha_id) if self.captcha_id else ("", "", "")

    async def code_sent(self, application: str, sent: Outcome) -> rx.event.EventSpec:
        """After a code send, inside `async with self`: the resend countdown or the error, a new
        captcha, and the toast to yield (then `service.count_down` if it was sent)."""
        self.busy = False
        if sent.failed:
            self.error = await message(self, sent.error)
        else:
            self.countdown = verifications.RESEND_SECONDS
        if self.captcha_id:
            await self.new_captcha(application)
        text = self.error or await say(self, "Code sent")
        return rx.toast.error(text) if sent.failed else rx.toast.success(text)
