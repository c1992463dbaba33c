"""The dashboard's figures: 14 series of 31 days counted
in SQL, the user cards' offsets of 1, 7 and 30 days, and who sees what."""

import uuid
from datetime import timedelta

import pytest
from sqlmodel import func, select

from iam_console import models as m
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.home import dashboard
from iam_console.models.base import utcnow
from tests.conftest import unique

DAYS_AGO = (0, 0, 1, 3, 6, 7, 20, 29, 30, 45, 400)  # one user created at each


def _global_admin() -> Actor:
    with session_scope() as db:
        return Actor(user=db.exec(select(m.User).where(m.User.owner == "built-in", m.User.name == "admin")).one())


@pytest.fixture
def dated_org(make_org, make_user):
    """An organization with an admin created long ago and users created DAYS_AGO days ago."""
    org = make_org()
    now = utcnow()
    boss = make_user(owner=org.name, is_admin=True, created_time=now - timedelta(days=1000))
    with session_scope() as db:
        for days in DAYS_AGO:
            db.add(m.User(owner=org.name, name=unique("u"), uuid=str(uuid.uuid4()),
                          created_time=now - timedelta(days=days, minutes=1)))
        db.add(m.Role(owner=org.name, name=unique("role"), created_time=now - timedelta(days=2)))
    return org, boss, now


def test_series_and_cards_of_an_organization(dated_org):
    org, boss, now = dated_org
    with session_scope() as db:
        series = dashboard.counts(db, Actor(user=boss), org.name, now=now)
    assert set(series) == {f"{kind}Counts" for kind in dashboard.series()} and len(series) == 14
    users = series["userCounts"]
    assert len(users) == dashboard.DAYS == 31
    # each point counts what existed at the end of its day
    for i, day in enumerate(dashboard.days(now)):
        end = (now - timedelta(days=dashboard.DAYS - 1 - i)).replace(hour=23, minute=59, second=59)
        assert str(end.date()) == day
        # minutes=1 keeps "0 days ago" on today unless the test runs in the first minute of a day
        expected = 1 + sum(1 for d in DAYS_AGO if now - timedelta(days=d, minutes=1) <= end)
        assert users[i] == expected, (i, day)
    assert series["roleCounts"][-1] == 1 and series["organizationCounts"][-1] == 1
    figures = dashboard.user_figures(series)
    assert figures["total"] == 1 + len(DAYS_AGO)
    assert figures == {"total": users[30], "today": users[30] - users[29], "week": users[30] - users[23],
                       "month": users[30] - users[0]}


def test_cards_offsets():
    series = {"userCounts": list(range(100, 131))}
    assert dashboard.user_figures(series) == {"total": 130, "today": 1, "week": 7, "month": 30}


def test_maintained_totals_agree_with_counting(dated_org):
    """Totals come from row_count where the scope is an owner filter: the same as counting rows."""
    _, _, now = dated_org
    with session_scope() as db:
        every = dashboard.counts(db, _global_admin(), "", now=now)
        naive = db.exec(select(func.count()).select_from(m.User)).one()
    assert every["userCounts"][-1] == naive


def test_global_admin_all_or_one_organization(dated_org, make_org):
    org, _, now = dated_org
    other = make_org()
    with session_scope() as db:
        db.add(m.User(owner=other.name, name=unique("u"), uuid=str(uuid.uuid4()), created_time=now))
    god = _global_admin()
    with session_scope() as db:
        one = dashboard.counts(db, god, org.name, now=now)
        theirs = dashboard.counts(db, god, other.name, now=now)
        every = dashboard.counts(db, god, "", now=now)
    assert one["userCounts"][-1] == 1 + len(DAYS_AGO)
    assert theirs["userCounts"][-1] == 1 and theirs["organizationCounts"][-1] == 1
    assert every["userCounts"][-1] >= one["userCounts"][-1] + theirs["userCounts"][-1]
    assert every["organizationCounts"][-1] >= 3


def test_organization_admin_sees_only_their_own(dated_org, make_org, make_user):
    org, boss, now = dated_org
    other = make_org()
    with session_scope() as db:
        own = dashboard.counts(db, Actor(user=boss), "", now=now)  # no organization given: their own
        assert own["userCounts"][-1] == 1 + len(DAYS_AGO)
        with pytest.raises(ServiceError):
            dashboard.counts(db, Actor(user=boss), other.name, now=now)
    plain = make_user(owner=org.name)
    with session_scope() as db, pytest.raises(ServiceError):
        dashboard.counts(db, Actor(user=plain), org.name, now=now)


def test_range_counts_and_grouping_agree(dated_org, monkeypatch):
    """Many records in the window are counted per day with range counts; few are grouped: same series."""
    org, boss, now = dated_org
    with session_scope() as db:
        db.add(m.User(owner=org.name, name=unique("u"), uuid=str(uuid.uuid4()), created_time=now + timedelta(days=2)))
    with session_scope() as db:
        grouped = dashboard.counts(db, Actor(user=boss), org.name, now=now)
        monkeypatch.setattr(dashboard, "GROUPED_MAX", 0)
        ranged = dashboard.counts(db, Actor(user=boss), org.name, now=now)
        ranged_all = dashboard.counts(db, _global_admin(), "", now=now)  # kinds without row counts too
        monkeypatch.setattr(dashboard, "GROUPED_MAX", 10_000)
        grouped_all = dashboard.counts(db, _global_admin(), "", now=now)
    assert ranged == grouped and ranged_all == grouped_all
    # a record dated after today is in no day of the chart
    assert grouped["userCounts"][-1] == 1 + len(DAYS_AGO)
