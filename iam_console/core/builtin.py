"""Built-in names the product relies on, and the default account/MFA items."""

from __future__ import annotations

ADMIN_OWNER = "admin"  # owner of organizations, applications, shared providers and certs
BUILT_IN_ORG = "built-in"
ADMIN_USER = "admin"
BUILT_IN_APP = "app-built-in"
BUILT_IN_CERT = "cert-built-in"

DEFAULT_FAILED_SIGNIN_LIMIT = 5
DEFAULT_FAILED_SIGNIN_FROZEN_MINUTES = 15
DEFAULT_COOKIE_EXPIRE_HOURS = 720
SESSION_HOURS_WITHOUT_AUTO_SIGNIN = 24

LANGUAGES = ["en", "es", "fr", "de", "zh", "id", "ja", "ko", "ru", "vi", "pt"]
COUNTRY_CODES = ["US", "ES", "FR", "DE", "GB", "CN", "JP", "KR", "VN", "ID", "SG", "IN"]

# (name, viewRule, modifyRule); every item visible except where noted below.
_ACCOUNT_ITEMS = [
    ("Organization", "Public", "Admin"),
    ("ID", "Public", "Immutable"),
    ("Name", "Public", "Admin"),
    ("Display name", "Public", "Self"),
    ("Avatar", "Public", "Self"),
    ("User type", "Public", "Admin"),
    ("Password", "Self", "Self"),
    ("Email", "Public", "Self"),
    ("Phone", "Public", "Self"),
    ("Country code", "Public", "Self"),
    ("Country/Region", "Public", "Self"),
    ("Location", "Public", "Self"),
    ("Address", "Public", "Self"),
    ("Affiliation", "Public", "Self"),
    ("Title", "Public", "Self"),
    ("ID card type", "Public", "Self"),
    ("ID card", "Public", "Self"),
    ("ID card info", "Public", "Self"),
    ("Homepage", "Public", "Self"),
    ("Bio", "Public", "Self"),
    ("Tag", "Public", "Admin"),
    ("Language", "Public", "Admin"),
    ("Gender", "Public", "Admin"),
    ("Birthday", "Public", "Admin"),
    ("Education", "Public", "Admin"),
    ("Balance", "Public", "Admin"),
    ("Score", "Public", "Admin"),
    ("Karma", "Public", "Admin"),
    ("Ranking", "Public", "Admin"),
    ("Signup application", "Public", "Admin"),
    ("API key", "", "Self"),
    ("Groups", "Public", "Admin"),
    ("Roles", "Public", "Immutable"),
    ("Permissions", "Public", "Immutable"),
    ("3rd-party logins", "Self", "Self"),
    ("Properties", "Admin", "Admin"),
    ("Is online", "Admin", "Admin"),
    ("Is admin", "Admin", "Admin"),
    ("Is forbidden", "Admin", "Admin"),
    ("Is deleted", "Admin", "Admin"),
    ("Need update password", "Admin", "Admin"),
    ("IP whitelist", "Admin", "Admin"),
    ("Multi-factor authentication", "Self", "Self"),
    ("WebAuthn credentials", "Self", "Self"),
    ("Managed accounts", "Self", "Self"),
    ("Face ID", "Self", "Self"),
    ("MFA accounts", "Self", "Self"),
]
_HIDDEN_ITEMS = {"API key", "Properties"}
ACCOUNT_ITEM_NAMES = tuple(name for name, _, _ in _ACCOUNT_ITEMS)
# a row the organization editor adds before its item is chosen; dropped on save
ACCOUNT_ITEM_PLACEHOLDER = "Please select an account item"
VIEW_RULES = ("Public", "Self", "Admin")
MODIFY_RULES = ("Self", "Admin", "Immutable")

MFA_METHODS = ("Phone", "Email", "App")
MFA_RULES = ("Optional", "Prompt", "Required")

# An organization's own theme (themeData); isEnabled false follows the global theme.
THEME_TYPES = ("default", "dark", "lark", "comic")
THEME_COLORS = ("#5734d3", "#5A54F9", "#9E339F", "#ED4192", "#E0282E", "#F4801A", "#F2BD27", "#00B96B")
THEME_RADIUS_MAX = 20
THEME_DEFAULT = {"isEnabled": False, "themeType": "default", "colorPrimary": "#5734d3", "borderRadius": 6,
                 "isCompact": False}
# what choosing a theme type also sets (Casdoor's theme editor does the same)
THEME_TYPE_PRESETS: dict[str, dict] = {
    "default": {}, "dark": {"borderRadius": 2}, "lark": {"colorPrimary": "#00B96B", "borderRadius": 4},
    "comic": {"colorPrimary": "#ED4192", "borderRadius": 16},
}


def default_account_items() -> list[dict]:
    return [
        {"name": name, "visible": name not in _HIDDEN_ITEMS, "viewRule": view, "modifyRule": modify, "regex": ""}
        for name, view, modify in _ACCOUNT_ITEMS
    ]


def default_mfa_items() -> list[dict]:
    return [{"name": name, "rule": "Optional"} for name in MFA_METHODS]


# What a new application signs up and signs in with when it names no items (Casdoor's defaults for
# an application without them): the sign-up form of the built-in application, and the sign-in
# page's items in Casdoor's order (its "Verification code" item aside, which the console does not
# offer: the verification code is a sign-in method). The ID item is always shown
# (applications/kinds/application.py settle_signup_items). applications/kinds/application.py gives them to a new
# application; the seed to the built-in one.
DEFAULT_SIGNUP_ITEMS = tuple(
    {"name": name, "visible": visible, "required": True, "prompted": False, "type": "Input", "label": "",
     "customCss": "", "placeholder": "", "options": [], "regex": "", "rule": rule}
    for name, visible, rule in (
        ("ID", True, "Random"), ("Username", True, "None"), ("Display name", True, "None"),
        ("Password", True, "None"), ("Confirm password", True, "None"), ("Email", True, "Normal"),
        ("Phone", True, "None"), ("Agreement", True, "None"), ("Signup button", True, "None"),
        ("Providers", True, "big")))
DEFAULT_SIGNIN_ITEMS = tuple(
    {"name": name, "visible": True, "required": True, "isCustom": False, "label": "", "customCss": "",
     "placeholder": "", "rule": "None"}
    for name in ("Back button", "Languages", "Logo", "Signin methods", "Username", "Password", "Agreement",
                 "Forgot password?", "Login button", "Signup link", "Providers"))
