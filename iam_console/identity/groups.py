"""Groups beyond CRUD: an organization's tree, who is in a group, and what a
group's place in the tree asks of a save or a delete.

A user's groups are Casdoor's `groups` list on the user ("owner/name"
entries), the one source of truth: a group stores no member list of its own
(its `users` column only keeps the wire key). Database triggers derive the
user_group table from those lists (migration 0007), whatever writes a user, and
membership is read there: an index range per group, see `member_filter`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core import policy, query
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY

# an organization's groups are few (tens, hundreds): the tree reads them all, up to this
TREE_LIMIT = 5_000
RENAME_BATCH = 1_000


def check_one_physical_group(db: Session, groups: list) -> None:
    """A user's groups (owner/name entries) hold one Physical group at most."""
    pairs = list(dict.fromkeys(tuple(g.split("/", 1)) for g in groups if isinstance(g, str) and g.count("/") == 1))
    if len(pairs) > 1:
        physical = db.exec(select(m.Group.pk).where(m.Group.type == "Physical", query.named(m.Group, pairs))).all()
        if len(physical) > 1:
            raise ServiceError("You can only select one physical group")


def group_id(owner: str, group: str) -> str:
    """owner/name of a group given as a name of `owner` or as owner/name already."""
    return group if "/" in group else f"{owner}/{group}"


def member_filter(owner: str, group: str, dialect: str = "") -> query.Search:
    """Users whose `groups` list holds the group, through the membership table
    (migration 0007): driven from the group's rows when its users are few, probed
    user by user (EXISTS on the table's key) when walking the list's order finds
    a page sooner; query.run picks by the total (DENSE_MATCHES)."""
    ident = group_id(owner, group)
    listed = select(m.UserGroup.user_pk).where(m.UserGroup.group_id == ident)
    probe = sa.exists().where(m.UserGroup.group_id == ident, m.UserGroup.user_pk == m.User.pk)
    few = None
    if dialect == "postgresql":
        # PostgreSQL's planner takes a group's members as spread evenly over the list's order and walks
        # it (95 ms for 1,000 of 1,000,000); the members read first as an array make it fetch them by key
        few = m.User.pk == sa.any_(sa.func.array(listed.scalar_subquery()))
    return query.Search(m.User.pk.in_(listed), True, probe, few)


def member_total(db: Session, actor: Actor, owner: str, group: str) -> int | None:
    """How many users of the actor's read scope (with `owner` asked) are in the
    group, counted in the membership table alone when that is exact: the table
    keeps only entries naming a group of the user's own organization, so when the
    scope is at most "users of the group's organization" every row counts. None
    otherwise (query.run counts the users themselves)."""
    ident = group_id(owner, group)
    plain, counted_owner = policy.owner_only_scope(actor, REGISTRY["user"], owner)
    if not plain or counted_owner not in (None, ident.split("/", 1)[0]):
        return None
    return db.exec(select(sa.func.count()).select_from(m.UserGroup).where(m.UserGroup.group_id == ident)).one()


def has_children(db: Session, owner: str, name: str) -> bool:
    return db.exec(select(m.Group.pk).where(m.Group.owner == owner, m.Group.parent_id == name,
                                            m.Group.name != name).limit(1)).first() is not None


def extend(db: Session, rows: list[dict[str, Any]]) -> None:
    """Fill the response-only keys of group wire objects, as Casdoor's get-groups
    does: haveChildren, and parentName (the parent group's display name)."""
    if not rows:
        return
    owners = {row["owner"] for row in rows}
    names = {row["name"] for row in rows}
    parents = {row["parentId"] for row in rows if row.get("parentId")}
    with_children = set(db.exec(select(m.Group.owner, m.Group.parent_id).distinct().where(
        m.Group.owner.in_(owners), m.Group.parent_id.in_(names))).all())
    parent_names = {(o, n): d for o, n, d in db.exec(select(m.Group.owner, m.Group.name, m.Group.display_name)
                                                     .where(m.Group.owner.in_(owners), m.Group.name.in_(parents)))
                    } if parents else {}
    for row in rows:
        key = (row["owner"], row["name"])
        row["haveChildren"] = key in with_children
        parent = (row["owner"], row.get("parentId", ""))
        row["parentName"] = (parent_names.get(parent) or parent[1]) if parent in parent_names else ""


@dataclass(frozen=True)
class Node:
    name: str
    display_name: str
    type: str
    parent_id: str
    depth: int
    have_children: bool


def tree(db: Session, actor: Actor, owner: str) -> list[Node]:
    """The organization's groups depth-first (siblings by name), each with its depth.
    A group whose parent is missing shows at the top rather than not at all."""
    scope = policy.read_scope(actor, REGISTRY["group"], owner)
    rows = db.exec(select(m.Group.name, m.Group.display_name, m.Group.type, m.Group.parent_id)
                   .where(m.Group.owner == owner, *scope).order_by(m.Group.name).limit(TREE_LIMIT)).all()
    names = {row.name for row in rows}
    children: dict[str, list] = {}
    roots = []
    for row in rows:
        if row.parent_id in names and row.parent_id != row.name:
            children.setdefault(row.parent_id, []).append(row)
        else:
            roots.append(row)
    out: list[Node] = []
    seen: set[str] = set()

    def walk(row, depth: int) -> None:
        if row.name in seen:
            return
        seen.add(row.name)
        kids = children.get(row.name, [])
        out.append(Node(row.name, row.display_name, row.type, row.parent_id, depth, bool(kids)))
        for kid in kids:
            walk(kid, depth + 1)

    for root in roots:
        walk(root, 0)
    for row in rows:  # a cycle the checks below refuse, written before they existed
        walk(row, 0)
    return out


def descendants(db: Session, owner: str, name: str) -> set[str]:
    """Names of the groups under this one (its children, their children, ...)."""
    rows = db.exec(select(m.Group.name, m.Group.parent_id).where(m.Group.owner == owner).limit(TREE_LIMIT)).all()
    children: dict[str, list[str]] = {}
    for child, parent in rows:
        children.setdefault(parent, []).append(child)
    found: set[str] = set()
    pending = [name]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found and child != name:
                found.add(child)
                pending.append(child)
    return found


def check_place(db: Session, old: m.Group, row: m.Group) -> None:
    """On update: the parent is the organization or another of its groups, never
    the group itself or one below it; a group with children stays in its organization."""
    if row.owner != old.owner and has_children(db, old.owner, old.name):
        raise ServiceError("A group with child groups cannot move to another organization")
    if row.parent_id in ("", row.owner) or (row.parent_id, row.owner) == (old.parent_id, old.owner):
        return
    if row.parent_id in (row.name, old.name) or (
            row.owner == old.owner and row.parent_id in descendants(db, old.owner, old.name)):
        raise ServiceError("A group cannot be placed under itself or one of its child groups")
    # that the parent is a group of the organization: core/references.py, as for every reference


def follow_rename(db: Session, old: m.Group, row: m.Group) -> None:
    """A renamed (or moved) group takes its children and its members along: the
    children's parentId and the users' groups entries name it anew."""
    if (old.owner, old.name) == (row.owner, row.name):
        return
    if row.owner == old.owner:
        for child in db.exec(select(m.Group).where(m.Group.owner == old.owner, m.Group.parent_id == old.name,
                                                   m.Group.name != old.name)).all():
            child.parent_id = row.name
            child.is_top_group = False
            db.add(child)
    before, after = group_id(old.owner, old.name), group_id(row.owner, row.name)
    match = member_filter(old.owner, old.name).clause
    last = 0
    while True:  # in batches by key, so that a big group never sits in memory at once
        users = db.exec(select(m.User).where(m.User.owner == old.owner, m.User.pk > last, match)
                        .order_by(m.User.pk).limit(RENAME_BATCH)).all()
        if not users:
            return
        for user in users:
            user.groups = [after if g == before else g for g in user.groups]
            db.add(user)
        last = users[-1].pk


def members(db: Session, actor: Actor, owner: str, group: str, limit: int) -> list[str]:
    """owner/name of the first users of a group (newest first), at most `limit`."""
    scope = [*policy.read_scope(actor, REGISTRY["user"], owner), m.User.owner == owner]
    found = member_filter(owner, group, db.get_bind().dialect.name)
    page = query.run(db, m.User, scope, query.ListQuery(page=1, page_size=limit),
                     lambda: member_total(db, actor, owner, group), [found])
    return [f"{user.owner}/{user.name}" for user in page.rows]


def choices(db: Session, actor: Actor, owner: str) -> list[tuple[str, str]]:
    """(name, display name) of the organization's groups, for selects."""
    return [(node.name, node.display_name) for node in tree(db, actor, owner)]
