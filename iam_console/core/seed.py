"""First-start data: the built-in organization, admin, application, cert,
default providers, LDAP entry, permission and Casbin objects; then each extension's own
(`Extension.seed`, iam_console/extension.py).

Idempotent: each object is created only when its owner/name is missing, so a
second start changes nothing and an administrator's edits are never undone.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable

from sqlmodel import Session, select

from iam_console.applications.certs import generate
from iam_console.core import builtin as b
from iam_console.extension import extensions
from iam_console.identity.passwords import DEFAULT_TYPE, hash_password
from iam_console.models import (
    Adapter,
    Application,
    CasbinModel,
    Cert,
    Enforcer,
    Ldap,
    Named,
    Organization,
    Permission,
    Provider,
    User,
)

USER_MODEL_TEXT = """[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, obj, act

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act
"""

# The API model of Casdoor without its "subject equals object" clause, which let
# any user act on any object sharing their name.
API_MODEL_TEXT = """[request_definition]
r = subOwner, subName, method, urlPath, objOwner, objName

[policy_definition]
p = subOwner, subName, method, urlPath, objOwner, objName

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = (r.subOwner == p.subOwner || p.subOwner == "*") && \\
    (r.subName == p.subName || p.subName == "*" || r.subName != "anonymous" && p.subName == "!anonymous") && \\
    (r.method == p.method || p.method == "*") && \\
    (r.urlPath == p.urlPath || p.urlPath == "*" || keyMatch2(r.urlPath, p.urlPath)) && \\
    (r.objOwner == p.objOwner || p.objOwner == "*") && \\
    (r.objName == p.objName || p.objName == "*")
"""


def _ensure(db: Session, model: type[Named], owner: str, name: str, build: Callable[[], Named]) -> bool:
    """Insert build() unless a row with this owner/name exists; True if inserted.

    A factory, so that hashing or key generation happens only for missing rows."""
    found = db.exec(select(model.pk).where(model.owner == owner, model.name == name)).first()
    if found is not None:
        return False
    db.add(build())
    db.flush()
    return True


def ensure_record(db: Session, row: Named) -> bool:
    """Insert the row unless one with its owner/name exists (an extension's first-start data)."""
    return _ensure(db, type(row), row.owner, row.name, lambda: row)


def _organization() -> Organization:
    return Organization(
        owner=b.ADMIN_OWNER, name=b.BUILT_IN_ORG, display_name="Built-in Organization",
        website_url="https://example.com", password_type=DEFAULT_TYPE, password_options=["AtLeast6"],
        password_obfuscator_type="Plain", country_codes=list(b.COUNTRY_CODES), default_token_format="JWT",
        languages=list(b.LANGUAGES), init_score=2000, enable_tour=True, is_profile_public=False,
        dcr_policy="disabled", default_application=b.BUILT_IN_APP, tags=[], nav_items=["all"],
        user_types=["normal-user", "paid-user"], account_items=b.default_account_items(),
        mfa_items=b.default_mfa_items(), theme_data={"isEnabled": False},
    )


def _admin(password: str) -> User:
    return User(
        owner=b.BUILT_IN_ORG, name=b.ADMIN_USER, uuid=str(uuid.uuid4()), type="normal-user",
        password=hash_password(password, DEFAULT_TYPE), password_type=DEFAULT_TYPE,
        display_name="Admin", email="admin@example.com", phone="12345678910", country_code="US",
        affiliation="Example Inc.", tag="staff", score=2000, ranking=1, is_admin=True,
        signup_application=b.BUILT_IN_APP, register_type="Add User",
        register_source=f"{b.BUILT_IN_ORG}/{b.ADMIN_USER}", created_ip="127.0.0.1",
    )


def _application() -> Application:
    return Application(
        owner=b.ADMIN_OWNER, name=b.BUILT_IN_APP, display_name="Built-in Application",
        organization=b.BUILT_IN_ORG, cert=b.BUILT_IN_CERT, enable_password=True, enable_sign_up=True,
        enable_signin_session=True,
        providers=[{"name": "provider_captcha_default", "canSignUp": False, "canSignIn": False,
                    "canUnlink": False, "prompted": False, "signupGroup": "", "rule": "None"}],
        signin_methods=[
            {"name": "Password", "displayName": "Password", "rule": "All"},
            {"name": "Verification code", "displayName": "Verification code", "rule": "All"},
            {"name": "WebAuthn", "displayName": "WebAuthn", "rule": "None"},
            {"name": "Face ID", "displayName": "Face ID", "rule": "None"},
        ],
        signup_items=[dict(item) for item in b.DEFAULT_SIGNUP_ITEMS],
        grant_types=["authorization_code"], token_format="JWT", token_signing_method="RS256",
        expire_in_hours=168, refresh_expire_in_hours=168, cookie_expire_in_hours=b.DEFAULT_COOKIE_EXPIRE_HOURS,
        form_offset=2, failed_signin_limit=b.DEFAULT_FAILED_SIGNIN_LIMIT,
        failed_signin_frozen_time=b.DEFAULT_FAILED_SIGNIN_FROZEN_MINUTES,
        client_id=secrets.token_hex(10), client_secret=secrets.token_hex(20),
    )


def _cert() -> Cert:
    certificate, private_key = generate("RS256", 4096, 20, b.BUILT_IN_CERT)
    return Cert(
        owner=b.ADMIN_OWNER, name=b.BUILT_IN_CERT, display_name="Built-in Cert", scope="JWT", type="x509",
        crypto_algorithm="RS256", bit_size=4096, expire_in_years=20,
        certificate=certificate, private_key=private_key,
    )


def _providers() -> list[Provider]:
    return [
        Provider(owner=b.ADMIN_OWNER, name=name, display_name=display, category=category, type=type_)
        for name, display, category, type_ in [
            ("provider_captcha_default", "Captcha Default", "Captcha", "Default"),
        ]
    ]


def _authorization() -> list[Named]:
    org = b.BUILT_IN_ORG
    return [
        Ldap(owner=org, name="ldap-built-in", server_name="BuiltIn LDAP Server", host="example.com",
             port=389, username="cn=buildin,dc=example,dc=com", base_dn="ou=BuildIn,dc=example,dc=com",
             filter="(objectClass=posixAccount)", filter_fields=["uid"], password_type="Plain"),
        Permission(owner=org, name="permission-built-in", display_name="Built-in Permission",
                   users=[f"{org}/*"], resource_type="Application", resources=[b.BUILT_IN_APP],
                   actions=["Read", "Write", "Admin"], effect="Allow", is_enabled=True,
                   model=f"{org}/user-model-built-in", submitter=b.ADMIN_USER, approver=b.ADMIN_USER,
                   state="Approved"),
        CasbinModel(owner=org, name="user-model-built-in", display_name="Built-in Model",
                    model_text=USER_MODEL_TEXT),
        CasbinModel(owner=org, name="api-model-built-in", display_name="API Model",
                    model_text=API_MODEL_TEXT),
        Adapter(owner=org, name="user-adapter-built-in", table="casbin_user_rule", use_same_db=True),
        Adapter(owner=org, name="api-adapter-built-in", table="casbin_api_rule", use_same_db=True),
        Enforcer(owner=org, name="user-enforcer-built-in", display_name="User Enforcer",
                 model=f"{org}/user-model-built-in", adapter=f"{org}/user-adapter-built-in"),
        Enforcer(owner=org, name="api-enforcer-built-in", display_name="API Enforcer",
                 model=f"{org}/api-model-built-in", adapter=f"{org}/api-adapter-built-in"),
    ]


def ensure_first_start_data(db: Session, admin_password: str = "") -> str | None:
    """Create whatever built-in object is missing.

    Returns the generated admin password when the admin was created without a
    configured one (the caller prints it once), else None.
    """
    password = admin_password or secrets.token_urlsafe(12)
    _ensure(db, Organization, b.ADMIN_OWNER, b.BUILT_IN_ORG, _organization)
    created_admin = _ensure(db, User, b.BUILT_IN_ORG, b.ADMIN_USER, lambda: _admin(password))
    _ensure(db, Application, b.ADMIN_OWNER, b.BUILT_IN_APP, _application)
    _ensure(db, Cert, b.ADMIN_OWNER, b.BUILT_IN_CERT, _cert)
    for row in [*_providers(), *_authorization()]:
        ensure_record(db, row)
    for extension in extensions():
        if extension.seed is not None:
            extension.seed(db)
    return password if created_admin and not admin_password else None


def announce_generated_password(password: str | None) -> None:
    """The generated password, in one line on the console (README, "Sign in"), nowhere else: no
    log record keeps it."""
    if password:
        print(f"IAM_ADMIN_PASSWORD generated: sign in as built-in/admin with password: {password}", flush=True)
