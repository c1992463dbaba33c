"""The provider screen's declarations without a browser: what a category or type change sets,
the conditions that enable the test buttons, the type lists per category, and the dotted keys of
an object field's entries."""

from __future__ import annotations

from iam_console.applications.kinds import provider as kind
from iam_console.applications.ui import providers as page
from iam_console.core.kinds import choices
from iam_console.ui.screens import SCREENS, ViewerValue
from iam_console.ui.state.editing import _entry


def test_a_category_change_resets_the_type_and_email_sets_its_defaults():
    for category, default in kind.DEFAULT_TYPE.items():
        assert page._category_changed(category)["type"] == default
    email = page._category_changed("Email")
    assert email["port"] == "465" and email["disableSsl"] is False and email["host"] == kind.EMAIL_HOST
    assert email["title"] == kind.EMAIL_TITLE and "within 5 minutes" in email["content"]
    assert email["receiver"] == ViewerValue("email")
    assert "port" not in page._category_changed("SMS")


def test_a_type_change_sets_its_sub_type_and_method():
    assert page._type_changed("WeCom") == {"subType": "Internal", "method": "Normal"}
    assert page._type_changed("Aliyun Captcha") == {"subType": "nc"}
    assert page._type_changed("Custom HTTP SMS") == {"subType": "", "method": "POST"}
    assert page._type_changed("GitHub") == {"subType": ""}


def test_the_test_buttons_conditions():
    checks = dict(SCREENS["provider"].checks)
    assert checks["email"]({"receiver": "a@example.com"}, {})
    assert not checks["email"]({"receiver": "a@example"}, {})
    assert checks["sms"]({"type": "Twilio SMS", "endpoint": "", "receiver": "+15550001234"}, {})
    assert not checks["sms"]({"type": "Custom HTTP SMS", "endpoint": "", "receiver": "+15550001234"}, {})
    assert checks["sms"]({"type": "Custom HTTP SMS", "endpoint": "https://sms.example", "receiver": "+155500012"},
                         {})
    assert not checks["sms"]({"type": "Twilio SMS", "endpoint": "", "receiver": "call me"}, {})


def test_the_selects_offer_the_kinds_lists():
    fields = {f.key: f for f in SCREENS["provider"].fields}
    # Casdoor's page's lists; what Casdoor also stores (SMTP, its newer categories) is taken, not offered
    assert fields["category"].options == choices("provider", "category") == kind.CATEGORIES
    assert fields["type"].options_by == ("category", kind.TYPES)
    assert set(choices("provider", "type")) == {t for types in kind.TYPES.values() for t in types}
    assert "SMTP" not in choices("provider", "type") and "SMTP" in kind.ACCEPTED["Email"]
    assert "Twilio SMS" in kind.TYPES["SMS"] and "Twilio SMS" not in kind.TYPES["Email"]
    column = next(c for c in SCREENS["provider"].columns if c.key == "type")
    assert [label for label, _ in column.filter_groups] == list(kind.CATEGORIES)


def test_dotted_keys_read_an_object_fields_entry():
    record = {"userMapping": {"id": "sub"}, "name": "x"}
    assert _entry(record, "userMapping.id") == "sub"
    assert _entry(record, "userMapping.email") is None
    assert _entry(record, "name") == "x"
    assert _entry({"userMapping": None}, "userMapping.id") is None
