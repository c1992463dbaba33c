"""Every route of the API runs on the worker pool (iam_console/workers.py), never on the event loop.

The routes are async functions that call the synchronous service layer (database sessions,
password hashing, signing, outbound HTTP/SMTP/LDAP, workbooks, PDFs): on the loop, one slow call
would stall every request of every organization. `Offload` is the API's innermost middleware:
for a request one of the API's routes serves, what lies inside it (the routing, the handler with
its dependencies, the exception handlers, record_refusal included, and the answer's sending code)
runs on a worker thread:

- on the loop, the request's body is read first (up to PREFETCH_BYTES), so a slow client holds
  no worker thread while it trickles its body in;
- then the route runs on a worker thread's own event loop, reading the body from that copy (a
  larger body's rest, and the disconnect a streaming answer listens for, come from the loop);
- what it sends goes back through the loop, which alone touches the connection.

The middleware outside it (api/middleware.py: header checks, no database) and the console,
which Reflex mounts under the API (its pages, its upload endpoint and the /_event websocket,
bound to the loop's state manager), stay on the loop. docs/security.md, "Availability".
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from iam_console import workers

PREFETCH_BYTES = 1024 * 1024


class Offload:
    """The ASGI layer: `route_paths()` lists the paths of the API's routes (templates such as
    /api/{path:path}); a request to one of them is served on the worker pool."""

    def __init__(self, app: ASGIApp, route_paths: Callable[[], Iterable[str]]) -> None:
        self.app = app
        self._route_paths = route_paths
        self._paths: tuple[frozenset[str], tuple[str, ...]] | None = None

    def served_by_routes(self, path: str) -> bool:
        """Whether one of the API's routes answers `path` (else Reflex's app does). Read from
        the route table once, as exact paths and the literal prefixes of templated ones."""
        if self._paths is None:
            templates = set(self._route_paths())
            self._paths = (frozenset(p for p in templates if "{" not in p),
                           tuple(sorted({p.partition("{")[0] for p in templates if "{" in p})))
        exact, prefixes = self._paths
        return path in exact or path.startswith(prefixes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or workers.on_worker() or not self.served_by_routes(scope["path"]):
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        read = await _prefetch(receive)

        async def replay() -> Message:
            if read:
                return read.popleft()
            return await workers.back_on(loop, receive)

        async def send_back(message: Message) -> None:
            await workers.back_on(loop, lambda: send(message))

        await workers.run_async(lambda: self.app(scope, replay, send_back))


async def _prefetch(receive: Receive) -> deque[Message]:
    """The request's first messages, up to the end of its body or PREFETCH_BYTES of it."""
    read: deque[Message] = deque()
    size = 0
    while size < PREFETCH_BYTES:
        message = await receive()
        read.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
        size += len(message.get("body", b""))
    return read
