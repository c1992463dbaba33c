"""A SCIM filter (RFC 7644 §3.4.2.2) as the WHERE clauses of a list, and sortBy as its order.

scim2-models parses the filter (a grammar, never a regular expression over it) and checks it
against the resource's declaration (schema.py): an attribute we do not declare, an operator its
type does not take, a value it cannot hold are an invalidFilter. Each attribute it names is then
looked up in `FIELDS`, the one table from SCIM attribute to our field, and that field in the
table's columns (core/query.py `scalar_column`): the values travel as bound parameters and no
text of the filter reaches SQL."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from scim2_models import InvalidFilterException, ScimFilter
from scim2_models.path import (
    AttributeBinding,
    AttrPath,
    CompareOperator,
    Comparison,
    FilterVisitor,
    LogicalExpr,
    LogicalOperator,
    Not,
    Present,
    ValuePath,
    coerce_value,
)
from sqlmodel import select

from iam_console import models as m
from iam_console.core import query
from iam_console.core.errors import ServiceError
from iam_console.identity import groups
from iam_console.scim import schema

# SCIM attribute (relative to the resource's own schema; the extension's with its URN, lowercase)
# -> the wire name of our field. Special ones: `active` is the opposite of isForbidden, `groups`
# and `members` are the membership (identity/groups.py).
USER_FIELDS = {
    "id": "id", "externalid": "externalId", "username": "name", "name.givenname": "firstName",
    "name.familyname": "lastName", "displayname": "displayName", "profileurl": "homepage", "title": "title",
    "usertype": "type", "emails": "email", "emails.value": "email", "phonenumbers": "phone",
    "phonenumbers.value": "phone", "photos": "avatar", "photos.value": "avatar", "meta.created": "createdTime",
    "meta.lastmodified": "updatedTime", f"{schema.ENTERPRISE}:organization".lower(): "affiliation",
}
GROUP_FIELDS = {"id": "name", "externalid": "externalId", "displayname": "displayName",
                "meta.created": "createdTime", "meta.lastmodified": "updatedTime"}
ACTIVE, USER_GROUPS, MEMBERS = "active", ("groups", "groups.value"), ("members", "members.value")
MAX_FILTER_LENGTH = 2_000


@dataclass(frozen=True)
class Target:
    """What a filter is read against: the resource, our table, and the organization."""

    resource: type
    model: type[m.Named]
    fields: dict[str, str]
    owner: str
    dialect: str = ""  # the database's (SQLite's LIKE needs a second look at case)


def _key(binding: AttributeBinding, resource: type) -> str:
    core = str(resource.__schema__).lower() + ":"
    urn = binding.urn.lower()
    return urn[len(core):] if urn.startswith(core) else urn


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _exactly(column: sa.ColumnElement, op: CompareOperator, value: str) -> sa.ColumnElement:
    """SQLite's LIKE ignores ASCII case: co, sw and ew of a case-exact attribute are checked again
    with its case-sensitive functions (PostgreSQL's LIKE keeps case already)."""
    return {CompareOperator.co: sa.func.instr(column, value) > 0,
            CompareOperator.sw: sa.func.substr(column, 1, len(value)) == value,
            CompareOperator.ew: sa.func.substr(column, -len(value)) == value}[op]


def compare(column: sa.ColumnElement, op: CompareOperator, value: Any, case_exact: bool,
            dialect: str = "") -> sa.ColumnElement:
    """One comparison of a column with a value, as RFC 7644 §3.4.2.2 defines its operators."""
    if value is None:  # "eq null" asks for the attribute's absence
        missing = column.is_(None) if not isinstance(column.type, sa.String) else column == ""
        if op in (CompareOperator.eq, CompareOperator.ne):
            return missing if op is CompareOperator.eq else sa.not_(missing)
        raise InvalidFilterException(detail=f"The operator {op.value} cannot compare with null")
    if isinstance(value, str) and not case_exact:
        column, value = sa.func.lower(column), value.lower()
    patterns = {CompareOperator.co: "%{}%", CompareOperator.sw: "{}%", CompareOperator.ew: "%{}"}
    if op in patterns:
        matched = column.like(patterns[op].format(_escaped(value)), escape="\\")
        return sa.and_(matched, _exactly(column, op, value)) if case_exact and dialect == "sqlite" else matched
    return {CompareOperator.eq: column.__eq__, CompareOperator.ne: column.__ne__, CompareOperator.gt: column.__gt__,
            CompareOperator.ge: column.__ge__, CompareOperator.lt: column.__lt__,
            CompareOperator.le: column.__le__}[op](value)


class _Clauses(FilterVisitor[sa.ColumnElement]):
    def __init__(self, bound: ScimFilter, target: Target) -> None:
        self.bound = bound
        self.target = target

    def _resolved(self, attr_path: AttrPath, comparison: bool) -> tuple[str, AttributeBinding]:
        try:
            binding = (self.bound.resolve_comparison if comparison else self.bound.resolve)(attr_path, strict=True)
        except InvalidFilterException:
            raise
        except ValueError as exc:
            raise InvalidFilterException(detail=str(exc)) from None
        return _key(binding, self.target.resource), binding

    def _column(self, key: str) -> sa.ColumnElement:
        wire = self.target.fields.get(key)
        if wire is None:
            raise InvalidFilterException(detail=f"The attribute {key} cannot be filtered on")
        try:
            return query.scalar_column(self.target.model, wire, "filter")
        except ServiceError:
            raise InvalidFilterException(detail=f"The attribute {key} cannot be filtered on") from None

    def _membership(self, key: str, op: CompareOperator, value: Any) -> sa.ColumnElement | None:
        """`groups eq "<group id>"` on users, `members eq "<user id>"` on groups; None for other attributes."""
        if key not in USER_GROUPS + MEMBERS or self.target.model not in (m.User, m.Group):
            return None
        if op not in (CompareOperator.eq, CompareOperator.ne) or not isinstance(value, str):
            raise InvalidFilterException(detail=f"The attribute {key} is compared with eq or ne only")
        owner = self.target.owner
        if key in USER_GROUPS:
            found = groups.member_filter(owner, value).clause
        else:
            ids = select(m.UserGroup.group_id).join(m.User, m.User.pk == m.UserGroup.user_pk).where(
                m.User.owner == owner, m.User.uuid == value)
            found = (sa.literal(f"{owner}/") + m.Group.name).in_(ids)
        return found if op is CompareOperator.eq else sa.not_(found)

    def _compare(self, key: str, binding: AttributeBinding, op: CompareOperator, raw: Any) -> sa.ColumnElement:
        value = coerce_value(binding, raw, op)
        membership = self._membership(key, op, value)
        if membership is not None:
            return membership
        if key == ACTIVE and self.target.model is m.User:
            if op not in (CompareOperator.eq, CompareOperator.ne) or not isinstance(value, bool):
                raise InvalidFilterException(detail="active is compared with eq or ne and true or false")
            return m.User.is_forbidden == ((not value) if op is CompareOperator.eq else value)
        return compare(self._column(key), op, value, binding.case_exact, self.target.dialect)

    def visit_comparison(self, node: Comparison) -> sa.ColumnElement:
        key, binding = self._resolved(node.attr_path, True)
        return self._compare(key, binding, node.op, node.value)

    def visit_present(self, node: Present) -> sa.ColumnElement:
        key, _ = self._resolved(node.attr_path, False)
        if key == ACTIVE:
            return sa.true()  # every user is active or not
        if key in USER_GROUPS + MEMBERS:
            return _present_membership(self.target, key)
        column = self._column(key)
        return column.is_not(None) if not isinstance(column.type, sa.String) else column != ""

    def visit_not(self, node: Not) -> sa.ColumnElement:
        return sa.not_(self.visit(node.expr))

    def visit_logical_expr(self, node: LogicalExpr) -> sa.ColumnElement:
        joined = sa.and_ if node.op is LogicalOperator.and_ else sa.or_
        return joined(*(self.visit(term) for term in node.terms))

    def visit_value_path(self, node: ValuePath) -> sa.ColumnElement:
        """`emails[value co "@example.com"]`: each attribute of the inner filter is a sub-attribute
        of the selected one (ours hold one value each, so selecting is comparing)."""
        outer = node.attr_path
        return _Inner(self, outer).visit(node.val_filter)


class _Inner(_Clauses):
    def __init__(self, parent: _Clauses, outer: AttrPath) -> None:
        super().__init__(parent.bound, parent.target)
        self.outer = outer

    def _resolved(self, attr_path: AttrPath, comparison: bool) -> tuple[str, AttributeBinding]:
        if attr_path.sub_attr is not None or attr_path.uri is not None:
            raise InvalidFilterException(detail=f"{attr_path} cannot be named inside {self.outer}[...]")
        return super()._resolved(AttrPath(self.outer.attr, attr_path.attr, self.outer.uri), comparison)

    def visit_value_path(self, node: ValuePath) -> sa.ColumnElement:
        raise InvalidFilterException(detail="A value selection cannot hold another")


def _present_membership(target: Target, key: str) -> sa.ColumnElement:
    if key in USER_GROUPS:
        return sa.exists().where(m.UserGroup.user_pk == m.User.pk)
    return sa.exists().where(m.UserGroup.group_id == sa.literal(f"{target.owner}/") + m.Group.name)


def where(text: str, target: Target) -> list[sa.ColumnElement]:
    """The clauses of a filter (none for an empty one); invalidFilter when it cannot be read."""
    if not text:
        return []
    if len(text) > MAX_FILTER_LENGTH:
        raise InvalidFilterException(detail=f"The filter is longer than {MAX_FILTER_LENGTH} characters")
    try:
        bound = ScimFilter[target.resource](text)
    except InvalidFilterException:
        raise
    except ValueError as exc:  # the grammar's and the values' refusals
        raise InvalidFilterException(detail=str(exc)) from None
    return [_Clauses(bound, target).visit(bound.ast)]


def sort_field(sort_by: str, target: Target) -> str:
    """The wire name of the field sortBy names (a single-valued attribute we keep in a column)."""
    if not sort_by:
        return ""
    try:
        bound = ScimFilter[target.resource](f"{sort_by} pr")
        key, _ = _Clauses(bound, target)._resolved(bound.ast.attr_path, False)
    except (ValueError, AttributeError):
        raise InvalidFilterException(detail=f"sortBy {sort_by[:100]} names no attribute") from None
    wire = target.fields.get(key)
    if wire is None:
        raise InvalidFilterException(detail=f"sortBy {sort_by[:100]}: the attribute cannot be sorted on")
    return wire
