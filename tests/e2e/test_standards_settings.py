"""The settings of the standards (docs/api.md, "Standards") on the edit pages: an organization's
dynamic client registration policy, protected resources and client metadata documents, an
application's token exchange audiences; saved, refused when wrong, and axe-clean."""

from __future__ import annotations

import uuid

from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.steps import choose, save
from tests.e2e.test_organization_edit import _seed_org, _stored


def test_an_organization_opts_into_registration_resources_and_documents(visit, page, api_login, accounts, server):
    name = _seed_org(server)
    api_login(accounts.admin)
    visit(f"/organizations/{name}")
    resource = f"https://mcp-{uuid.uuid4().hex[:6]}.example.com/mcp"
    choose(page, page.locator("#field-dcrPolicy"), "open")
    page.fill("#field-protectedResources", "ftp://files.example.com")
    page.click("#edit-save")
    expect(page.get_by_text("is not an http(s) URI without a fragment")).to_be_visible()
    assert _stored(page, name)["dcrPolicy"] in ("", "disabled")  # nothing saved
    page.fill("#field-protectedResources", resource)
    page.click("#field-clientMetadataDocuments")
    save(page)
    stored = _stored(page, name)
    assert (stored["dcrPolicy"], stored["protectedResources"], stored["clientMetadataDocuments"]) == \
        ("open", [resource], True)
    assert serious(page) == []
    # what the organization opted into is served
    document = page.request.get(f"/.well-known/oauth-protected-resource?resource={resource}").json()
    assert document["resource"] == resource


def test_an_application_lists_its_token_exchange_audiences(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/applications/admin/app-built-in")
    audience = f"https://api-{uuid.uuid4().hex[:6]}.example.com/"
    page.fill("#field-tokenExchangeAudiences", audience)
    save(page)
    stored = page.request.get("/api/get-application?id=admin/app-built-in").json()["data"]
    assert stored["tokenExchangeAudiences"] == [audience]
    assert serious(page) == []
    page.fill("#field-tokenExchangeAudiences", "")
    save(page)
    assert page.request.get("/api/get-application?id=admin/app-built-in").json()["data"][
        "tokenExchangeAudiences"] == []
