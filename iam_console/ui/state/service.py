"""One way for an event to call the service layer: a database session, the
viewer behind the websocket, and a refusal turned into what the page shows
(a toast with the service's message, or /403 for a viewer who may not)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import reflex as rx
from sqlmodel import Session

from ...db import session_scope
from ...services import policy
from ...services.access import Actor
from ...services.errors import ServiceError
from .account import viewer
from .prefs import Prefs

T = TypeVar("T")
REFUSALS = (policy.UNAUTHORIZED, "Please login first")  # answered with /403 where a page asks so


@dataclass(frozen=True)
class Outcome(Generic[T]):
    value: T | None = None
    event: Any = None  # what the event returns when the call failed: a toast or a redirect

    @property
    def failed(self) -> bool:
        return self.event is not None


async def say(state: rx.State, template: str, *args: object) -> str:
    """A catalog string in the viewer's language."""
    return (await state.get_state(Prefs)).say(template, *args)


async def failure(state: rx.State, exc: ServiceError, failed: str = "%s") -> Any:
    """The error toast of a refused call: `failed` is a catalog template around the
    service's own message ("Failed to add: %s"), or a whole message of its own."""
    prefs = await state.get_state(Prefs)
    if "%s" not in failed:
        return rx.toast.error(prefs.say(failed))
    return rx.toast.error(prefs.say(failed, prefs.say(exc.template, *exc.args_)))


async def call(state: rx.State, work: Callable[[Session, Actor], T], *, failed: str = "%s",
               forbidden_page: bool = False) -> Outcome[T]:
    """Run `work(db, viewer)` in one database session (committed when it returns).
    A ServiceError becomes the error toast (`failure`); with `forbidden_page`, a viewer
    who is refused or not signed in goes to /403 instead."""
    try:
        with session_scope() as db:
            return Outcome(work(db, viewer(db, state.router)))
    except ServiceError as exc:
        if forbidden_page and exc.template in REFUSALS:
            return Outcome(event=rx.redirect("/403"))
        return Outcome(event=await failure(state, exc, failed))
