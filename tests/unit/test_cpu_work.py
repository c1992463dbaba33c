"""Work that holds the interpreter lock goes to child processes (iam_console/cpu_work.py), and
long computing gives way to other requests (workers.courtesy): docs/security.md, "Availability".
Order, not timing, proves that the server's threads go on meanwhile."""

from __future__ import annotations

import dataclasses
import functools
import os
import signal
import threading
import time
from types import SimpleNamespace

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from iam_console import cpu_work, fair_share, workers
from iam_console.applications import certs
from iam_console.core import outbound
from iam_console.core.errors import ServiceError


@pytest.fixture
def children(monkeypatch):
    """Two children, one call at a time per organization; stopped after the test."""
    monkeypatch.setattr(cpu_work, "settings", dataclasses.replace(cpu_work.settings, cpu_processes=2,
                                                                  cpu_per_organization=0))
    cpu_work.shutdown()
    yield
    cpu_work.shutdown()


def _pem(bits: int) -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def test_a_signature_made_in_a_child_verifies(children):
    pem = _pem(3072)
    token = cpu_work.run("org-a", cpu_work.sign_jwt, pem, {"sub": "alice"}, "RS256", {"kid": "k1"})
    public = serialization.load_pem_private_key(pem.encode(), None).public_key()
    assert jwt.decode(token, public, algorithms=["RS256"]) == {"sub": "alice"}
    assert jwt.get_unverified_header(token)["kid"] == "k1"
    assert cpu_work.signs_in_child(serialization.load_pem_private_key(pem.encode(), None))
    assert not cpu_work.signs_in_child(serialization.load_pem_private_key(_pem(2048).encode(), None))


def test_the_server_goes_on_while_a_child_makes_a_big_key(children):
    """Making a 4096-bit key in the server's own process keeps the interpreter lock for its whole
    length (most of a second): no other thread could take a step meanwhile."""
    done: list[tuple[str, str]] = []
    making = threading.Thread(target=lambda: done.append(certs.generate("RS256", 4096, 1, "big", "org-a")))
    cpu_work.run("org-a", time.sleep, 0)  # the child is up before the race starts
    making.start()
    steps = 0
    while steps < 20 and not done:
        time.sleep(0.001)
        steps += 1
    making.join(60)
    assert steps == 20, "the other thread stalled until the key was made"
    certificate, key = done[0]
    assert certs.check_pair("RS256", 4096, certificate, key)


def test_an_organization_waits_for_its_own_turn_not_for_others(children):
    """With two children, one organization has one of them at a time: its second call waits, and
    another organization's call goes to the free child meanwhile."""
    order: list[str] = []
    first_started = threading.Event()

    def call(organization: str, label: str, seconds: float) -> None:
        if label == "a1":
            first_started.set()
        cpu_work.run(organization, time.sleep, seconds)
        order.append(label)

    a1 = threading.Thread(target=call, args=("org-a", "a1", 1.0))
    a1.start()
    first_started.wait(5)
    time.sleep(0.1)  # a1 is in its child
    a2 = threading.Thread(target=call, args=("org-a", "a2", 0))
    a2.start()
    call("org-b", "b", 0)
    a1.join(30)
    a2.join(30)
    assert order.index("b") < order.index("a2") and order.index("a1") < order.index("a2")


def test_a_failing_call_raises_in_the_caller_and_a_killed_child_is_replaced(children):
    with pytest.raises(ValueError):
        cpu_work.run("org-a", int, "not a number")
    pid = cpu_work.run("org-a", os.getpid)
    assert pid != os.getpid()
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    assert cpu_work.run("org-a", os.getpid) not in (pid, os.getpid())  # a new child, not an error


def test_without_children_the_call_runs_in_the_caller(monkeypatch):
    monkeypatch.setattr(cpu_work, "settings", dataclasses.replace(cpu_work.settings, cpu_processes=0))
    assert cpu_work.run("org-a", os.getpid) == os.getpid()


# --- courtesy ---

def _compute(steps: int) -> None:
    for _ in range(steps):
        sum(range(20_000))  # a step of computing (well under a slice)
        workers.courtesy()


@pytest.mark.parametrize("others", [0, 1])
def test_long_computing_pauses_only_while_others_are_served(monkeypatch, others):
    pauses: list[float] = []
    monkeypatch.setattr(workers, "time", SimpleNamespace(perf_counter=time.perf_counter, sleep=pauses.append))
    monkeypatch.setattr(workers, "_serving", 1 + others)  # the caller's own request, and others
    thread = threading.Thread(target=functools.partial(_compute, 400))
    thread.start()
    thread.join()
    if others:
        assert pauses and all(0 < pause <= workers.PAUSE_LIMIT for pause in pauses)
    else:
        assert pauses == []


def test_a_slow_child_answer_is_an_error_not_a_hang(children, monkeypatch):
    monkeypatch.setattr(cpu_work, "WAIT_SECONDS", 0.5)
    with pytest.raises(ServiceError, match="took too long to make"):
        cpu_work.run("org-a", time.sleep, 5)
    assert cpu_work.run("org-a", os.getpid) != os.getpid()  # the stuck child was replaced


def test_once_started_the_interpreter_switches_sooner_and_the_start_is_frozen():
    import gc
    import sys

    from iam_console import startup

    before, thresholds = sys.getswitchinterval(), gc.get_threshold()
    try:
        startup.settle_the_interpreter()
        assert sys.getswitchinterval() == pytest.approx(startup.SWITCH_INTERVAL_SECONDS)
        assert gc.get_freeze_count() > 0 and gc.get_threshold() == startup.GC_THRESHOLDS
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        sys.setswitchinterval(before)


# --- each organization's share ---

@pytest.fixture
def shares(monkeypatch):
    fair_share.forget()
    waits: list[float] = []
    monkeypatch.setattr(fair_share, "time", SimpleNamespace(monotonic=time.monotonic, sleep=waits.append))
    yield waits
    fair_share.forget()


def _next_request(organization: str, **how) -> None:
    """One request of the organization, from start to end, as the worker pool runs it."""
    fair_share.begin()
    outbound.note_caller(organization, **how)
    fair_share.finished()


def _in_progress(organization: str) -> None:
    """Another request of the organization, started on a thread of its own and not yet ended."""
    started = threading.Thread(target=lambda: (fair_share.begin(), fair_share.serving(organization)))
    started.start()
    started.join()


def test_an_organization_over_its_share_waits_only_while_another_is_served(shares):
    fair_share.charge("org-a", 2.0)  # two seconds of processor just now: four times its share
    _in_progress("org-a")
    _next_request("org-a")
    assert shares == []  # alone on the server: it may use all of it
    fair_share.charge("org-b", 0.05)
    _next_request("org-b")  # within its share
    _next_request("org-a")
    assert shares == [fair_share.MAX_WAIT_SECONDS] and fair_share.over_share("org-a")
    assert not fair_share.over_share("org-b") and not fair_share.over_share("")
    fair_share.wait_for_turn("org-a")  # the same request, noted again (a second lookup): no second wait
    _next_request("org-a", takes_turns=False)  # a console viewer's call never waits
    assert shares == [fair_share.MAX_WAIT_SECONDS]
    _next_request("org-a")
    assert len(shares) == 2


def test_a_caller_with_one_request_at_a_time_never_waits(shares):
    fair_share.charge("org-a", 0.05)
    fair_share.charge("org-b", 0.4)  # one sign-in after another: about half a core, the busiest
    _next_request("org-b")
    assert shares == [] and fair_share.over_share("org-b")  # its long computing still pauses longer
    _in_progress("org-b")  # a second request of its own: now it takes its turn
    _next_request("org-b")
    assert len(shares) == 1


def test_the_lighter_of_two_busy_organizations_never_waits(shares):
    fair_share.charge("org-a", 2.0)
    fair_share.charge("org-b", 0.5)  # over its share too, but less than org-a
    _in_progress("org-a")
    _in_progress("org-b")
    _next_request("org-b")
    assert shares == []
    assert fair_share.over_share("org-b")  # its long computing still pauses longer: it is over its share
    _next_request("org-a")
    assert 0 < shares[0] <= fair_share.MAX_WAIT_SECONDS  # until it is down to org-b's use


def test_use_decays_back_to_the_share(shares, monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(fair_share, "time", SimpleNamespace(monotonic=lambda: now[0], sleep=shares.append))
    fair_share.charge("org-b", 0.05)
    fair_share.charge("org-a", 0.5)
    _in_progress("org-a")
    _next_request("org-a")
    assert 0 < shares[-1] < fair_share.MAX_WAIT_SECONDS  # a little over: a short wait
    now[0] += 3 * fair_share.HALF_LIFE_SECONDS
    assert not fair_share.over_share("org-a")


def test_the_pool_charges_a_requests_processor_time_to_its_organization(shares):
    import asyncio

    def busy():
        fair_share.serving("org-a")  # as note_caller does once the caller is known
        sum(range(3_000_000))

    def console():  # a console viewer's event: a person, neither charged nor counted
        outbound.note_caller("org-c", takes_turns=False)
        assert fair_share.CALLER.get() == "org-c" and not fair_share._in_progress  # its outbound calls still count
        sum(range(3_000_000))

    async def route():  # as an API route runs: a coroutine on the worker's own loop, in a copied context
        fair_share.serving("org-b")
        sum(range(3_000_000))

    asyncio.run(workers.run(busy))
    asyncio.run(workers.run_async(route))
    asyncio.run(workers.run(console))
    now = time.monotonic()
    assert fair_share._decayed("org-a", now) > 0.01 and fair_share._decayed("org-b", now) > 0.01
    assert fair_share._decayed("", now) == 0 and fair_share._decayed("org-c", now) == 0
    assert not fair_share._in_progress  # both ended: neither counts as in progress


def test_a_childs_computing_is_charged_to_the_organization_it_served(children, shares):
    cpu_work.run("org-c", time.sleep, 0.2)
    assert fair_share._decayed("org-c", time.monotonic()) > 0.1


def test_saml_signatures_with_a_big_key_are_made_in_a_child_and_verify(children, monkeypatch):
    from urllib.parse import quote, unquote

    from lxml import etree

    from iam_console.saml import saml_xml as x

    sent: list[tuple[str, str]] = []
    run = cpu_work.run
    monkeypatch.setattr(cpu_work, "run", lambda org, fn, *args: sent.append((org, fn.__name__)) or run(org, fn, *args))
    certificate, key = certs.generate("RS256", 4096, 1, "idp", "org-a")
    sent.clear()
    root = etree.Element(f"{{{x.PROTOCOL}}}Response", {"ID": "_r1"}, nsmap={"samlp": x.PROTOCOL})
    etree.SubElement(root, f"{{{x.ASSERTION}}}Issuer").text = "https://idp.example"
    root.insert(1, x.placeholder())
    signed = x.sign(root, "_r1", key, certificate, organization="org-a")
    x.verify_element(x.parse(etree.tostring(signed)), x.certificate(certificate))
    query = f"SAMLRequest=abc&SigAlg={quote(x.RSA_SHA256, safe='')}"
    signature = dict(p.split("=", 1) for p in x.sign_query(query, key, "org-a").split("&"))["Signature"]
    x.check_query_signature(query, "SAMLRequest", x.RSA_SHA256, unquote(signature), x.certificate(certificate))
    assert sent == [("org-a", "sign_text"), ("org-a", "query_signature")]
    small_certificate, small_key = certs.generate("RS256", 2048, 1, "sp", "org-a")
    sent.clear()
    x.sign(etree.fromstring(etree.tostring(root)), "_r1", small_key, small_certificate, organization="org-a")
    assert sent == []  # a 2048-bit key signs in the server's own process
