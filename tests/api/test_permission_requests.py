"""Permission requests: the state is a global admin's alone (Approved sets the approver and
the time, Pending clears both), anyone else's new permission starts Pending, a normal user sees
and changes only what they submitted, update-permissions, a model's role definition as the
permission page reads it, and a picker that never offers the edited record itself."""

from __future__ import annotations

import pytest
from sqlmodel import select

from iam_console import models as m
from iam_console.authorization.kinds import permission as rules
from iam_console.core import choices
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from tests.api.conftest import ok_body, sign_in
from tests.conftest import ACL_MODEL, unique

PASSWORD = "Request-pass-1"


@pytest.fixture(scope="module")
def org(admin) -> str:
    """An organization with an admin `boss` and the normal users `ann` and `ben`."""
    name = unique("requests")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": name}))
    for user, is_admin in (("boss", True), ("ann", False), ("ben", False)):
        ok_body(admin.post("/api/add-user", json={"owner": name, "name": user, "password": PASSWORD,
                                                  "isAdmin": is_admin}))
    ok_body(admin.post("/api/add-model", json={"owner": name, "name": "flat", "modelText": ACL_MODEL}))
    return name


def _body(org: str, name: str, **fields) -> dict:
    return {"owner": org, "name": name, "users": [f"{org}/ann"], "resourceType": "Custom", "resources": ["doc"],
            "actions": ["read"], "effect": "Allow", "isEnabled": True, **fields}


def _stored(org: str, name: str) -> m.Permission:
    with session_scope() as db:
        return db.exec(select(m.Permission).where(m.Permission.owner == org, m.Permission.name == name)).one()


def test_a_normal_users_request_starts_pending_as_theirs(org):
    ann = sign_in(org, "ann", PASSWORD)
    name = unique("perm")
    answer = ann.post("/api/add-permission", json=_body(org, name, submitter="ben")).json()
    assert (answer["status"], answer["msg"]) == ("error",
                                                 "A normal user can only modify the permission submitted by itself")
    # no submitter named: theirs
    assert ok_body(ann.post("/api/add-permission", json=_body(org, name, state="Approved",
                                                              approver="ann")))["data"] == "Affected"
    row = _stored(org, name)
    assert (row.state, row.submitter, row.approver, row.approve_time) == ("Pending", "ann", "", None)
    # nor can they approve it later, nor name themselves its approver
    ok_body(ann.post("/api/update-permission", params={"id": f"{org}/{name}"},
                     json=_body(org, name, state="Approved", submitter="ann", description="please")))
    row = _stored(org, name)
    assert (row.state, row.description, row.approver) == ("Pending", "please", "")
    ok_body(ann.post("/api/update-permission", params={"id": f"{org}/{name}"},
                     json=_body(org, name, state="Approved", approver="ann", submitter="ann")))
    row = _stored(org, name)
    assert (row.state, row.approver, row.approve_time) == ("Pending", "", None)


def test_an_organization_admin_neither_approves_nor_starts_approved(org):
    boss = sign_in(org, "boss", PASSWORD)
    name = unique("perm")
    ok_body(boss.post("/api/add-permission", json=_body(org, name, state="Approved")))
    assert _stored(org, name).state == "Pending"
    ok_body(boss.post("/api/update-permission", params={"id": f"{org}/{name}"}, json=_body(org, name,
                                                                                           state="Approved")))
    assert _stored(org, name).state == "Pending"


def test_the_global_admin_approves_and_puts_back(admin, org):
    name = unique("perm")
    ok_body(admin.post("/api/add-permission", json=_body(org, name, state="Pending", submitter="ann")))
    assert _stored(org, name).approver == ""
    ok_body(admin.post("/api/update-permission", params={"id": f"{org}/{name}"},
                       json=_body(org, name, state="Approved", submitter="ann")))
    row = _stored(org, name)
    assert row.state == "Approved" and row.approver == "admin" and row.approve_time is not None
    ok_body(admin.post("/api/update-permission", params={"id": f"{org}/{name}"},
                       json=_body(org, name, state="Pending", submitter="ann")))
    row = _stored(org, name)
    assert (row.state, row.approver, row.approve_time) == ("Pending", "", None)


def test_a_normal_user_sees_and_changes_only_what_they_submitted(admin, org):
    ann, ben = sign_in(org, "ann", PASSWORD), sign_in(org, "ben", PASSWORD)
    mine, theirs = unique("perm"), unique("perm")
    ok_body(ann.post("/api/add-permission", json=_body(org, mine)))
    ok_body(ben.post("/api/add-permission", json=_body(org, theirs)))
    listed = ok_body(ann.get("/api/get-permissions", params={"owner": org, "p": "1", "pageSize": "10"}))
    by_submitter = ok_body(ann.get("/api/get-permissions-by-submitter"))
    names = {p["name"] for p in listed["data"]}
    assert mine in names and theirs not in names and names == {p["name"] for p in by_submitter["data"]}
    assert {p["submitter"] for p in listed["data"]} == {"ann"} and by_submitter["data2"] == len(names)
    # another's permission is refused with the reason (not answered 'Unaffected'), and stays as it was
    refusal = {"status": "error", "msg": "A normal user can only modify the permission submitted by itself"}
    answer = ann.post("/api/update-permission", params={"id": f"{org}/{theirs}"},
                      json=_body(org, theirs, description="mine now")).json()
    assert answer == {**answer, **refusal} and _stored(org, theirs).description == ""
    answer = ann.post("/api/update-permissions", json=[_body(org, theirs, description="mine now")]).json()
    assert answer == {**answer, **refusal} and _stored(org, theirs).description == ""
    answer = ann.post("/api/delete-permission", json={"owner": org, "name": theirs}).json()
    assert answer == {**answer, **refusal} and _stored(org, theirs).submitter == "ben"
    # a missing one is still 'Unaffected'; so is another organization's
    assert ann.post("/api/update-permission", params={"id": f"{org}/none-such"},
                    json=_body(org, "none-such")).json()["data"] == "Unaffected"
    # nor can they hand their own to someone else
    answer = ann.post("/api/update-permission", params={"id": f"{org}/{mine}"},
                      json=_body(org, mine, submitter="ben")).json()
    assert answer == {**answer, "status": "error",
                      "msg": "A normal user can only modify the permission submitted by itself"}
    assert _stored(org, mine).submitter == "ann"


@pytest.mark.parametrize(("fields", "message"), [
    ({"users": [], "roles": []}, "The users and roles cannot be empty at the same time"),
    ({"resources": []}, "The resources cannot be empty"),
    ({"actions": []}, "The actions cannot be empty"),
])
def test_the_save_messages(admin, org, fields, message):
    name = unique("perm")
    ok_body(admin.post("/api/add-permission", json=_body(org, name)))
    answer = admin.post("/api/update-permission", params={"id": f"{org}/{name}"},
                        json=_body(org, name, **fields)).json()
    assert (answer["status"], answer["msg"]) == ("error", message)


def test_update_permissions_all_or_none(admin, org):
    first, second = unique("perm"), unique("perm")
    for name in (first, second):
        ok_body(admin.post("/api/add-permission", json=_body(org, name)))
    answer = ok_body(admin.post("/api/update-permissions", json=[
        _body(org, first, description="one"), _body(org, second, description="two"),
        _body(org, unique("missing"), description="skipped")]))
    assert answer["data"] == "Affected"
    assert (_stored(org, first).description, _stored(org, second).description) == ("one", "two")
    # one refusal refuses them all
    answer = admin.post("/api/update-permissions", json=[
        _body(org, first, description="again"), _body(org, second, actions=[])]).json()
    assert (answer["status"], answer["msg"]) == ("error", "The actions cannot be empty")
    assert _stored(org, first).description == "one"
    assert ok_body(admin.post("/api/update-permissions", json=[]))["data"] == "Unaffected"
    for bad, message in (({"owner": org}, "The request body must be a list of permissions"),
                         (["text"], "Each permission must be an object"),
                         ([{"owner": org}], "The owner and name cannot be empty")):
        answer = admin.post("/api/update-permissions", json=bad).json()
        assert (answer["status"], answer["msg"]) == ("error", message)


def test_a_normal_user_updates_only_their_own_in_a_batch(org):
    ann, ben = sign_in(org, "ann", PASSWORD), sign_in(org, "ben", PASSWORD)
    mine, theirs = unique("perm"), unique("perm")
    ok_body(ann.post("/api/add-permission", json=_body(org, mine)))
    ok_body(ben.post("/api/add-permission", json=_body(org, theirs)))
    # another's in the batch refuses the batch (one refusal refuses them all)
    answer = ann.post("/api/update-permissions", json=[_body(org, mine, description="ok"),
                                                       _body(org, theirs, description="no")]).json()
    assert answer == {**answer, "status": "error",
                      "msg": "A normal user can only modify the permission submitted by itself"}
    assert (_stored(org, mine).description, _stored(org, theirs).description) == ("", "")
    ok_body(ann.post("/api/update-permissions", json=[_body(org, mine, description="ok")]))
    assert _stored(org, mine).description == "ok"


def test_another_organizations_permissions_are_out_of_a_batchs_reach(admin, org):
    other = unique("others")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": other}))
    ok_body(admin.post("/api/add-user", json={"owner": other, "name": "u", "password": PASSWORD}))
    name = unique("perm")
    ok_body(admin.post("/api/add-permission", json={**_body(other, name), "users": [f"{other}/u"]}))
    boss = sign_in(org, "boss", PASSWORD)
    answer = ok_body(boss.post("/api/update-permissions", json=[{**_body(other, name), "users": [f"{other}/u"],
                                                                 "description": "hijacked"}]))
    assert answer["data"] == "Unaffected" and _stored(other, name).description == ""


def _actor(org: str, name: str) -> Actor:
    with session_scope() as db:
        return Actor(user=db.exec(select(m.User).where(m.User.owner == org, m.User.name == name)).one())


def test_whether_a_model_has_roles(admin, org):
    ann = _actor(org, "ann")
    with session_scope() as db:
        assert rules.model_has_roles(db, ann, org, "flat") is False
        assert rules.model_has_roles(db, ann, org, f"{org}/flat") is False
        assert rules.model_has_roles(db, ann, org, "") is True  # the default model has roles
        assert rules.model_has_roles(db, ann, org, "no-such-model") is False
        with pytest.raises(ServiceError):
            rules.model_has_roles(db, ann, "built-in", "user-model-built-in")  # another organization's


def test_a_picker_leaves_out_the_edited_record(admin, org):
    for name in ("r1", "r2"):
        ok_body(admin.post("/api/add-role", json={"owner": org, "name": name}))
    boss = _actor(org, "boss")
    with session_scope() as db:
        assert choices.names(db, boss, "role", org, form="id").names == [f"{org}/r1", f"{org}/r2"]
        assert choices.names(db, boss, "role", org, form="id", exclude=f"{org}/r1").names == [f"{org}/r2"]
    answer = admin.post("/api/update-role", params={"id": f"{org}/r1"},
                        json={"owner": org, "name": "r1", "roles": [f"{org}/r1"]}).json()
    assert (answer["status"], answer["msg"]) == ("error", "A role cannot contain itself")
