"""The ticket's routes and rules through HTTP, as Casdoor's ticket API has them: a user sees,
opens, closes and messages only their own tickets; their organization's admins all of its
tickets; another organization's admin none of them; the author, time and admin flag of a message
are the server's; bad input is refused with a clear message and nothing written."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console.api.app import api
from iam_console.core import crud
from iam_console.core.resources import REGISTRY
from iam_console.db import session_scope
from iam_tickets.models import Ticket
from tests.api.conftest import sign_in
from tests.conftest import ADMIN_PASSWORD, unique

PASSWORD = "Tickets-pass-1"


@pytest.fixture(scope="module")
def world(database):
    """Organizations A and B, each with an admin (boss) and two users (alice, bob), signed in."""
    names = {"a": unique("tka"), "b": unique("tkb")}
    global_admin = sign_in("built-in", "admin", ADMIN_PASSWORD)
    for org in names.values():
        assert global_admin.post("/api/add-organization", json={
            "owner": "admin", "name": org, "passwordType": "argon2id"}).json()["status"] == "ok"
        for user, is_admin in (("boss", True), ("alice", False), ("bob", False)):
            added = global_admin.post("/api/add-user", json={
                "owner": org, "name": user, "password": PASSWORD, "isAdmin": is_admin}).json()
            assert added["status"] == "ok", added
    clients = {f"{who}_{key}": sign_in(org, who, PASSWORD)
               for key, org in names.items() for who in ("boss", "alice", "bob")}
    return {"orgs": names, "global": global_admin, **clients}


def _open(client: TestClient, org: str, **fields) -> str:
    name = unique("ticket")
    answer = client.post("/api/add-ticket", json={"owner": org, "name": name, "title": "Help", **fields}).json()
    assert answer == {**answer, "status": "ok", "data": "Affected"}, answer
    return name


def _stored(org: str, name: str) -> Ticket | None:
    with session_scope() as db:
        return db.exec(select(Ticket).where(Ticket.owner == org, Ticket.name == name)).first()


def test_a_new_ticket_is_its_openers_whatever_the_body_says(world):
    a = world["orgs"]["a"]
    name = _open(world["alice_a"], a, user=f"{a}/alice", messages=[{"author": "x", "text": "forged", "isAdmin": True}])
    ticket = world["alice_a"].get("/api/get-ticket", params={"id": f"{a}/{name}"}).json()["data"]
    assert ticket["user"] == f"{a}/alice" and ticket["state"] == "Open" and ticket["messages"] == []
    assert set(ticket) == {"owner", "name", "createdTime", "updatedTime", "displayName", "user", "title", "content",
                           "state", "messages"}
    # an admin's new ticket is the admin's, unless they open it for a user of their organization
    assert _stored(a, _open(world["boss_a"], a)).user == f"{a}/boss"
    assert _stored(a, _open(world["boss_a"], a, user=f"{a}/alice")).user == f"{a}/alice"


def test_a_user_cannot_open_a_ticket_for_someone_else(world):
    a = world["orgs"]["a"]
    name = unique("ticket")
    refused = world["alice_a"].post("/api/add-ticket", json={"owner": a, "name": name, "user": f"{a}/bob"}).json()
    assert refused["status"] == "error" and refused["msg"] == "Unauthorized operation"
    assert _stored(a, name) is None


def test_a_user_sees_only_their_own_tickets_and_an_admin_all_of_their_organizations(world):
    a = world["orgs"]["a"]
    alices, bobs = _open(world["alice_a"], a), _open(world["bob_a"], a)

    def listed(client: TestClient, **params) -> set[str]:
        answer = client.get("/api/get-tickets", params={"owner": a, **params}).json()
        assert answer["status"] == "ok", answer
        return {row["name"] for row in answer["data"]}

    assert alices in listed(world["alice_a"]) and bobs not in listed(world["alice_a"])
    assert alices in listed(world["alice_a"], p="1", pageSize="50")
    assert {alices, bobs} <= listed(world["boss_a"]) and {alices, bobs} <= listed(world["global"])
    assert world["alice_a"].get("/api/get-ticket", params={"id": f"{a}/{bobs}"}).json()["data"] is None
    assert world["boss_a"].get("/api/get-ticket", params={"id": f"{a}/{bobs}"}).json()["data"]["name"] == bobs


def test_another_organization_reaches_none_of_them(world):
    a = world["orgs"]["a"]
    name = _open(world["alice_a"], a)
    for caller in ("boss_b", "alice_b"):
        client = world[caller]
        assert client.get("/api/get-tickets", params={"owner": a}).json()["status"] == "error"
        assert client.get("/api/get-ticket", params={"id": f"{a}/{name}"}).json()["data"] is None
        changed = client.post("/api/update-ticket", params={"id": f"{a}/{name}"},
                              json={"owner": a, "name": name, "title": "hijacked"}).json()
        assert changed["data"] == "Unaffected" or changed["status"] == "error"
        assert client.post("/api/delete-ticket", json={"owner": a, "name": name}).json()["data"] != "Affected"
        message = client.post("/api/add-ticket-message", params={"id": f"{a}/{name}"}, json={"text": "hi"}).json()
        assert message["status"] == "error" and message["msg"] == f"The ticket {a}/{name} does not exist"
        moved = client.post("/api/add-ticket", json={"owner": a, "name": unique("ticket")}).json()
        assert moved["status"] == "error"
    ticket = _stored(a, name)
    assert ticket.title == "Help" and ticket.messages == []


def test_messages_are_authored_by_the_server(world):
    a = world["orgs"]["a"]
    name = _open(world["alice_a"], a)
    forged = {"text": "It still fails", "author": f"{a}/boss", "isAdmin": True, "timestamp": "2001-01-01T00:00:00Z"}
    assert world["alice_a"].post("/api/add-ticket-message", params={"id": f"{a}/{name}"},
                                 json=forged).json()["data"] == "Affected"
    assert world["boss_a"].post("/api/add-ticket-message", params={"id": f"{a}/{name}"},
                                json={"text": "Looking into it", "isAdmin": False}).json()["data"] == "Affected"
    messages = world["alice_a"].get("/api/get-ticket", params={"id": f"{a}/{name}"}).json()["data"]["messages"]
    assert [(m["author"], m["text"], m["isAdmin"]) for m in messages] == [
        (f"{a}/alice", "It still fails", False), (f"{a}/boss", "Looking into it", True)]
    assert all(m["timestamp"].startswith("20") and not m["timestamp"].startswith("2001") for m in messages)
    # the thread never changes through update-ticket, not even an admin's
    body = {"owner": a, "name": name, "title": "Help", "messages": [{"author": "x", "text": "gone", "isAdmin": True}]}
    world["boss_a"].post("/api/update-ticket", params={"id": f"{a}/{name}"}, json=body)
    assert [m["text"] for m in _stored(a, name).messages] == ["It still fails", "Looking into it"]


def test_a_user_messages_only_their_own_tickets(world):
    a = world["orgs"]["a"]
    bobs = _open(world["bob_a"], a)
    refused = world["alice_a"].post("/api/add-ticket-message", params={"id": f"{a}/{bobs}"}, json={"text": "x"}).json()
    assert refused["status"] == "error" and _stored(a, bobs).messages == []
    anonymous = TestClient(api).post("/api/add-ticket-message", params={"id": f"{a}/{bobs}"}, json={"text": "x"})
    assert anonymous.json()["msg"] == "Please login first"


def test_a_user_closes_their_ticket_and_changes_nothing_else_of_its_state(world):
    a = world["orgs"]["a"]
    name = _open(world["alice_a"], a)
    alice = world["alice_a"]

    def update(client: TestClient, **fields) -> dict:
        return client.post("/api/update-ticket", params={"id": f"{a}/{name}"},
                           json={"owner": a, "name": name, **fields}).json()

    refused = update(alice, state="Resolved")
    assert refused["status"] == "error" and "only close" in refused["msg"] and _stored(a, name).state == "Open"
    assert update(alice, title="Still broken", content="Details")["data"] == "Affected"
    assert update(alice, user=f"{a}/bob")["msg"] == "Unauthorized operation"
    assert update(alice, name=unique("renamed"))["status"] == "error"
    assert update(alice, state="Closed")["data"] == "Affected"
    ticket = _stored(a, name)
    assert (ticket.title, ticket.content, ticket.state, ticket.user) == ("Still broken", "Details", "Closed",
                                                                          f"{a}/alice")
    assert update(alice, state="Open")["status"] == "error"  # reopening is the admins'
    assert update(world["boss_a"], state="In Progress")["data"] == "Affected"


def test_only_admins_delete_tickets(world):
    a = world["orgs"]["a"]
    name = _open(world["alice_a"], a)
    refused = world["alice_a"].post("/api/delete-ticket", json={"owner": a, "name": name}).json()
    assert refused["status"] == "error" and _stored(a, name) is not None
    assert world["boss_a"].post("/api/delete-ticket", json={"owner": a, "name": name}).json()["data"] == "Affected"
    assert _stored(a, name) is None


@pytest.mark.parametrize(("fields", "message"), [
    ({"state": "Pending"}, "The state must be Open, In Progress, Resolved or Closed"),
    ({"title": "x" * 201}, "The field title is too long (at most 200 characters)"),
    ({"messages": "not a list"}, None),  # server-set: ignored, not refused
    ({"user": "someone/else"}, "names"),  # no user of the organization
    ({"user": "alice"}, "The field user must hold owner/name values: alice"),
    ({"content": 5}, "The field content must be a string"),
])
def test_bad_input_is_refused_and_nothing_written(world, fields, message):
    a = world["orgs"]["a"]
    name = unique("ticket")
    answer = world["boss_a"].post("/api/add-ticket", json={"owner": a, "name": name, **fields}).json()
    if message is None:
        assert answer["status"] == "ok", answer
        return
    assert answer["status"] == "error" and message in answer["msg"], answer
    assert _stored(a, name) is None


@pytest.mark.parametrize(("body", "message"), [
    ({}, "The text of a message must be a string"),
    ({"text": "   "}, "The text of a message cannot be empty"),
    ({"text": 5}, "The text of a message must be a string"),
    ({"text": "x" * 10_001}, "The text of a message must be at most 10,000 characters, without NUL"),
    (["text"], "The request body must be a JSON object"),
])
def test_a_bad_message_is_refused_and_nothing_written(world, body, message):
    a = world["orgs"]["a"]
    name = _open(world["alice_a"], a)
    answer = world["alice_a"].post("/api/add-ticket-message", params={"id": f"{a}/{name}"}, json=body).json()
    assert answer["status"] == "error" and answer["msg"] == message, answer
    assert _stored(a, name).messages == []
    bad_id = world["alice_a"].post("/api/add-ticket-message", params={"id": "no-slash"}, json={"text": "x"}).json()
    assert bad_id["msg"] == "The id must be of the form owner/name"


def test_an_admin_may_give_a_ticket_to_a_user_of_their_organization_only(world):
    a, b = world["orgs"]["a"], world["orgs"]["b"]
    name = _open(world["boss_a"], a)
    moved = world["boss_a"].post("/api/update-ticket", params={"id": f"{a}/{name}"},
                                 json={"owner": a, "name": name, "user": f"{b}/alice"}).json()
    assert moved["status"] == "error" and _stored(a, name).user == f"{a}/boss"
    given = world["boss_a"].post("/api/update-ticket", params={"id": f"{a}/{name}"},
                                 json={"owner": a, "name": name, "user": f"{a}/alice"}).json()
    assert given["data"] == "Affected"
    assert name in {r["name"] for r in world["alice_a"].get("/api/get-tickets", params={"owner": a}).json()["data"]}


def test_the_service_rules_hold_outside_http_too(world):
    """The console calls the same services: a message through the service is the caller's."""
    from iam_console.core.access import Actor
    from iam_console.models import User
    from iam_tickets import service

    a = world["orgs"]["a"]
    name = _open(world["alice_a"], a)
    with session_scope() as db:
        bob = db.exec(select(User).where(User.owner == a, User.name == "bob")).one()
        with pytest.raises(crud.ServiceError, match="does not exist"):
            service.add_message(db, Actor(user=bob), f"{a}/{name}", {"text": "not mine"})
    assert REGISTRY["ticket"].user_attr == "user"
