"""A poll timer (ticker.jsx): `ticker(interval_ms, on_tick)` fires `on_tick` at once and then
every `interval_ms` while the page that holds it is shown. Nothing runs on the server between
ticks, so a viewer who leaves costs nothing."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex.event import no_args_event_spec


class Ticker(rx.Component):
    library = rx.asset("ticker.jsx", shared=True).importable_path
    tag = "Ticker"

    interval: rx.Var[int]
    on_tick: rx.EventHandler[no_args_event_spec]


def ticker(interval_ms: int, on_tick: Any) -> rx.Component:
    return Ticker.create(interval=interval_ms, on_tick=on_tick)
