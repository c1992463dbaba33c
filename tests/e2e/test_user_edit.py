"""The users list's .xlsx upload and the user page's own sections:
the password dialog, the API key, properties, groups with one physical
group at most, roles, is deleted, returnUrl, and what an ordinary user and an
admin see of the same user."""

from __future__ import annotations

import io
import json
import re
import urllib.request
import uuid
from dataclasses import dataclass

from openpyxl import Workbook
from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.conftest import Account
from tests.e2e.state_probe import gone, held
from tests.pictures import png

PASSWORD = "Chief-pass-123"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


@dataclass(frozen=True)
class World:
    org: str
    chief: Account  # the organization's admin
    target: Account  # an ordinary user of it


def _items() -> list[dict]:
    """The default account items, with the API key and properties shown."""
    from iam_console.core import builtin as b

    items = b.default_account_items()
    for item in items:
        if item["name"] in ("API key", "Properties"):
            item["visible"] = True
    return items


def _seed(server, *, properties: dict | None = None, groups: tuple[tuple[str, str], ...] = ()) -> World:
    from sqlmodel import Session

    from iam_console.db import make_engine
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Group, Organization, Role, User

    org = f"ue-{uuid.uuid4().hex[:8]}"
    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            db.add(Organization(owner="admin", name=org, display_name=org, password_type="argon2id",
                                password_options=["AtLeast8", "Aa123"], account_items=_items(),
                                languages=["en"], nav_items=["all"]))
            for name, is_admin in (("chief", True), ("target", False)):
                db.add(User(owner=org, name=name, uuid=str(uuid.uuid4()), type="normal-user", display_name=name,
                            is_admin=is_admin, password=hash_password(PASSWORD, "argon2id"),
                            password_type="argon2id", signup_application="app-built-in",
                            properties=(properties or {}) if name == "target" else {}))
            for name, kind in groups:
                db.add(Group(owner=org, name=name, display_name=name, type=kind, parent_id=org, is_top_group=True,
                             is_enabled=True))
            db.add(Role(owner=org, name="auditor", users=[f"{org}/target"], is_enabled=True))
            db.commit()
    finally:
        engine.dispose()
    return World(org, Account(org, "chief", PASSWORD, "chief"), Account(org, "target", PASSWORD, "target"))


def _stored(server, org: str, name: str):
    from sqlmodel import Session, select

    from iam_console.db import make_engine
    from iam_console.models import User

    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            return db.exec(select(User).where(User.owner == org, User.name == name)).one()
    finally:
        engine.dispose()


def _api(server, path: str, body: dict | None = None) -> dict:
    """A call without the browser's cookie."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server.url(path), data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _signs_in(server, org: str, name: str, password: str) -> bool:
    return _api(server, "/api/login", {"organization": org, "username": name, "password": password,
                                       "type": "login"})["status"] == "ok"


def _session_elsewhere(server, org: str, name: str, password: str) -> str:
    """The session cookie of a sign-in outside the browser."""
    body = json.dumps({"organization": org, "username": name, "password": password, "type": "login"}).encode()
    request = urllib.request.Request(server.url("/api/login"), data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        cookies = response.headers.get_all("Set-Cookie") or []
    return next(c.split(";")[0] for c in cookies if c.startswith("iam_session="))


def _session_works(server, cookie: str) -> bool:
    request = urllib.request.Request(server.url("/api/get-account"), headers={"Cookie": cookie})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["status"] == "ok"


def _browser_session(page) -> str:
    return next(f"iam_session={c['value']}" for c in page.context.cookies() if c["name"] == "iam_session")


def _workbook(header: list[str], *rows: list) -> bytes:
    book = Workbook(write_only=True)
    sheet = book.create_sheet("Sheet1")
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _open(visit, page, path: str, name: str):
    """The user page, once its record is in the form (the page is live before its on_load ran)."""
    visit(path)
    expect(page.locator("#field-name")).to_have_value(name)
    return page


def _toast(page, text: str | re.Pattern):
    return page.locator("[data-sonner-toast]").filter(has_text=text)


def test_upload_users_from_an_xlsx_file(visit, page, api_login, server):
    world = _seed(server)
    api_login(world.chief)
    visit(f"/organizations/{world.org}/users")
    expect(page.locator("#list-total")).to_have_text("Total 2")
    chooser = page.locator("#list-upload input[type=file]")

    good = _workbook(["name", "displayName", "password"], ["up-one", "Uploaded One", "Up-pass-123"],
                     ["up-two", "Uploaded Two", "Up-pass-123"])
    chooser.set_input_files(files=[{"name": "users.xlsx", "mimeType": XLSX, "buffer": good}])
    expect(_toast(page, "Users uploaded successfully, refreshing the page")).to_be_visible()
    expect(page.locator("#list-total")).to_have_text("Total 4")
    expect(page.locator("#list-table tbody tr").filter(has_text="up-two")).to_have_count(1)
    assert _signs_in(server, world.org, "up-one", "Up-pass-123")

    # one bad row refuses the whole file, with its row number
    bad = _workbook(["name", "isAdmin"], ["up-three", "TRUE"], ["up-four", "perhaps"])
    chooser.set_input_files(files=[{"name": "bad.xlsx", "mimeType": XLSX, "buffer": bad}])
    expect(_toast(page, re.compile(r"Users failed to upload: Row 3: .*isAdmin"))).to_be_visible()
    expect(page.locator("#list-total")).to_have_text("Total 4")

    # .xlsx only
    chooser.set_input_files(files=[{"name": "users.csv", "mimeType": "text/csv", "buffer": b"name\nx\n"}])
    expect(_toast(page, "File failed to upload")).to_be_visible()
    expect(page.locator("#list-total")).to_have_text("Total 4")


def test_the_upload_button_is_for_admins(visit, page, api_login, accounts):
    api_login(accounts.alice)
    visit("/users")
    expect(page.locator("#list-table")).to_be_visible()
    expect(page.locator("#list-upload")).to_have_count(0)


def test_the_password_dialog(visit, page, api_login, accounts, server):
    world = _seed(server)
    elsewhere = _session_elsewhere(server, world.org, "target", PASSWORD)
    api_login(accounts.admin)  # a global admin: no old password asked
    _open(visit, page, f"/users/{world.org}/target", "target")

    # no change while the name is edited and not saved
    page.fill("#field-name", "target-renamed")
    expect(page.locator("#password-open")).to_be_disabled()
    page.fill("#field-name", "target")
    expect(page.locator("#password-open")).to_be_enabled()

    page.click("#password-open")
    expect(page.locator("#password-new")).to_be_visible()
    expect(page.locator("#password-old")).to_have_count(0)
    page.fill("#password-new", "short")
    expect(page.locator("#password-hint")).to_have_text("The password must have at least 8 characters")
    page.fill("#password-new", "longenough")
    expect(page.locator("#password-hint")).to_contain_text("one uppercase letter")
    page.fill("#password-confirm", "Different-1")
    expect(page.locator("#confirm-hint")).to_have_text("Your confirmed password is inconsistent with the password!")
    page.fill("#password-new", "Target-new-1")
    expect(page.locator("#password-hint")).to_have_count(0)
    page.click("#password-ok")
    expect(_toast(page, "Two passwords you typed do not match.")).to_be_visible()
    page.fill("#password-confirm", "")
    page.click("#password-ok")
    expect(_toast(page, "Empty input!")).to_be_visible()
    page.fill("#password-confirm", "Target-new-1")
    expect(page.locator("#confirm-hint")).to_have_count(0)
    page.click("#password-ok")
    expect(_toast(page, "Password set successfully")).to_be_visible()
    expect(page.locator("#password-new")).to_have_count(0)  # the dialog closed
    assert not _session_works(server, elsewhere)  # the user's sessions ended with the old password
    assert _session_works(server, _browser_session(page))  # the admin's own goes on
    assert _signs_in(server, world.org, "target", "Target-new-1")
    assert not _signs_in(server, world.org, "target", PASSWORD)

    # the form saves after it and after her sign-ins: it sends back only what it edits
    page.fill("#field-displayName", "Target after")
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    assert _signs_in(server, world.org, "target", "Target-new-1")

    # the user themselves: the old password is asked, and checked
    page.context.clear_cookies()
    api_login(Account(world.org, "target", "Target-new-1", "target"))
    _open(visit, page, "/account", "target")
    page.click("#password-open")
    expect(page.locator("#password-old")).to_be_visible()
    page.fill("#password-old", "Not-the-old-1")
    page.fill("#password-new", "Target-third-1")
    page.fill("#password-confirm", "Target-third-1")
    page.click("#password-ok")
    expect(_toast(page, re.compile("incorrect"))).to_be_visible()
    elsewhere = _session_elsewhere(server, world.org, "target", "Target-new-1")
    page.fill("#password-old", "Target-new-1")
    page.click("#password-ok")
    expect(_toast(page, "Password set successfully")).to_be_visible()
    assert _signs_in(server, world.org, "target", "Target-third-1")
    # her other session ended; the one she changed it from goes on
    assert not _session_works(server, elsewhere)
    assert _session_works(server, _browser_session(page))
    _open(visit, page, "/account", "target")


def test_typed_passwords_never_reach_the_console_state(visit, page, api_login, accounts, server):
    """The dialog's passwords go from the browser to set-password: no console state the server
    holds (what Redis would keep with REDIS_URL) has them, while what the form saved is there."""
    world = _seed(server)
    api_login(accounts.admin)
    _open(visit, page, f"/users/{world.org}/target", "target")
    shown = f"Shown-{uuid.uuid4().hex[:8]}"
    page.fill("#field-displayName", shown)
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    assert held(server, shown)  # the probe reads the states the form's values are in

    new = f"Typed-{uuid.uuid4().hex[:8]}-A1"
    page.click("#password-open")
    page.fill("#password-new", new)
    page.fill("#password-confirm", new + "x")
    expect(page.locator("#confirm-hint")).to_be_visible()
    page.fill("#password-confirm", new)
    expect(page.locator("#confirm-hint")).to_have_count(0)  # every keystroke's event has been handled
    expect(page.locator("#password-hint")).to_have_count(0)
    assert gone(server, new, seconds=0)  # typed, not yet sent: in the page alone
    assert serious(page) == []
    page.click("#password-ok")
    expect(_toast(page, "Password set successfully")).to_be_visible()
    assert gone(server, new, seconds=0)
    assert _signs_in(server, world.org, "target", new)

    # her own change on /account: neither the old password nor the new one is kept
    page.context.clear_cookies()
    api_login(Account(world.org, "target", new, "target"))
    _open(visit, page, "/account", "target")
    page.click("#password-open")
    third = f"Third-{uuid.uuid4().hex[:8]}-B2"
    page.fill("#password-old", new)
    page.fill("#password-new", "short")
    expect(page.locator("#password-hint")).to_have_text("The password must have at least 8 characters")
    page.fill("#password-new", third)
    page.fill("#password-confirm", third + "x")
    expect(page.locator("#confirm-hint")).to_be_visible()
    page.fill("#password-confirm", third)
    expect(page.locator("#confirm-hint")).to_have_count(0)
    expect(page.locator("#password-hint")).to_have_count(0)
    assert gone(server, new, seconds=0) and gone(server, third, seconds=0)
    assert serious(page) == []
    page.click("#password-ok")
    expect(_toast(page, "Password set successfully")).to_be_visible()
    assert gone(server, new, seconds=0) and gone(server, third, seconds=0)
    assert _signs_in(server, world.org, "target", third)
    assert not _signs_in(server, world.org, "target", new)


def test_api_key_generation(visit, page, api_login, server):
    world = _seed(server)
    api_login(world.chief)
    _open(visit, page, f"/users/{world.org}/target", "target")
    expect(page.locator("#access-key")).to_have_value("")
    expect(page.locator("#keys-generate")).to_have_text("Generate")
    page.click("#keys-generate")
    expect(page.locator("#access-key")).to_have_value(re.compile(r"^[0-9a-f-]{36}$"))
    expect(page.locator("#keys-generate")).to_have_text("Update")
    key = page.locator("#access-key").input_value()
    secret = page.locator("#access-secret").input_value()
    assert re.fullmatch(r"[0-9a-f-]{36}", secret) and secret != key
    account = _api(server, f"/api/get-account?accessKey={key}&accessSecret={secret}")
    assert account["status"] == "ok" and account["data"]["name"] == "target"

    # Save after generating keeps the new keys
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    from iam_console.identity.passwords import hash_secret

    stored = _stored(server, world.org, "target")
    assert (stored.access_key, stored.access_secret) == (key, hash_secret(secret))  # only the hash is kept

    # read again, the secret is masked
    visit.reload()
    expect(page.locator("#access-key")).to_have_value(key)
    expect(page.locator("#access-secret")).not_to_have_value(secret)
    expect(page.locator("#access-secret")).to_have_value(re.compile(r"^•+$"))
    page.click("#keys-generate")
    expect(page.locator("#access-key")).not_to_have_value(key)


def _cell(row, column: int):
    return row.locator("input").nth(column)


def test_properties_are_added_edited_deleted_and_saved(visit, page, api_login, server):
    world = _seed(server, properties={f"p{i:02d}": f"v{i}" for i in range(12)})
    api_login(world.chief)
    _open(visit, page, f"/users/{world.org}/target", "target")
    rows = page.locator("#properties-table tbody tr")
    expect(rows).to_have_count(10)  # ten a page
    expect(page.locator("#properties-page-current")).to_have_text("1 / 2")
    expect(page.locator("#properties-list-total")).to_have_text("Total 12")
    page.click("#properties-page-size")  # the size changer
    page.get_by_role("option", name="20", exact=True).click()
    expect(rows).to_have_count(12)
    page.click("#properties-page-size")
    page.get_by_role("option", name="10", exact=True).click()
    page.fill("#properties-page-jump", "2")  # the quick jumper
    page.press("#properties-page-jump", "Enter")
    expect(rows).to_have_count(2)

    page.click("#properties-add")  # a new row on the last page
    expect(rows).to_have_count(3)
    _cell(rows.nth(2), 0).fill("colour")
    _cell(rows.nth(2), 1).fill("blue")
    _cell(rows.nth(0), 1).fill("changed")  # p10
    rows.nth(1).locator(".property-delete").click()  # p11
    expect(rows).to_have_count(2)
    expect(_cell(rows.nth(1), 0)).to_have_value("colour")
    page.click("#properties-page-prev")
    page.locator("#properties-table tbody tr").nth(0).locator(".property-delete").click()  # p00
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()

    properties = _stored(server, world.org, "target").properties
    expected = {f"p{i:02d}": f"v{i}" for i in range(1, 10)} | {"p10": "changed", "colour": "blue"}
    assert properties == expected
    visit.reload()
    expect(page.locator("#properties-page-current")).to_have_text("1 / 2")


def test_groups_hold_one_physical_group_at_most(visit, page, api_login, server):
    world = _seed(server, groups=(("plant", "Physical"), ("depot", "Physical"), ("club", "Virtual")))
    api_login(world.chief)
    _open(visit, page, f"/users/{world.org}/target", "target")
    expect(page.locator("#user-roles")).to_contain_text("auditor")  # read-only
    page.click("#groups-search")
    options = page.locator("#group-options .group-option")
    expect(options).to_have_count(3)
    options.filter(has_text=f"{world.org}/plant").click()
    options.filter(has_text=f"{world.org}/club").click()
    expect(page.locator("#user-groups .user-group")).to_have_count(2)
    options.filter(has_text=f"{world.org}/depot").click()
    expect(_toast(page, "You can only select one physical group")).to_be_visible()
    expect(page.locator("#user-groups .user-group")).to_have_count(2)
    page.fill("#groups-search", "dep")
    expect(options).to_have_count(1)
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    assert _stored(server, world.org, "target").groups == [f"{world.org}/plant", f"{world.org}/club"]
    expect(_toast(page, "Successfully saved")).to_have_count(0)  # gone: the next one is the next save's

    # removing one, saved with the form
    page.locator("#user-groups .user-group").filter(has_text="club").get_by_label("remove").click()
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    assert _stored(server, world.org, "target").groups == [f"{world.org}/plant"]


def test_is_deleted_sets_deleted_time_and_return_url(visit, page, api_login, server):
    world = _seed(server)
    api_login(world.chief)
    back = f"/organizations/{world.org}/users"
    _open(visit, page, f"/users/{world.org}/target?returnUrl={back}", "target")
    expect(page.locator("#field-deletedTime")).to_have_count(0)
    page.click("#field-isDeleted")
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    expect(page.locator("#field-deletedTime")).to_have_value(re.compile(r"^\d{4}-\d\d-\d\dT"))
    expect(page.locator("#field-deletedTime")).to_be_disabled()
    page.click("#field-isDeleted")
    expect(page.locator("#field-isDeleted")).to_have_attribute("aria-checked", "false")
    page.click("#edit-save-exit")
    # the list itself (the edit page's own URL ends with ?returnUrl=<the list> too)
    page.wait_for_url(re.compile(rf"^{re.escape(server.url(back))}/?$"))
    assert _stored(server, world.org, "target").deleted_time is None


def test_the_avatar_is_cropped_and_uploaded(visit, page, api_login, server):
    world = _seed(server)
    api_login(world.chief)
    _open(visit, page, f"/users/{world.org}/target", "target")
    expect(page.locator("#field-avatar")).to_have_value("")
    page.click("#avatar-open")
    page.click("#avatar-upload")
    expect(_toast(page, "You must select a picture first!")).to_be_visible()
    page.locator("#avatar-file").set_input_files(files=[{"name": "me.png", "mimeType": "image/png",
                                                         "buffer": png(120, 80, (20, 120, 220))}])
    expect(page.locator("#avatar-crop-area img")).to_be_visible()
    page.click("#avatar-upload")
    # the page reloads with the new avatar
    expect(page.locator("#field-avatar")).to_have_value(re.compile(f"/files/avatar/{world.org}/target.png"))
    url = page.locator("#field-avatar").input_value()
    picture = page.request.get(url)
    assert picture.ok and picture.headers["content-type"] == "image/png"
    width, height = int.from_bytes(picture.body()[16:20], "big"), int.from_bytes(picture.body()[20:24], "big")
    assert width == height == 80  # the 1:1 crop of a 120x80 picture
    assert _stored(server, world.org, "target").avatar == url


def test_what_an_ordinary_user_and_an_admin_see_of_the_same_user(visit, page, api_login, accounts):
    api_login(accounts.alice)
    _open(visit, page, "/account", "alice")
    expect(page.locator("#field-displayName")).to_be_enabled()
    expect(page.locator("#field-name")).to_be_disabled()
    expect(page.locator("#field-tag")).to_be_disabled()
    expect(page.locator("#field-isDeleted")).to_have_count(0)
    expect(page.locator("#user-groups")).to_have_count(1)
    expect(page.locator("#groups-search")).to_have_count(0)  # groups: modify rule Admin
    expect(page.locator("#properties-table")).to_have_count(0)  # not visible in acme's items
    expect(page.locator("#keys-generate")).to_have_count(0)
    page.click("#password-open")
    expect(page.locator("#password-old")).to_be_visible()  # her own: the old password is asked
    page.click("#password-cancel")
    expect(page.locator("#password-new")).to_have_count(0)

    page.context.clear_cookies()
    api_login(accounts.boss)
    _open(visit, page, "/users/acme/alice", "alice")
    expect(page.locator("#field-name")).to_be_enabled()
    expect(page.locator("#field-tag")).to_be_enabled()
    expect(page.locator("#field-isDeleted")).to_be_enabled()
    expect(page.locator("#field-owner")).to_be_disabled()
    expect(page.locator("#groups-search")).to_be_visible()
    page.click("#password-open")
    expect(page.locator("#password-old")).to_be_visible()  # shown to all but a global admin


def test_the_account_items_the_server_keeps_are_shown(visit, page, api_login, server):
    """ID card info, Balance, 3rd-party logins, Is online, Managed accounts, Face ID and MFA
    accounts, as the organization's account items show them: read-only, and without the managed
    accounts' passwords, the face data or the authenticators' secret keys."""
    from decimal import Decimal

    from sqlmodel import Session, select

    from iam_console.db import make_engine
    from iam_console.models import User

    world = _seed(server, properties={"idCardFront": "/favicon.ico"})
    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            user = db.exec(select(User).where(User.owner == world.org, User.name == "target")).one()
            user.balance, user.is_online = Decimal("12.5"), True
            user.managed_accounts = [{"application": "app-built-in", "username": "tina",
                                      "password": "Managed-secret-9", "signinUrl": "https://sso.example.com"}]
            user.face_ids = [{"name": "front camera", "faceIdData": [0.123456789, 0.987654321]}]
            user.mfa_accounts = [{"issuer": "GitHub", "accountName": "tina@example.com",
                                  "secretKey": "JBSWY3DPEHPK3PXP", "origin": "github.com"}]
            db.add(user)
            db.commit()
    finally:
        engine.dispose()
    api_login(world.chief)
    _open(visit, page, f"/users/{world.org}/target", "target")
    expect(page.locator("#id-card-info .id-card-picture")).to_have_attribute("src", "/favicon.ico")
    expect(page.locator("#id-card-info")).to_contain_text("ID card back")
    expect(page.locator("#field-balance")).to_have_value("12.5")
    expect(page.locator("#field-balance")).to_be_disabled()
    expect(page.locator("#field-isOnline")).to_be_checked()
    expect(page.locator("#field-isOnline")).to_be_disabled()
    expect(page.locator("#linked-section")).to_contain_text("3rd-party logins")
    expect(page.locator("#managed-accounts-table tbody tr .managed-accounts-username")).to_have_text(["tina"])
    expect(page.locator("#managed-accounts-table tbody tr .managed-accounts-signin-url")).to_have_text(
        ["https://sso.example.com"])
    expect(page.locator("#face-ids-table tbody tr .face-ids-name")).to_have_text(["front camera"])
    expect(page.locator("#mfa-accounts-table tbody tr .mfa-accounts-issuer")).to_have_text(["GitHub"])
    expect(page.locator("#mfa-accounts-table tbody tr .mfa-accounts-account-name")).to_have_text(["tina@example.com"])
    html = page.content()
    for secret in ("Managed-secret-9", "0.123456789", "JBSWY3DPEHPK3PXP"):
        assert secret not in html
    assert serious(page) == []
    # saved, they stay as the server holds them
    page.fill("#field-displayName", "Tina")
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    stored = _stored(server, world.org, "target")
    assert stored.managed_accounts[0]["password"] == "Managed-secret-9" and stored.balance == Decimal("12.5")
    assert stored.mfa_accounts[0]["secretKey"] == "JBSWY3DPEHPK3PXP" and stored.display_name == "Tina"
