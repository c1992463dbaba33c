"""Permissions as Casbin policies, mapped as Casdoor maps them (docs/architecture.md,
"Authorization engine").

- A permission's model has its policy definition padded to six fields, the sixth being
  `permissionId` (a model with no text gets the default one below).
- Each permission in force (enabled and Approved) gives one p rule per subject (its users, its
  groups as `group:owner/name`, its roles) x resource x action: `[subject, resource, action,
  effect, "", id]`, or with domains `[subject, domain, resource, action, effect, id]` per domain.
  The effect is lower-cased (`allow`, `deny`).
- Its roles give g rules, with each domain (or none): each enabled role reached from it through
  sub-roles links its users, its groups and its sub-roles to it; a group links the users in it.
  `owner/*` names every role (or group) of the organization."""

from __future__ import annotations

from collections.abc import Iterable

from casbin.model import Model
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.authorization.casbin_engine import parse_model
from iam_console.core.errors import ServiceError

FIELDS = 6
DEFAULT_MODEL = """[request_definition]
r = sub, obj, act

[policy_definition]
p = sub, obj, act, eft, _, permissionId

[role_definition]
g = _, _

[policy_effect]
e = some(where (p.eft == allow))

[matchers]
m = g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act"""


def in_force(permission: m.Permission) -> bool:
    return permission.is_enabled and permission.state == "Approved"


def padded_model(text: str) -> Model:
    model = parse_model(text or DEFAULT_MODEL)
    tokens = [t.strip() for t in model["p"]["p"].value.split(",")]
    if len(tokens) > FIELDS:
        raise ServiceError("The policy definition of a permission's model has at most %d fields", FIELDS)
    if len(tokens) == FIELDS and tokens[-1] != "permissionId":
        raise ServiceError("The sixth field of a permission's policy definition must be permissionId")
    if len(tokens) < FIELDS:
        tokens += [f"unused{i}" for i in range(len(tokens), FIELDS - 1)] + ["permissionId"]
        model.add_def("p", "p", ", ".join(tokens))
    return model


def subject_of_group(owner: str, group: str) -> str:
    return "group:" + (f"{owner}/*" if group == "*" else group)


def lines_of(permission: m.Permission) -> list[list[str]]:
    """The p lines of one permission (in force or not)."""
    pid, effect = f"{permission.owner}/{permission.name}", permission.effect.lower()
    subjects = [*permission.users, *(subject_of_group(permission.owner, g) for g in permission.groups),
                *permission.roles]
    out = []
    for subject in subjects:
        for resource in permission.resources:
            for action in permission.actions:
                if permission.domains:
                    out += [["p", subject, d, resource, action, effect, pid] for d in permission.domains]
                else:
                    out.append(["p", subject, resource, action, effect, "", pid])
    return out


class _Directory:
    """Roles and group members read once per build."""

    def __init__(self, db: Session) -> None:
        self.db = db
        self.roles: dict[str, dict[str, m.Role]] = {}
        self.members: dict[str, list[str]] = {}

    def roles_of(self, owner: str) -> dict[str, m.Role]:
        if owner not in self.roles:
            rows = self.db.exec(select(m.Role).where(m.Role.owner == owner)).all()
            self.roles[owner] = {f"{r.owner}/{r.name}": r for r in rows}
        return self.roles[owner]

    def users_in(self, owner: str, group: str) -> list[str]:
        group_id = f"{owner}/*" if group == "*" else group
        if group_id not in self.members:
            g_owner, _, g_name = group_id.partition("/")
            query = select(m.User.owner, m.User.name).join(m.UserGroup, m.UserGroup.user_pk == m.User.pk)
            if g_name == "*":
                query = query.where(m.UserGroup.group_id.startswith(f"{g_owner}/", autoescape=True))
            else:
                query = query.where(m.UserGroup.group_id == group_id)
            self.members[group_id] = sorted({f"{o}/{n}" for o, n in self.db.exec(query).all()})
        return self.members[group_id]

    def roles_in(self, owner: str, role_id: str, seen: set[str]) -> list[m.Role]:
        """The role and every role below it through sub-roles (enabled ones only)."""
        role_id = f"{owner}/*" if role_id == "*" else role_id
        r_owner, _, r_name = role_id.partition("/")
        known = self.roles_of(r_owner)
        if r_name == "*":
            return [r for r in known.values() if r.is_enabled]
        role = known.get(role_id)
        if role is None or not role.is_enabled or role_id in seen:
            return []
        seen.add(role_id)
        found = [role]
        for sub in role.roles:
            found += self.roles_in(r_owner, sub, seen)
        return found


def grouping_lines(db: Session, permissions: Iterable[m.Permission]) -> list[list[str]]:
    directory, out, seen = _Directory(db), [], set()

    def link(sub: str, target: str, domains: list[str]) -> None:
        for domain in domains or [""]:
            rule = ("g", sub, target, domain)
            if rule not in seen:
                seen.add(rule)
                out.append(list(rule))

    for permission in permissions:
        domains = permission.domains
        for group in permission.groups:
            subject = subject_of_group(permission.owner, group)
            for user in directory.users_in(permission.owner, group):
                link(user, subject, domains)
        for role_id in permission.roles:
            for role in directory.roles_in(permission.owner, role_id, set()):
                rid = f"{role.owner}/{role.name}"
                for user in role.users:
                    link(user, rid, domains)
                for group in role.groups:
                    subject = subject_of_group(role.owner, group)
                    link(subject, rid, domains)
                    for user in directory.users_in(role.owner, group):
                        link(user, subject, domains)
                for sub in role.roles:
                    link(sub, rid, domains)
    return out
