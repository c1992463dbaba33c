"""What the pages of keys, orders and webhook events do on the server, with each kind of viewer:
the list's Add of a key answers its secret once (and keeps only its hash); the webhook event list,
Replay and Delete keep each organization's events to its own admins and leave a record; an order's
pay page is its buyer's and their organization's admins', offering providers only while it is
Created. The browser walks them in tests/e2e/test_console_pages.py."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from sqlmodel import select

from iam_console import models as m
from iam_console.commerce import commerce
from iam_console.commerce.tables import Order, Product
from iam_console.commerce.ui.orders import ORDERS
from iam_console.core import crud
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.identity.passwords import hash_secret
from iam_console.oauth.ui.keys import KEYS
from iam_console.operations import webhooks
from iam_console.operations.ui.webhook_events import WEBHOOK_EVENTS
from iam_console.ui.state.listing import add_new
from tests.conftest import unique


def _actor(user: m.User) -> Actor:
    with session_scope() as db:
        return Actor(user=db.exec(select(m.User).where(m.User.pk == user.pk)).one())


@pytest.fixture
def tenants(make_org, make_user):
    """Two organizations, each with an admin and a user."""
    made = {}
    for side in ("a", "b"):
        org = make_org().name
        made[side] = (org, make_user(org, is_admin=True), make_user(org))
    return made


# --- keys: the secret shown once ---

def test_the_lists_add_answers_a_keys_secret_once_and_keeps_its_hash(tenants):
    org, boss, _ = tenants["a"]
    with session_scope() as db:
        record, once = add_new(db, _actor(boss), KEYS, org, {})
    assert [(key, label) for key, label, _ in once] == [("accessSecret", "Access secret")]
    secret = once[0][2]
    assert len(secret) >= 24
    with session_scope() as db:
        stored = db.exec(select(m.Key).where(m.Key.owner == org, m.Key.name == record["name"])).one()
        read = crud.get_record(db, _actor(boss), KEYS.kind, org, record["name"])
    assert stored.access_secret == hash_secret(secret) and secret not in stored.access_secret
    assert (stored.organization, stored.state, read["accessSecret"]) == (org, "Active", "***")


def test_a_screen_without_a_secret_shows_nothing_once(tenants):
    org, boss, _ = tenants["a"]
    with session_scope() as db:
        record, once = add_new(db, _actor(boss), ORDERS, org, {})
    assert once == [] and record["owner"] == org


def test_an_organization_admin_adds_no_key_to_another_organization(tenants):
    org_b = tenants["b"][0]
    boss_a = tenants["a"][1]
    with pytest.raises(ServiceError), session_scope() as db:
        add_new(db, _actor(boss_a), KEYS, org_b, {})
    with session_scope() as db:
        assert db.exec(select(m.Key).where(m.Key.owner == org_b)).all() == []


# --- webhook events: the list, Replay and Delete ---

def _event(org: str, state: str) -> str:
    name = unique("event")
    with session_scope() as db:
        db.add(m.WebhookEvent(owner="admin", name=name, webhook="admin/hook", organization=org,
                              event_type="update-user", state=state, attempt_count=3, max_retries=3,
                              payload=json.dumps({"id": 1}), last_error="The receiver answered 500"))
    return name


def _stored_event(name: str) -> m.WebhookEvent:
    with session_scope() as db:
        return db.exec(select(m.WebhookEvent).where(m.WebhookEvent.name == name)).one()


REPLAY = next(a for a in WEBHOOK_EVENTS.row_buttons if a.key == "replay")


def test_webhook_events_are_listed_to_their_organizations_admins_only(tenants):
    (org_a, boss_a, alice_a), (org_b, _, _) = tenants["a"], tenants["b"]
    ours, theirs = _event(org_a, "Failed"), _event(org_b, "Failed")
    params = {"p": "1", "pageSize": "50"}
    with session_scope() as db:
        listed = WEBHOOK_EVENTS.reads(db, _actor(boss_a), params | {"organization": org_a})
        assert {r["name"] for r in listed.rows} == {ours}
        assert all(set(r) >= {"state", "attemptCount", "lastError"} for r in listed.rows)
        filtered = WEBHOOK_EVENTS.reads(db, _actor(boss_a), params | {"organization": org_a, "state": "Success"})
        assert filtered.rows == []
        for refused in ({"organization": org_b}, {}):  # another organization's; or theirs, as a user
            with pytest.raises(ServiceError):
                WEBHOOK_EVENTS.reads(db, _actor(boss_a if refused else alice_a), params | refused)
    assert theirs


def test_replay_starts_an_event_over_for_its_own_organizations_admin(tenants):
    (org_a, boss_a, _), (_, boss_b, _) = tenants["a"], tenants["b"]
    name = _event(org_a, "Failed")
    assert REPLAY.shown_for({"state": "Failed"}) and not REPLAY.shown_for({"state": "Success"})
    with pytest.raises(ServiceError), session_scope() as db:
        REPLAY.run(db, _actor(boss_b), f"admin/{name}")
    assert (_stored_event(name).state, _stored_event(name).attempt_count) == ("Failed", 3)
    with session_scope() as db:
        assert REPLAY.run(db, _actor(boss_a), f"admin/{name}") == "Webhook event replay triggered"
    replayed = _stored_event(name)
    assert (replayed.state, replayed.attempt_count, replayed.last_error) == (webhooks.PENDING, 0, "")
    with session_scope() as db:
        recorded = db.exec(select(m.Record).where(m.Record.action == "replay-webhook-event",
                                                  m.Record.organization == org_a)).all()
    assert [json.loads(r.object)["id"] for r in recorded] == [f"admin/{name}"]
    with pytest.raises(ServiceError, match="does not exist"), session_scope() as db:
        REPLAY.run(db, _actor(boss_a), "admin/no-such-event")


def test_delete_removes_only_the_viewers_organizations_events(tenants):
    (org_a, boss_a, _), (_, boss_b, _) = tenants["a"], tenants["b"]
    name = _event(org_a, "Success")
    with pytest.raises(ServiceError), session_scope() as db:
        WEBHOOK_EVENTS.remove(db, _actor(boss_b), f"admin/{name}")
    assert _stored_event(name).name == name
    with session_scope() as db:
        assert WEBHOOK_EVENTS.remove(db, _actor(boss_a), f"admin/{name}") == crud.AFFECTED
        assert WEBHOOK_EVENTS.remove(db, _actor(boss_a), f"admin/{name}") == crud.UNAFFECTED
        assert db.exec(select(m.WebhookEvent).where(m.WebhookEvent.name == name)).first() is None
        recorded = db.exec(select(m.Record).where(m.Record.action == "delete-webhook-event",
                                                  m.Record.organization == org_a)).all()
    assert len(recorded) == 2


# --- orders: the pay page ---

def _order(org: str, user: str) -> str:
    product, order = unique("product"), unique("order")
    with session_scope() as db:
        db.add(m.Provider(owner=org, name="dummy", display_name="Dummy pay", category="Payment", type="Dummy"))
        db.add(Product(owner=org, name=product, display_name="Tea", price=Decimal("2.50"), currency="USD",
                       quantity=5, state="Published", providers=["dummy"]))
        db.add(Order(owner=org, name=order, user=user, price=Decimal("5"), currency="USD", state="Created",
                     products=[{"owner": org, "name": product, "displayName": "Tea", "price": "2.50",
                                "currency": "USD", "quantity": 2}]))
    return order


def test_the_pay_page_is_the_buyers_and_their_admins_and_pays_as_pay_order(tenants, make_user):
    (org_a, boss_a, alice_a), (_, boss_b, _) = tenants["a"], tenants["b"]
    other = make_user(org_a)
    order = _order(org_a, alice_a.name)
    assert ORDERS.row_buttons[0].shown_for({"state": "Created"})
    assert not any(ORDERS.row_buttons[0].shown_for({"state": s}) for s in ("Paid", "Canceled", "Failed"))
    for refused in (boss_b, other):  # another organization's admin; another user of the organization
        with pytest.raises(ServiceError, match="Unauthorized operation"), session_scope() as db:
            commerce.order_to_pay(db, _actor(refused), org_a, order)
    for allowed in (alice_a, boss_a):
        with session_scope() as db:
            shown = commerce.order_to_pay(db, _actor(allowed), org_a, order)
        assert shown["order"]["name"] == order and shown["payment"] is None
        assert shown["providers"] == [{"name": "dummy", "displayName": "Dummy pay", "type": "Dummy"}]
    with session_scope() as db:
        paid = commerce.pay_order(db, _actor(boss_a), org_a, order, "dummy")
    with session_scope() as db:
        shown = commerce.order_to_pay(db, _actor(alice_a), org_a, order)
    assert (shown["order"]["state"], shown["payment"]["name"], shown["payment"]["state"]) == (
        "Paid", paid.name, "Paid")
    assert shown["providers"] == []  # nothing left to pay
    with pytest.raises(ServiceError, match="does not exist"), session_scope() as db:
        commerce.order_to_pay(db, _actor(boss_a), org_a, "no-such-order")


def test_an_events_webhook_links_to_its_page_and_another_features_receiver_to_none():
    from iam_console.oauth import logout  # noqa: F401  (declares its event kind, as the scheduler does)
    from iam_console.operations.ui.webhook_events import _webhook_page

    assert _webhook_page({"webhook": "admin/hook-1", "eventType": "update-user"}) == "/webhooks/hook-1"
    assert _webhook_page({"webhook": "admin/app-1", "eventType": "backchannel-logout"}) == ""
    assert _webhook_page({"webhook": "", "eventType": "update-user"}) == ""
