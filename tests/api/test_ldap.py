"""LDAP servers against a real OpenLDAP slapd (tests/ldap_server.py): reading the
directory over ldap:// and ldaps://, get-ldap-users and sync-ldap-users, the
sync's naming and grouping, sign-in by bind, the console's paged view and the
auto sync with its claim."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.core import crud
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.db import session_scope
from iam_console.identity import ldap, ldap_client
from iam_console.models.base import utcnow
from iam_console.signin import auth
from tests import ldap_server
from tests.api.conftest import sign_in
from tests.conftest import unique

PASSWORD = "Ldap-tests-pass-1"


def _god() -> Actor:
    with session_scope() as db:
        app = db.exec(select(m.Application).where(m.Application.name == "app-built-in")).one()
    return Actor(application=app)


@pytest.fixture
def org(database):
    """A fresh organization with its admin and a group."""
    name = unique("ldaporg")
    with session_scope() as db:
        god = _god()
        crud.add_record(db, god, REGISTRY["organization"], {"owner": "admin", "name": name,
                                                             "passwordType": "argon2id", "initScore": 7})
        crud.add_record(db, god, REGISTRY["user"], {"owner": name, "name": "boss", "password": PASSWORD,
                                                    "isAdmin": True})
        crud.add_record(db, god, REGISTRY["user"], {"owner": name, "name": "alice", "password": PASSWORD})
        crud.add_record(db, god, REGISTRY["group"], {"owner": name, "name": "staff", "type": "Physical"})
    return name


def _add_server(org: str, directory, **fields) -> str:
    ident = unique("ldap")
    with session_scope() as db:
        crud.add_record(db, _god(), REGISTRY["ldap"], {"owner": org, "id": ident,
                                                        **directory.ldap_record(**fields)})
    return ident


def _users(org: str) -> dict[str, m.User]:
    with session_scope() as db:
        return {u.name: u for u in db.exec(select(m.User).where(m.User.owner == org, m.User.ldap != "")).all()}


def _row(org: str, ident: str) -> m.Ldap:
    with session_scope() as db:
        return db.exec(select(m.Ldap).where(m.Ldap.owner == org, m.Ldap.name == ident)).one()


# --- the directory ---

@pytest.mark.parametrize("ssl", [False, True], ids=["ldap", "ldaps"])
def test_the_directory_users_stream_as_casdoor_ldap_users(directory, org, ssl):
    found = list(ldap_client.users(_row(org, _add_server(org, directory, ssl=ssl))))
    assert len(found) == 300  # the posixGroup entries are not accounts
    by_uid = {u["uid"]: u for u in found}
    assert set(found[0]) == set(ldap_client.FIELDS)
    user = by_uid["user0060"]  # 60: a mail, a mobile, an address and a display name
    assert user["cn"] == "User 0060" and user["uidNumber"] == "10060" and user["groupId"] == "500"
    assert user["email"] == "user0060@example.com" and user["mobile"] == "+15550000060"
    assert user["address"] == "60 Directory Street" and user["displayName"] == "Display 0060"
    assert len(user["uuid"]) == 36 and len({u["uuid"] for u in found}) == 300  # slapd's entryUUID
    bare = by_uid["user0001"]
    assert (bare["email"], bare["mobile"], bare["address"], bare["displayName"]) == ("", "", "", "")


def test_a_self_signed_certificate_is_refused_unless_allowed(directory, org):
    row = _row(org, _add_server(org, directory, ssl=True, allowSelfSignedCert=False))
    with pytest.raises(ServiceError, match="certificate verify failed"):
        next(ldap_client.users(row))


@pytest.mark.parametrize(("fields", "message"), [
    ({"password": "wrong"}, "invalid credentials"),
    ({"host": "127.0.0.1", "port": 1}, "Failed to connect to the LDAP server"),
    ({"baseDn": "dc=nowhere,dc=test"}, "Failed to search the LDAP server"),
    ({"filter": "(objectClass=posixAccount"}, "Failed to search the LDAP server"),
])
def test_directory_errors_are_clear(directory, org, fields, message):
    row = _row(org, _add_server(org, directory, **fields))
    with pytest.raises(ServiceError, match=message):
        list(ldap_client.users(row))


# --- the API ---

def test_get_and_sync_ldap_users_through_the_api(directory, org):
    ident = _add_server(org, directory, defaultGroup=f"{org}/staff")
    admin = sign_in(org, "boss", PASSWORD)
    listed = admin.get("/api/get-ldap-users", params={"id": f"{org}/{ident}"}).json()
    assert listed["status"] == "ok", listed
    users, exist = listed["data"]["users"], listed["data"]["existUuids"]
    assert len(users) == 300 and exist == []
    chosen = [u for u in users if u["uid"] in ("user0010", "user0012", "user0015")]
    synced = admin.post("/api/sync-ldap-users", params={"id": f"{org}/{ident}"}, json=chosen).json()
    assert synced["status"] == "ok" and synced["data"] == {"exist": [], "failed": []}, synced
    stored = _users(org)
    assert set(stored) == {"user0010", "user0012", "user0015"}
    ten = stored["user0010"]
    assert ten.ldap == next(u["uuid"] for u in chosen if u["uid"] == "user0010")
    assert (ten.display_name, ten.email, ten.phone, ten.address) == (
        "User 0010", "user0010@example.com", "", ["10 Directory Street"])
    assert ten.groups == [f"{org}/staff"] and ten.affiliation == "example.com" and ten.score == 7
    assert ten.password == "" and ten.type == "normal-user"
    assert stored["user0012"].phone == "+15550000012" and stored["user0012"].display_name == "Display 0012"
    # listed again: those three are synced; synced again: they already exist, by cn
    again = admin.get("/api/get-ldap-users", params={"id": f"{org}/{ident}"}).json()["data"]
    assert sorted(again["existUuids"]) == sorted(u["uuid"] for u in chosen)
    twice = admin.post("/api/sync-ldap-users", params={"id": f"{org}/{ident}"}, json=chosen).json()["data"]
    assert sorted(u["cn"] for u in twice["exist"]) == ["User 0010", "User 0012", "User 0015"]
    assert twice["failed"] == [] and len(_users(org)) == 3


def test_a_taken_name_gets_the_uid_number(directory, org):
    ident = _add_server(org, directory)
    with session_scope() as db:
        crud.add_record(db, _god(), REGISTRY["user"], {"owner": org, "name": "user0005", "password": PASSWORD})
        crud.add_record(db, _god(), REGISTRY["user"], {"owner": org, "name": "user0006", "password": PASSWORD})
        crud.add_record(db, _god(), REGISTRY["user"], {"owner": org, "name": "user0006_10006",
                                                       "password": PASSWORD})
    with session_scope() as db:
        picked = [u for u in ldap_client.users(_row(org, ident)) if u["uid"] in ("user0005", "user0006")]
        result = ldap.sync_users(db, _god(), org, ident, picked)
    assert result.added == 2 and not result.failed
    names = sorted(_users(org))
    assert names[0] == "user0005_10005" and names[1].startswith("user0006_10006_") and len(names[1]) == 21


def test_bad_sync_bodies_write_nothing(directory, org):
    ident = _add_server(org, directory)
    admin = sign_in(org, "boss", PASSWORD)
    url = f"/api/sync-ldap-users?id={org}/{ident}"
    for body in (b"{}", b"not json", b'"x"', b""):
        answer = admin.post(url, content=body).json()
        assert answer["status"] == "error", (body, answer)
    mixed = [{"cn": "Broken", "uid": ["a", "list"]}, "text", {"displayName": "no uuid, uid or cn"},
             {"cn": "Bad/Name", "uid": "bad/name", "uuid": "u-1"}]
    answer = admin.post(url, json=mixed).json()
    assert answer["status"] == "ok" and len(answer["data"]["failed"]) == 4, answer
    assert answer["data"]["failed"][-1]["cn"] == "Bad/Name"
    assert _users(org) == {}


def test_who_may_read_and_sync_a_directory(directory, org):
    ident = _add_server(org, directory)
    other = unique("ldapother")
    with session_scope() as db:
        crud.add_record(db, _god(), REGISTRY["organization"], {"owner": "admin", "name": other})
        crud.add_record(db, _god(), REGISTRY["user"], {"owner": other, "name": "boss", "password": PASSWORD,
                                                       "isAdmin": True})
    params = {"id": f"{org}/{ident}"}
    one = [{"uid": "user0001", "cn": "User 0001", "uuid": "forged"}]
    assert TestClient(api).get("/api/get-ldap-users", params=params).json()["msg"] == "Please login first"
    for client in (sign_in(org, "alice", PASSWORD), sign_in(other, "boss", PASSWORD)):
        assert client.get("/api/get-ldap-users", params=params).json()["status"] == "error"
        assert client.post("/api/sync-ldap-users", params=params, json=one).json()["status"] == "error"
    assert _users(org) == {}
    missing = sign_in(org, "boss", PASSWORD).get("/api/get-ldap-users", params={"id": f"{org}/nothing"}).json()
    assert missing["status"] == "error" and "does not exist" in missing["msg"]


# --- validation of the record ---

@pytest.mark.parametrize(("fields", "message"), [
    ({"port": 65536}, "The port must be between 0 and 65535"),
    ({"port": -1}, "The port must be between 0 and 65535"),
    ({"autoSync": -5}, "The auto sync interval must be at least 0"),
    ({"passwordType": "SHA1"}, "The password type must be Plain, SSHA or MD5"),
    ({"filterFields": ["uid", "cn"]}, "Unknown filter field: cn"),
    ({"defaultGroup": "built-in/staff"}, "is not one of the groups of the organization"),
    ({"defaultGroup": "{org}/nogroup"}, "names {org}/nogroup, which does not exist"),
])
def test_bad_ldap_records_are_refused(directory, org, fields, message):
    ident = _add_server(org, directory)
    admin = sign_in(org, "boss", PASSWORD)
    record = admin.get("/api/get-ldap", params={"id": f"{org}/{ident}"}).json()["data"]
    changed = {**record, **{k: v.replace("{org}", org) if isinstance(v, str) else v for k, v in fields.items()}}
    answer = admin.post("/api/update-ldap", params={"id": f"{org}/{ident}"}, json=changed).json()
    assert answer["status"] == "error" and message.replace("{org}", org) in answer["msg"], answer
    assert admin.get("/api/get-ldap", params={"id": f"{org}/{ident}"}).json()["data"] == record


# --- sign-in by bind ---

def _sync(org: str, ident: str, *uids: str) -> None:
    with session_scope() as db:
        picked = [u for u in ldap_client.users(_row(org, ident)) if u["uid"] in uids]
        assert ldap.sync_users(db, _god(), org, ident, picked).added == len(uids)


def _login(org: str, username: str, password: str) -> dict:
    return TestClient(api).post("/api/login", json={"organization": org, "username": username,
                                                     "password": password}).json()


@pytest.mark.parametrize("ssl", [False, True], ids=["ldap", "ldaps"])
def test_a_synced_user_signs_in_with_the_directory_password(directory, org, ssl):
    ident = _add_server(org, directory, ssl=ssl)
    _sync(org, ident, "user0020")
    assert _login(org, "user0020", ldap_server.password_of("user0020"))["status"] == "ok"
    wrong = _login(org, "user0020", "not-the-password")
    assert wrong["status"] == "error" and "remaining chances" in wrong["msg"], wrong
    assert _users(org)["user0020"].signin_wrong_times == 1
    # an account of the organization that is not an LDAP user keeps its own password
    assert _login(org, "alice", PASSWORD)["status"] == "ok"


def _ldap_login(org: str, username: str, password: str, method: str = "LDAP") -> dict:
    return TestClient(api).post("/api/login", json={"organization": org, "username": username,
                                                     "password": password, "signinMethod": method}).json()


def _default_application(org: str, password_rule: str) -> None:
    """The organization's default application lists Password under `password_rule`, and LDAP."""
    with session_scope() as db:
        name = unique("ldapapp")
        db.add(m.Application(owner="admin", name=name, organization=org, enable_password=True, client_id=name,
                             signin_methods=[{"name": "Password", "displayName": "Password", "rule": password_rule},
                                             {"name": "LDAP", "displayName": "LDAP", "rule": "None"}]))
        organization = db.exec(select(m.Organization).where(m.Organization.name == org)).one()
        organization.default_application = name
        db.add(organization)


def test_the_ldap_method_and_the_non_ldap_password_rule(directory, org):
    ident = _add_server(org, directory)
    _sync(org, ident, "user0021")
    secret = ldap_server.password_of("user0021")
    # the built-in application does not list LDAP
    assert _ldap_login(org, "user0021", secret)["msg"] == auth.LDAP_OFF
    _default_application(org, "Non-LDAP")
    # the LDAP method binds; a wrong password counts
    assert _ldap_login(org, "user0021", secret)["status"] == "ok"
    assert "remaining chances" in _ldap_login(org, "user0021", "wrong")["msg"]
    assert _users(org)["user0021"].signin_wrong_times == 1
    # Non-LDAP: the password tab refuses the directory's account, once its password is known
    assert _ldap_login(org, "user0021", secret, "Password")["msg"] == auth.LDAP_ONLY
    assert "remaining chances" in _ldap_login(org, "user0021", "wrong", "Password")["msg"]
    # while the organization's own accounts still sign in with the password tab
    assert _ldap_login(org, "alice", PASSWORD, "Password")["status"] == "ok"
    _default_application(org, "All")
    assert _ldap_login(org, "user0021", secret, "Password")["status"] == "ok"


def test_filter_fields_find_the_entry_by_mail(directory, org):
    ident = _add_server(org, directory, filterFields=["mail"])
    _sync(org, ident, "user0030")
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == org, m.User.name == "user0030")).one()
        user.name = "renamed-here"  # the uid no longer matches: the mail still does
        db.add(user)
    assert _login(org, "user0030@example.com", ldap_server.password_of("user0030"))["status"] == "ok"


def test_an_ldap_user_missing_from_the_directory_is_refused(directory, org):
    _add_server(org, directory)
    with session_scope() as db:
        crud.add_record(db, _god(), REGISTRY["user"], {"owner": org, "name": "ghost", "ldap": "no-such-uuid",
                                                       "password": PASSWORD})
    # answered as a wrong password (and counted): no answer tells it from a missing account
    answer = _login(org, "ghost", PASSWORD)
    assert answer["status"] == "error" and answer["msg"] == _login(org, "nobody", PASSWORD)["msg"] == \
        "password or code is incorrect, you have 4 remaining chances"


def test_the_sign_in_filter_escapes_the_user_values():
    row = m.Ldap(filter="(objectClass=posixAccount)", filter_fields=["uid", "mail"])
    user = m.User(name="x*)(uid=*", email="")
    assert ldap_client.auth_filter(row, user) == r"(&(objectClass=posixAccount)(|(uid=x\2a\29\28uid=\2a)))"
    assert ldap_client.auth_filter(m.Ldap(filter_fields=["mail"]), m.User(name="n")) is None


def test_an_empty_password_never_binds(directory, org):
    ident = _add_server(org, directory)
    _sync(org, ident, "user0040")
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == org, m.User.name == "user0040")).one()
        assert ldap_client.bind_user(db, user, "") is False


# --- the console's view ---

def test_the_directory_page_sorts_filters_and_marks_the_synced(directory, org):
    ident = _add_server(org, directory)
    _sync(org, ident, "user0300", "user0297")
    with session_scope() as db:
        actor = _god()
        page = ldap.directory_page(db, actor, org, ident, page=1, page_size=10, sort_field="uidNumber",
                                   sort_order="descend")
        assert [u["uid"] for u in page.rows[:4]] == ["user0300", "user0299", "user0298", "user0297"]
        assert page.total == 300 and page.group_ids == ["500", "501", "502"]
        synced = {u["uid"] for u in page.rows if u["uuid"] in page.synced}
        assert synced == {"user0300", "user0297"}
        second = ldap.directory_page(db, actor, org, ident, page=2, page_size=10, sort_field="cn",
                                     sort_order="ascend", group_id="501")
        assert second.total == 100
        assert [u["uid"] for u in second.rows][:2] == ["user0031", "user0034"]
        assert all(u["groupId"] == "501" for u in second.rows)


# --- auto sync ---

def test_of_two_claimers_one_wins(directory, org):
    ident = _add_server(org, directory, autoSync=5)
    row = _row(org, ident)
    now = utcnow()
    with session_scope() as first, session_scope() as second:
        assert (row.pk, None) in ldap.due(first, now)
        assert ldap.due(second, now) == ldap.due(first, now)
        assert ldap.claim(first, row.pk, None, now) is True
        assert ldap.claim(second, row.pk, None, now) is False
    later = now + timedelta(minutes=5)
    with session_scope() as first, session_scope() as second:
        assert (row.pk, now) in ldap.due(first, later)
        assert ldap.claim(second, row.pk, now, later) is True
        assert ldap.claim(first, row.pk, now, later) is False


def test_an_auto_sync_run_brings_the_whole_directory(directory, org):
    ident = _add_server(org, directory, autoSync=1, defaultGroup=f"{org}/staff")
    now = utcnow()
    with session_scope() as db:
        runs = dict(ldap.auto_sync(db, now))
    result = runs[f"{org}/{ident}"]
    assert result.added == 300 and result.failed_count == 0
    assert len(_users(org)) == 300 and all(u.groups == [f"{org}/staff"] for u in _users(org).values())
    with session_scope() as db:  # the sync's bulk insert reaches the membership table (its triggers)
        staff = crud.list_records(db, _god(), REGISTRY["user"], {"p": "1", "pageSize": "5", "groupName": "staff"},
                                  owner=org)
    assert staff.total == 300 and len(staff.rows) == 5 and all(r["groups"] == [f"{org}/staff"] for r in staff.rows)
    assert _row(org, ident).last_sync >= now
    with session_scope() as db:  # not due again within the minute
        assert f"{org}/{ident}" not in dict(ldap.auto_sync(db, now + timedelta(seconds=30)))
    with session_scope() as db:
        again = dict(ldap.auto_sync(db, utcnow() + timedelta(minutes=2)))[f"{org}/{ident}"]
    assert again.added == 0 and again.exist_count == 300 and again.exist == []


def test_an_unreachable_directory_is_tried_again_later(directory, org):
    ident = _add_server(org, directory, autoSync=1, port=1)
    now = utcnow()
    with session_scope() as db:
        assert dict(ldap.auto_sync(db, now))[f"{org}/{ident}"] is None
    assert _row(org, ident).last_sync == now and _users(org) == {}


def test_a_name_taken_meanwhile_fails_only_its_own_user(directory, org, monkeypatch):
    ident = _add_server(org, directory)
    with session_scope() as db:
        crud.add_record(db, _god(), REGISTRY["user"], {"owner": org, "name": "user0008", "password": PASSWORD})
    # the batch's look-up of taken names misses it, as when another writer adds it meanwhile
    monkeypatch.setattr(ldap._Batch, "__init__", lambda self, db, organization, users: setattr(self, "taken", set()))
    with session_scope() as db:
        picked = [u for u in ldap_client.users(_row(org, ident)) if u["uid"] in ("user0007", "user0008", "user0009")]
        result = ldap.sync_users(db, _god(), org, ident, picked)
    assert result.added == 2 and [u["uid"] for u in result.failed] == ["user0008"]
    assert set(_users(org)) == {"user0007", "user0009"}


def test_the_console_sync_reads_the_selected_entries_from_the_directory(directory, org):
    ident = _add_server(org, directory)
    chosen = [u["uuid"] for u in ldap_client.users(_row(org, ident)) if u["uid"] in ("user0050", "user0051")]
    with session_scope() as db:
        result = ldap.sync_selected(db, _god(), org, ident, [*chosen, "gone-from-the-directory"])
    assert result.added == 2 and [u["cn"] for u in result.failed] == ["gone-from-the-directory"]
    assert set(_users(org)) == {"user0050", "user0051"}
    with session_scope() as db, pytest.raises(ServiceError, match="Please select al least 1 user first"):
        ldap.sync_selected(db, _god(), org, ident, [])
