"""The test tools of the provider edit page (services/provider_tools.py): each runs on the provider
as the form shows it, in a worker thread (a background event), so that the page stays live while
a mail server or gateway is called; every outbound call has its time limit."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import reflex as rx

from ...db import session_scope
from ...services import captcha, provider_tools
from ...services.errors import ServiceError
from .account import viewer
from .editing import Editing
from .prefs import Prefs

TOOLS = ("email", "smtp", "sms", "notification", "captcha")
SUCCESS = {"email": "Successfully sent", "smtp": "SMTP connected successfully", "sms": "Successfully sent",
           "notification": "Successfully sent"}


def _run(router, owner: str, name: str, changes: dict[str, Any], tool: str, argument: str) -> Any:
    """One tool, in one database session, for the viewer behind the websocket."""
    with session_scope() as db:
        actor = viewer(db, router)
        provider = provider_tools.edited(db, actor, owner, name, changes)
        work: dict[str, Callable[[], Any]] = {
            "email": lambda: provider_tools.send_test_email(db, actor, provider, argument),
            "smtp": lambda: provider_tools.test_smtp(db, actor, provider),
            "sms": lambda: provider_tools.send_test_sms(db, actor, provider, argument),
            "notification": lambda: provider_tools.send_test_notification(db, actor, provider, argument),
            "captcha": lambda: provider_tools.captcha_preview(db, actor, provider, router.session.client_ip),
        }
        return work[tool]()


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
        async with self:
            if self.running:
                return
            editing = await self.get_state(Editing)
            try:
                changes = editing._changes()
            except ValueError as exc:
                yield rx.toast.error(str(exc))
                return
            owner, name, router = editing.saved_owner, editing.saved_name, self.router
            argument = editing.values.get("receiver" if tool in ("email", "sms") else "content", "")
            self.running = tool
        failure, answer = None, None
        try:
            answer = await asyncio.to_thread(_run, router, owner, name, changes, tool, argument)
        except ServiceError as exc:
            failure = exc
        async with self:
            self.running = ""
            prefs = await self.get_state(Prefs)
            if failure is not None:
                toast = rx.toast.error(prefs.say(failure.template, *failure.args_))
            elif tool == "captcha":
                self._captcha_id, self.captcha_answer = answer["captchaId"], ""
                self.captcha_image = "data:image/png;base64," + answer["captchaImage"]
                toast = None
            else:
                toast = rx.toast.success(prefs.say(SUCCESS[tool]))
        if toast is not None:
            yield toast

    @rx.event
    async def verify_captcha(self):
        """Try the previewed Default captcha: a right answer is verified, and each picture is good once."""
        answer, captcha_id = self.captcha_answer.strip(), self._captcha_id
        prefs = await self.get_state(Prefs)
        try:
            with session_scope() as db:
                right = captcha.verify(db, captcha.DEFAULT, answer, captcha_id)
        except ServiceError as exc:
            return rx.toast.error(prefs.say(exc.template, *exc.args_))
        self.close_captcha()
        return rx.toast.success(prefs.say("Captcha verified")) if right else rx.toast.error(
            prefs.say("Wrong captcha answer"))
