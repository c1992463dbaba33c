"""The official Casdoor Python SDK's LDAP calls against a real slapd:
get_ldap_users, sync_ldap_users and sync_ldap_users_from_server."""

from __future__ import annotations

import uuid

import pytest
from casdoor.ldap import Ldap
from sqlmodel import select

from iam_console import models as m
from iam_console.db import session_scope
from tests.api.sdk_server import api_server, sdk  # noqa: F401

ORG = "built-in"


@pytest.fixture
def server_id(sdk, directory):  # noqa: F811
    ldap = Ldap.from_dict({"id": f"sdk-ldap-{uuid.uuid4().hex[:8]}", "owner": ORG, **directory.ldap_record()})
    assert sdk.add_ldap(ldap)["data"] == "Affected"
    yield ldap.id
    sdk.delete_ldap(ldap)
    with session_scope() as db:  # the users synced from it
        for user in db.exec(select(m.User).where(m.User.owner == ORG, m.User.ldap != "")).all():
            db.delete(user)


def test_the_sdk_lists_and_syncs_directory_users(sdk, server_id):  # noqa: F811
    listed = sdk.get_ldap_users(server_id)
    assert len(listed["users"]) == 300 and listed["existUuids"] == []
    chosen = [u for u in listed["users"] if u["uid"] in ("user0101", "user0102")]
    assert {"uuid", "uid", "cn", "uidNumber", "groupId", "email", "mobile", "address"} <= set(chosen[0])
    assert sdk.sync_ldap_users(server_id, chosen) == {"exist": [], "failed": []}
    assert sorted(sdk.get_ldap_users(server_id)["existUuids"]) == sorted(u["uuid"] for u in chosen)
    user = sdk.get_user("user0102")
    assert user.email == "user0102@example.com" and user.ldap == next(
        u["uuid"] for u in chosen if u["uid"] == "user0102")
    # the rest of the directory, in one call; the two synced before come back as existing
    everything = sdk.sync_ldap_users_from_server(server_id)
    assert sorted(u["cn"] for u in everything["exist"]) == ["User 0101", "User 0102"]
    assert everything["failed"] == []
    assert len(sdk.get_ldap_users(server_id)["existUuids"]) == 300


def test_the_sdk_gets_the_servers_message(sdk):  # noqa: F811
    with pytest.raises(Exception, match="does not exist"):
        sdk.sync_ldap_users("built-in/no-such-ldap", [])
