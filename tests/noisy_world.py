"""Two organizations on one server, A noisy and B quiet, shared by the noisy-neighbour test
(tests/scale/test_noisy_neighbour.py) and benchmark (bench/noisy_neighbour.py).

A's slow receivers are real ones (an HTTP sink, an SMTP sink, OpenLDAP with a few users), each
behind a SwitchProxy (tests/scale/proxy.py) that can hold connections: A's Custom HTTP
notification and SMS providers, its SMTP provider, its webhook and its LDAP directory point at the
proxies. A also has a Casbin model matching with `regexMatch` and the policy ^(a+)+$ (exponential
backtracking on a backtracking engine) and an application signing with the built-in RS256-4096
cert. B has an admin and a user, nothing else."""

from __future__ import annotations

import contextlib
import io
import json
import uuid
from dataclasses import dataclass

import httpx
from openpyxl import Workbook

from tests import ldap_server
from tests.conftest import casbin_model
from tests.scale.proxy import SwitchProxy
from tests.sinks import HttpSink, SmtpSink

PASSWORD = "Noisy-pass-1"
SMTP_USER, SMTP_PASSWORD = "mailer@noisy.test", "smtp-secret"
LDAP_ID = "directory"
DIRECTORY_USERS = 20
RECEIVERS = ("notification", "sms", "webhook", "smtp", "ldap")
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PATHOLOGICAL = ["alice", "a" * 26 + "!", "read"]  # against ^(a+)+$: ~2^26 steps when backtracking
REGEX_MODEL = casbin_model("regexMatch(r.obj, p.obj)")


def ok(answer: httpx.Response) -> dict:
    """The envelope of an answer that must be a success."""
    assert answer.status_code == 200, (answer.status_code, answer.text[:500])
    body = answer.json()
    assert body.get("status") == "ok", body
    return body


@dataclass
class Receivers:
    sink: HttpSink
    smtp: SmtpSink
    directory: ldap_server.Directory
    gates: dict[str, SwitchProxy]  # by RECEIVERS' names

    def url(self, gate: str, path: str) -> str:
        return f"http://127.0.0.1:{self.gates[gate].port}/{path}"


def receivers(stack: contextlib.ExitStack, hold_seconds: float | None = None) -> Receivers:
    """The sinks and the directory, each behind its proxy, entered on `stack` (closed with it);
    `hold_seconds`: how long a held proxy holds each connection (else until released)."""
    sink = stack.enter_context(HttpSink())
    smtp = stack.enter_context(SmtpSink(SMTP_USER, SMTP_PASSWORD))
    directory = stack.enter_context(ldap_server.Directory(users=DIRECTORY_USERS))
    upstreams = dict(zip(RECEIVERS, (sink.port, sink.port, sink.port, smtp.port, directory.port), strict=True))
    gates = {name: stack.enter_context(SwitchProxy({name: port}, name, hold_seconds))
             for name, port in upstreams.items()}
    stack.callback(lambda: [gate.release() for gate in gates.values()])  # before the proxies close
    return Receivers(sink, smtp, directory, gates)


@dataclass
class Tenants:
    a: str
    b: str
    a_admins: list[str]  # A's admins: "boss", then "boss2"... (send-* calls are limited per caller)
    enforcer: str  # A's regex enforcer, owner/name
    client: tuple[str, str]  # A's application: client id and secret


def arrange(admin: httpx.Client, found: Receivers, a_admins: int = 1) -> Tenants:
    """Organizations A and B through the API, as the built-in admin `admin`."""
    a, b = f"noisy-a-{uuid.uuid4().hex[:6]}", f"quiet-b-{uuid.uuid4().hex[:6]}"
    admins = ["boss"] + [f"boss{i}" for i in range(2, a_admins + 1)]
    for org in (a, b):
        ok(admin.post("/api/add-organization", json={"owner": "admin", "name": org, "passwordType": "argon2id"}))
    for org, name in [(a, name) for name in admins] + [(b, "boss")]:
        ok(admin.post("/api/add-user", json={"owner": org, "name": name, "password": PASSWORD, "isAdmin": True}))
    ok(admin.post("/api/add-user", json={"owner": b, "name": "alice", "password": PASSWORD}))
    for provider in (
            {"name": f"{a}-mail", "category": "Email", "type": "Default", "host": "127.0.0.1",
             "port": found.gates["smtp"].port, "disableSsl": True, "clientId": SMTP_USER,
             "clientSecret": SMTP_PASSWORD, "clientId2": f"noreply@{a}.test"},
            {"name": f"{a}-sms", "category": "SMS", "type": "Custom HTTP SMS", "endpoint": found.url("sms", "sms")},
            {"name": f"{a}-notify", "category": "Notification", "type": "Custom HTTP",
             "receiver": found.url("notification", "notify"), "method": "POST", "title": "text"}):
        ok(admin.post("/api/add-provider", json={"owner": a, **provider}))
    ok(admin.post("/api/add-webhook", json={
        "owner": "admin", "name": f"{a}-hook", "organization": a, "url": found.url("webhook", "hook"),
        "method": "POST", "contentType": "application/json", "events": ["update-user"], "isEnabled": True}))
    ok(admin.post("/api/add-ldap", json={"owner": a, "id": LDAP_ID,
                                         **found.directory.ldap_record(port=found.gates["ldap"].port)}))
    ok(admin.post("/api/add-model", json={"owner": a, "name": "regex", "modelText": REGEX_MODEL}))
    ok(admin.post("/api/add-adapter", json={"owner": a, "name": "rules", "useSameDb": True,
                                            "table": f"noisy_rules_{uuid.uuid4().hex[:6]}"}))
    ok(admin.post("/api/add-enforcer", json={"owner": a, "name": "regex", "model": f"{a}/regex",
                                             "adapter": f"{a}/rules"}))
    ok(admin.post("/api/add-policy", params={"id": f"{a}/regex"},
                  json={"Ptype": "p", "V0": "alice", "V1": "^(a+)+$", "V2": "read"}))
    ok(admin.post("/api/add-application", json={"owner": "admin", "name": f"{a}-app", "organization": a,
                                                 "cert": "cert-built-in",  # RS256, 4096 bits
                                                 "grantTypes": ["client_credentials"]}))
    app = ok(admin.get("/api/get-application", params={"id": f"admin/{a}-app"}))["data"]
    return Tenants(a, b, admins, f"{a}/regex", (app["clientId"], app["clientSecret"]))


def sign_in(client: httpx.Client, organization: str, name: str, password: str = PASSWORD) -> httpx.Client:
    ok(client.post("/api/login", json={"organization": organization, "username": name, "password": password,
                                       "autoSignin": True, "type": "login"}))
    return client


def regex_batch(cheap: int) -> bytes:
    """A batch-enforce body: the pathological request, then `cheap` requests the pattern rejects
    at once, which keep the call busy for a while even on a linear-time engine."""
    return json.dumps([PATHOLOGICAL] + [["alice", "aaaa!", "read"]] * cheap).encode()


def workbook_upload(rows: int) -> tuple[bytes, str]:
    """A multipart upload-users body of `rows` new users and its content type."""
    book = Workbook(write_only=True)
    sheet = book.create_sheet("users")
    sheet.append(["name", "displayName", "email"])
    for i in range(rows):
        sheet.append([f"bulk{i:05d}", f"Bulk {i}", f"bulk{i}@example.org"])
    out = io.BytesIO()
    book.save(out)
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"users.xlsx\"\r\n"
            f"Content-Type: {XLSX}\r\n\r\n").encode() + out.getvalue() + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"
