"""The trust model's escalation paths, each driven end to end through HTTP: what a
credential issued through an organization's application may reach, what a token
record gives away, what an answer tells about records the caller may not see, and
references to another organization's records."""

from __future__ import annotations

import jwt as pyjwt
import pytest
from fastapi.testclient import TestClient

from iam_console import models as m
from iam_console.api.app import api
from iam_console.core import crud, lookup
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY, Kind, Ownership
from iam_console.db import session_scope
from iam_console.oauth.oauth import digest, fingerprint
from tests.api.conftest import sign_in
from tests.api.test_oauth import authorize, exchange, make_app, pkce, token_call
from tests.api.test_webauthn import ORIGIN, UNASKED
from tests.authenticator import SoftAuthenticator
from tests.conftest import unique

PASSWORD = "Trust-pass-1"


@pytest.fixture(scope="module")
def two_orgs(admin) -> tuple[str, str]:
    """Organizations A and B, each with an admin `boss` and a user `alice`."""
    names = unique("trusta"), unique("trustb")
    for org in names:
        assert admin.post("/api/add-organization", json={
            "owner": "admin", "name": org, "passwordType": "argon2id"}).json()["data"] == "Affected"
        for user, is_admin in (("boss", True), ("alice", False)):
            added = admin.post("/api/add-user", json={"owner": org, "name": user, "password": PASSWORD,
                                                      "isAdmin": is_admin}).json()
            assert added["data"] == "Affected", added
    return names


def _client_of_own_application(boss: TestClient, org: str) -> TestClient:
    """The admin of `org` adds an application of their organization and reads its credentials."""
    name = unique("own-app")
    assert boss.post("/api/add-application", json={
        "owner": "admin", "name": name, "organization": org}).json()["data"] == "Affected"
    app = boss.get("/api/get-application", params={"id": f"admin/{name}"}).json()["data"]
    assert app["clientId"] and app["clientSecret"] and app["clientSecret"] != "***", app
    client = TestClient(api)
    client.params = {"clientId": app["clientId"], "clientSecret": app["clientSecret"]}
    return client


def test_an_organizations_application_client_acts_within_that_organization_only(admin, two_orgs):
    a, b = two_orgs
    client = _client_of_own_application(sign_in(a, "boss", PASSWORD), a)

    # the built-in organization: its admin is out of reach, and no global admin can be added
    assert client.get("/api/get-user", params={"id": "built-in/admin"}).json()["data"] is None
    added = client.post("/api/add-user", json={"owner": "built-in", "name": unique("rogue"), "password": PASSWORD,
                                               "isAdmin": True}).json()
    assert added["status"] == "error", added
    assert client.get("/api/get-users", params={"owner": "built-in"}).json()["status"] == "error"

    # organization B: nothing of it can be changed
    for kind, owner, body in (
            ("user", b, {"email": "someone@b.example.com"}),
            ("application", "admin", {"organization": b}),
            ("cert", b, {"type": "x509", "cryptoAlgorithm": "ES256"}),
            ("provider", b, {"category": "Email", "type": "Default"}),
            ("group", b, {"parentId": b}),
            ("role", b, {})):
        name = unique(kind)
        created = admin.post(f"/api/add-{kind}", json={"owner": owner, "name": name, **body}).json()
        assert created["data"] == "Affected", (kind, created)
        assert client.post(f"/api/add-{kind}", json={"owner": owner, "name": unique(kind), **body}).json()[
            "status"] == "error", kind
        changed = client.post(f"/api/update-{kind}", params={"id": f"{owner}/{name}"},
                              json={"owner": owner, "name": name, **body, "displayName": "hijacked"}).json()
        assert changed["status"] == "error" or changed["data"] == "Unaffected", (kind, changed)
        deleted = client.post(f"/api/delete-{kind}", json={"owner": owner, "name": name}).json()
        assert deleted["status"] == "error" or deleted["data"] == "Unaffected", (kind, deleted)
        still = admin.get(f"/api/get-{kind}", params={"id": f"{owner}/{name}"}).json()["data"]
        assert still is not None and still.get("displayName") != "hijacked", (kind, still)

    # its own organization: an admin's rights there
    own = client.get("/api/get-users", params={"owner": a}).json()
    assert own["status"] == "ok" and {u["name"] for u in own["data"]} == {"boss", "alice"}, own
    alice = client.get("/api/get-user", params={"id": f"{a}/alice"}).json()["data"]
    assert client.post("/api/update-user", params={"id": f"{a}/alice"},
                       json={**alice, "displayName": "Alice A."}).json()["data"] == "Affected"


def test_organization_admins_keep_applications_in_their_own_organization(admin, two_orgs):
    a, b = two_orgs
    boss = sign_in(a, "boss", PASSWORD)
    assert boss.post("/api/add-application", json={
        "owner": "admin", "name": unique("elsewhere"), "organization": b}).json()["status"] == "error"
    name = unique("mine")
    assert boss.post("/api/add-application", json={
        "owner": "admin", "name": name, "organization": a}).json()["data"] == "Affected"
    mine = boss.get("/api/get-application", params={"id": f"admin/{name}"}).json()["data"]
    moved = boss.post("/api/update-application", params={"id": f"admin/{name}"},
                      json={**mine, "organization": "built-in"}).json()
    assert moved["status"] == "error", moved
    assert admin.get("/api/get-application", params={"id": f"admin/{name}"}).json()["data"]["organization"] == a
    theirs = unique("theirs")
    assert admin.post("/api/add-application", json={
        "owner": "admin", "name": theirs, "organization": b}).json()["data"] == "Affected"
    deleted = boss.post("/api/delete-application", json={"owner": "admin", "name": theirs}).json()
    assert deleted["status"] == "error" or deleted["data"] == "Unaffected", deleted
    assert admin.get("/api/get-application", params={"id": f"admin/{theirs}"}).json()["data"] is not None


# --- existence: no answer tells a record or an account out of reach from a missing one ---

def _same(first: dict, second: dict) -> None:
    assert first == second, (first, second)


@pytest.mark.parametrize(("kind", "owner_of"), [("user", "org"), ("role", "org"), ("group", "org"),
                                                ("application", "admin"), ("cert", "org"), ("provider", "org")])
def test_a_record_of_another_organization_is_answered_as_a_missing_one(admin, two_orgs, kind, owner_of):
    a, b = two_orgs
    owner = b if owner_of == "org" else "admin"
    existing = unique(kind)
    body = {"organization": b} if kind == "application" else {}
    assert admin.post(f"/api/add-{kind}", json={"owner": owner, "name": existing, **body}).json()["data"] == "Affected"
    boss = sign_in(a, "boss", PASSWORD)
    for call in (
            lambda name: boss.get(f"/api/get-{kind}", params={"id": f"{owner}/{name}"}),
            lambda name: boss.post(f"/api/update-{kind}", params={"id": f"{owner}/{name}"},
                                   json={"owner": owner, "name": name, "displayName": "x"}),
            lambda name: boss.post(f"/api/delete-{kind}", json={"owner": owner, "name": name})):
        _same(call(existing).json(), call(unique("missing")).json())


def _login(org: str, name: str, password: str) -> dict:
    return TestClient(api).post("/api/login", json={"organization": org, "username": name,
                                                    "password": password}).json()


def test_sign_in_answers_a_missing_account_as_a_wrong_password(admin, two_orgs):
    a, _ = two_orgs
    victim = unique("victim")
    assert admin.post("/api/add-user", json={"owner": a, "name": victim, "password": PASSWORD}).json()[
        "data"] == "Affected"
    missing = unique("nobody")
    # the same messages, counted the same way, up to and past the failed sign-in limit
    for _ in range(6):
        wrong, unknown = _login(a, victim, "Wrong-pass-1"), _login(a, missing, "Wrong-pass-1")
        assert wrong["status"] == unknown["status"] == "error"
        assert wrong["msg"] == unknown["msg"], (wrong, unknown)
    assert "wait for 15 minutes" in unknown["msg"], unknown
    # a forbidden account says so only to whoever knows its password
    forbidden = unique("forbidden")
    admin.post("/api/add-user", json={"owner": a, "name": forbidden, "password": PASSWORD, "isForbidden": True})
    assert _login(a, forbidden, "Wrong-pass-1")["msg"] == _login(a, unique("nobody"), "Wrong-pass-1")["msg"]
    assert "forbidden" in _login(a, forbidden, PASSWORD)["msg"]


def test_webauthn_begin_answers_a_missing_account_as_one_without_credentials(admin, two_orgs):
    a, _ = two_orgs
    existing = unique("keyless")
    admin.post("/api/add-user", json={"owner": a, "name": existing, "password": PASSWORD})
    missing = unique("nobody")
    browser = TestClient(api)

    def begin(name: str) -> dict:
        return browser.get("/api/webauthn/signin/begin", params={"owner": a, "name": name}).json()["publicKey"]

    first, again, other = begin(missing), begin(missing), begin(existing)
    assert first["allowCredentials"] == again["allowCredentials"]  # stable: not told apart by changing
    assert len(first["allowCredentials"]) == len(other["allowCredentials"]) == 1
    assert len(first["allowCredentials"][0]["id"]) == len(other["allowCredentials"][0]["id"])
    assert first["allowCredentials"] != other["allowCredentials"]
    assert set(first) == set(other)

    # and a finish fails alike, counted alike
    key = SoftAuthenticator(ORIGIN)
    key.create(UNASKED)  # a credential registered nowhere
    answers = []
    for name in (existing, missing):
        options = browser.get("/api/webauthn/signin/begin", params={"owner": a, "name": name}).json()
        answers.append(browser.post("/api/webauthn/signin/finish", json=key.get(options)).json()["msg"])
    assert answers[0] == answers[1] == \
        "WebAuthn sign-in failed: This WebAuthn credential is not registered for the user"
    assert _login(a, existing, "Wrong-pass-1")["msg"] == _login(a, missing, "Wrong-pass-1")["msg"] == \
        "password or code is incorrect, you have 3 remaining chances"


# --- tokens: no read returns a usable one; an issued one is viewed, revoked or deleted ---

def _bearer(token: str) -> TestClient:
    client = TestClient(api)
    client.headers["Authorization"] = f"Bearer {token}"
    return client


def _works(token: str, org: str) -> bool:
    return _bearer(token).get("/api/get-users", params={"owner": org}).json()["status"] == "ok"


@pytest.fixture
def issued(two_orgs) -> dict[str, str]:
    """A client_credentials token of an application of A, and alice's access and refresh tokens."""
    a, _ = two_orgs
    app = make_app(a, grant_types=["authorization_code", "client_credentials", "refresh_token"])
    status, client = token_call(grant_type="client_credentials", client_id=app.client_id,
                                client_secret=app.client_secret)
    assert status == 200, client
    verifier, challenge = pkce()
    code = authorize(app, a, challenge=challenge, password=PASSWORD)["data"]
    status, user = exchange(app, code, verifier)
    assert status == 200 and user["refresh_token"], user
    return {"client": client["access_token"], "access": user["access_token"], "refresh": user["refresh_token"],
            "application": app.name}


def _rows_of(reader: TestClient, org: str, issued: dict[str, str]) -> list[dict]:
    rows = reader.get("/api/get-tokens", params={"owner": "admin", "organization": org}).json()["data"]
    return [r for r in rows if r["application"] == issued["application"]]


def test_no_read_returns_a_usable_token(admin, two_orgs, issued):
    a, _ = two_orgs
    for reader in (admin, sign_in(a, "boss", PASSWORD)):
        rows = _rows_of(reader, a, issued)
        shown = {r["accessToken"] for r in rows} | {r["refreshToken"] for r in rows} - {""}
        assert shown == {fingerprint(issued[k]) for k in ("client", "access", "refresh")}, rows
        single = [reader.get("/api/get-token", params={"id": f"admin/{r['name']}"}).json()["data"] for r in rows]
        assert single == rows
        for row in rows:  # no value of the answer opens anything
            for value in (v for v in row.values() if isinstance(v, str) and v):
                assert not _works(value, a), (row, value)
    assert _works(issued["client"], a) and _works(issued["access"], a)  # the tokens themselves do


def test_an_issued_token_cannot_be_re_pointed_prolonged_or_revived(admin, two_orgs, issued):
    a, _ = two_orgs
    boss = sign_in(a, "boss", PASSWORD)
    row = next(r for r in _rows_of(admin, a, issued) if r["accessToken"] == fingerprint(issued["client"]))
    changes = {"application": "app-built-in", "organization": "built-in", "user": "admin", "grantType": "password",
               "scope": "openid read write", "tokenType": "Admin", "name": unique("renamed"),
               "expiresIn": row["expiresIn"] + 3600}
    for caller in (boss, admin):
        for key, value in changes.items():
            answer = caller.post("/api/update-token", params={"id": f"admin/{row['name']}"},
                                 json={**row, key: value}).json()
            assert answer["status"] == "error", (key, answer)
        # no update moves a createdTime (a later one would prolong the token): it is ignored
        later = caller.post("/api/update-token", params={"id": f"admin/{row['name']}"},
                            json={**row, "createdTime": "2099-01-01T00:00:00Z"}).json()
        assert later["data"] == "Unaffected", later
    assert admin.get("/api/get-token", params={"id": f"admin/{row['name']}"}).json()["data"] == row
    assert _works(issued["client"], a)
    # revoked by lowering its lifetime to 0, and then never alive again
    revoked = boss.post("/api/update-token", params={"id": f"admin/{row['name']}"}, json={**row, "expiresIn": 0})
    assert revoked.json()["data"] == "Affected"
    assert not _works(issued["client"], a)
    revived = admin.post("/api/update-token", params={"id": f"admin/{row['name']}"}, json={**row}).json()
    assert revived["status"] == "error" and not _works(issued["client"], a)
    assert boss.post("/api/delete-token", json={"owner": "admin", "name": row["name"]}).json()["data"] == "Affected"


def test_an_added_token_record_is_never_usable(admin, two_orgs, issued):
    a, _ = two_orgs
    app = make_app(a, grant_types=["authorization_code"])
    name = unique("added")
    added = admin.post("/api/add-token", json={
        "owner": "admin", "name": name, "application": app.name, "organization": a, "user": "alice",
        "grantType": "authorization_code", "code": digest("chosen-code"), "codeExpireIn": 4102444800,
        "accessToken": issued["access"], "refreshToken": issued["refresh"], "expiresIn": 3600}).json()
    assert added["data"] == "Affected", added
    record = admin.get("/api/get-token", params={"id": f"admin/{name}"}).json()["data"]
    assert (record["code"], record["accessToken"], record["refreshToken"]) == ("", "", "")
    status, answer = token_call(grant_type="authorization_code", client_id=app.client_id,
                                client_secret=app.client_secret, code="chosen-code")
    assert status == 400 and answer["error"] == "invalid_grant", answer
    # a record added by hand may be edited: it holds nothing usable
    changed = admin.post("/api/update-token", params={"id": f"admin/{name}"}, json={**record, "scope": "read"})
    assert changed.json()["data"] == "Affected"


# --- references: a record names records of its own organization (or shared ones) only ---

def _target_body(kind: Kind, org: str, name: str) -> dict:
    body = {"owner": "admin" if kind.ownership is Ownership.ADMIN else org, m.wire_name(kind.model, "name"): name}
    if kind.ownership is Ownership.ADMIN:
        body[kind.organization_attr] = org
    return body


# what a record of these kinds needs to be valid, beyond owner and name
VALID = {"permission": {"users": ["{org}/*"], "resources": ["app-built-in"], "actions": ["Read"]},
         "provider": {"category": "Payment"}}  # a product's providers are payment providers


def _valid(kind: Kind, org: str) -> dict:
    return {k: [v.replace("{org}", org) for v in vs] if isinstance(vs, list) else vs
            for k, vs in VALID.get(kind.name, {}).items()}
REFERENCES = [pytest.param(kind, ref, id=f"{kind.name}.{ref.attribute}")
              for kind in REGISTRY.values() for ref in kind.references]


def _naming(kind: Kind, ref, org: str, name: str) -> dict:
    """A valid record of `kind` in `org` whose `ref` names `name` of organization `org`'s `ref.target`."""
    value = f"{org}/{name}" if ref.form == "id" else name
    value = {ref.key: value} if ref.key else value
    body = {**_target_body(kind, org, unique(kind.name)), **_valid(kind, org)}
    wire = m.wire_name(kind.model, ref.attribute)
    body[wire] = [value] if isinstance(getattr(kind.model(), ref.attribute), list) else value
    if ref.when is not None:
        body[m.wire_name(kind.model, ref.when[0])] = ref.when[1][-1]
    return body


@pytest.mark.parametrize(("kind", "ref"), REFERENCES)
def test_every_reference_names_a_record_of_the_records_own_organization(two_orgs, kind, ref):
    a, b = two_orgs
    target = REGISTRY[ref.target]
    with session_scope() as db:
        god = Actor(application=lookup.application(db, "app-built-in"))
    names = {}
    for org in (a, b):
        names[org] = unique(ref.target)
        with session_scope() as db:
            crud.add_record(db, god, target, {**_target_body(target, org, names[org]), **_valid(target, org)})
    # another organization's record, by its name or by owner/name, and a made-up organization's
    foreign = [_naming(kind, ref, b, names[b]), _naming(kind, ref, unique("no-such-org"), names[b])]
    if ref.form != "id":
        foreign.append({**_naming(kind, ref, a, names[a]), m.wire_name(kind.model, ref.attribute):
                        _naming(kind, ref, b, names[b])[m.wire_name(kind.model, ref.attribute)]})
    for body in foreign:
        body.update({"owner": _target_body(kind, a, "x")["owner"]})
        if kind.ownership is Ownership.ADMIN:
            body[kind.organization_attr] = a
        if ref.dropped:  # saved without the entry
            _saved_without(god, kind, ref, body)
            continue
        with session_scope() as db, pytest.raises(ServiceError, match="names"):
            crud.add_record(db, god, kind, body)
    missing = _naming(kind, ref, a, unique("missing"))
    if ref.dropped:
        _saved_without(god, kind, ref, missing)
    else:
        with session_scope() as db, pytest.raises(ServiceError, match="names"):
            crud.add_record(db, god, kind, missing)
    # its own organization's record: accepted, on add and on update
    own = _naming(kind, ref, a, names[a])
    with session_scope() as db:
        assert crud.add_record(db, god, kind, own) in ("Affected", own[m.wire_name(kind.model, "name")])
    name = own[m.wire_name(kind.model, "name")]
    if ref.dropped:
        with session_scope() as db:
            crud.update_record(db, god, kind, own["owner"], name, foreign[0] | {m.wire_name(kind.model, "name"): name})
        with session_scope() as db:
            assert crud.get_record(db, god, kind, own["owner"], name)[m.wire_name(kind.model, ref.attribute)] == []
        return
    with session_scope() as db, pytest.raises(ServiceError, match="names"):
        crud.update_record(db, god, kind, own["owner"], name, foreign[0] | {m.wire_name(kind.model, "name"): name})


def _across(ref, org: str, name: str):
    """The value naming `name` of organization `org` from another organization's record."""
    target = REGISTRY[ref.target]
    value = name if target.ownership is Ownership.ADMIN or ref.form == "name" else f"{org}/{name}"
    return {ref.key: value} if ref.key else value


@pytest.mark.parametrize(("kind", "ref"), [p for p in REFERENCES if not p.values[1].dropped])
def test_a_global_admin_names_an_existing_record_of_any_organization(two_orgs, kind, ref):
    """Casdoor's data, as its global admin writes it (a user of one organization signed up through
    an application of another): a global admin user's references may name any organization's
    existing record; a made-up or missing one is still refused (the client above stays within one)."""
    a, b = two_orgs
    target = REGISTRY[ref.target]
    with session_scope() as db:
        root = Actor(user=lookup.user(db, "built-in", "admin"))
    theirs = unique(ref.target)
    with session_scope() as db:
        crud.add_record(db, root, target, {**_target_body(target, b, theirs), **_valid(target, b)})
    wire = m.wire_name(kind.model, ref.attribute)

    def naming(value) -> dict:
        body = _naming(kind, ref, a, unique("placeholder"))
        body[wire] = [value] if isinstance(body[wire], list) else value
        return body

    by_name_only = ref.form == "name" and target.ownership is not Ownership.ADMIN  # a bare name is one's own
    body = naming(_across(ref, b, theirs))
    if by_name_only:
        with session_scope() as db, pytest.raises(ServiceError, match="names"):
            crud.add_record(db, root, kind, body)
    else:
        with session_scope() as db:
            assert crud.add_record(db, root, kind, body) in ("Affected", body[m.wire_name(kind.model, "name")])
    for value in (_across(ref, unique("no-such-org"), theirs), _across(ref, b, unique("missing"))):
        if target.ownership is Ownership.ADMIN and value == theirs:
            continue  # an application is named by its name alone
        with session_scope() as db, pytest.raises(ServiceError, match="names"):
            crud.add_record(db, root, kind, naming(value))


def _saved_without(god, kind: Kind, ref, body: dict) -> None:
    """A reference whose foreign entries are dropped: the record is saved with none of them."""
    body = {**body, m.wire_name(kind.model, "name"): unique(kind.name)}
    with session_scope() as db:
        crud.add_record(db, god, kind, body)
    with session_scope() as db:
        saved = crud.get_record(db, god, kind, body["owner"], body[m.wire_name(kind.model, "name")])
    assert saved[m.wire_name(kind.model, ref.attribute)] == [], saved


def test_a_role_and_a_group_stay_within_their_organization_through_the_api(two_orgs):
    a, b = two_orgs
    boss = sign_in(a, "boss", PASSWORD)
    for users in ([f"{b}/boss"], [f"{unique('nowhere')}/boss"], [f"{a}/nobody"]):
        refused = boss.post("/api/add-role", json={"owner": a, "name": unique("role"), "users": users}).json()
        assert refused["status"] == "error" and "names" in refused["msg"], refused
    assert boss.post("/api/add-role", json={"owner": a, "name": unique("role"), "users": [f"{a}/alice"]}).json()[
        "data"] == "Affected"
    other = unique("theirs")
    with session_scope() as db:
        god = Actor(application=lookup.application(db, "app-built-in"))
        crud.add_record(db, god, REGISTRY["group"], {"owner": b, "name": other})
    for parent in (other, b):
        refused = boss.post("/api/add-group", json={"owner": a, "name": unique("g"), "parentId": parent}).json()
        assert refused["status"] == "error" and "names" in refused["msg"], refused
    assert boss.post("/api/add-group", json={"owner": a, "name": unique("g"), "parentId": a}).json()[
        "data"] == "Affected"


# --- the audience: no token of organization A names an application of organization B ---

def test_a_token_cannot_be_meant_for_another_application(two_orgs):
    a, b = two_orgs
    theirs = make_app(b, client_id="https://api.b.example.com")  # a client id that looks like a resource
    mine = make_app(a, grant_types=["authorization_code"])
    verifier, challenge = pkce()

    def sign_in_for(resource: str) -> dict:
        return TestClient(api).post("/api/login", params={
            "clientId": mine.client_id, "responseType": "code", "redirectUri": "http://localhost:9000/callback",
            "scope": "openid", "state": "s", "nonce": "n", "resource": resource, "code_challenge": challenge,
            "code_challenge_method": "S256"}, json={"application": mine.name, "organization": a, "username": "alice",
                                                    "password": PASSWORD, "type": "code"}).json()

    for resource in (theirs.client_id, "api.example.com", "https://api.example.com/#x", "urn:x"):
        refused = sign_in_for(resource)
        assert refused["status"] == "error" and "resource" in refused["msg"], (resource, refused)
    code = sign_in_for("https://api.example.com/")["data"]
    status, answer = exchange(mine, code, verifier, resource="https://api.example.com/")
    assert status == 200, answer
    audience = pyjwt.decode(answer["access_token"], options={"verify_signature": False})["aud"]
    assert audience == [mine.client_id, "https://api.example.com/"]


def test_an_applications_cert_is_its_organizations_own_before_a_shared_one_of_that_name(admin, two_orgs):
    a, _ = two_orgs
    boss = sign_in(a, "boss", PASSWORD)
    app = make_app(a, grant_types=["client_credentials"])
    status, before = token_call(grant_type="client_credentials", client_id=app.client_id,
                                client_secret=app.client_secret)
    shared_kid = pyjwt.get_unverified_header(before["access_token"])["kid"]
    assert boss.post("/api/add-cert", json={"owner": a, "name": "cert-built-in", "type": "x509",
                                            "cryptoAlgorithm": "ES256", "scope": "JWT"}).json()["data"] == "Affected"
    for _ in range(3):  # the same cert every time
        status, after = token_call(grant_type="client_credentials", client_id=app.client_id,
                                   client_secret=app.client_secret)
        header = pyjwt.get_unverified_header(after["access_token"])
        assert status == 200 and header["alg"] == "ES256" and header["kid"] != shared_kid, after
    keys = TestClient(api).get(f"/.well-known/{app.name}/jwks").json()["keys"]
    assert [k["kid"] for k in keys] == [header["kid"]]
