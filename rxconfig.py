"""Reflex configuration. Production mode serves pages, the websocket and /api/* on IAM_PORT.
With REDIS_URL set, the console's per-browser state lives in Redis (Reflex's Redis state
manager), so several workers and servers share it (docs/operations.md, "Several workers")."""

import os

import reflex as rx
from reflex.plugins.sitemap import SitemapPlugin

from iam_console.settings import console_origins, settings

config = rx.Config(
    app_name="iam_console",
    frontend_port=settings.port,
    backend_port=settings.port,
    api_url=settings.origin,
    deploy_url=settings.origin,
    # the websocket's Origin check (socket.io's); HTTP CORS is iam_console.api.middleware.CrossOrigin's
    cors_allowed_origins=sorted(console_origins(settings.origin)),
    redis_url=os.environ.get("REDIS_URL") or None,
    telemetry_enabled=False,
    show_built_with_reflex=False,
    plugins=[rx.plugins.RadixThemesPlugin(theme=rx.theme(appearance="light", accent_color="blue", radius="medium"))],
    disable_plugins=[SitemapPlugin],
)
