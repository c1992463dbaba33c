"""Configuration, read once from the environment (see README, 'Configuration')."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

PROJECT_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Settings:
    database_url: str
    port: int
    origin: str  # public URL: issuer and links come from here, never from Host
    admin_password: str  # initial password of built-in/admin; "" = generate one
    cookie_secure: bool
    files_dir: Path  # uploaded files (avatars), served at /files/
    outbound_allow: str  # internal hosts and networks outbound connections may reach (core/outbound.py)
    trusted_proxies: str  # proxies whose X-Forwarded-For is believed (core/addresses.py)
    ip_lookup_url: str  # the IP lookup the lists' client addresses link to, "{ip}" standing for one; "" no link
    record_retention_days: int  # records older than this are purged by the scheduler; 0 keeps them all
    metrics_token: str  # a bearer token that may read /api/metrics without an account; "" = none may
    # the chat services' API base URLs the Telegram, Slack and Discord notification types call
    # (IAM_TELEGRAM_API, IAM_SLACK_API, IAM_DISCORD_API): the services' own by default, a local
    # stand-in in tests
    telegram_api: str
    slack_api: str
    discord_api: str
    # modules of extra pages, imported with the console's own: the browser tests' pages for widgets
    # that no screen shows yet; empty in production
    extra_pages: tuple[str, ...]
    # Google's ID token keys (IAM_GOOGLE_JWKS, fetched by the server) and Google Identity Services'
    # client script for One Tap (IAM_GOOGLE_GSI_SCRIPT, loaded by the visitor's browser): Google's
    # own by default, a local stand-in in tests
    google_jwks: str = "https://www.googleapis.com/oauth2/v3/certs"
    google_gsi_script: str = "https://accounts.google.com/gsi/client"
    # how often each worker looks for scheduled work that is due (the LDAP auto sync, syncers, the
    # record purge); their intervals stay in minutes. Shorter only in tests.
    scheduler_tick_seconds: float = 60.0
    # a Casdoor init_data.json whose records are added at start when missing (core/init_data.py)
    init_data: str = ""
    # the threads that run the API's routes and the console's service calls (iam_console/workers.py,
    # IAM_WORKER_THREADS); a thread waiting on a slow destination costs little, so there are many
    worker_threads: int = 64
    # how many outbound calls one organization's records may have in progress at once in a process
    # (core/outbound.py, IAM_OUTBOUND_PER_ORGANIZATION): more are refused, so that a tenant's
    # slow receivers park at most this many of the worker threads
    outbound_per_organization: int = 8
    # the child processes that sign with big RSA keys and generate keys (iam_console/cpu_work.py):
    # how many (IAM_CPU_PROCESSES, one a core by default; 0 does that work in the calling thread),
    # how many of them one organization may use at once (IAM_CPU_PER_ORGANIZATION, 0: half of
    # them, at least one) and how much lower their scheduling priority is (IAM_CPU_NICE)
    cpu_processes: int = 2
    cpu_per_organization: int = 0
    cpu_nice: int = 10


def _default_database_url() -> str:
    return f"sqlite:///{PROJECT_ROOT / 'data' / 'iam.db'}"


def load() -> Settings:
    port = int(os.environ.get("IAM_PORT", "3000"))
    origin = os.environ.get("IAM_ORIGIN", f"http://localhost:{port}").rstrip("/")
    return Settings(
        database_url=os.environ.get("IAM_DATABASE_URL") or _default_database_url(),
        port=port,
        origin=origin,
        admin_password=os.environ.get("IAM_ADMIN_PASSWORD", ""),
        cookie_secure=origin.startswith("https://"),
        files_dir=Path(os.environ.get("IAM_FILES_DIR") or PROJECT_ROOT / "data" / "files"),
        outbound_allow=os.environ.get("IAM_OUTBOUND_ALLOW", ""),
        trusted_proxies=os.environ.get("IAM_TRUSTED_PROXIES", ""),
        ip_lookup_url=os.environ.get("IAM_IP_LOOKUP_URL", ""),
        record_retention_days=int(os.environ.get("IAM_RECORD_RETENTION_DAYS", "0") or 0),
        metrics_token=os.environ.get("IAM_METRICS_TOKEN", ""),
        telegram_api=os.environ.get("IAM_TELEGRAM_API", "https://api.telegram.org").rstrip("/"),
        slack_api=os.environ.get("IAM_SLACK_API", "https://slack.com/api").rstrip("/"),
        discord_api=os.environ.get("IAM_DISCORD_API", "https://discord.com/api/v10").rstrip("/"),
        google_jwks=os.environ.get("IAM_GOOGLE_JWKS", "") or "https://www.googleapis.com/oauth2/v3/certs",
        google_gsi_script=os.environ.get("IAM_GOOGLE_GSI_SCRIPT", "") or "https://accounts.google.com/gsi/client",
        extra_pages=tuple(m.strip() for m in os.environ.get("IAM_EXTRA_PAGES", "").split(",") if m.strip()),
        init_data=os.environ.get("IAM_INIT_DATA", ""),
        scheduler_tick_seconds=max(0.5, float(os.environ.get("IAM_SCHEDULER_TICK_SECONDS", "") or 60)),
        worker_threads=max(4, int(os.environ.get("IAM_WORKER_THREADS", "") or 64)),
        outbound_per_organization=max(1, int(os.environ.get("IAM_OUTBOUND_PER_ORGANIZATION", "") or 8)),
        cpu_processes=max(0, int(os.environ.get("IAM_CPU_PROCESSES", "").strip() or (os.cpu_count() or 1))),
        cpu_per_organization=max(0, int(os.environ.get("IAM_CPU_PER_ORGANIZATION", "") or 0)),
        cpu_nice=max(0, min(19, int(os.environ.get("IAM_CPU_NICE", "") or 10))),
    )


settings = load()


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def console_origins(origin: str) -> frozenset[str]:
    """The origins the console is served from: IAM_ORIGIN, and on a loopback origin its other
    loopback spellings on the same port. Cookie-authenticated writes, the websocket and
    credentialed cross-origin reads are accepted from these alone."""
    parts = urlsplit(origin)
    origins = {origin_of(origin)}
    if parts.hostname in ("localhost", "127.0.0.1", "::1"):
        port = f":{parts.port}" if parts.port else ""
        origins |= {f"{parts.scheme}://{name}{port}" for name in LOOPBACK_NAMES}
    return frozenset(origins)
