"""Accounts for upstream identities (federation/federation.py): linked sign-in, link by email,
sign-up under the provider row, canSignIn, country codes, link and unlink."""

import pytest
from sqlmodel import func, select

from iam_console import models as m
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.federation import federation as f
from tests.api.test_migrations import empty_database  # noqa: F401  (a fixture)
from tests.conftest import reload_user, unique


def row(name, **over):
    item = {"name": name, "canSignUp": True, "canSignIn": True, "canUnlink": True, "prompted": False,
            "signupGroup": "", "rule": "None", "countryCodes": []}
    item.update(over)
    return item


@pytest.fixture
def world(make_org):
    """An organization, an OAuth provider (GitHub) and an application listing it."""
    org = make_org()

    def make(*, provider_type="GitHub", email_regex="", link_with_email=False, sign_up=True, **row_fields):
        name = unique("gh")
        app_name = unique("app")
        with session_scope() as db:
            db.add(m.Provider(owner="admin", name=name, category="OAuth", type=provider_type, client_id="cid",
                              client_secret="secret", email_regex=email_regex))
            db.add(m.Application(owner="admin", name=app_name, organization=org.name, enable_sign_up=sign_up,
                                 enable_link_with_email=link_with_email, providers=[row(name, **row_fields)],
                                 client_id=unique("cid")))
        return org, app_name, name
    return make


def identity(upstream_id="4242", **over):
    fields = {"provider_type": "GitHub", "id": upstream_id, "username": "octo cat", "display_name": "Octo Cat",
              "email": "octo@example.com", "avatar": "https://avatars.example.com/octo.png",
              "extra": {"company": "GitHub"}, "email_verified": True}
    fields.update(over)
    return f.UpstreamIdentity(**fields)


def run(app_name, provider_name, ident, method=f.SIGN_IN):
    with session_scope() as db:
        application = db.exec(select(m.Application).where(m.Application.name == app_name)).one()
        provider, prow = f.provider_of(db, application, provider_name)
        return f.resolve(db, application, provider, prow, ident, method=method, client_ip="10.1.1.1")


def users_of(org):
    with session_scope() as db:
        return db.exec(select(func.count()).select_from(m.User).where(m.User.owner == org)).one()


def test_sign_up_then_the_same_user_signs_in(world):
    org, app, provider = world(signupGroup="")
    first = run(app, provider, identity())
    assert first.signed_up and not first.linked_by_email
    user = reload_user(org.name, first.user.name)
    assert user.name == "octo_cat" and user.display_name == "Octo Cat" and user.email == "octo@example.com"
    assert user.third_party_ids == {"github": "4242"} and user.signup_application == app
    assert user.properties["oauth_GitHub_id"] == "4242" and user.properties["oauth_GitHub_username"] == "octo cat"
    assert '"company": "GitHub"' in user.properties["oauth_GitHub_extra"]
    assert not any("token" in key.lower() for key in user.properties)  # upstream tokens are not kept
    second = run(app, provider, identity(display_name="Renamed"))
    assert not second.signed_up and second.user.name == user.name
    assert users_of(org.name) == 1
    assert reload_user(org.name, user.name).display_name == "Octo Cat"  # the account's own value stays


def test_sign_up_lands_in_the_rows_signup_group_with_a_unique_name(world, make_user):
    org, app, provider = world(signupGroup="staff")
    with session_scope() as db:
        db.add(m.Group(owner=org.name, name="staff", display_name="Staff"))
    make_user(owner=org.name, name="octo_cat")
    result = run(app, provider, identity())
    assert result.user.name.startswith("octo_cat_") and result.user.groups == [f"{org.name}/staff"]


def test_link_by_email_only_when_enabled_and_verified(world, make_user):
    org, app, provider = world(link_with_email=True)
    existing = make_user(owner=org.name, email="Octo@Example.com")
    unverified = run(app, provider, identity("1", email="octo@example.com", email_verified=False))
    assert unverified.signed_up and unverified.user.email == ""  # the email stays with its owner
    result = run(app, provider, identity("2"))
    assert result.linked_by_email and result.user.name == existing.name
    assert reload_user(org.name, existing.name).third_party_ids == {"github": "2"}


def test_link_by_email_only_to_an_account_whose_own_email_is_trusted(world, make_user):
    """A self-made account's unproven email is anyone's claim (issue 26): the link is refused and
    nothing is written; a proven one, or one an administrator gave, is linked."""
    org, app, provider = world(link_with_email=True)
    claimed = make_user(owner=org.name, email="octo@example.com", register_type="Application Signup")
    with pytest.raises(ServiceError, match=r"The account with the email octo@example\.com has not verified it"):
        run(app, provider, identity("1"))
    assert reload_user(org.name, claimed.name).third_party_ids in ({}, None) and users_of(org.name) == 1
    proven = make_user(owner=org.name, email="proven@example.com", register_type="Application Signup",
                       email_verified=True)
    assert run(app, provider, identity("2", email="proven@example.com")).user.name == proven.name
    given = make_user(owner=org.name, email="given@example.com", register_type="Add User")
    assert run(app, provider, identity("3", email="given@example.com")).user.name == given.name


def test_without_link_with_email_a_new_account_is_made(world, make_user):
    org, app, provider = world(link_with_email=False)
    existing = make_user(owner=org.name, email="octo@example.com")
    result = run(app, provider, identity())
    assert result.signed_up and result.user.name != existing.name


def test_sign_up_refused_by_the_application_or_the_row(world):
    org, app, provider = world(sign_up=False)
    with pytest.raises(ServiceError, match="not allowed to sign up as new account, please contact"):
        run(app, provider, identity())
    org, app, provider = world(canSignUp=False)
    with pytest.raises(ServiceError, match="not allowed to sign up as new account via GitHub"):
        run(app, provider, identity())
    assert users_of(org.name) == 0


def test_can_sign_in_off_refuses_a_sign_in_even_of_a_linked_user(world):
    org, app, provider = world(canSignIn=False)
    with pytest.raises(ServiceError, match="cannot be used to sign in"):
        run(app, provider, identity())
    # the sign-up page may still sign up, but a linked account cannot sign in through it
    made = run(app, provider, identity(), method=f.SIGN_UP)
    assert made.signed_up
    with pytest.raises(ServiceError, match="cannot be used to sign in"):
        run(app, provider, identity(), method=f.SIGN_UP)
    assert users_of(org.name) == 1


def test_country_codes_bound_sign_up(world):
    _org, app, provider = world(countryCodes=["US"])
    with pytest.raises(ServiceError, match="Your region is not allow"):
        run(app, provider, identity(country_code="CN"))
    assert run(app, provider, identity(country_code="US")).signed_up
    _, app2, provider2 = world(countryCodes=["All"])
    assert run(app2, provider2, identity("9", country_code="CN")).signed_up


def test_email_regex_and_bad_identities_write_nothing(world):
    org, app, provider = world(email_regex=r".*@corp\.example")
    with pytest.raises(ServiceError, match="Email is invalid"):
        run(app, provider, identity())
    with pytest.raises(ServiceError, match="did not give the user's id"):
        run(app, provider, identity(""))
    with pytest.raises(ServiceError, match="too long"):
        run(app, provider, identity("x" * 101))
    assert users_of(org.name) == 0


def test_provider_not_listed_or_missing(world):
    _org, app, _provider = world()
    with session_scope() as db:
        application = db.exec(select(m.Application).where(m.Application.name == app)).one()
        with pytest.raises(ServiceError, match="does not exist"):
            f.provider_of(db, application, "nope")
        db.add(m.Provider(owner="admin", name="unlisted-gh", category="OAuth", type="GitHub"))
        db.flush()
        with pytest.raises(ServiceError, match="is not enabled for the application"):
            f.provider_of(db, application, "unlisted-gh")


def test_forbidden_linked_user_is_refused(world):
    org, app, provider = world()
    made = run(app, provider, identity())
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == org.name, m.User.name == made.user.name)).one()
        user.is_forbidden = True
        db.add(user)
    with pytest.raises(ServiceError, match="forbidden"):
        run(app, provider, identity())


def test_link_from_the_account_and_linked_elsewhere(world, make_user):
    org, app, provider = world()
    me = make_user(owner=org.name)
    other = make_user(owner=org.name)
    with session_scope() as db:
        application = db.exec(select(m.Application).where(m.Application.name == app)).one()
        prov, _ = f.provider_of(db, application, provider)
        f.link(db, reload_user(org.name, me.name), application, prov, identity("77"))
    assert reload_user(org.name, me.name).third_party_ids == {"github": "77"}
    with session_scope() as db, pytest.raises(ServiceError, match="already linked to another account"):
        application = db.exec(select(m.Application).where(m.Application.name == app)).one()
        f.link(db, reload_user(org.name, other.name), application, prov, identity("77"))
    assert reload_user(org.name, other.name).third_party_ids == {}


def test_unlink_under_can_unlink(world, make_user):
    org, app, provider = world(canUnlink=False)
    made = run(app, provider, identity())
    me = reload_user(org.name, made.user.name)
    with session_scope() as db, pytest.raises(ServiceError, match="can't be unlinked"):
        f.unlink(db, me, me, "GitHub", provider)
    stranger = make_user(owner=org.name)
    with session_scope() as db, pytest.raises(ServiceError, match="not the global admin"):
        f.unlink(db, stranger, me, "GitHub")
    with session_scope() as db:  # a global admin may
        f.unlink(db, stranger, me, "GitHub", is_global_admin=True)
    after = reload_user(org.name, me.name)
    assert after.third_party_ids == {} and not any(k.startswith("oauth_GitHub_") for k in after.properties)
    with session_scope() as db, pytest.raises(ServiceError, match="Please link first"):
        f.unlink(db, stranger, after, "GitHub", is_global_admin=True)


def test_unlink_own_identity_when_allowed(world):
    org, app, provider = world(canUnlink=True)
    made = run(app, provider, identity())
    me = reload_user(org.name, made.user.name)
    assert me.third_party_ids == {"github": "4242"} and me.properties["oauth_GitHub_username"] == "octo cat"
    with session_scope() as db:
        f.unlink(db, me, me, "GitHub")
    assert reload_user(org.name, me.name).third_party_ids == {}


def test_unknown_provider_type_is_refused():
    with pytest.raises(ServiceError, match="not supported"):
        f.link_key("Nope")
    assert f.link_key("AzureAD") == "azuread" and f.link_key("Custom") == "custom"


@pytest.mark.parametrize("dialect, expected", [
    ("sqlite", "JSON_EXTRACT(user.properties, '$.\"oauth_Aliyun IDaaS_id\"')"),
    ("postgresql", "\"user\".properties ->> 'oauth_Aliyun IDaaS_id'"),
    ("mysql", "JSON_UNQUOTE(JSON_EXTRACT(user.properties, '$.\"oauth_Aliyun IDaaS_id\"'))"),
])
def test_a_type_without_a_user_field_is_looked_up_by_its_property(dialect, expected):
    """The link of Keycloak and Aliyun IDaaS is the property oauth_<Type>_id: one JSON path each
    database reads (MariaDB speaks MySQL's)."""
    import importlib

    assert f.link_column("Keycloak") is None and f.link_column("Custom") == "custom"
    assert f.link_property("Aliyun IDaaS") == "oauth_Aliyun IDaaS_id"
    clause = m.User.properties[f.link_property("Aliyun IDaaS")].as_string() == "x"
    module = importlib.import_module(f"sqlalchemy.dialects.{dialect}")
    text = str(select(m.User.pk).where(clause).compile(dialect=module.dialect(),
                                                        compile_kwargs={"literal_binds": True}))
    assert expected in text, text
    with pytest.raises(ServiceError):
        f.link_key("Keycloak")  # no field: unlinking by field stays refused


def test_property_link_found_on_each_database(empty_database):  # noqa: F811
    """linked_user by the property, run on SQLite, the local PostgreSQL and MariaDB."""
    import uuid as uuid_

    from iam_console.db import make_engine, migrate

    migrate(empty_database)
    engine = make_engine(empty_database)
    try:
        with session_scope(engine) as db:
            for name, upstream_id in (("kim", "kc-1"), ("lee", "kc-10")):
                db.add(m.User(owner="o1", name=name, uuid=str(uuid_.uuid4()), type="normal-user",
                              properties={"oauth_Keycloak_id": upstream_id, "oauth_Aliyun IDaaS_id": upstream_id}))
        with session_scope(engine) as db:
            assert f.linked_user(db, "o1", "Keycloak", "kc-1").name == "kim"
            assert f.linked_user(db, "o1", "Aliyun IDaaS", "kc-10").name == "lee"
            assert f.linked_user(db, "o1", "Keycloak", "kc") is None
            assert f.linked_user(db, "o2", "Keycloak", "kc-1") is None
    finally:
        engine.dispose()
