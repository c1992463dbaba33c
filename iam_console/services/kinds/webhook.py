"""Webhooks: an HTTP call to a URL on chosen events."""

from __future__ import annotations

from .common import Choice, KindRules, fixed

METHODS = ("POST", "GET", "PUT", "DELETE")

RULES = KindRules(
    choices=(Choice("method", METHODS),),
    new=fixed(url="https://example.com/callback", method="POST", contentType="application/json",
              events=["signup", "login", "logout", "update-user"], isEnabled=True),
    organization_as_owner=True,
)
