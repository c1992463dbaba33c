"""The worker pool and what runs on it (iam_console/workers.py, api/offload.py, the console's
service calls, the outbound guard's cap per organization): docs/security.md, "Availability".
Order, not timing, proves that the loop goes on while a worker blocks."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from types import SimpleNamespace

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Mount, Route

from iam_console import workers
from iam_console.api import offload
from iam_console.api.app import api, route_table
from iam_console.core import outbound
from iam_console.core.access import Actor
from iam_console.ui.state import service
from iam_console.ui.state.prefs import Prefs

PROBE: contextvars.ContextVar[str] = contextvars.ContextVar("probe", default="")


# --- the pool ---

def test_run_carries_the_context_to_a_worker_and_runs_in_place_there():
    async def main():
        PROBE.set("from the event")
        outer = await workers.run(lambda: (threading.current_thread().name, PROBE.get(), workers.on_worker()))
        nested = await workers.run_async(lambda: workers.run(lambda: threading.current_thread().name))
        return outer, nested
    (name, probe, on_worker), nested = asyncio.run(main())
    assert name.startswith(workers.THREAD_PREFIX) and probe == "from the event" and on_worker
    assert nested.startswith(workers.THREAD_PREFIX)  # in place on the worker: no second hop
    assert not workers.on_worker()


def test_the_loop_goes_on_while_a_worker_blocks():
    released, order = threading.Event(), []

    def blocking():
        order.append("blocking started")
        if not released.wait(10):
            order.append("blocking timed out")  # the loop never got to release it
        order.append("blocking done")

    async def main():
        blocked = asyncio.ensure_future(workers.run(blocking))
        while "blocking started" not in order:
            await asyncio.sleep(0.01)
        order.append("loop ran")
        released.set()
        await blocked
    asyncio.run(main())
    assert order == ["blocking started", "loop ran", "blocking done"]


# --- the ASGI layer ---

def _toy(monkeypatch=None):
    """A routed app under Offload, and a mounted one (the console's stand-in) beside it."""
    async def where(request: Request):
        body = await request.body()
        return JSONResponse({"thread": threading.current_thread().name, "size": len(body)})

    async def stream(request: Request):
        def chunks():
            yield from (f"line {i}\n" for i in range(3))
        return StreamingResponse(chunks(), media_type="text/plain")

    async def fails(request: Request):
        raise RuntimeError("boom")

    async def page(scope, receive, send):
        await PlainTextResponse(threading.current_thread().name)(scope, receive, send)

    inner = Starlette(routes=[Route("/api/where", where, methods=["GET", "POST"]), Route("/api/stream", stream),
                              Route("/api/fails", fails), Mount("", app=page)])
    return offload.Offload(inner, route_paths=lambda: ["/api/where", "/api/stream", "/api/{x}"])


def test_routes_run_on_workers_and_the_mounted_console_on_the_loop():
    from starlette.testclient import TestClient

    with TestClient(_toy(), raise_server_exceptions=False) as client:
        assert client.get("/api/where").json()["thread"].startswith(workers.THREAD_PREFIX)
        assert not client.get("/users").text.startswith(workers.THREAD_PREFIX)
        assert client.get("/api/stream").text == "line 0\nline 1\nline 2\n"
        assert client.get("/api/fails").status_code == 500  # the error comes back to the loop's handler


def test_a_body_larger_than_the_prefetch_is_read_whole(monkeypatch):
    """The first PREFETCH_BYTES are read on the loop, the rest from the worker through the loop."""
    monkeypatch.setattr(offload, "PREFETCH_BYTES", 4)
    chunks = [b"abc", b"defg", b"hij", b""]
    sent: list[dict] = []

    async def receive():
        chunk = chunks.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(chunks)}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/api/where", "raw_path": b"/api/where", "root_path": "",
             "query_string": b"", "headers": [], "scheme": "http", "server": ("testserver", 80),
             "client": ("127.0.0.1", 1)}
    asyncio.run(_toy()(scope, receive, send))
    assert b'"size":10' in sent[-1]["body"] and chunks == []


def test_the_api_serves_every_route_on_the_pool_and_leaves_the_console_to_reflex():
    layer = next(m for m in api.user_middleware if m.cls is offload.Offload)
    assert api.user_middleware[-1] is layer  # innermost: everything inside runs on a worker
    served = offload.Offload(None, **layer.kwargs).served_by_routes
    for _, path in route_table(api):
        concrete = path.replace("{path:path}", "a/b").replace("{application}", "app").replace("{", "").replace("}", "")
        assert served(concrete), path
    for console in ("/", "/users", "/users/org/name", "/_event", "/_upload", "/login/oauth/authorize", "/_next/x.js"):
        assert not served(console), console


# --- the console's service calls ---

class _Prefs:
    lang = "en"

    def say(self, key: str, *args: object) -> str:
        return key % args if args else key


class _State:
    router = SimpleNamespace(headers=SimpleNamespace(raw_headers={}, cookie=""),
                             session=SimpleNamespace(client_ip="192.0.2.1"))

    async def get_state(self, cls):
        assert cls is Prefs
        return _Prefs()


def test_a_console_event_waits_for_its_work_on_a_worker_while_the_loop_goes_on(monkeypatch):
    monkeypatch.setattr(service, "viewer", lambda db, router: Actor())
    released, order = threading.Event(), []

    def work(db, actor):
        order.append("work started")
        if not released.wait(10):
            order.append("work timed out")
        return threading.current_thread().name

    async def main():
        event = asyncio.ensure_future(service.call(_State(), work))
        while "work started" not in order:
            await asyncio.sleep(0.01)
        order.append("another event ran")
        released.set()
        return await event
    outcome = asyncio.run(main())
    assert order == ["work started", "another event ran"]
    assert outcome.value.startswith(workers.THREAD_PREFIX)


# --- outbound calls per organization ---

def test_an_organizations_outbound_calls_beyond_its_cap_are_refused(monkeypatch):
    monkeypatch.setattr(outbound, "PER_ORGANIZATION", 2)
    with outbound.on_behalf_of("acme"):
        with outbound.on_behalf_of("acme"):  # nested: the outer call counts, once
            assert outbound.in_progress("acme") == 1
        held = threading.Event(), threading.Event()

        def second():
            with outbound.on_behalf_of("acme"):
                held[0].set()
                held[1].wait(10)
        thread = threading.Thread(target=second)
        thread.start()
        held[0].wait(10)
        try:
            with pytest.raises(outbound.OutboundError) as refused:
                contextvars.Context().run(lambda: outbound.on_behalf_of("acme").__enter__())
            assert str(refused.value) == ("The organization acme already has 2 outbound calls in progress: "
                                          "try again when one has finished")
            with outbound.on_behalf_of("other"):
                pass
        finally:
            held[1].set()
            thread.join(10)
    assert outbound.in_progress("acme") == 0


def test_a_call_no_record_claims_counts_against_the_callers_organization(monkeypatch):
    monkeypatch.setattr(outbound, "PER_ORGANIZATION", 1)

    def as_caller():
        outbound.note_caller("acme")
        with outbound.time_limit("example.test"):
            assert outbound.in_progress("acme") == 1
            with pytest.raises(outbound.OutboundError):
                contextvars.Context().run(lambda: (outbound.note_caller("acme"),
                                                   outbound.time_limit("example.test").__enter__()))
    contextvars.Context().run(as_caller)
    assert outbound.in_progress("acme") == 0
