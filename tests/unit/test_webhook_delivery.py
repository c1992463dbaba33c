"""Webhook delivery (operations/webhooks.py): which records reach which webhooks, the bodies and
their signature, retries with backoff against a failing receiver, and the outbox surviving a
worker that stops mid-delivery."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta
from urllib.parse import parse_qs

import pytest
from sqlmodel import select

from iam_console import models as m
from iam_console.audit import records
from iam_console.core.access import Actor
from iam_console.db import session_scope
from iam_console.operations import webhooks
from tests.conftest import unique
from tests.sinks import HttpSink


def hook(org: str, url: str, **fields) -> m.Webhook:
    values = {"method": "POST", "content_type": "application/json", "events": ["login", "update-user"],
              "is_enabled": True, "secret": "s3cret-key", "max_retries": 3, "retry_interval": 60, **fields}
    row = m.Webhook(owner="admin", name=unique("hook"), organization=org, url=url, **values)
    with session_scope() as db:
        db.add(row)
    return row


def record(org: str, action: str = "login", user: str = "") -> None:
    with session_scope() as db:
        records.audit(db, organization=org, user=user or "someone", action=action, request_uri="/api/login",
                      obj={"application": "app-x", "password": "hunter2"})


def events_of(row: m.Webhook) -> list[m.WebhookEvent]:
    with session_scope() as db:
        return list(db.exec(select(m.WebhookEvent).where(m.WebhookEvent.webhook == f"admin/{row.name}")
                            .order_by(m.WebhookEvent.pk)))


def deliver_all() -> None:
    while webhooks.deliver_due(session_scope):
        pass


@pytest.fixture
def sink():
    with HttpSink() as receiver:
        yield receiver


def test_a_record_reaches_the_enabled_webhooks_of_its_organization_that_listen_for_it(database, make_org, sink):
    a, b = make_org().name, make_org().name
    mine = hook(a, sink.url + "/mine")
    other = hook(b, sink.url + "/other")
    deaf = hook(a, sink.url + "/deaf")
    with session_scope() as db:
        db.get(m.Webhook, deaf.pk).events = ["logout"]
    off = hook(a, sink.url + "/off")
    with session_scope() as db:
        db.get(m.Webhook, off.pk).is_enabled = False
    record(a, "login")
    assert [e.event_type for e in events_of(mine)] == ["login"]
    assert events_of(other) == events_of(deaf) == events_of(off) == []
    with session_scope() as db:
        last = db.exec(select(m.Record).where(m.Record.organization == a).order_by(m.Record.pk.desc())).first()
    assert last.is_triggered
    record(b, "signup")  # no webhook of b listens for signup
    with session_scope() as db:
        last = db.exec(select(m.Record).where(m.Record.organization == b).order_by(m.Record.pk.desc())).first()
    assert not last.is_triggered
    deliver_all()
    assert [c.path for c in sink.calls if c.path in ("/mine", "/other", "/deaf", "/off")] == ["/mine"]


def test_single_org_only_as_casdoor_means_it_and_never_across_tenants(database, make_org, sink):
    a = make_org().name
    everyone = hook("built-in", sink.url + "/everyone")  # the global admin's, single org off
    own_only = hook("built-in", sink.url + "/own", single_org_only=True)
    tenant = hook(make_org().name, sink.url + "/tenant")  # another organization's, single org off
    record(a, "login")
    assert len(events_of(everyone)) == 1
    assert events_of(own_only) == [] and events_of(tenant) == []
    record("built-in", "login", user="admin")
    assert len(events_of(everyone)) == 2 and len(events_of(own_only)) == 1


def test_a_record_rolled_back_leaves_no_event(database, make_org, sink):
    org = make_org().name
    row = hook(org, sink.url)
    with pytest.raises(RuntimeError), session_scope() as db:
        records.audit(db, organization=org, user="x", action="login")
        raise RuntimeError("the write failed")
    assert events_of(row) == []


def test_json_body_is_the_record_with_the_user_masked_and_signed(database, make_org, make_user, sink):
    org = make_org().name
    user = make_user(owner=org, email="u@example.com")
    row = hook(org, sink.url + "/json", is_user_extended=True,
               headers=[{"name": "X-Custom", "value": "yes"}, {"name": "", "value": "dropped"}])
    record(org, "update-user", user=f"{org}/{user.name}")
    deliver_all()
    call = next(c for c in sink.calls if c.path == "/json")
    body = json.loads(call.body)
    assert body["organization"] == org and body["action"] == "update-user" and body["isTriggered"] is True
    assert json.loads(body["object"]) == {"application": "app-x", "password": "***"}
    assert body["extendedUser"]["name"] == user.name and body["extendedUser"]["email"] == "u@example.com"
    assert body["extendedUser"]["password"] == "***"
    assert call.headers["Content-Type"] == "application/json" and call.headers["X-Custom"] == "yes"
    stamp, signed = call.headers[webhooks.TIMESTAMP_HEADER], call.headers[webhooks.SIGNATURE_HEADER]
    assert webhooks.verify("s3cret-key", stamp, call.body, signed)
    assert not webhooks.verify("another-key", stamp, call.body, signed)
    assert not webhooks.verify("s3cret-key", stamp, call.body + b" ", signed)
    assert not webhooks.verify("s3cret-key", str(int(stamp) - 3600), call.body, signed)
    (event,) = events_of(row)
    assert call.headers[webhooks.ID_HEADER] == event.name
    assert (event.state, event.attempt_count, event.last_status_code) == (webhooks.SUCCESS, 1, 200)


def test_form_body_and_no_extended_user_unless_asked(database, make_org, sink):
    org = make_org().name
    hook(org, sink.url + "/form", content_type=webhooks.FORM, method="PUT")
    record(org, "login")
    deliver_all()
    call = next(c for c in sink.calls if c.path == "/form")
    assert call.method == "PUT" and call.headers["Content-Type"] == webhooks.FORM
    fields = {k: v[0] for k, v in parse_qs(call.body.decode(), keep_blank_values=True).items()}
    assert fields["action"] == "login" and fields["organization"] == org and fields["isTriggered"] == "true"
    assert "extendedUser" not in fields
    assert webhooks.verify("s3cret-key", call.headers[webhooks.TIMESTAMP_HEADER], call.body,
                           call.headers[webhooks.SIGNATURE_HEADER])


def test_retries_back_off_exponentially_then_fail_and_a_replay_succeeds(database, make_org):
    org = make_org().name
    with HttpSink(status=500) as failing:
        row = hook(org, failing.url + "/down", use_exponential_backoff=True, retry_interval=10)
        record(org, "login")
        deliver_all()
        (event,) = events_of(row)
        assert (event.state, event.attempt_count, event.last_status_code) == (webhooks.RETRYING, 1, 500)
        first_wait = (event.next_retry_time - event.updated_time).total_seconds()
        assert 9 <= first_wait <= 11
        deliver_all()  # not due yet: nothing is sent
        assert len([c for c in failing.calls if c.path == "/down"]) == 1
        with session_scope() as db:  # time passes
            db.get(m.WebhookEvent, event.pk).next_retry_time = webhooks.now() - timedelta(seconds=1)
        deliver_all()
        (event,) = events_of(row)
        assert (event.state, event.attempt_count) == (webhooks.RETRYING, 2)
        assert 19 <= (event.next_retry_time - event.updated_time).total_seconds() <= 21  # doubled
        with session_scope() as db:
            db.get(m.WebhookEvent, event.pk).next_retry_time = webhooks.now() - timedelta(seconds=1)
        deliver_all()
        (event,) = events_of(row)
        assert (event.state, event.attempt_count, event.next_retry_time) == (webhooks.FAILED, 3, None)
        assert "500" in event.last_error
        failing.status = 200
        with session_scope() as db:
            admin = db.exec(select(m.User).where(m.User.owner == "built-in", m.User.name == "admin")).one()
            assert webhooks.replay(db, Actor(user=admin), event.owner + "/" + event.name)
        deliver_all()
        (event,) = events_of(row)
        assert (event.state, event.attempt_count, event.last_status_code) == (webhooks.SUCCESS, 1, 200)
        assert len([c for c in failing.calls if c.path == "/down"]) == 4


def test_backoff_is_capped_and_fixed_without_the_switch():
    assert [webhooks.backoff(n, 60, True) for n in (1, 2, 3, 7, 30)] == [60, 120, 240, 3600, 3600]
    assert webhooks.backoff(5, 60, False) == 60 and webhooks.backoff(1, 0, False) == webhooks.DEFAULT_RETRY_INTERVAL


def test_a_worker_that_stops_mid_delivery_loses_nothing(database, make_org, sink):
    org = make_org().name
    row = hook(org, sink.url + "/resume")
    record(org, "login")
    with session_scope() as db:  # a worker claims the event, then dies before sending it
        _, claimed = webhooks.claim(db, limit=1000)
    assert any(e.webhook == f"admin/{row.name}" for e in claimed)
    deliver_all()  # another worker: the lease holds, nothing is sent twice meanwhile
    assert not [c for c in sink.calls if c.path == "/resume"]
    with session_scope() as db:  # the lease runs out
        db.get(m.WebhookEvent, events_of(row)[0].pk).lease_until = webhooks.now() - timedelta(seconds=1)
    deliver_all()
    assert len([c for c in sink.calls if c.path == "/resume"]) == 1
    assert events_of(row)[0].state == webhooks.SUCCESS


def test_events_in_the_outbox_are_sent_after_a_restart(database, make_org, sink):
    """Nothing is kept in memory: events written while no worker ran are sent by the next one."""
    org = make_org().name
    row = hook(org, sink.url + "/later")
    for _ in range(3):
        record(org, "login")
    assert [e.state for e in events_of(row)] == [webhooks.PENDING] * 3
    deliver_all()
    assert len([c for c in sink.calls if c.path == "/later"]) == 3


def test_deliveries_go_through_the_outbound_guard(database, make_org):
    org = make_org().name
    row = hook(org, "http://10.11.12.13:9/internal", max_retries=1)
    record(org, "login")
    deliver_all()
    (event,) = events_of(row)
    assert event.state == webhooks.FAILED and "Refused to connect" in event.last_error


def test_a_url_httpx_refuses_fails_its_own_delivery_and_the_batch_goes_on(database, make_org, sink):
    """Issue 26: a webhook saved with http://0177.0.0.1/x before URLs were checked on save made
    httpx raise InvalidURL inside the worker, and the whole claimed batch (other organizations'
    events too) was lost. Now the guard refuses the host, and that one delivery fails."""
    odd, other = make_org().name, make_org().name
    broken = hook(odd, "http://0177.0.0.1/x")
    fine = hook(other, sink.url + "/after-odd")
    record(odd, "login")
    record(other, "login")
    deliver_all()
    (failed,) = events_of(broken)
    assert (failed.state, failed.attempt_count) == (webhooks.RETRYING, 1)
    assert "0177.0.0.1" in failed.last_error and "usually written" in failed.last_error
    (delivered,) = events_of(fine)
    assert (delivered.state, delivered.attempt_count) == (webhooks.SUCCESS, 1)
    assert len([c for c in sink.calls if c.path == "/after-odd"]) == 1


def test_whatever_one_delivery_raises_is_its_failed_attempt(database, make_org, sink, monkeypatch):
    """Any exception of one attempt (a library's bug included) is recorded on that event alone."""
    odd, other = make_org().name, make_org().name
    broken = hook(odd, sink.url + "/raises")
    fine = hook(other, sink.url + "/beside")
    real = webhooks.send

    def send(row, event):
        if row.name == broken.name:
            raise KeyError("a library's bug")
        return real(row, event)

    monkeypatch.setattr(webhooks, "send", send)
    record(odd, "login")
    record(other, "login")
    deliver_all()
    (failed,) = events_of(broken)
    assert (failed.state, failed.attempt_count) == (webhooks.RETRYING, 1)
    assert failed.last_error == "KeyError: \"a library's bug\"" and failed.claim == ""
    assert events_of(fine)[0].state == webhooks.SUCCESS


def test_an_answer_holding_nul_is_kept_readable_and_the_batch_written(database, make_org, sink):
    """A receiver's answer is kept on the event: NUL, which no database column takes, is replaced."""
    org = make_org().name
    with HttpSink(body=b"ok\x00then") as nul:
        odd = hook(org, nul.url + "/nul")
        fine = hook(org, sink.url + "/beside-nul")
        record(org, "login")
        deliver_all()
    (event,) = events_of(odd)
    assert (event.state, event.last_response) == (webhooks.SUCCESS, "ok\ufffdthen")
    assert events_of(fine)[0].state == webhooks.SUCCESS


def test_a_deleted_or_disabled_webhook_fails_its_events(database, make_org, sink):
    org = make_org().name
    row = hook(org, sink.url + "/gone")
    record(org, "login")
    with session_scope() as db:
        db.get(m.Webhook, row.pk).is_enabled = False
    deliver_all()
    (event,) = events_of(row)
    assert (event.state, event.last_error) == (webhooks.FAILED, "Webhook is disabled")
    assert not [c for c in sink.calls if c.path == "/gone"]


def test_the_commit_of_a_record_with_events_wakes_the_worker(database, make_org, sink):
    org = make_org().name
    hook(org, sink.url)
    webhooks.WAKE.clear()
    record(org, "logout")  # no webhook listens for logout here
    assert not webhooks.WAKE.is_set()
    record(org, "login")
    assert webhooks.WAKE.is_set()


def test_the_worker_thread_delivers_what_is_committed_and_stops(database, make_org, sink):
    org = make_org().name
    hook(org, sink.url + "/worker")
    stop = threading.Event()
    worker = threading.Thread(target=webhooks.run, args=(stop, session_scope), daemon=True)
    worker.start()
    try:
        record(org, "login")
        deadline = time.monotonic() + 15
        while not [c for c in sink.calls if c.path == "/worker"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len([c for c in sink.calls if c.path == "/worker"]) == 1
    finally:
        stop.set()
        webhooks.WAKE.set()
        worker.join(15)
    assert not worker.is_alive()


def test_each_attempt_is_counted_by_its_result(database, make_org, sink):
    from iam_console.operations import metrics

    def count(result: str) -> float:
        return metrics.REGISTRY.get_sample_value("iam_webhook_deliveries_total", {"result": result}) or 0

    org = make_org().name
    before = count("success"), count("failed")
    hook(org, sink.url + "/counted")
    hook(org, "http://10.11.12.13:9/counted", max_retries=1)
    record(org, "login")
    deliver_all()
    assert count("success") >= before[0] + 1 and count("failed") >= before[1] + 1


def test_token_fields_and_object_fields_narrow_the_body(database, make_org, make_user, sink):
    org = make_org().name
    user = make_user(owner=org, email="narrow@example.com")
    hook(org, sink.url + "/narrow", is_user_extended=True, token_fields=["Email", "name", "NoSuchField"],
         object_fields=["application"])
    record(org, "login", user=user.name)  # a sign-in names its user within the organization
    deliver_all()
    body = json.loads(next(c for c in sink.calls if c.path == "/narrow").body)
    assert body["extendedUser"] == {"email": "narrow@example.com", "name": user.name}
    assert json.loads(body["object"]) == {"application": "app-x"}
