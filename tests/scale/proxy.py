"""A switchable TCP reverse proxy for the scale-out test: one origin (127.0.0.1 and a free port)
in front of several servers. New connections go to the current target; `switch` changes it and
`drop` closes every open connection (the browser's websocket among them), as a load balancer does
when a server leaves it. Bytes are copied as they are: HTTP, keep-alive and websocket upgrades
pass through unchanged.

`hold` makes it a slow receiver for the noisy-neighbour test and benchmark: a new connection is
accepted and counted (`waiting`) but nothing is forwarded, either way, until `release` (or, with
`hold_seconds`, until that long has passed for it); the caller on the other end sees a server that
does not answer."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import Counter


class SwitchProxy:
    def __init__(self, targets: dict[str, int], first: str, hold_seconds: float | None = None) -> None:
        self.hold_seconds = hold_seconds  # while held, each connection waits at most this long
        self.targets = dict(targets)  # name -> port on 127.0.0.1
        self.current = first
        self.connections: Counter[str] = Counter()  # connections forwarded, by target
        self._open: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="switch-proxy", daemon=True)
        self._server: asyncio.base_events.Server | None = None
        self._released: asyncio.Event | None = None
        self.waiting = 0  # connections accepted and held, not yet forwarded
        self.port = 0

    def __enter__(self) -> SwitchProxy:
        self._thread.start()

        async def start() -> asyncio.base_events.Server:
            self._released = asyncio.Event()
            self._released.set()
            return await asyncio.start_server(self._session, "127.0.0.1", self.port)
        self._server = self._call(start())
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc) -> None:
        async def close() -> None:
            self._released.set()
            self._server.close()
            self._drop()
            await self._server.wait_closed()
        self._call(close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def bind(self, port: int) -> None:
        """Listen on this port (call before entering)."""
        self.port = port

    def switch(self, name: str) -> None:
        assert name in self.targets, name
        self.current = name

    def hold(self) -> None:
        """From now on, accept new connections but forward nothing until `release`."""
        self._loop.call_soon_threadsafe(self._released.clear)

    def release(self) -> None:
        """Forward the held connections, and the next ones at once."""
        self._loop.call_soon_threadsafe(self._released.set)

    def drop(self) -> int:
        """Close every open connection; returns how many pairs were open."""
        async def drop() -> int:
            return self._drop()
        return self._call(drop())

    def _drop(self) -> int:
        count = len(self._open) // 2
        for writer in list(self._open):
            with contextlib.suppress(Exception):
                writer.transport.abort()
        self._open.clear()
        return count

    def _call(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(10)

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self._released.is_set():
            self.waiting += 1
            self._open.add(writer)
            try:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._released.wait(), self.hold_seconds)
            finally:
                self.waiting -= 1
                self._open.discard(writer)
            if writer.is_closing():  # dropped, or the caller gave up meanwhile: nothing to forward
                return
        target = self.current
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.targets[target])
        except OSError:
            writer.transport.abort()
            return
        self.connections[target] += 1
        self._open.update((writer, upstream_writer))
        try:
            await asyncio.gather(self._pipe(reader, upstream_writer), self._pipe(upstream_reader, writer))
        finally:
            for end in (writer, upstream_writer):
                self._open.discard(end)
                with contextlib.suppress(Exception):
                    end.transport.abort()

    @staticmethod
    async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while chunk := await reader.read(65536):
                writer.write(chunk)
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
        except (ConnectionError, OSError):
            writer.transport.abort()
