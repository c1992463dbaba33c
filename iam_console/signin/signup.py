"""Sign-up: a visitor makes an account in an application's organization, under the rules the
application's signup items set (docs/api.md, "Sign-up"). The page /signup/{application} and
the API's /api/signup both come here.

Order of the checks, as Casdoor's: sign-up enabled, captcha, the fields (username, password
under the organization's options, email and phone valid and unused, display name, affiliation,
every item's regex), the invitation code, then the email and phone codes. Nothing is written
unless every check passes; the invitation's use is counted in the same transaction as the user.

Unlike Casdoor, the organization is always the application's own: a sign-up form cannot name
another organization and land an account there."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

import phonenumbers
from sqlmodel import Session, func, select

from iam_console import models as m
from iam_console.applications.kinds.application import TEXT_ITEM, takes_value
from iam_console.audit.records import audit
from iam_console.core import builtin as b
from iam_console.core import crud, lookup, patterns, throttle
from iam_console.core.access import Actor
from iam_console.core.crud import NO_REQUEST, Request
from iam_console.core.errors import ServiceError
from iam_console.core.html import safe
from iam_console.core.resources import REGISTRY
from iam_console.core.wire import EMAIL
from iam_console.identity import invitations, users
from iam_console.signin import captcha, verifications

NOT_ENABLED = "The application does not allow to sign up new account"
NO_VERIFICATION = "No verification"
SELF_SIGN_UP = "Application Signup"  # the registerType of an account made by sign-up (the form or a provider)
SENDS_PER_ADDRESS = (20, 600)  # sign-up code sends a client address may make per window
SIGNUPS_PER_ADDRESS = (20, 600)  # sign-up attempts a client address may make per window
WHITESPACE = re.compile(r"\s")
MAX_FIELD = 100


@dataclass(frozen=True)
class SignupForm:
    """Casdoor's AuthForm, the fields sign-up reads (JSON keys in camelCase)."""
    application: str
    organization: str = ""
    username: str = ""
    password: str = ""
    name: str = ""  # the display name
    first_name: str = ""
    last_name: str = ""
    email: str = ""
    email_code: str = ""
    phone: str = ""
    phone_code: str = ""
    country_code: str = ""
    invitation_code: str = ""
    affiliation: str = ""
    id_card: str = ""
    region: str = ""
    gender: str = ""
    bio: str = ""
    tag: str = ""
    education: str = ""
    language: str = ""
    captcha_type: str = ""
    captcha_token: str = ""
    client_secret: str = ""  # a Default captcha's id
    client_ip: str = ""
    extra: dict[str, str] = field(default_factory=dict)  # values of custom items, by lower-cased item name


# the signup items whose value is a field of the form
ITEM_FIELDS = {"Username": "username", "Display name": "name", "Password": "password", "Email": "email",
               "Phone": "phone", "Affiliation": "affiliation", "ID card": "id_card", "Country/Region": "region",
               "Gender": "gender", "Bio": "bio", "Tag": "tag", "Education": "education",
               "Invitation code": "invitation_code", "First name": "first_name", "Last name": "last_name"}


class Items:
    """An application's signup items, by name."""

    def __init__(self, application: m.Application) -> None:
        self.by_name = {item["name"]: item for item in application.signup_items or []
                        if isinstance(item, dict) and isinstance(item.get("name"), str)}

    def visible(self, name: str) -> bool:
        item = self.by_name.get(name)
        return bool(item) and item.get("visible", True) is not False

    def required(self, name: str) -> bool:
        return self.visible(name) and bool(self.by_name[name].get("required"))

    def rule(self, name: str) -> str:
        item = self.by_name.get(name)
        return str(item.get("rule") or "") if item else ""

    def custom(self) -> list[dict]:
        """Items that are not a built-in field (text items, choices): their values go to properties."""
        return [item for name, item in self.by_name.items()
                if name not in ITEM_FIELDS and item.get("type") and takes_value(name)]


def is_html_text(name: str) -> bool:
    return bool(TEXT_ITEM.fullmatch(name))


def html_label(item: dict) -> str:
    """A Text item's label, cleaned (core/html.py): the page shows it as HTML to visitors."""
    return safe(str(item.get("label") or ""))


def application_of(db: Session, application_id: str) -> m.Application:
    name = application_id.split("/", 1)[1] if "/" in application_id else application_id
    application = lookup.application(db, name[:MAX_FIELD]) if name else None
    if application is None:
        raise ServiceError("The application: %s does not exist", application_id[:200])
    return application


def _organization(db: Session, application: m.Application) -> m.Organization:
    organization = lookup.organization(db, application.organization)
    if organization is None:
        raise ServiceError("The organization: %s does not exist", application.organization)
    return organization


def taken(db: Session, organization: str, *where) -> bool:
    return db.exec(select(m.User.pk).where(m.User.owner == organization, *where).limit(1)).first() is not None


def valid_phone(organization: m.Organization, phone: str, country_code: str) -> tuple[str, str]:
    """(national number, region) of a valid phone, under the organization's country codes."""
    region = (country_code or (organization.country_codes or [""])[0] or "").upper()[:10]
    try:
        number = phonenumbers.parse(phone[:30], region or None)
    except phonenumbers.NumberParseException:
        raise ServiceError("Phone number is invalid") from None
    if not phonenumbers.is_valid_number(number):
        raise ServiceError("Phone number is invalid")
    region = phonenumbers.region_code_for_number(number) or region
    if organization.country_codes and region not in organization.country_codes:
        raise ServiceError("Your region is not allow to signup by phone")
    return str(number.national_number), region


def check_regex(application: m.Application, name: str, item: dict, value: str) -> None:
    """The item's regex (RE2), if it has one, must match the whole value."""
    regex = item.get("regex")
    if not regex:
        return
    try:
        matched = patterns.fullmatch(regex, value)
    except patterns.PatternError:
        raise ServiceError("The regex of the signup item %s is not valid", name) from None
    if not matched:
        raise ServiceError('The value "%s" for signup field "%s" doesn\'t match the signup item regex of the '
                           'application "%s"', value[:MAX_FIELD], name, application.name)


def _check_username(db: Session, organization: m.Organization, username: str) -> None:
    if len(username) <= 1:
        raise ServiceError("Username must have at least 2 characters")
    if len(username) > MAX_FIELD:
        raise ServiceError("Username is too long (at most %d characters)", MAX_FIELD)
    if username[0].isdigit():
        raise ServiceError("Username cannot start with a digit")
    if EMAIL.match(username):
        raise ServiceError("Username cannot be an email address")
    if WHITESPACE.search(username):
        raise ServiceError("Username cannot contain white spaces")
    if any(ord(c) < 32 or c in "/\\" for c in username):
        raise ServiceError("The username may not contain control characters or slashes")
    if taken(db, organization.name, m.User.name == username):
        raise ServiceError("Username already exists")


def check_fields(db: Session, application: m.Application, organization: m.Organization,
                 form: SignupForm) -> SignupForm:
    """Casdoor's sign-up field rules; the form comes back with its email lower-cased and its
    phone as the national number with its region."""
    items = Items(application)
    for label, value in (("username", form.username), ("display name", form.name), ("email", form.email),
                         ("phone", form.phone), ("first name", form.first_name), ("last name", form.last_name)):
        if len(value) > MAX_FIELD:
            raise ServiceError("The %s is too long (at most %d characters)", label, MAX_FIELD)
    email = form.email.strip().lower()
    phone, region = form.phone.strip(), form.country_code
    if phone:
        phone, region = valid_phone(organization, form.phone.strip(), form.country_code)
    if items.visible("Username"):
        _check_username(db, organization, form.username)
    if items.visible("Password"):
        if not form.password:
            raise ServiceError("Password cannot be empty")
        users.check_password_options(organization, form.password)
        if len(form.password) > 100:
            raise ServiceError("The password is too long (at most %d characters)", 100)
    if items.visible("Email"):
        if not email:
            if items.required("Email"):
                raise ServiceError("Email cannot be empty")
        elif not EMAIL.match(email):
            raise ServiceError("Email is invalid")
        elif taken(db, organization.name, func.lower(m.User.email) == email):
            raise ServiceError("Email already exists")
    if items.visible("Phone"):
        if not phone:
            if items.required("Phone"):
                raise ServiceError("Phone cannot be empty")
        elif taken(db, organization.name, m.User.phone == phone, m.User.country_code.in_((region, ""))):
            raise ServiceError("Phone already exists")
    if items.visible("Display name"):
        if items.rule("Display name") == "First, last" and (form.first_name or form.last_name):
            if not form.first_name.strip():
                raise ServiceError("FirstName cannot be blank")
            if not form.last_name.strip():
                raise ServiceError("LastName cannot be blank")
        elif not form.name.strip() and items.required("Display name"):
            raise ServiceError("DisplayName cannot be blank")
    if items.required("Affiliation") and not form.affiliation.strip():
        raise ServiceError("Affiliation cannot be blank")
    checked = SignupForm(**{**form.__dict__, "email": email, "phone": phone, "country_code": region})
    for name, item in items.by_name.items():
        if items.visible(name) and not is_html_text(name):  # a Text item has no value to check
            value = getattr(checked, ITEM_FIELDS[name], "") if name in ITEM_FIELDS else \
                checked.extra.get(name.lower(), "")
            check_regex(application, name, item, value)
    for item in items.custom():
        if items.required(item["name"]) and not checked.extra.get(item["name"].lower(), "").strip():
            raise ServiceError("Please input your %s!", item.get("label") or item["name"])
    return checked


def invitation_for(db: Session, application: m.Application, code: str, *, username: str = "", email: str = "",
                   phone: str = "") -> m.Invitation | None:
    """Casdoor's CheckInvitationCode, for every way of signing up (this form, an upstream
    provider's sign-up: federation/federation.py): the invitation `code` opens for the new account
    (username, email, phone: bound to the invitation's own where it names one and the application
    requires the item), None without a code where the application does not require one. The
    caller spends it with invitations.count_use in the transaction that adds the user."""
    code = code.strip()
    items = Items(application)
    if not code:
        if items.required("Invitation code"):
            raise ServiceError("Invitation code cannot be blank")
        return None
    if len(code) > MAX_FIELD:
        raise ServiceError("Invitation code is invalid")
    who = {key: value for item, key, value in (("Username", "username", username), ("Email", "email", email),
                                               ("Phone", "phone", phone)) if items.required(item)}
    return invitations.find_by_code(db, application, code, who)


def _code_checked(db: Session, organization: m.Organization, kind: str, address: str, code: str,
                  country_code: str = "") -> m.Verification:
    to = verifications.receiver(Actor(), organization, kind, address, country_code)
    row = verifications.check_code(db, Actor(), to, code)
    verifications.spend(db, row)
    return row


def _new_id(db: Session, application: m.Application, organization: str) -> str:
    """The ID item's rule: Incremental takes the organization's largest numeric id plus one,
    Random (the default) a UUID."""
    if Items(application).rule("ID") != "Incremental":
        return str(uuid.uuid4())
    ids = db.exec(select(m.User.uuid).where(m.User.owner == organization)).all()
    numbers = [int(value) for value in ids if value and value.isdigit() and len(value) < 19]
    return str(max(numbers, default=0) + 1)


def sign_up(db: Session, form: SignupForm, request: Request = NO_REQUEST) -> tuple[m.User, m.Organization,
                                                                                   m.Application]:
    """Check everything, then add the user; the caller opens its session."""
    throttle.hit(db, f"signup:{form.client_ip}", *SIGNUPS_PER_ADDRESS, throttle.TOO_MANY_REQUESTS)
    application = application_of(db, form.application)
    if not application.enable_sign_up:
        raise ServiceError(NOT_ENABLED)
    organization = _organization(db, application)
    if form.organization and form.organization != organization.name:
        raise ServiceError("The application %s does not sign up users of %s", application.name,
                           form.organization[:MAX_FIELD])
    captcha.check(db, application, form.client_ip, form.captcha_type, form.captcha_token, form.client_secret)
    form = check_fields(db, application, organization, form)
    items = Items(application)
    invitation = invitation_for(db, application, form.invitation_code, username=form.username, email=form.email,
                                phone=form.phone)
    email_verified = False
    if form.email and items.visible("Email") and items.rule("Email") != NO_VERIFICATION:
        _code_checked(db, organization, verifications.EMAIL_KIND, form.email, form.email_code)
        email_verified = True
    if form.phone and items.visible("Phone") and items.rule("Phone") != NO_VERIFICATION:
        _code_checked(db, organization, verifications.PHONE_KIND, form.phone, form.phone_code, form.country_code)
    new_id = _new_id(db, application, organization.name)
    username = form.username
    if not items.visible("Username"):
        username = form.email if organization.use_email_as_username and items.visible("Email") and form.email \
            else new_id
    display_name = form.name
    if items.rule("Display name") == "First, last" and (form.first_name or form.last_name):
        display_name = f"{form.first_name} {form.last_name}"
    tag = form.tag or next((t.split("|")[0] for t in organization.tags or [] if isinstance(t, str)), "") \
        or application.default_tag
    groups = [invitation.signup_group] if invitation is not None and invitation.signup_group else \
        [application.default_group] if application.default_group else []
    body = {
        "owner": organization.name, "name": username, "id": new_id, "type": "normal-user",
        "password": form.password or uuid.uuid4().hex, "displayName": display_name,
        "firstName": form.first_name, "lastName": form.last_name, "email": form.email,
        "emailVerified": email_verified, "phone": form.phone, "countryCode": form.country_code,
        "affiliation": form.affiliation, "idCard": form.id_card, "region": form.region, "gender": form.gender,
        "bio": form.bio, "tag": tag, "education": form.education, "language": form.language,
        "avatar": organization.default_avatar, "score": organization.init_score, "isAdmin": False,
        "signupApplication": application.name, "groups": groups,
        "invitation": invitation.name if invitation is not None else "", "invitationCode": form.invitation_code,
        "registerType": SELF_SIGN_UP, "registerSource": f"{organization.name}/{application.name}",
        "properties": {item["name"]: form.extra[item["name"].lower()][:1000] for item in items.custom()
                       if item["name"].lower() in form.extra},
    }
    system = Actor(application=lookup.application(db, b.BUILT_IN_APP))
    crud.add_record(db, system, REGISTRY["user"], body)
    if invitation is not None:
        invitations.count_use(db, invitation)
    user = db.exec(select(m.User).where(m.User.owner == organization.name, m.User.name == username)).one()
    audit(db, organization=organization.name, user=f"{organization.name}/{username}", action="signup",
          request_uri=request.uri or "/api/signup", client_ip=form.client_ip, language=request.language,
          obj={"application": application.name, "organization": organization.name, "username": username,
               "invitation": body["invitation"]})
    return user, organization, application


def send_code(db: Session, application_id: str, kind: str, dest: str, *, country_code: str = "",
              captcha_type: str = "", captcha_token: str = "", captcha_id: str = "", client_ip: str = "",
              request: Request = NO_REQUEST) -> None:
    """send-verification-code with method signup: a code to an address nobody in the
    organization uses yet, for a visitor of an application whose sign-up verifies it."""
    if kind not in verifications.CATEGORIES:
        raise ServiceError("Unknown type")
    application = application_of(db, application_id)
    if not application.enable_sign_up:
        raise ServiceError(NOT_ENABLED)
    item = "Email" if kind == verifications.EMAIL_KIND else "Phone"
    items = Items(application)
    if not items.visible(item) or items.rule(item) == NO_VERIFICATION:
        raise ServiceError("The application does not verify the %s at sign-up", item.lower())
    captcha.check(db, application, client_ip, captcha_type, captcha_token, captcha_id)
    throttle.hit(db, f"signup-code:{client_ip}", *SENDS_PER_ADDRESS, throttle.TOO_MANY_CODES)
    organization = _organization(db, application)
    to = verifications.receiver(Actor(), organization, kind, dest, country_code)
    if kind == verifications.EMAIL_KIND:
        if taken(db, organization.name, func.lower(m.User.email) == to.value.lower()):
            raise ServiceError("Email already exists")
    elif taken(db, organization.name, m.User.phone == to.value, m.User.country_code.in_((to.region, ""))):
        raise ServiceError("Phone already exists")
    verifications.deliver(db, Actor(), organization, to, application_id=application.name, method="signup",
                          client_ip=client_ip, request=request)
