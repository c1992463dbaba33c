"""Subscriptions: list and edit. The list shows each state as a coloured badge. The rules are
the kind's (commerce/kinds/subscription.py), which the API obeys too: the state is an
administrator's to change, a change to Active approves the subscription (the approver and the
approve time, which the form shows at once) and any other clears both; the period is the plan's
and the end is the start plus one period, computed on save (the form shows it ahead)."""

from __future__ import annotations

from typing import Any

from iam_console.commerce.kinds import subscription as rules
from iam_console.core.errors import ServiceError
from iam_console.core.kinds import choices
from iam_console.core.wire import parse_time
from iam_console.models.base import format_time, utcnow
from iam_console.ui.screens import Column, Field, Screen, ViewerValue, screen

STATE_COLORS = (("Pending", "blue"), ("Active", "green"), ("Upcoming", "amber"), ("Expired", "orange"),
                ("Error", "red"), ("Suspended", "gray"))


def _approval(state: str) -> dict[str, Any]:
    if state == rules.APPROVED:
        return {"approver": ViewerValue("name"), "approveTime": format_time(utcnow())}
    return {"approver": "", "approveTime": ""}


def _end(start: str, period: str) -> dict[str, Any]:
    """The end the save will compute, for a start the form holds as a time."""
    try:
        parsed = parse_time(start, "startTime") if start.strip() else None
    except ServiceError:
        return {}
    end = rules.add_period(parsed, period) if parsed is not None else None
    return {"endTime": format_time(end)} if end is not None else {}


SUBSCRIPTIONS = screen(Screen(
    key="subscription", title="Subscriptions", list_route="/subscriptions",
    edit_route="/subscriptions/{owner}/{name}", edit_title="Subscription", owner_picker=True,
    columns=(
        Column("name", "Name", link="/subscriptions/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("startTime", "Start time", "time", searchable=False),
        Column("endTime", "End time", "time", searchable=False),
        Column("period", "Period", filters=choices("subscription", "period")),
        Column("user", "User", link="/users/{owner}/{user}"),
        Column("plan", "Plan", link="/plans/{owner}/{plan}"),
        Column("pricing", "Pricing", link="/pricings/{owner}/{pricing}"),
        Column("payment", "Payment", link="/payments/{owner}/{payment}"),
        Column("state", "State", "badge", filters=choices("subscription", "state"), colors=STATE_COLORS),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("description", "Description"),
        Field("startTime", "Start time", then=lambda value, values: _end(value, values.get("period", ""))),
        Field("endTime", "End time", derived=True),
        Field("period", "Period", "select", options=choices("subscription", "period"),
              then=lambda value, values: _end(values.get("startTime", ""), value)),
        Field("user", "User", "pick", kind="user"),
        Field("plan", "Plan", "pick", kind="plan"),
        Field("pricing", "Pricing", "pick", kind="pricing"),
        Field("payment", "Payment", "pick", kind="payment"),
        Field("state", "State", "select", options=choices("subscription", "state"), then=_approval),
        Field("approver", "Approver", derived=True),
        Field("approveTime", "Approve time", derived=True),
    ),
))
