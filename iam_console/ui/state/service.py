"""One way for an event to call the service layer: a database session, the
viewer behind the websocket, and a refusal turned into what the page shows
(a toast with the service's message, or /403 for a viewer who may not).

The work always runs on the worker pool (iam_console/workers.py), never on the event loop:
it uses the database and may hash a password, sign, parse a workbook or wait on a slow
destination, and the loop serves every console and API caller (docs/security.md,
"Availability"). `call` awaits it inside the event: the event keeps its state meanwhile
(Reflex runs one event of a page's state at a time), so the work may fill fields of that state
as the event itself would; it never awaits nor calls Reflex (get_state happens before or after).
`in_thread` is for background events, which call it outside `async with self`, so that the
page's other events go on while the work waits. Either way, a record the work writes carries
the browser's address and the viewer's language, as an API request's records do
(audit/records.py, CURRENT_CALL), and its outbound calls count against the viewer's
organization (core/outbound.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import reflex as rx
from sqlmodel import Session

from iam_console import workers
from iam_console.audit import records
from iam_console.core import crud, outbound, policy
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.ui.state.account import client_ip, viewer
from iam_console.ui.state.prefs import Prefs

T = TypeVar("T")
REFUSALS = (policy.UNAUTHORIZED, "Please login first")  # answered with /403 where a page asks so


@dataclass(frozen=True)
class Outcome(Generic[T]):
    value: T | None = None
    event: Any = None  # what the event returns when the call failed: a toast or a redirect
    error: ServiceError | None = None  # the refusal itself

    @property
    def failed(self) -> bool:
        return self.error is not None


async def audit_request(state: rx.State) -> crud.Request:
    """Where a console write comes from, for its record: the browser's address and the
    viewer's language (the service names the API route the write stands for)."""
    prefs = await state.get_state(Prefs)
    return crud.Request(client_ip=client_ip(state.router), language=prefs.lang)


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


def _run(router: Any, work: Callable[[Session, Actor], T], language: str = "") -> T:
    bound = records.CURRENT_CALL.set(records.Call(client_ip=client_ip(router), language=language))
    try:
        with session_scope() as db:
            actor = viewer(db, router)
            outbound.note_caller(actor.organization, takes_turns=False)  # a person, not a flood: fair_share
            return work(db, actor)
    finally:
        records.CURRENT_CALL.reset(bound)


async def call(state: rx.State, work: Callable[[Session, Actor], T], *, failed: str = "%s",
               forbidden_page: bool = False, quiet: bool = False) -> Outcome[T]:
    """Run `work(db, viewer)` in one database session (committed when it returns).
    A ServiceError becomes the error toast (`failure`); with `forbidden_page`, a viewer
    who is refused or not signed in goes to /403 instead; `quiet` makes no event (the page
    shows `message(state, outcome.error)` in place)."""
    try:
        return Outcome(await workers.run(_run, state.router, work, (await state.get_state(Prefs)).lang))
    except ServiceError as exc:
        if forbidden_page and exc.template in REFUSALS:
            return Outcome(event=rx.redirect("/403"), error=exc)
        return Outcome(event=None if quiet else await failure(state, exc, failed), error=exc)


async def in_thread(router: Any, work: Callable[[Session, Actor], T], language: str = "") -> Outcome[T]:
    """`call`'s work on a worker thread; a refusal comes back as `outcome.error` (turn it
    into words with `message` once back inside `async with self`)."""
    try:
        return Outcome(await workers.run(_run, router, work, language))
    except ServiceError as exc:
        return Outcome(error=exc)


async def with_db(work: Callable[[Session], T]) -> T:
    """work(db) in one database session (committed when it returns) on a worker thread: a page's
    own reads and writes that need no viewer (a sign-in page's look, a pending device code)."""
    def run() -> T:
        with session_scope() as db:
            return work(db)
    return await workers.run(run)


async def message(state: rx.State, exc: ServiceError) -> str:
    """A refusal in the viewer's language."""
    return await say(state, exc.template, *exc.args_)


async def count_down(state: rx.State) -> None:
    """A background event's wait before another code may be sent: `state.countdown` seconds,
    shown falling a second at a time (the page disables Send code meanwhile)."""
    while True:
        await asyncio.sleep(1)
        async with state:
            state.countdown = max(0, state.countdown - 1)
            if state.countdown == 0:
                return
