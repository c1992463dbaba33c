"""Applications: list and edit. The row tables' rules are declared on their cells; the save rules
are the service's (applications/kinds/application.py); the links, SAML metadata and terms of use are
the page's own tools (applications/ui/applications_state.py, applications/application_tools.py)."""

from __future__ import annotations

from iam_console.applications import application_tools as tools
from iam_console.applications.kinds.application import (
    AUTO_SIGNIN_NEEDS_SESSION,
    CHOICE_TYPES,
    GRANT_TYPES,
    SIGNIN_METHODS,
    SIGNUP_BUTTON,
    SIGNUP_RULES,
)
from iam_console.applications.ui.applications_parts import (
    code_preview,
    links,
    logo_preview,
    saml,
    side_html_shown,
    terms_upload,
)
from iam_console.applications.ui.applications_state import ApplicationTools
from iam_console.core import builtin as b
from iam_console.core.kinds import choices
from iam_console.identity.ui.organization_state import Theme
from iam_console.identity.ui.organizations import theme_section
from iam_console.ui.screens import Cell, Column, Field, Screen, screen

SIGNUP_ITEMS = ("ID", "Username", "Display name", "First name", "Last name", "Affiliation", "Gender", "Birthday",
                "Education", "Bio", "Tag", "Country/Region", "ID card", "Password", "Confirm password", "Email",
                "Phone", "Invitation code", "Agreement", "Signup button", "Providers",
                "Text 1", "Text 2", "Text 3", "Text 4", "Text 5")
SIGNIN_ITEMS = ("Signin methods", "Logo", "Back button", "Languages", "Username", "Password", "Providers",
                "Agreement", "Forgot password?", "Login button", "Signup link",
                "Text 1", "Text 2", "Text 3", "Text 4", "Text 5")
METHOD_RULES = {"Password": ("All", "Non-LDAP", "Hide password"),
                "Verification code": ("All", "Email only", "Phone only")}
NAME_FORMATS = tuple(f"urn:oasis:names:tc:SAML:{v}:attrname-format:{f}" for v, f in (
    ("2.0", "unspecified"), ("2.0", "basic"), ("2.0", "uri"), ("1.1", "X500")))


def _free(names: tuple[str, ...], extra: dict):
    """A new row: the first name no row has, None once every one has its row."""
    return lambda rows: next(({"name": n, **extra} for n in names if n not in {r.get("name") for r in rows}), None)


def _category(row) -> str:
    """The kind of provider a row names, as the service stored it ("" before it did)."""
    kind = row.get("provider")
    return str(kind.get("category", "")) if isinstance(kind, dict) else ""


def _no_account(row) -> bool:
    """Sign-up, sign-in and unlink apply to OAuth and Web3 providers (a provider of unknown kind: all)."""
    return _category(row) not in (*tools.ACCOUNT_CATEGORIES, "")


def _provider_rules(row) -> list[str]:
    kind = row.get("provider") if isinstance(row.get("provider"), dict) else {}
    offered = list(tools.provider_rules(kind.get("category", ""), kind.get("type", "")))
    return offered if row.get("rule") in offered or not row.get("rule") else [row["rule"], *offered]


def _visible(on: bool) -> dict:
    """Showing an item makes it required, hiding it makes it optional."""
    return {"required": bool(on)}


def _half(record, second: bool) -> list[str]:
    """Half of the providers as owner/name (a shared one is admin's), for the list's two columns."""
    ids = [f"{(p.get('provider') or {}).get('owner') or record.get('organization', '')}/{p.get('name', '')}"
           for p in record.get("providers") or [] if isinstance(p, dict)]
    middle = (len(ids) + 1) // 2
    return ids[middle:] if second else ids[:middle]


def _account(key: str, label: str) -> Cell:
    # signing up through a provider is for applications that take signups
    shown = (lambda values, flags: flags["enableSignUp"]) if key == "canSignUp" else None
    return Cell(key, label, "switch", disabled_when=_no_account, default=False, shown_when=shown)


APPLICATIONS = screen(Screen(
    key="application", title="Applications", list_route="/applications", edit_route="/applications/{owner}/{name}",
    edit_title="Application", admins_only=True, foreign_is_forbidden=True, owner_label="Owner",
    name_locked=lambda record: record.get("name") == b.BUILT_IN_APP,
    protected=lambda record, me: record.get("name") == b.BUILT_IN_APP, sections=(Theme,),
    after_read=ApplicationTools.load, parts=lambda: (links(), saml(), theme_section("Follow organization theme")),
    columns=(
        Column("name", "Name", link="/applications/{owner}/{name}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("logo", "Logo", "avatar", sortable=False, searchable=False),
        Column("organization", "Organization", link="/organizations/{organization}"),
        Column("providers", "Providers", "links", link="/providers/{item}", sortable=False,
               searchable=False, value=lambda record: _half(record, False)),
        Column("moreProviders", "Providers", "links", link="/providers/{item}", sortable=False,
               searchable=False, virtual=True, value=lambda record: _half(record, True)),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("isShared", "Is shared", "switch", global_admin_only=True),
        Field("logo", "Logo", addon=logo_preview),
        Field("homepageUrl", "Home"),
        Field("description", "Description"),
        Field("organization", "Organization", "pick", kind="organization", global_admin_only=True),
        Field("tags", "Tags", "list"),
        Field("clientId", "Client ID"),
        Field("clientSecret", "Client secret"),
        Field("cert", "Cert", "pick", kind="cert"),
        Field("redirectUris", "Redirect URLs", "list"),
        # OpenID Back-Channel and Front-Channel Logout 1.0 (oauth/logout.py)
        Field("backchannelLogoutUri", "Back-channel logout URL"),
        Field("backchannelLogoutSessionRequired", "Back-channel logout requires sid", "switch"),
        Field("frontchannelLogoutUri", "Front-channel logout URL"),
        Field("tokenFormat", "Token format", "select", options=choices("application", "tokenFormat")),
        Field("tokenSigningMethod", "Token signing method", "select", empty="RS256",
              options=choices("application", "tokenSigningMethod")),
        Field("tokenFields", "Token fields", "list",
              enabled_when=lambda values, flags: values["tokenFormat"] == "JWT-Custom"),
        Field("expireInHours", "Token expire (hours)", "number", minimum=1),
        Field("refreshExpireInHours", "Refresh token expire (hours)", "number", minimum=1),
        Field("failedSigninLimit", "Failed signin limit (times)", "number", minimum=1),
        Field("failedSigninFrozenTime", "Failed signin frozen time (minutes)", "number", minimum=1),
        Field("enableSignUp", "Enable signup", "switch"),
        # turning the session off turns auto sign-in off; auto sign-in needs the session first
        Field("enableSigninSession", "Signin session", "switch",
              then=lambda on: {} if on else {"enableAutoSignin": False}),
        Field("enableAutoSignin", "Auto signin", "switch", check=lambda values, flags: AUTO_SIGNIN_NEEDS_SESSION if (
            flags.get("enableAutoSignin") and not flags.get("enableSigninSession")) else ""),
        Field("enableLinkWithEmail", "Link with email", "switch"),
        Field("signinMethods", "Signin methods", "rows", movable=True, min_rows=1,
              new_row=_free(SIGNIN_METHODS, {"rule": "None"}), columns=(
                  # choosing a method names it after itself, with its first rule
                  Cell("name", "Name", "select", options=SIGNIN_METHODS, unique=True, translate=True,
                       then=lambda name: {"displayName": name, "rule": METHOD_RULES.get(name, ("None",))[0]}),
                  Cell("displayName", "Display name"),
                  Cell("rule", "Rule", "select", translate=True,
                       options_for=lambda row: METHOD_RULES.get(row["name"], ("None",))),
              )),
        Field("orgChoiceMode", "Org choice mode", "select", options=("None", "Select", "Input"), empty="None"),
        Field("signupUrl", "Signup URL"),
        Field("signinUrl", "Signin URL"),
        Field("forgetUrl", "Forget URL"),
        Field("affiliationUrl", "Affiliation URL"),
        Field("ipWhitelist", "IP whitelist"),
        Field("termsOfUse", "Terms of use", addon=terms_upload),
        Field("signupHtml", "Signup HTML", "code", language="html", addon=code_preview("signupHtml")),
        Field("signinHtml", "Signin HTML", "code", language="html", addon=code_preview("signinHtml")),
        Field("grantTypes", "Grant types", "checks", options=GRANT_TYPES),
        # RFC 9126 and RFC 9449 (docs/api.md "Standards")
        Field("requirePushedAuthorizationRequests", "Require pushed authorization requests (PAR)", "switch"),
        Field("requireDpop", "Require DPoP-bound tokens", "switch"),
        Field("requireDpopNonce", "Require DPoP nonces", "switch"),
        # which audiences the token exchange grant may name (client ids, resource URIs)
        Field("tokenExchangeAudiences", "Token exchange audiences", "list"),
        Field("samlReplyUrl", "SAML reply URL"),
        Field("enableSamlCompress", "Enable SAML compression", "switch"),
        Field("enableSamlC14n10", "Enable SAML C14N10", "switch"),
        Field("useEmailAsSamlNameId", "Use Email as NameID", "switch"),
        Field("enableSamlPostBinding", "Enable SAML POST binding", "switch"),
        Field("samlAttributes", "SAML attributes", "rows", columns=(
            Cell("name", "Name"), Cell("nameFormat", "Name format", "select", options=NAME_FORMATS,
                                       default=NAME_FORMATS[0]), Cell("value", "Value"))),
        Field("providers", "Providers", "rows", movable=True, columns=(
            # the chosen provider fills its kind (and the rule it starts with) from its record
            Cell("name", "Name", "pick", kind="provider", fill=tools.provider_entry),
            _account("canSignUp", "Can signup"), _account("canSignIn", "Can signin"),
            _account("canUnlink", "Can unlink"), _account("prompted", "Prompted"),
            Cell("signupGroup", "Signup group", disabled_when=_no_account),
            Cell("rule", "Rule", "select", options_for=_provider_rules, default="None",
                 labels=(("OneTap", "One Tap"),)),
            Cell("countryCodes", "Country codes", "tags", hidden_when=lambda row: _category(row) != "SMS"),
        )),
        Field("formBackgroundUrl", "Background URL"),
        Field("formCss", "Form CSS", "code", language="css", addon=code_preview("formCss", css=True)),
        Field("formCssMobile", "Form CSS - mobile", "code", language="css"),
        Field("formOffset", "Form position", "select", choices=lambda db, actor, record: [
            ("1", "Left"), ("2", "Center"), ("3", "Right"), ("4", "Side panel")]),
        Field("formSideHtml", "Side panel HTML", "code", language="html", shown_when=side_html_shown),
        Field("headerHtml", "Header HTML", "code", language="html"),
        Field("footerHtml", "Footer HTML", "code", language="html"),
        Field("signinItems", "Signin items", "rows", movable=True,
              new_row=_free(SIGNIN_ITEMS, {"visible": True, "required": True, "isCustom": False}),
              settle=lambda row: {**row, "isCustom": str(row.get("name", "")).startswith("Text ")}, columns=(
                  Cell("name", "Name", "select", options=SIGNIN_ITEMS, unique=True, translate=True),
                  Cell("visible", "Visible", "switch", default=True, then=_visible),
                  Cell("required", "Required", "switch", default=True),
                  Cell("isCustom", "Is custom", "text"),
                  Cell("label", "Label"), Cell("customCss", "Custom CSS"), Cell("placeholder", "Placeholder"),
                  Cell("rule", "Rule"),
              )),
        Field("signupItems", "Signup items", "rows", movable=True, shown_when=lambda values, flags: flags[
            "enableSignUp"], fixed_row=lambda row: row.get("name") == SIGNUP_BUTTON,
              new_row=_free(SIGNUP_ITEMS, {"visible": True, "required": True, "type": "Input", "rule": "None"}),
              columns=(
                  Cell("name", "Name", "select", options=SIGNUP_ITEMS, unique=True, translate=True,
                       then=lambda name: {"rule": SIGNUP_RULES.get(name, ("None",))[0]}),
                  Cell("visible", "Visible", "switch", default=True, then=_visible,
                       hidden_when=lambda row: row["name"] == "ID"),
                  Cell("required", "Required", "switch", default=True,
                       disabled_when=lambda row: row["name"] == "Password",
                       hidden_when=lambda row: row["name"] in ("Signup button", "Providers")),
                  Cell("prompted", "Prompted", "switch", default=False),
                  Cell("type", "Type", "select", options=("Input", *CHOICE_TYPES), default="Input"),
                  Cell("label", "Label"), Cell("customCss", "Custom CSS"), Cell("placeholder", "Placeholder"),
                  Cell("options", "Options", "tags", disabled_when=lambda row: row["type"] not in CHOICE_TYPES),
                  Cell("regex", "Regex"),
                  Cell("rule", "Rule", "select", options_for=lambda row: SIGNUP_RULES.get(row["name"], ("None",))),
              )),
    ),
))
