"""The apps page's cards: the viewer's organization's
applications they may read, each with the link its card opens."""

import pytest

from iam_console import models as m
from iam_console.applications import applications
from iam_console.core.access import ANONYMOUS, Actor
from iam_console.core.errors import Unauthorized
from iam_console.db import session_scope
from tests.conftest import unique


@pytest.mark.parametrize(("url", "homepage", "link"), [
    ("https://app.example.com/", "", "https://app.example.com/"),
    ("", "https://me.example.com", ""),
    ("<custom-url>", "https://me.example.com/~alice", "https://me.example.com/~alice"),
    (" <custom-url> ", "", ""),
    ("javascript:alert(1)", "", ""),
    ("<custom-url>", "javascript:alert(1)", ""),
    ("data:text/html,hi", "", ""),
    ("//evil.example.com", "", ""),
    ("https://ok.example.com/a b", "", ""),
])
def test_homepage_link(url, homepage, link):
    assert applications.homepage_link(url, homepage) == link


def test_apps_of_the_viewers_organization(make_org, make_user):
    org, other = make_org(), make_org()
    names = {}
    with session_scope() as db:
        for label, organization, url in (("site", org.name, "https://site.example.com"),
                                         ("mine", org.name, "<custom-url>"),
                                         ("bare", org.name, ""),
                                         ("theirs", other.name, "https://theirs.example.com")):
            names[label] = unique(label)
            db.add(m.Application(owner="admin", name=names[label], organization=organization, homepage_url=url,
                                 display_name=label.title(), client_id=unique("client"), description=f"{label} app"))
    alice = make_user(owner=org.name, homepage="https://alice.example.com")
    for actor in (Actor(user=alice), Actor(user=make_user(owner=org.name, is_admin=True, homepage=""))):
        with session_scope() as db:
            page = applications.apps_of(db, actor)
        cards = {card["name"]: card for card in page.rows}
        assert set(cards) == {names["site"], names["mine"], names["bare"]} and page.total == 3
        assert cards[names["site"]]["link"] == "https://site.example.com"
        assert cards[names["bare"]]["link"] == ""
        assert cards[names["site"]]["displayName"] == "Site" and cards[names["site"]]["description"] == "site app"
    # the placeholder is each viewer's own homepage: alice's, and nothing for the admin who has none
    with session_scope() as db:
        mine = {c["name"]: c for c in applications.apps_of(db, Actor(user=alice)).rows}[names["mine"]]
    assert mine["link"] == "https://alice.example.com"
    assert set(mine) == {"name", "displayName", "logo", "description", "link"}  # nothing else reaches the page


def test_apps_page_needs_a_signed_in_user():
    with session_scope() as db, pytest.raises(Unauthorized):
        applications.apps_of(db, ANONYMOUS)
