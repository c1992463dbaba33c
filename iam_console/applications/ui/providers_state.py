"""The test tools of the provider edit page (applications/provider_tools.py): each runs on the provider
as the form shows it, in a worker thread (a background event), so that the page stays live while
a mail server or gateway is called; every outbound call has its time limit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reflex as rx

from iam_console.applications import provider_tools
from iam_console.signin import captcha
from iam_console.ui.state.account import client_ip
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.service import call, in_thread, message, say

TOOLS = ("email", "smtp", "sms", "notification", "captcha")
SUCCESS = {"email": "Successfully sent", "smtp": "SMTP connected successfully", "sms": "Successfully sent",
           "notification": "Successfully sent"}


def _tool(owner: str, name: str, changes: dict[str, Any], tool: str, argument: str, client_ip: str):
    """One tool as `work(db, viewer)`, on the provider as the form shows it."""
    def work(db, actor) -> Any:
        provider = provider_tools.edited(db, actor, owner, name, changes)
        run: dict[str, Callable[[], Any]] = {
            "email": lambda: provider_tools.send_test_email(db, actor, provider, argument),
            "smtp": lambda: provider_tools.test_smtp(db, actor, provider),
            "sms": lambda: provider_tools.send_test_sms(db, actor, provider, argument),
            "notification": lambda: provider_tools.send_test_notification(db, actor, provider, argument),
            "captcha": lambda: provider_tools.captcha_preview(db, actor, provider, client_ip),
        }
        return run[tool]()
    return work


class ProviderTools(rx.State):
    running: str = ""  # the tool under way ("" when none)
    captcha_image: str = ""  # a Default captcha's picture (a data URL) while previewed
    captcha_answer: str = ""
    _captcha_id: str = ""

    @rx.event
    def set_captcha_answer(self, value: str):
        self.captcha_answer = value[:20]

    @rx.event
    def close_captcha(self):
        self.captcha_image, self.captcha_answer, self._captcha_id = "", "", ""

    @rx.event(background=True)
    async def run(self, tool: str):
        if tool not in TOOLS:
            return
        bad_form = ""
        async with self:
            if self.running:
                return
            editing = await self.get_state(Editing)
            try:
                changes = editing._changes()
            except ValueError as exc:  # a field that is not what it should be (a port that is no number)
                bad_form = str(exc)
            else:
                owner, name, router = editing.saved_owner, editing.saved_name, self.router
                argument = editing.values.get("receiver" if tool in ("email", "sms") else "content", "")
                self.running = tool
        if bad_form:
            yield rx.toast.error(bad_form)
            return
        done = await in_thread(router, _tool(owner, name, changes, tool, argument, client_ip(router)))
        async with self:
            self.running = ""
            if done.failed:
                toast = rx.toast.error(await message(self, done.error))
            elif tool == "captcha":
                self._captcha_id, self.captcha_answer = done.value["captchaId"], ""
                self.captcha_image = "data:image/png;base64," + done.value["captchaImage"]
                toast = None
            else:
                toast = rx.toast.success(await say(self, SUCCESS[tool]))
        if toast is not None:
            yield toast

    @rx.event
    async def verify_captcha(self):
        """Try the previewed Default captcha: a right answer is verified, and each picture is good once."""
        answer, captcha_id = self.captcha_answer.strip(), self._captcha_id
        checked = await call(self, lambda db, actor: captcha.verify(db, captcha.DEFAULT, answer, captcha_id))
        if checked.failed:
            return checked.event
        self.close_captcha()
        return rx.toast.success(await say(self, "Captcha verified")) if checked.value else rx.toast.error(
            await say(self, "Wrong captcha answer"))
