"""The Reflex entry point: the HTTP API in front, the console's pages behind."""

from __future__ import annotations

import importlib
from pathlib import Path

import reflex as rx

from iam_console.api.app import api
from iam_console.api.middleware import without_reflex_cors
from iam_console.scheduler import run_scheduled_work, run_webhook_delivery
from iam_console.settings import settings
from iam_console.startup import prepare_database, settle_the_interpreter
from iam_console.ui import pages  # noqa: F401  (registers the pages)
from iam_console.ui.routes import PAGES
from iam_console.ui.shell import connection_notice, guarded
from iam_console.ui.state.account import Account
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.theme import READABLE_CSS

for module in settings.extra_pages:  # IAM_EXTRA_PAGES: the browser tests' own pages
    importlib.import_module(module)

without_reflex_cors()  # the server's CORS is api.middleware.CrossOrigin's alone
# inlined, not loaded: it must listen before the router does (assets/history_guard.js)
HISTORY_GUARD = (Path(__file__).resolve().parent.parent / "assets" / "history_guard.js").read_text()
app = rx.App(
    api_transformer=api,
    head_components=[rx.script(src="/iam.js"), rx.el.script(HISTORY_GUARD), rx.el.style(READABLE_CSS)],
    toaster=rx.toast.provider(position="top-center"),
)
# 'Failed to connect to server: {error}' in place of Reflex's connection toast
app.app_wraps[(5, "Overlay")] = lambda stateful: connection_notice() if stateful else None

for spec in PAGES:
    own = spec.on_load if isinstance(spec.on_load, list) else [spec.on_load] if spec.on_load else []
    if spec.guarded:
        app.add_page(lambda spec=spec: guarded(spec.component()), route=spec.route, title=spec.title,
                     on_load=[Account.guard, Prefs.settle, *own])
    else:
        app.add_page(spec.component, route=spec.route, title=spec.title, on_load=[Prefs.settle, *own])

app.register_lifespan_task(prepare_database)
app.register_lifespan_task(run_scheduled_work)
app.register_lifespan_task(run_webhook_delivery)
app.register_lifespan_task(settle_the_interpreter)
