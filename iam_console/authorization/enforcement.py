"""The enforcement calls (docs/api.md, "Authorization"; docs/architecture.md, "Authorization engine").

Enforcers stay in memory, keyed by what they are built from; each call reads the counters of
authorization/authz_version.py. An enforcer whose organization moved on since it was built takes the
policy lines those steps changed in place (pycasbin's incremental calls) when that is all they
changed, and is built again otherwise."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, or_, select

from iam_console import models as m
from iam_console.audit import records
from iam_console.authorization import authz_version, casbin_engine, casbin_matchers, policy_store
from iam_console.authorization import permission_rules as rules
from iam_console.authorization.casbin_engine import Engine, parse_model, request_value
from iam_console.core import crud, policy
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY

CACHE_SIZE = 256
MAX_PAGE = 1000  # the policy table's largest page
MAX_RULES = 10_000  # the rules of one add-policies or remove-policies
ONE_OF = ("permissionId", "modelId", "resourceId", "enforcerId", "owner")


@dataclass
class _Entry:
    engine: Engine
    token: tuple[int, int]
    lines: str = ""  # the policy lines it holds (casbin_rule.adapter), for an enforcer record's engine


_cache: OrderedDict[tuple, _Entry] = OrderedDict()
_cache_lock = threading.Lock()


def refresh() -> None:
    """Forget every enforcer of this worker (refresh-engines)."""
    with _cache_lock:
        _cache.clear()


def _cached(db: Session, organization: str, key: tuple, build: Callable[[], Engine], lines: str = "") -> Engine:
    """The engine under `key`, built again when its organization changed since, unless every step
    since changed only policy lines: those are applied to it in place."""
    connection = db.connection()
    token = authz_version.read(connection, organization)
    with _cache_lock:
        entry = _cache.get(key)
        if entry is not None:
            _cache.move_to_end(key)
    if entry is not None and entry.token == token:
        return entry.engine
    if entry is not None and entry.token[1] == token[1] and token[0] > entry.token[0]:
        changed = authz_version.steps(connection, organization, entry.token[0], token[0])
        if changed is not None:
            with entry.engine._lock:
                if entry.token[0] < token[0]:
                    _apply(entry.engine, [(op, line) for adapter, op, line in changed if lines and adapter == lines])
                    entry.token = token
            return entry.engine
    engine = build()
    with _cache_lock:
        _cache[key] = _Entry(engine, token, lines)
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return engine


def _apply(engine: Engine, changes: list[tuple[str, list[str]]]) -> None:
    """Policy lines added and removed, in order: additions through pycasbin's incremental calls,
    each run of removals in one pass (the engine keeps its index up to date:
    authorization/casbin_engine.py)."""
    removals: list[list[str]] = []
    removing = ""

    def remove() -> None:
        if removals:
            engine.remove_rules(removing, removals)
            removals.clear()

    for op, (ptype, *values) in changes:
        rule = engine.fitted(ptype, values)
        if rule is None:
            continue
        if op == "remove":
            if ptype != removing:
                remove()
                removing = ptype
            removals.append(rule)
            continue
        remove()
        if op == "add" and not _has(engine, ptype, rule):
            (engine.add_named_grouping_policy if ptype.startswith("g") else engine.add_named_policy)(ptype, *rule)
    remove()


# --- finding what an enforcer is built from ---

def _row(db: Session, actor: Actor, kind: str, record_id: str, *, admin: bool = True) -> Any:
    if admin:
        policy.require_admin(actor)
    owner, name = crud.split_id(record_id)
    row = crud.readable_row(db, actor, REGISTRY[kind], owner, name)
    if row is None:
        raise ServiceError("The %s: %s does not exist", kind, record_id)
    return row


def _named(db: Session, model: type, owner: str, reference: str) -> Any:
    """A model or adapter named by a record of `owner`, as `name` or `owner/name`."""
    ref_owner, _, ref_name = reference.rpartition("/")
    return db.exec(select(model).where(model.owner == (ref_owner or owner), model.name == ref_name)).first()


def _enforcer_parts(db: Session, enforcer: m.Enforcer) -> tuple[m.CasbinModel, m.Adapter]:
    eid = f"{enforcer.owner}/{enforcer.name}"
    if not enforcer.model:
        raise ServiceError("The model for enforcer: %s should not be empty", eid)
    adapter = _enforcer_adapter(db, enforcer)
    model = _named(db, m.CasbinModel, enforcer.owner, enforcer.model)
    if model is None:
        raise ServiceError("The model: %s for enforcer: %s is not found", enforcer.model, eid)
    return model, adapter


def _enforcer_adapter(db: Session, enforcer: m.Enforcer) -> m.Adapter:
    eid = f"{enforcer.owner}/{enforcer.name}"
    if not enforcer.adapter:
        raise ServiceError("The adapter for enforcer: %s should not be empty", eid)
    adapter = _named(db, m.Adapter, enforcer.owner, enforcer.adapter)
    if adapter is None:
        raise ServiceError("The adapter: %s for enforcer: %s is not found", enforcer.adapter, eid)
    return adapter


def enforcer_engine(db: Session, enforcer: m.Enforcer, adapter: m.Adapter | None = None) -> Engine:
    """`adapter`: the enforcer's, when the caller has read it already."""
    def build() -> Engine:
        model, adapter = _enforcer_parts(db, enforcer)
        engine = Engine(parse_model(model.model_text))
        engine.load_lines(policy_store.lines(db, adapter))
        return engine
    key = ("enforcer", enforcer.owner, enforcer.name, enforcer.model, enforcer.adapter)
    if adapter is None and enforcer.adapter:
        adapter = _named(db, m.Adapter, enforcer.owner, enforcer.adapter)
    return _cached(db, enforcer.owner, key, build, policy_store.key(adapter) if adapter is not None else "")


def permission_engine(db: Session, permissions: list[m.Permission]) -> Engine:
    """The enforcer of permissions sharing one model and adapter: their rules alone."""
    first = permissions[0]

    def build() -> Engine:
        model = _named(db, m.CasbinModel, first.owner, first.model) if first.model else None
        if first.model and model is None:
            raise ServiceError("The model: %s for permission: %s is not found", first.model,
                               f"{first.owner}/{first.name}")
        engine = Engine(rules.padded_model(model.model_text if model else ""))
        active = [p for p in permissions if rules.in_force(p)]
        lines = [line for p in active for line in rules.lines_of(p)]
        if "g" in engine.model.model:
            lines += rules.grouping_lines(db, active)
        engine.load_lines(lines)
        return engine
    key = ("permissions", first.owner, first.model, first.adapter, tuple(sorted(p.name for p in permissions)))
    return _cached(db, first.owner, key, build)


def model_and_adapter(model: str, adapter: str) -> str:
    return f"{model}/{adapter}"


# --- enforce and batch-enforce ---

def _selected(db: Session, actor: Actor, params: dict[str, str], batch: bool) -> list[list[m.Permission]] | m.Enforcer:
    names = [p for p in ONE_OF if not (batch and p == "resourceId")]
    given = [p for p in names if params.get(p)]
    if len(given) > 1:
        raise ServiceError("Only one of the parameters (%s) should be provided", ", ".join(names))
    if not given:
        raise ServiceError("Missing parameter")
    which, value = given[0], params[given[0]]
    if which == "enforcerId":
        return _row(db, actor, "enforcer", value)
    if which == "permissionId":
        return [[_row(db, actor, "permission", value)]]
    policy.require_admin(actor)
    perm = m.Permission
    if which == "resourceId":
        found = _naming_resource(db, actor, value)
    else:
        if which == "owner":
            owner, where = value, []
        else:
            owner, name = crud.split_id(value)
            where = [or_(perm.model == value, perm.model == name)]
        if not actor.is_global_admin and owner != actor.organization:
            raise ServiceError(policy.UNAUTHORIZED)  # an organization's admin asks about their own
        scope = policy.read_scope(actor, REGISTRY["permission"], owner=owner)
        found = db.exec(select(perm).where(perm.owner == owner, *where, *scope)
                        .order_by(perm.created_time.desc(), perm.pk.desc())).all()
    groups: dict[str, list[m.Permission]] = {}
    for permission in found:
        if rules.in_force(permission):
            groups.setdefault(model_and_adapter(permission.model, permission.adapter), []).append(permission)
    return list(groups.values())


def _naming_resource(db: Session, actor: Actor, resource: str) -> list[m.Permission]:
    """Casdoor's resourceId: the permissions whose resources hold exactly this value (a resource's
    name as permissions name it, not an owner/name id), of every organization the caller reads."""
    perm = m.Permission
    where = list(policy.read_scope(actor, REGISTRY["permission"]))
    if resource.isascii() and resource.isprintable() and json.dumps(resource)[1:-1] == resource:
        # the JSON text of the list holds the value as it is: narrowed in the database first
        where.append(sa.cast(perm.resources, sa.String).contains(resource, autoescape=True))
    found = db.exec(select(perm).where(*where).order_by(perm.created_time.desc(), perm.pk.desc())).all()
    return [p for p in found if resource in p.resources]


def _run(engine: Engine, requests: list[list[Any]]) -> list[bool]:
    try:
        return [bool(engine.enforce(*[request_value(v) for v in request])) for request in requests]
    except ServiceError:
        raise
    except Exception as exc:  # a matcher that fails on these values: Casbin's own error
        raise ServiceError("Failed to enforce: %s", str(exc) or type(exc).__name__) from None


def enforce(db: Session, actor: Actor, params: dict[str, str], requests: list[list[Any]],
            batch: bool) -> tuple[list, list[str]]:
    """(data, data2) as Casdoor answers: one result (a list of them for a batch) per enforcer
    asked, and each enforcer's model/adapter."""
    selected = _selected(db, actor, params, batch)
    if isinstance(selected, m.Enforcer):
        runs = [(enforcer_engine(db, selected), model_and_adapter(selected.model, selected.adapter))]
    else:
        runs = [(permission_engine(db, group), model_and_adapter(group[0].model, group[0].adapter))
                for group in selected]
    with casbin_matchers.time_budget(casbin_engine.ENFORCE_BUDGET):
        results = [_run(engine, requests) for engine, _ in runs]
    data = results if batch else [r[0] for r in results]
    return data, [key for _, key in runs]


# --- what a user may do ---

def _user_of(db: Session, actor: Actor, user_id: str) -> m.User:
    if actor.is_anonymous:
        raise ServiceError("Please login first")
    if not user_id:
        if actor.user is None:
            raise ServiceError("Please login first")
        return actor.user
    owner, name = crud.split_id(user_id)
    if not actor.is_admin and (actor.user is None or (actor.user.owner, actor.user.name) != (owner, name)):
        raise ServiceError(policy.UNAUTHORIZED)  # a user asks about themselves
    user = crud.readable_row(db, actor, REGISTRY["user"], owner, name)
    if user is None:
        raise ServiceError("The user: %s doesn't exist", user_id)
    return user


def roles_of(db: Session, user: m.User) -> list[m.Role]:
    """The enabled roles naming the user (directly or through one of their groups), and every role
    naming one of those as a sub-role."""
    uid = f"{user.owner}/{user.name}"
    roles = db.exec(select(m.Role).where(m.Role.owner == user.owner)).all()
    found = {f"{r.owner}/{r.name}": r for r in roles if r.is_enabled and (uid in r.users or set(r.groups) & set(
        user.groups))}
    grew = True
    while grew:
        more = {f"{r.owner}/{r.name}": r for r in roles if r.is_enabled and set(r.roles) & set(found)}
        grew = bool(set(more) - set(found))
        found.update(more)
    return list(found.values())


def permissions_of(db: Session, user: m.User) -> list[m.Permission]:
    uid, role_ids = f"{user.owner}/{user.name}", {f"{r.owner}/{r.name}" for r in roles_of(db, user)}
    groups = set(user.groups) | ({"*", f"{user.owner}/*"} if user.groups else set())
    found = db.exec(select(m.Permission).where(m.Permission.owner == user.owner)).all()
    return [p for p in found if rules.in_force(p) and (uid in p.users or groups & set(p.groups)
                                                       or role_ids & set(p.roles))]


def all_of(db: Session, actor: Actor, user_id: str, what: str) -> list[str]:
    user = _user_of(db, actor, user_id)
    if what == "roles":
        return [r.name for r in roles_of(db, user)]
    out: list[str] = []
    for permission in permissions_of(db, user):
        engine = permission_engine(db, [permission])
        out += engine.get_all_objects() if what == "objects" else engine.get_all_actions()
    return out


def permissions_by_role(db: Session, actor: Actor, role_id: str) -> list[dict]:
    role = _row(db, actor, "role", role_id)
    rid = f"{role.owner}/{role.name}"
    found = db.exec(select(m.Permission).where(m.Permission.owner == role.owner)).all()
    return [crud.present(actor, REGISTRY["permission"], p) for p in found if rid in p.roles]


# --- policies ---

def _wire(index: int, line: list[str]) -> dict[str, Any]:
    values = (line[1:] + [""] * policy_store.FIELDS)[:policy_store.FIELDS]
    return {"Id": index, "Ptype": line[0], **{f"V{i}": v for i, v in enumerate(values)}}


def policies(db: Session, actor: Actor, enforcer_id: str, adapter_id: str = "") -> list[dict] | None:
    if adapter_id:
        adapter = _row(db, actor, "adapter", adapter_id)
        policy_store.lines(db, adapter)  # opens the adapter's table, as Casdoor's adapter test does
        return None
    enforcer = _row(db, actor, "enforcer", enforcer_id)
    _, adapter = _enforcer_parts(db, enforcer)
    return [_wire(i + 1, line) for i, line in enumerate(policy_store.lines(db, adapter))]


def filtered_policies(db: Session, actor: Actor, enforcer_id: str, filters: list) -> list[dict]:
    found = policies(db, actor, enforcer_id) or []
    for item in filters:
        if not isinstance(item, dict):
            raise ServiceError("A filter must be an object with ptype, fieldIndex and fieldValues")
        lowered = {str(k).lower(): v for k, v in item.items()}
        ptype, index = lowered.get("ptype") or "p", lowered.get("fieldindex")
        values = lowered.get("fieldvalues") or []
        found = [row for row in found if row["Ptype"] == ptype and (
            not isinstance(index, int) or not 0 <= index <= 5 or not values or row[f"V{index}"] in values)]
    return found


def rule_of(body: Any) -> tuple[str, list[str]]:
    """A policy object of the wire ({Ptype, V0...V5}, any case) as (ptype, values)."""
    if not isinstance(body, dict):
        raise ServiceError("A policy rule must be an object with Ptype and V0 to V5")
    lowered = {str(k).lower(): v for k, v in body.items()}
    values = [lowered.get(f"v{i}") or "" for i in range(policy_store.FIELDS)]
    ptype = lowered.get("ptype") or "p"
    if not all(isinstance(v, str) for v in [ptype, *values]):
        raise ServiceError("A policy rule holds text only")
    return ptype, policy_store.trimmed(["x", *values])[1:]


def _writable(db: Session, actor: Actor, enforcer_id: str) -> tuple[m.Adapter, Engine]:
    """The enforcer's adapter and engine: the engine applies the write at its next call, from the
    counter's step (authorization/authz_version.py). The model is read only when the engine is built."""
    enforcer = _row(db, actor, "enforcer", enforcer_id)
    adapter = _enforcer_adapter(db, enforcer)
    return adapter, enforcer_engine(db, enforcer, adapter)


def _has(engine: Engine, ptype: str, rule: list[str]) -> bool:
    return engine.has_named_grouping_policy(ptype, *rule) if ptype.startswith("g") \
        else engine.has_named_policy(ptype, *rule)


def add_policy(db: Session, actor: Actor, enforcer_id: str, body: Any) -> None:
    ptype, values = rule_of(body)
    adapter, engine = _writable(db, actor, enforcer_id)
    rule = engine.fitted(ptype, values)
    if rule is None:
        raise ServiceError("The model has no policy type %s of this size", ptype)
    if _has(engine, ptype, rule):
        raise ServiceError("Duplicated policy rules")
    policy_store.add(db, adapter, [[ptype, *values]])


def remove_policy(db: Session, actor: Actor, enforcer_id: str, body: Any) -> bool:
    ptype, values = rule_of(body)
    adapter, engine = _writable(db, actor, enforcer_id)
    rule = engine.fitted(ptype, values)
    if rule is None or not _has(engine, ptype, rule):
        return False
    policy_store.remove(db, adapter, [[ptype, *values]])
    return True


def update_policy(db: Session, actor: Actor, enforcer_id: str, body: Any) -> bool:
    if not isinstance(body, list) or len(body) != 2:
        raise ServiceError("The body must be a pair of policy rules: the old one and the new one")
    (ptype, old_values), (_, new_values) = rule_of(body[0]), rule_of(body[1])
    adapter, engine = _writable(db, actor, enforcer_id)
    old, new = engine.fitted(ptype, old_values), engine.fitted(ptype, new_values)
    if old is None or new is None or not _has(engine, ptype, old):
        return False
    if _has(engine, ptype, new):
        raise ServiceError("Duplicated policy rules")
    return policy_store.update(db, adapter, [ptype, *old_values], [ptype, *new_values])


def _rules_of(body: Any) -> list[tuple[str, list[str]]]:
    if not isinstance(body, list) or not body:
        raise ServiceError("The body must be a non-empty list of policy rules")
    if len(body) > MAX_RULES:
        raise ServiceError("A batch holds at most %d policy rules", MAX_RULES)
    return [rule_of(item) for item in body]


def add_policies(db: Session, actor: Actor, enforcer_id: str, body: Any) -> None:
    """Every rule of the body, or none: a rule already held (or twice in the body) is "Duplicated
    policy rules", as Casbin's AddPolicies adds nothing then."""
    batch = _rules_of(body)
    adapter, engine = _writable(db, actor, enforcer_id)
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for ptype, values in batch:
        rule = engine.fitted(ptype, values)
        if rule is None:
            raise ServiceError("The model has no policy type %s of this size", ptype)
        if (ptype, tuple(rule)) in seen or _has(engine, ptype, rule):
            raise ServiceError("Duplicated policy rules")
        seen.add((ptype, tuple(rule)))
    policy_store.add(db, adapter, [[ptype, *values] for ptype, values in batch])


def remove_policies(db: Session, actor: Actor, enforcer_id: str, body: Any) -> bool:
    """Every rule of the body, or none ('Unaffected') when one of them is not held, as Casbin's
    RemovePolicies."""
    batch = _rules_of(body)
    adapter, engine = _writable(db, actor, enforcer_id)
    lines: dict[tuple[str, ...], list[str]] = {}
    for ptype, values in batch:
        rule = engine.fitted(ptype, values)
        if rule is None or not _has(engine, ptype, rule):
            return False
        lines[(ptype, *rule)] = [ptype, *values]
    policy_store.remove(db, adapter, list(lines.values()))
    return True


WRITES: dict[str, Callable[[Session, Actor, str, Any], bool | None]] = {
    "add-policy": add_policy, "update-policy": update_policy, "remove-policy": remove_policy,
    "add-policies": add_policies, "remove-policies": remove_policies}


def write_policy(db: Session, actor: Actor, action: str, enforcer_id: str, body: Any) -> bool:
    """A policy write (`WRITES`) and its record, whoever asks (the API's routes, the enforcer
    page): True when it changed a rule ('Affected')."""
    affected = WRITES[action](db, actor, enforcer_id, body)
    records.audit(db, organization=enforcer_id.partition("/")[0], user=actor.id, action=action,
                  request_uri=f"/api/{action}?id={enforcer_id}", obj=body)
    return affected in (None, True)


# --- the enforcer page's policy table ---

@dataclass
class PolicyPage:
    rows: list[dict[str, Any]]  # {Ptype, V0...V5}, of the page asked (the last one when it is past the end)
    total: int
    page: int
    heads: list[str]  # the values' names: the model's policy definition, then V{i}; every value a row holds
    ptypes: list[str]  # the rule types the model defines (p, g...)


def _definition(text: str) -> tuple[list[str], list[str], int]:
    """(names of p's values, the model's rule types, the most values a rule type takes); a model
    Casbin refuses defines nothing."""
    try:
        parsed = parse_model(text)
    except ServiceError:
        return [], [], 0
    sections = [parsed.model.get(sec, {}) for sec in ("p", "g")]
    ptypes = [ptype for section in sections for ptype in section]
    widest = max((len(section[ptype].tokens) for section in sections for ptype in section), default=0)
    names = [token.removeprefix("p_") for token in parsed.model["p"]["p"].tokens] if "p" in parsed.model["p"] else []
    return names, ptypes, widest


def policy_page(db: Session, actor: Actor, enforcer_id: str, page: int, size: int) -> PolicyPage:
    """One page of an enforcer's policies, with the columns its model's policy definition names
    (docs/architecture.md, "The enforcer page")."""
    enforcer = _row(db, actor, "enforcer", enforcer_id)
    model, adapter = _enforcer_parts(db, enforcer)
    size = max(1, min(size, MAX_PAGE))
    start = (max(1, page) - 1) * size
    found, total = policy_store.page(db, adapter, start, size)
    last = max(1, -(-total // size))
    if page > last:  # past the end: the last page
        page, start = last, (last - 1) * size
        found, total = policy_store.page(db, adapter, start, size)
    names, ptypes, widest = _definition(model.model_text)
    widest = max([widest, *[len(line) - 1 for line in found]])
    width = min(policy_store.FIELDS, widest) if names else policy_store.FIELDS
    heads = [(names[i] if i < len(names) else f"V{i}").strip() or f"V{i}" for i in range(width)]
    ptypes += [line[0] for line in found if line[0] not in ptypes]
    rows = [_wire(start + i + 1, line) for i, line in enumerate(found)]
    return PolicyPage(rows, total, max(1, page), heads, ptypes or ["p"])
