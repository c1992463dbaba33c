"""LDAP servers: the directories an organization's users are synced from."""

from __future__ import annotations

from sqlmodel import Session

from iam_console import models as m
from iam_console.core.access import Actor
from iam_console.core.kinds.common import Choice, KindRules, check_destinations, check_range, fixed
from iam_console.identity import ldap_client

PASSWORD_TYPES = ("Plain", "SSHA", "MD5")


def validate(db: Session, actor: Actor, row: m.Ldap) -> None:
    check_range(row.port, 0, 65535, "port")
    check_destinations(row, hosts=("host",))
    check_range(row.auto_sync, 0, None, "auto sync interval")


RULES = KindRules(
    choices=(Choice("password_type", PASSWORD_TYPES),
             Choice("filter_fields", tuple(ldap_client.FILTER_FIELDS),
                    message="Unknown filter field: %s (uid, mail, mobile or sAMAccountName)")),
    validate=validate,
    new=fixed(serverName="Example LDAP Server", host="example.com", port=389,
              username="cn=buildin,dc=example,dc=com", baseDn="ou=BuildIn,dc=example,dc=com",
              filter="(objectClass=posixAccount)", filterFields=["uid"], passwordType="Plain", autoSync=0),
    generate_name=True,
)
