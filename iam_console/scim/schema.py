"""What the SCIM server serves, declared once with scim2-models: the User resource (with the
enterprise extension) and the Group resource, as far as our users and groups hold them, and the
service provider's configuration. /Schemas, /ResourceTypes and /ServiceProviderConfig publish
these declarations, requests are validated against them, and filters and PATCH paths resolve
through them; docs/api.md, "SCIM 2.0", gives each attribute's field.

Only what round-trips is declared: a client reads back exactly what it wrote. An email, phone
number and photo are one value each (the user's email, phone and avatar); their `type` is not
kept, so it is not declared, nor is `primary` (the one value is the primary one)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import EmailStr, Field
from scim2_models import (
    URN,
    AuthenticationScheme,
    Bulk,
    CaseExact,
    ChangePassword,
    ComplexAttribute,
    ETag,
    Extension,
    External,
    Filter,
    Mutability,
    Patch,
    Reference,
    Required,
    Resource,
    ResourceType,
    Returned,
    Schema,
    ScimPolicy,
    ScimProvider,
    ServiceProviderConfig,
    Sort,
    Uniqueness,
)

from iam_console.core import query
from iam_console.identity.kinds import user as user_rules

ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
# a list answers at most this many resources at once (RFC 7644 §3.4.2.4: count is capped)
MAX_COUNT = query.MAX_PAGE_SIZE
# the members a group's resource lists (a group may hold hundreds of thousands of users)
MAX_MEMBERS = query.UNPAGED_LIMIT


class Name(ComplexAttribute):
    family_name: str | None = None
    given_name: str | None = None


class Email(ComplexAttribute):
    value: EmailStr | None = None


class PhoneNumber(ComplexAttribute):
    value: str | None = None


class Photo(ComplexAttribute):
    value: Reference[External] | None = None


class GroupMembership(ComplexAttribute):
    value: Annotated[str | None, Mutability.read_only, CaseExact.true] = None
    ref: Annotated[Reference["Group"] | None, Mutability.read_only] = Field(  # noqa: UP037 (the type named)
        None, serialization_alias="$ref", validation_alias="$ref")
    display: Annotated[str | None, Mutability.read_only] = None


class EnterpriseUser(Extension):
    """The enterprise extension: the organization the user is affiliated with."""

    __schema__ = URN(ENTERPRISE)

    organization: str | None = None


class User(Resource[Any]):
    """An account of the organization."""

    __schema__ = URN("urn:ietf:params:scim:schemas:core:2.0:User")

    # case-sensitive, as our user names are (Casdoor's): "Alice" and "alice" are two users, and
    # `userName eq` is a lookup of the organization's name index
    user_name: Annotated[str | None, Uniqueness.server, Required.true, CaseExact.true] = None
    name: Name | None = None
    display_name: str | None = None
    profile_url: Reference[External] | None = None
    title: str | None = None
    user_type: Annotated[str | None, Field(examples=list(user_rules.TYPES))] = None
    # required, so that it is never unassigned; a creation that leaves it out makes an active user
    active: Annotated[bool | None, Required.true] = None
    password: Annotated[str | None, Mutability.write_only, Returned.never, CaseExact.true] = None
    emails: list[Email] | None = None
    phone_numbers: list[PhoneNumber] | None = None
    photos: list[Photo] | None = None
    groups: Annotated[list[GroupMembership] | None, Mutability.read_only] = None


class GroupMember(ComplexAttribute):
    value: Annotated[str | None, Mutability.immutable, CaseExact.true] = None
    ref: Annotated[Reference["User"] | None, Mutability.immutable] = Field(  # noqa: UP037 (the type named)
        None, serialization_alias="$ref", validation_alias="$ref")
    type: Annotated[str | None, Mutability.immutable] = Field(None, examples=["User"])
    display: Annotated[str | None, Mutability.read_only] = None


class Group(Resource[Any]):
    """A group of the organization's users."""

    __schema__ = URN("urn:ietf:params:scim:schemas:core:2.0:Group")

    display_name: Annotated[str | None, Required.true] = None
    members: list[GroupMember] | None = None


UserResource = User[EnterpriseUser]
CONFIG = ServiceProviderConfig(
    patch=Patch(supported=True),
    bulk=Bulk(supported=False, max_operations=0, max_payload_size=0),
    filter=Filter(supported=True, max_results=MAX_COUNT),
    change_password=ChangePassword(supported=True),
    sort=Sort(supported=True),
    etag=ETag(supported=True),
    authentication_schemes=[AuthenticationScheme(
        type=AuthenticationScheme.Type.oauthbearertoken, name="OAuth Bearer Token", primary=True,
        description="An access token of the client_credentials grant of an application of the organization")],
)
PROVIDER = ScimProvider(
    models=[User, EnterpriseUser, Group],
    resource_types=[ResourceType.from_resource(UserResource), ResourceType.from_resource(Group)],
    config=CONFIG,
    # the strict reading (attributes we do not declare are refused),
    # and a remove's value read as what to remove, as Microsoft Entra sends member removals
    policy=ScimPolicy(remove_value_as_filter=ScimPolicy.RemoveValue.apply),
)
# what /Schemas publishes: our resources' schemas, and those of the discovery resources themselves
SCHEMAS = (*PROVIDER.schemas, *(model.to_schema() for model in (ResourceType, ServiceProviderConfig, Schema)))
