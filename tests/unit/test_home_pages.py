"""The home pages' registrations, without a browser: the menu's Home group
links to them, and the dashboard follows the header's organization selector."""

from iam_console.core.navigation import Viewer, menu_for
from iam_console.home.ui.dashboard_state import series_labels
from iam_console.ui import pages  # noqa: F401  (registers the pages)
from iam_console.ui.routes import LINKABLE, reload_on_organization


def test_home_group_lists_the_three_pages():
    home = menu_for(Viewer("acme", True), LINKABLE)[0]
    assert [item.key for item in home.items] == ["/", "/shortcuts", "/apps"]


def test_only_pages_that_follow_the_organization_reload():
    assert [event.fn.__name__ for event in reload_on_organization("/")] == ["load"]
    assert reload_on_organization("/apps") == []  # the viewer's own organization's apps
    assert reload_on_organization("/users/acme/alice") == []  # an edit page keeps its unsaved edits


def test_chart_series_are_the_services():
    from iam_console.home import dashboard

    labels = series_labels()
    assert tuple(labels) == dashboard.series() and len(labels) == 14
    assert labels["user"] == "Users" and labels["subscription"] == "Subscriptions"  # the menu's labels
