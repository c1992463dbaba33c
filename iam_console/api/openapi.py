"""The OpenAPI 3.0 document served at /api/openapi.json.

The CRUD family of every kind is generated from the registry (api/resources.py), so its
operations are generated here from the same registry and the kind's table: the request body
is the kind's wire object, its fixed choices are enums, and every answer is the envelope of
docs/api.md with `data` typed for the route. The routes written by hand keep FastAPI's
description, completed with their form and JSON fields and their answers (the envelope, or
the OAuth errors). Schema fuzzing (tests/fuzz, docs/security.md) holds the server to this
document."""

from __future__ import annotations

import types
import typing
from datetime import datetime
from decimal import Decimal
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from iam_console import models as m
from iam_console.authorization.enforcement import MAX_RULES
from iam_console.core import kinds
from iam_console.core.resources import REGISTRY, Kind, Ownership
from iam_console.oauth import api as oauth

ENVELOPE_KEYS = ("status", "msg", "sub", "name", "data", "data2", "data3")
# the OAuth and OpenID Connect routes (those clients call from anywhere, oauth/api.py) answer
# their own JSON and RFC 6749 errors with HTTP 400, 401 or 404; these others answer something
# else than the envelope too: the WebAuthn options object, a PEM file, stored files
NOT_ENVELOPE = ("/api/webauthn/signup/begin", "/api/webauthn/signin/begin", "/api/download-cert", "/files/",
                "/api/saml/metadata", "/api/saml/redirect/", "/api/acs", "/api/federation/start", "/callback")
LIST_PARAMETERS = (("p", "integer", "The page, from 1"), ("pageSize", "integer", "Rows a page"),
                   ("field", "string", "A column to search (camelCase)"),
                   ("value", "string", "What the column holds (case-insensitive substring)"),
                   ("sortField", "string", "A column to sort by (camelCase)"),
                   ("sortOrder", "string", "ascend, else descending"),
                   ("withSecret", "string", "1: the stored secrets, for the record's organization's admins"))


# the hand-written routes' bodies: forms (multipart, urlencoded or JSON, as Casdoor's SDKs
# send them) with their text fields, and JSON objects
FORMS = {
    "/api/set-password": ("userOwner", "userName", "oldPassword", "newPassword", "code"),
    "/api/remove-user-from-group": ("owner", "name", "groupName"),
    "/api/send-verification-code": ("dest", "type", "countryCode", "applicationId", "method", "checkUser",
                                    "captchaType", "captchaToken", "clientSecret"),
    "/api/reset-email-or-phone": ("type", "dest", "code"),
    "/api/mfa/setup/initiate": ("owner", "name", "mfaType"),
    "/api/mfa/setup/verify": ("owner", "name", "mfaType", "passcode", "secret"),
    "/api/mfa/setup/enable": ("owner", "name", "mfaType", "secret", "recoveryCodes"),
    "/api/set-preferred-mfa": ("owner", "name", "mfaType"),
    "/api/delete-mfa": ("owner", "name"),
    "/api/webauthn/delete-credential": ("credentialID",),
    "/api/logout": ("id_token_hint", "post_logout_redirect_uri", "state"),
    "/api/login/oauth/access_token": ("grant_type", "client_id", "client_secret", "code", "code_verifier",
                                      "redirect_uri", "refresh_token", "username", "password", "scope"),
    "/api/login/oauth/refresh_token": ("grant_type", "client_id", "client_secret", "refresh_token", "scope"),
    "/api/login/oauth/introspect": ("token", "token_type_hint", "client_id", "client_secret"),
    "/api/login/oauth/revoke": ("token", "token_type_hint", "client_id", "client_secret"),
    "/api/device-auth": ("client_id", "scope"),
    "/api/login/oauth/par": ("client_id", "client_secret", "response_type", "redirect_uri", "scope", "state", "nonce",
                             "code_challenge", "code_challenge_method", "resource", "prompt", "request", "dpop_jkt"),
}
JSON_BODIES = {
    "/api/login": ("application", "organization", "username", "password", "autoSignin", "type", "signinMethod",
                   "passcode", "mfaType", "recoveryCode", "provider", "code", "state", "samlResponse", "relayState"),
    "/api/unlink": ("providerType", "providerName"),
    "/api/web3/nonce": ("application", "organization", "provider", "address", "chainId"),
    "/api/add-user-keys": ("owner", "name"),
    "/api/check-user-password": ("password",),
    "/api/verify-code": ("organization", "name", "username", "code", "countryCode"),
}
# Casbin's routes (authorization/api.py): requests are lists of values, policies Casdoor's rule objects
_RULE = {"type": "object", "properties": {k: {"type": "string"} for k in ("Ptype", "V0", "V1", "V2", "V3", "V4", "V5")}}
_REQUEST = {"type": "array", "items": {}, "description": "One Casbin request: sub, obj, act... (objects for ABAC)"}
CASBIN_BODIES = {
    "/api/enforce": _REQUEST,
    "/api/batch-enforce": {"type": "array", "items": _REQUEST},
    "/api/get-filtered-policies": {"type": "array", "items": {"type": "object", "properties": {
        "ptype": {"type": "string"}, "fieldIndex": {"type": "integer"},
        "fieldValues": {"type": "array", "items": {"type": "string"}}}}},
    "/api/add-policy": _RULE,
    "/api/remove-policy": _RULE,
    "/api/update-policy": {"type": "array", "items": _RULE, "minItems": 2, "maxItems": 2},
    "/api/add-policies": {"type": "array", "items": _RULE, "minItems": 1, "maxItems": MAX_RULES},
    "/api/remove-policies": {"type": "array", "items": _RULE, "minItems": 1, "maxItems": MAX_RULES},
}
_ENFORCE_BY = ("permissionId", "modelId", "resourceId", "enforcerId", "owner")
CASBIN_QUERIES = {"/api/enforce": _ENFORCE_BY, "/api/batch-enforce": _ENFORCE_BY,
                  "/api/get-all-objects": ("userId",), "/api/get-all-actions": ("userId",),
                  "/api/get-all-roles": ("userId",), "/api/get-permissions-by-role": ("id",),
                  "/api/get-policies": ("id", "adapterId"), "/api/get-filtered-policies": ("id",),
                  "/api/add-policy": ("id",), "/api/update-policy": ("id",), "/api/remove-policy": ("id",),
                  "/api/add-policies": ("id",), "/api/remove-policies": ("id",)}
UPLOADS = ("/api/upload-users", "/api/upload-roles", "/api/upload-permissions", "/api/upload-groups",
           "/api/upload-resource")


# An extension's extra route that acts on one record of a kind, named by ?id=owner/name, says so
# in its description (`acts_on_record`): the route is then held to the kind's access rules by the
# tests that walk the route table (tests/api/test_isolation.py aims it at another organization's
# record with the body's example), without their naming it (docs/extending.md, "Extra routes").
RECORD_ROUTE = "x-iam-record"


def acts_on_record(kind: str, body: dict[str, Any] | None = None,
                   example: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `openapi_extra` of such a route: its `id` parameter, its JSON body's schema with an
    example a caller who may act on the record could send, and the declaration."""
    extra: dict[str, Any] = {
        RECORD_ROUTE: {"kind": kind},
        "parameters": [{"name": "id", "in": "query", "required": True, "schema": {"type": "string"},
                        "description": f"The {kind}'s id, owner/name"}],
    }
    if body is not None:
        schema = {**body, **({"example": example} if example is not None else {})}
        extra["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
    return extra


def _fields(names: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": "string"} for name in names}}


def _request_body(path: str) -> dict[str, Any] | None:
    if path in FORMS:
        fields = _fields(FORMS[path])
        return {"content": {media: {"schema": fields} for media in (
            "multipart/form-data", "application/x-www-form-urlencoded", "application/json")}}
    if path in JSON_BODIES:
        return {"content": {"application/json": {"schema": _fields(JSON_BODIES[path])}}}
    if path in CASBIN_BODIES:
        return {"required": True, "content": {"application/json": {"schema": CASBIN_BODIES[path]}}}
    if path in UPLOADS:
        upload = {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}}
        return {"content": {"multipart/form-data": {"schema": upload}}}
    if path == "/api/update-permissions":
        permissions = {"type": "array", "items": _ref("PermissionInput")}
        return {"required": True, "content": {"application/json": {"schema": permissions}}}
    if path == "/api/add-record":
        return {"required": True, "content": {"application/json": {"schema": _ref("RecordInput")}}}
    if path in ("/api/add-session", "/api/update-session", "/api/delete-session"):
        return {"content": {"application/json": {"schema": _ref("SessionInput")}}}
    return None


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _schema_name(kind: Kind) -> str:
    return kind.name[:1].upper() + kind.name[1:]


def _value_schema(annotation: Any) -> dict[str, Any]:
    """The JSON schema of a column's wire value, from its Python annotation."""
    arguments = typing.get_args(annotation)
    nullable = isinstance(annotation, types.UnionType) and type(None) in arguments
    if nullable:
        annotation = next(a for a in arguments if a is not type(None))
    base = typing.get_origin(annotation) or annotation
    if base is bool:
        schema: dict[str, Any] = {"type": "boolean"}
    elif base is int:
        schema = {"type": "integer"}
    elif base is float:
        schema = {"type": "number"}
    elif base is Decimal:  # money: a JSON number, exact to 6 decimals (docs/architecture.md, "Money")
        schema = {"type": "number", "description": "An amount: at most 6 decimal places, below 10^9"}
    elif base is list:
        items = typing.get_args(annotation)
        schema = {"type": "array", "items": _value_schema(items[0]) if items and items[0] is not Any else {}}
    elif base is dict:
        schema = {"type": "object"}
    elif base is datetime:
        schema = {"type": "string", "description": "RFC 3339 in UTC, or empty"}
    elif annotation is Any:
        return {}
    else:
        schema = {"type": "string"}
    if nullable:
        schema["nullable"] = True
    return schema


def _choices(kind: Kind) -> dict[str, tuple[str, ...]]:
    """{wire key: values} of the kind's fixed choices; every write refuses anything else."""
    return {m.wire_name(kind.model, choice.attribute): choice.values for choice in kinds.of(kind.name).choices}


def kind_schema(kind: Kind, *, request: bool) -> dict[str, Any]:
    """The kind's wire object. In a request, a field of fixed choices is an enum of them
    (empty meaning unset); an answer may hold other values a record had before its kind
    declared them, so there the enum is left out."""
    model = kind.model
    choices = _choices(kind) if request else {}
    properties: dict[str, Any] = {}
    for attribute, wire in m.base.wire_names(model).items():
        schema = _value_schema(model.model_fields[attribute].annotation)
        if wire in choices:
            values = ["", *choices[wire]]
            if schema.get("type") == "array":
                schema["items"] = {"type": "string", "enum": values}
            else:
                schema["enum"] = values
        properties[wire] = schema
    if model.json_flatten:
        properties.update({key: {"type": "string"} for key in model.json_flatten[1]})
    if not request:
        # the answer's record: Record's id is the server's integer key
        return {"type": "object", "properties": properties}
    return {"type": "object", "properties": properties,
            "required": ["owner", m.wire_name(model, "name")] if kind.named else []}


def envelope(data: dict[str, Any] | None = None, data2: dict[str, Any] | None = None) -> dict[str, Any]:
    """docs/api.md's envelope: `status` ok with the route's data, or error with a message
    (`data` then holds "Please login first" or an error's detail, whatever its type)."""
    keys = {"status": {"type": "string"}, "msg": {"type": "string"}, "sub": {"type": "string"},
            "name": {"type": "string"}, "data": {}, "data2": {}, "data3": {}}
    success = {**keys, "status": {"type": "string", "enum": ["ok"]}}
    if data is not None:
        success["data"] = data
    if data2 is not None:
        success["data2"] = data2
    failure = {**keys, "status": {"type": "string", "enum": ["error"]}}
    return {"anyOf": [{"type": "object", "required": list(ENVELOPE_KEYS), "properties": success},
                      {"type": "object", "required": list(ENVELOPE_KEYS), "properties": failure}]}


def _answer(schema: dict[str, Any], description: str = "The envelope (business errors too)") -> dict[str, Any]:
    return {"200": {"description": description, "content": {"application/json": {"schema": schema}}}}


def _query(name: str, kind: str = "string", description: str = "") -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": {"type": kind},
            "description": description}


OAUTH_ERROR = {"type": "object", "required": ["error"],
               "properties": {"error": {"type": "string"}, "error_description": {"type": "string"}}}
AFFECTED = {"type": "string", "enum": ["Affected", "Unaffected"]}


def _list_operation(kind: Kind, plural: str, summary: str, unscoped: bool) -> dict[str, Any]:
    parameters = [] if unscoped else [_query("owner", description="The organization")]
    if kind.ownership is Ownership.ADMIN:
        parameters.append(_query("organization", description="The organization the records belong to"))
    if kind.name == "record":
        parameters.append(_query("organizationName", description="The organization (records)"))
    if kind.name == "user":
        parameters.append(_query("groupName", description="A group of owner, or owner/name"))
    parameters += [_query(name, type_, description) for name, type_, description in LIST_PARAMETERS]
    rows = {"type": "array", "items": _ref(_schema_name(kind))}
    return {"tags": ["resources"], "summary": summary, "operationId": f"get-{plural}{'-global' if unscoped else ''}",
            "parameters": parameters,
            "responses": _answer(envelope(rows, {"type": "integer", "nullable": True,
                                                   "description": "The total when paged (p, pageSize)"}))}


def _body(kind: Kind) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _ref(f"{_schema_name(kind)}Input")}}}


def kind_operations(kind: Kind) -> dict[str, dict[str, Any]]:
    """{path: {method: operation}} of the kind's CRUD family (api/resources.py registers it)."""
    plural, name, record = kind.plural_name, kind.name, _ref(_schema_name(kind))
    paths = {f"/api/get-{plural}": {"get": _list_operation(kind, plural, f"List {plural}", False)}}
    if kind.global_list:
        paths[f"/api/get-global-{plural}"] = {
            "get": _list_operation(kind, plural, f"List {plural} of every organization", True)}
    if not kind.named:
        return paths
    target = [_query("id", description="owner/name"), _query("owner"),
              *(_query(param, description=f"Find the {name} by {param} in owner") for param in kind.find_by)]
    paths[f"/api/get-{name}"] = {"get": {
        "tags": ["resources"], "summary": f"Read one {name} (null when there is none)", "operationId": f"get-{name}",
        "parameters": [*target, _query("withSecret", description="1: the stored secrets")],
        "responses": _answer(envelope({**record, "nullable": True}))}}
    if not kind.writable:
        return paths
    writes = {
        "add": ([_query("dryRun", description="1: check everything, write nothing")], f"Add a {name}"),
        "update": ([*target, _query("columns", description="Change only these fields (a,b)")],
                   f"Update the {name} id=owner/name (renaming allowed)"),
        "delete": ([_query("id", description="owner/name, when the body has none")],
                   f"Delete a {name} (owner and name in the body)"),
    }
    for verb, (parameters, summary) in writes.items():
        paths[f"/api/{verb}-{name}"] = {"post": {
            "tags": ["resources"], "summary": summary, "operationId": f"{verb}-{name}", "parameters": parameters,
            "requestBody": _body(kind), "responses": _answer(envelope(AFFECTED))}}
    return paths


def _generic_paths() -> set[str]:
    paths = set()
    for kind in REGISTRY.values():
        paths.add(f"/api/get-{kind.plural_name}")
        if kind.global_list:
            paths.add(f"/api/get-global-{kind.plural_name}")
        if kind.named:
            paths.add(f"/api/get-{kind.name}")
            if kind.writable:
                paths.update(f"/api/{verb}-{kind.name}" for verb in ("add", "update", "delete"))
    return paths


def _describe_answers(path: str, operation: dict[str, Any]) -> None:
    """A hand-written route's answers: the envelope, unless it speaks another protocol."""
    answers = operation.setdefault("responses", {})
    if oauth.cross_origin(path):
        for status, what in (("400", "An OAuth error"), ("401", "The client or token is not authenticated"),
                             ("404", "No such application")):
            answers.setdefault(status, {"description": what, "content": {"application/json": {"schema": OAUTH_ERROR}}})
        return
    if path.startswith(NOT_ENVELOPE):
        return
    answers.update(_answer(envelope()))


def build(api: FastAPI) -> dict[str, Any]:
    document = get_openapi(title=api.title, version=api.version, openapi_version=api.openapi_version,
                           description=api.description, routes=api.routes)
    generic = _generic_paths()
    paths = {path: ops for path, ops in document.get("paths", {}).items() if path not in generic}
    for path, operations in paths.items():
        for method, operation in operations.items():
            _describe_answers(path, operation)
            body = _request_body(path) if method == "post" else None
            if body:
                operation["requestBody"] = body
            if path in CASBIN_QUERIES:
                operation["parameters"] = [_query(name) for name in CASBIN_QUERIES[path]]
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    for kind in REGISTRY.values():
        for path, operations in kind_operations(kind).items():
            paths.setdefault(path, {}).update(operations)
        schemas[_schema_name(kind)] = kind_schema(kind, request=False)
        schemas[f"{_schema_name(kind)}Input"] = kind_schema(kind, request=True)
    document["paths"] = dict(sorted(paths.items()))
    return document
