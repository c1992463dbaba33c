"""Password sign-in: sessions, rotation, the failed sign-in limit, re-hashing."""

from datetime import timedelta

import pytest
from sqlmodel import func, select

from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.identity.passwords import hash_password
from iam_console.models import Application, AuthSession, Record, Session, User
from iam_console.models.base import utcnow
from iam_console.signin import auth
from tests.conftest import reload_user


def attempt(user, password, **kw):
    with session_scope() as db:
        return auth.sign_in(db, auth.SignInRequest(application="", organization=user.owner,
                                                   username=user.name, password=password, **kw))


def sessions_of(user):
    with session_scope() as db:
        return db.exec(select(AuthSession).where(AuthSession.owner == user.owner,
                                                 AuthSession.user_name == user.name)).all()


def test_sign_in_opens_a_session_listed_on_the_user(make_user):
    user = make_user()
    result = attempt(user, "s3cret-pass", client_ip="10.0.0.1")
    assert result.user.name == user.name and len(result.token) >= 40
    [row] = sessions_of(user)
    assert row.token_hash == auth.hash_token(result.token) and result.token not in row.token_hash
    with session_scope() as db:
        listed = db.exec(select(Session).where(Session.owner == user.owner, Session.name == user.name)).one()
        record = db.exec(select(Record).where(Record.user == user.name, Record.action == "login")).one()
    assert listed.session_id == [row.session_id] and listed.application == "app-built-in"
    assert "s3cret-pass" not in record.object
    with session_scope() as db:
        found = auth.account_for_token(db, result.token)
    assert found is not None and found[0].name == user.name


def test_session_id_rotates_at_sign_in(make_user):
    user = make_user()
    first = attempt(user, "s3cret-pass")
    second = attempt(user, "s3cret-pass", previous_token=first.token)
    with session_scope() as db:
        assert auth.account_for_token(db, first.token) is None
        assert auth.account_for_token(db, second.token) is not None
    assert len(sessions_of(user)) == 1


def test_sign_out_ends_the_session_and_its_listing(make_user):
    user = make_user()
    result = attempt(user, "s3cret-pass")
    with session_scope() as db:
        ended = auth.sign_out(db, result.token)
    assert ended.user_id == f"{user.owner}/{user.name}"
    with session_scope() as db:
        assert auth.account_for_token(db, result.token) is None
        assert db.exec(select(Session).where(Session.name == user.name)).first() is None
        assert auth.sign_out(db, result.token) is None


def test_expired_sessions_are_refused(make_user):
    user = make_user()
    result = attempt(user, "s3cret-pass")
    with session_scope() as db:
        row = db.exec(select(AuthSession).where(AuthSession.token_hash == auth.hash_token(result.token))).one()
        row.expires_at = utcnow() - timedelta(seconds=1)
        db.add(row)
    with session_scope() as db:
        assert auth.account_for_token(db, result.token) is None


def test_wrong_passwords_count_down_then_freeze_even_the_right_one(make_user):
    user = make_user()
    for left in (4, 3, 2, 1):
        with pytest.raises(ServiceError, match=rf"you have {left} remaining chances?$"):
            attempt(user, "wrong")
    with pytest.raises(ServiceError, match="wait for 15 minutes"):
        attempt(user, "wrong")
    with pytest.raises(ServiceError, match="too many times"):
        attempt(user, "s3cret-pass")
    assert sessions_of(user) == []
    assert reload_user(user.owner, user.name).signin_wrong_times == 5


def test_frozen_account_opens_again_after_the_frozen_time(make_user):
    user = make_user(signin_wrong_times=5, last_signin_wrong_time=utcnow() - timedelta(minutes=16))
    assert attempt(user, "s3cret-pass").user.name == user.name
    assert reload_user(user.owner, user.name).signin_wrong_times == 0


def test_application_limits_apply(make_user):
    with session_scope() as db:
        app = db.exec(select(Application).where(Application.name == "app-built-in")).one()
        app.failed_signin_limit, app.failed_signin_frozen_time = 2, 3
        db.add(app)
    try:
        user = make_user()
        with pytest.raises(ServiceError, match=r"1 remaining chance$"):
            attempt(user, "bad")
        with pytest.raises(ServiceError, match="wait for 3 minutes"):
            attempt(user, "bad")
    finally:
        with session_scope() as db:
            app = db.exec(select(Application).where(Application.name == "app-built-in")).one()
            app.failed_signin_limit, app.failed_signin_frozen_time = 5, 15
            db.add(app)


def test_a_success_resets_the_count(make_user):
    user = make_user()
    with pytest.raises(ServiceError):
        attempt(user, "wrong")
    attempt(user, "s3cret-pass")
    assert reload_user(user.owner, user.name).signin_wrong_times == 0


def test_legacy_hash_is_upgraded_to_the_organization_type(make_org, make_user):
    org = make_org(default_application="app-built-in")
    user = make_user(owner=org.name, password_type="md5-salt", salt="abcdef0123456789abcd")
    attempt(user, "s3cret-pass")
    upgraded = reload_user(user.owner, user.name)
    assert upgraded.password_type == "argon2id" and upgraded.password.startswith("$argon2id$")
    attempt(user, "s3cret-pass")  # and the new hash verifies


def test_forbidden_and_deleted_users_cannot_sign_in(make_user):
    forbidden = make_user(is_forbidden=True)
    with pytest.raises(ServiceError, match="forbidden"):
        attempt(forbidden, "s3cret-pass")
    # told only to whoever knows the password; a deleted account is answered as a missing one
    with pytest.raises(ServiceError, match="password or code is incorrect"):
        attempt(forbidden, "wrong-pass")
    with pytest.raises(ServiceError, match="password or code is incorrect, you have 4 remaining chances"):
        attempt(make_user(is_deleted=True), "s3cret-pass")


def test_sign_in_by_email(make_user):
    user = make_user(email="someone@example.org")
    with session_scope() as db:
        result = auth.sign_in(db, auth.SignInRequest(application="app-built-in", organization="built-in",
                                                     username="someone@example.org", password="s3cret-pass"))
    assert result.user.name == user.name


def test_master_password_signs_in_as_any_user_of_the_organization(make_org, make_user):
    org = make_org(master_password=hash_password("master-key", "argon2id"))
    user = make_user(owner=org.name)
    assert attempt(user, "master-key").user.name == user.name


@pytest.mark.parametrize("change,message", [
    ({"username": "x" * 101}, "too long"),
    ({"password": "p" * 2000}, "too long"),
    ({"username": ""}, "Please input"),
    ({"password": ""}, "Please input"),
    ({"organization": "no-such-org"}, "does not exist"),
    ({"application": "no-such-app"}, "does not exist"),
    ({"type": "saml"}, "Unsupported login type"),
])
def test_bad_requests_are_refused_without_a_session(make_user, change, message):
    user = make_user()
    fields = {"application": "", "organization": user.owner, "username": user.name, "password": "s3cret-pass"}
    fields.update(change)
    with session_scope() as db:
        before = db.exec(select(func.count()).select_from(AuthSession)).one()
        with pytest.raises(ServiceError, match=message):
            auth.sign_in(db, auth.SignInRequest(**fields))
    with session_scope() as db:
        assert db.exec(select(func.count()).select_from(AuthSession)).one() == before


def test_an_account_outside_ldap_costs_the_ldap_method_a_real_hash(make_org, make_user, monkeypatch):
    """The LDAP signin method answers an account not synced from LDAP as a wrong password, after
    the same hashing work as a real check (its decoy once returned at once: a wrong argument order
    made the hash type a salt, so the answer told which accounts are not in the directory)."""
    org = make_org()
    user = make_user(owner=org.name)
    checked = []
    real = auth.verify_password
    monkeypatch.setattr(auth, "verify_password",
                        lambda *args, **kwargs: checked.append(args) or real(*args, **kwargs))
    with session_scope() as db, pytest.raises(ServiceError):
        account = db.exec(select(User).where(User.owner == org.name, User.name == user.name)).one()
        auth.check_password(db, account, org, None, "s3cret-pass", ldap_only=True)
    assert [args[2] for args in checked] == [org.password_type or "argon2id"]
