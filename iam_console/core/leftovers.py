"""What a deleted (or renamed) user or application leaves behind, settled in the transaction
of the delete or rename (docs/architecture.md, "What a deleted user or application leaves
behind"). Everything that lets someone act as the account or the client ends, so that nothing
issued under a name outlives it or passes to a new record of the same name; what names the
record as a reference is released or follows the new name; history stays."""

from __future__ import annotations

from sqlmodel import Session, delete, select, update

from iam_console import models as m


def end_user_access(db: Session, owner: str, name: str) -> None:
    """Every sign-in of the account ends, every token and code issued to it is deleted, and
    every ceremony begun for it dies: a pending second factor, an MFA setup, a WebAuthn
    challenge, an upstream link under way. Sessions in which it, as a global admin,
    impersonates someone end too."""
    user_id = f"{owner}/{name}"
    for model in (m.AuthSession, m.PendingSignIn, m.MfaSetup, m.WebAuthnChallenge):
        db.exec(delete(model).where(model.owner == owner, model.user_name == name))
    db.exec(delete(m.Session).where(m.Session.owner == owner, m.Session.name == name))
    db.exec(delete(m.AuthSession).where(m.AuthSession.impersonator == user_id))
    db.exec(delete(m.Token).where(m.Token.organization == owner, m.Token.user == name))
    db.exec(delete(m.UpstreamState).where(m.UpstreamState.user == user_id))
    db.flush()


def release_user(db: Session, owner: str, name: str, new_name: str = "") -> None:
    """The records of the organization that name the user: its roles' and permissions' user
    lists (saved as rows, so the authorization counters move and every enforcer rebuilds), the
    groups it manages, and its own API keys. With `new_name` they follow it, else the name
    leaves the lists, the groups lose their manager and the keys are deleted. Only `owner`'s
    records: a name is only ever one organization's (core/references.py)."""
    old_id, new_id = f"{owner}/{name}", f"{owner}/{new_name}" if new_name else ""
    for model in (m.Role, m.Permission):
        for row in db.exec(select(model).where(model.owner == owner)).all():
            if old_id in row.users:
                row.users = [new_id if u == old_id else u for u in row.users if new_id or u != old_id]
                db.add(row)
    for group in db.exec(select(m.Group).where(m.Group.owner == owner, m.Group.manager == name)).all():
        group.manager = new_name
        db.add(group)
    keys = (m.Key.organization == owner, m.Key.user == name)
    db.exec(update(m.Key).where(*keys).values(user=new_name) if new_name else delete(m.Key).where(*keys))
    db.flush()


def end_application_access(db: Session, name: str) -> None:
    """Every token and code issued to the application's client is deleted, every sign-in made
    through it ends, and every state begun for it dies: a pending second factor, a WebAuthn
    challenge, an upstream or SAML sign-in under way, a wallet nonce."""
    for model in (m.Token, m.AuthSession, m.Session, m.PendingSignIn, m.WebAuthnChallenge, m.UpstreamState,
                  m.SamlRequest, m.Web3Nonce, m.PushedRequest):
        db.exec(delete(model).where(model.application == name))
    db.flush()


def release_application(db: Session, name: str, new_name: str = "") -> None:
    """What names the application as a setting: organizations' default application, users'
    sign-up application and its API keys. With `new_name` they follow it; else the settings
    are emptied (an organization then uses the built-in application; nothing is refused for a
    name that no longer exists) and the keys are deleted. Application names are unique across
    organizations, so the name alone tells."""
    db.exec(update(m.Organization).where(m.Organization.default_application == name)
            .values(default_application=new_name))
    db.exec(update(m.User).where(m.User.signup_application == name).values(signup_application=new_name))
    keys = m.Key.application == name
    db.exec(update(m.Key).where(keys).values(application=new_name) if new_name else delete(m.Key).where(keys))
    db.flush()
