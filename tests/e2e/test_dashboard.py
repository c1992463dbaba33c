"""The dashboard, the apps page and the shortcuts page
in the browser: the user cards' figures for users created on known days,
the chart, the organization selector, what an organization admin and an
ordinary user see, the guided tour, and the cards' links."""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from playwright.sync_api import expect

ORG = "dashco"
PASSWORD = "E2e-dash-pass-1"
# users of ORG and how many days ago each was created; the admin was created long ago
CREATED_DAYS_AGO = (0, 0, 3, 20, 45)
EXPECTED = {"total": 1 + len(CREATED_DAYS_AGO), "today": 2, "week": 3, "month": 4}
TOUR_STEPS = 6


def _engine(server):
    from iam_console.db import make_engine

    return make_engine(server.database_url)


@pytest.fixture(scope="module")
def world(server):
    """ORG with an admin (dboss), an ordinary user (dana) and dated users; its applications."""
    from sqlmodel import Session

    from iam_console.identity.passwords import hash_password
    from iam_console.models import Application, Organization, User

    now = datetime.now(timezone.utc).replace(microsecond=0)
    if (now.hour, now.minute) >= (23, 55) or (now.hour, now.minute) < (0, 1):
        pytest.skip("too close to midnight (UTC) for 'today' to be stable")
    engine = _engine(server)
    password = hash_password(PASSWORD, "argon2id")
    try:
        with Session(engine) as db:
            db.add(Organization(owner="admin", name=ORG, display_name="Dash Co", password_type="argon2id",
                                languages=["en", "zh"], nav_items=["all"], enable_tour=False))
            for name, is_admin, homepage in (("dboss", True, ""), ("dana", False, "https://dana.example.com/")):
                db.add(User(owner=ORG, name=name, uuid=str(uuid.uuid4()), type="normal-user", display_name=name.title(),
                            is_admin=is_admin, password=password, password_type="argon2id", homepage=homepage,
                            created_time=now - timedelta(days=400)))
            for i, days in enumerate(CREATED_DAYS_AGO):
                db.add(User(owner=ORG, name=f"dated{i}", uuid=str(uuid.uuid4()), type="normal-user",
                            created_time=now - timedelta(days=days, minutes=1)))
            for name, display, url in (("dash-site", "Dash Site", "https://site.example.com/"),
                                       ("dash-none", "Dash None", ""),
                                       ("dash-custom", "Dash Custom", "<custom-url>")):
                db.add(Application(owner="admin", name=name, organization=ORG, display_name=display,
                                   homepage_url=url, client_id=uuid.uuid4().hex, description=f"{display} app"))
            db.commit()
    finally:
        engine.dispose()
    # dana counts among the users created long ago: one more in the total
    return {**EXPECTED, "total": EXPECTED["total"] + 1}


def _sign_in(page, name: str) -> None:
    response = page.request.post("/api/login", data={
        "application": "", "organization": ORG, "username": name, "password": PASSWORD, "autoSignin": True,
        "type": "login", "signinMethod": "Password"})
    assert response.json().get("status") == "ok", response.text()


def _all_users(server) -> dict[str, int]:
    """The figures for every organization, counted here on their own."""
    from sqlmodel import Session, func, select

    from iam_console.models import User

    engine = _engine(server)
    today = datetime.now(timezone.utc).date()
    try:
        with Session(engine) as db:
            def since(days: int) -> int:
                start = datetime.combine(today - timedelta(days=days - 1), datetime.min.time(), timezone.utc)
                return db.exec(select(func.count()).select_from(User).where(User.created_time >= start)).one()

            return {"total": db.exec(select(func.count()).select_from(User)).one(),
                    "today": since(1), "week": since(7), "month": since(30)}
    finally:
        engine.dispose()


def _expect_cards(page, figures: dict[str, int]) -> None:
    for key, value in figures.items():
        expect(page.locator(f"#card-{key}-value")).to_have_text(str(value))


def _choose_organization(page, name: str) -> None:
    page.click("#organization-selector")
    page.get_by_role("option", name=name, exact=True).click()


def test_global_admin_sees_all_or_the_chosen_organization(world, visit, page, api_login, accounts, server):
    api_login(accounts.admin)
    visit("/")
    expect(page.locator("#dashboard-scope")).to_have_text("All organizations")
    _expect_cards(page, _all_users(server))
    expect(page.locator("#card-total")).to_contain_text("Total users")

    _choose_organization(page, ORG)
    expect(page.locator("#dashboard-scope")).to_have_text(f"Organization: {ORG}")
    _expect_cards(page, world)

    # the choice is kept by the browser
    visit.reload()
    _expect_cards(page, world)

    _choose_organization(page, "All")
    expect(page.locator("#dashboard-scope")).to_have_text("All organizations")
    _expect_cards(page, _all_users(server))


def test_the_chart_draws_fourteen_series_over_31_days(world, visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/")
    chart = page.locator("#dashboard-chart")
    expect(chart.locator("svg.recharts-surface").first).to_be_visible()
    expect(chart.locator("path.recharts-line-curve")).to_have_count(14)
    for label in ("Organizations", "Users", "Applications", "Enforcers"):
        expect(chart.locator(".recharts-legend-item-text", has_text=re.compile(f"^{label}$"))).to_have_count(1)
    # 31 daily points, up to today (MM/DD, UTC): a curve has a segment between each two days
    today = datetime.now(timezone.utc).date()
    expect(chart.locator("svg text", has_text=re.compile(f"^{today:%m/%d}$"))).to_have_count(1)
    path = chart.locator("path.recharts-line-curve").nth(1).get_attribute("d")
    assert path.count("C") + path.count("L") == 30, path


def test_organization_admin_sees_only_their_organization(world, visit, page):
    _sign_in(page, "dboss")
    visit("/")
    expect(page.locator("#dashboard-scope")).to_have_text(f"Organization: {ORG}")
    _expect_cards(page, world)
    expect(page.locator("#organization-selector")).to_have_count(0)
    # the organization has no tour
    expect(page.locator("#tour")).to_have_count(0)
    expect(page.locator("#tour-open")).to_have_count(0)


def test_an_ordinary_user_lands_on_the_apps_page(world, visit, page, server):
    _sign_in(page, "dana")
    visit("/")
    page.wait_for_url(re.compile(r"/apps$"))
    expect(page.locator("#welcome")).to_contain_text("Dana")
    expect(page.locator("#card-total")).to_have_count(0)

    cards = page.locator(".app-card")
    expect(cards).to_have_count(3)
    site = page.locator("a", has=page.locator("[data-app='dash-site']"))
    expect(site).to_have_attribute("href", "https://site.example.com/")
    expect(site).to_have_attribute("target", "_blank")
    # <custom-url> opens the viewer's own homepage
    custom = page.locator("a", has=page.locator("[data-app='dash-custom']"))
    expect(custom).to_have_attribute("href", "https://dana.example.com/")
    # no homepage: shown, disabled, not a link
    bare = page.locator("[data-app='dash-none']")
    expect(bare).to_have_attribute("data-disabled", "true")
    expect(bare).to_contain_text("No homepage")
    expect(page.locator("a", has=bare)).to_have_count(0)
    with page.context.expect_page() as opened:
        site.click()
    opened.value.close()  # a new tab; this page stays
    assert page.url == server.url("/apps")


def test_the_tour_shows_once_and_its_last_step_goes_on(world, visit, page, api_login, accounts):
    api_login(accounts.admin)  # the built-in organization has enableTour
    visit("/")
    tour = page.locator("#tour")
    expect(tour).to_be_visible()
    expect(page.locator("#tour-title")).to_have_text("Welcome to the console")
    for step in range(1, TOUR_STEPS):
        expect(page.locator("#tour-count")).to_have_text(f"{step} / {TOUR_STEPS}")
        page.click("#tour-next")
    expect(page.locator("#tour-count")).to_have_text(f"{TOUR_STEPS} / {TOUR_STEPS}")
    page.click("#tour-next")
    page.wait_for_url(re.compile(r"/organizations$"))

    # shown once per browser
    visit("/")
    expect(page.locator("#card-total")).to_be_visible()
    expect(tour).to_have_count(0)
    # the tour button opens it again; Skip closes it for good
    page.click("#tour-open")
    expect(page.locator("#tour-title")).to_have_text("Welcome to the console")
    page.click("#tour-next")
    expect(page.locator("#tour-title")).to_have_text("Home")
    page.click("#tour-skip")
    expect(tour).to_have_count(0)
    visit.reload()
    expect(page.locator("#card-total")).to_be_visible()
    expect(tour).to_have_count(0)


def test_no_tour_on_narrow_screens(world, visit, page, api_login, accounts):
    api_login(accounts.admin)
    page.set_viewport_size({"width": 390, "height": 844})
    visit("/")
    expect(page.locator("#card-total")).to_be_visible()
    expect(page.locator("#tour")).to_be_hidden()


def test_shortcuts_lead_to_the_screens_that_exist(world, visit, page, api_login, accounts, server):
    api_login(accounts.admin)
    linked = 0
    for key in ("organizations", "users", "providers", "applications"):
        visit("/shortcuts")
        card = page.locator(f"#shortcut-{key}")
        expect(card).to_be_visible()
        link = page.locator(f"a[href='/{key}']", has=card)
        if link.count() == 0:  # a screen not built yet: shown disabled, with a note
            expect(card).to_have_attribute("data-disabled", "true")
            expect(card).to_contain_text("Not available yet")
            continue
        linked += 1
        link.click()
        page.wait_for_url(re.compile(f"/{key}$"))
        expect(page.locator("#list-table")).to_be_visible()
    assert linked >= 2  # organizations and users exist
