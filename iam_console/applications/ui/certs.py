"""Certs: list and edit. The form's rules: a new algorithm clears the certificate and private key
(a save then generates a new pair) and settles the bit size (0 for ES, 2048 for RSA and PSS unless
it is 1024, 2048 or 4096); a new bit size clears them too. Generate puts a new pair into the form;
the downloads are the saved files, through GET /api/download-cert (the private key only for those
who may read it). Shared certs (owner 'admin') are read-only to all but the global admin."""

from __future__ import annotations

import reflex as rx

from iam_console import workers
from iam_console.applications import cert_keys
from iam_console.applications.kinds.cert import settled_bit_size
from iam_console.core import builtin as b
from iam_console.core import wire
from iam_console.core.errors import ServiceError
from iam_console.core.kinds import choices
from iam_console.ui.screens import Column, Field, Screen, screen
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.service import call, failure, say
from iam_console.ui.text import t

BIT_SIZES = ("1024", "2048", "4096")
SHARED = ((b.ADMIN_OWNER, "admin (Shared)"),)
FILES = (("certificate", "token_jwt_key.pem", "Copy certificate", "Download certificate"),
         ("privateKey", "token_jwt_key.key", "Copy private key", "Download private key"))


def _restrictions(db, actor, record) -> tuple[set[str], set[str]]:
    """A cert the viewer may not change (a shared one, for an organization admin) is shown
    read-only; a private key they may not read (masked) is not shown at all."""
    try:
        cert_keys.check_may_change(db, actor, record["owner"], record["name"])
        locked = set()
    except ServiceError:
        locked = {f.key for f in CERTS.fields} | {"owner", "name"}
    return locked, {"privateKey"} if record.get("privateKey") == wire.MASK else set()


def _built_in(record) -> bool:
    """The built-in cert keeps its owner and name."""
    return record.get("owner") == b.ADMIN_OWNER and record.get("name") == b.BUILT_IN_CERT


def _protected(record, me: str) -> bool:
    """Delete is disabled for the built-in cert, and for shared certs unless the viewer is a global
    admin (the only members of the built-in organization who can list certs are its admins)."""
    shared = record.get("owner") == b.ADMIN_OWNER
    return shared and (_built_in(record) or not me.startswith(f"{b.BUILT_IN_ORG}/"))


def _files(key: str, filename: str, copy: str, download: str) -> rx.Component:
    """Copy (the form's text) and Download (the saved file, served by the API with the viewer's
    own rights), both disabled while the text is empty."""
    empty = ~Editing.values.contains(key) | (Editing.values[key] == "")
    copy_button = rx.button(rx.icon("copy", size=14), t(copy), size="1", variant="soft", type="button",
                            disabled=empty, on_click=CertKeys.copy(key), id=f"cert-copy-{key}")
    ident = f"cert-download-{key}"
    button = rx.button(rx.icon("download", size=14), t(download), size="1", variant="soft", type="button")
    href = "/api/download-cert?id=" + Editing.saved_owner + "/" + Editing.saved_name + f"&file={key}"
    return rx.hstack(copy_button, rx.cond(
        empty,
        rx.button(rx.icon("download", size=14), t(download), size="1", variant="soft", disabled=True, id=ident),
        # a document load, not the router's: the browser downloads the answer
        rx.el.a(button, href=href, download=filename, id=ident, custom_attrs={"reloadDocument": True}),
    ), spacing="2", margin_top="0.5em")


CERTS = screen(Screen(
    key="cert", title="Certs", list_route="/certs", edit_route="/certs/{owner}/{name}", edit_title="Cert",
    name_locked=_built_in, owner_locked=_built_in, protected=_protected, restrictions=_restrictions, owner_picker=True,
    columns=(
        Column("name", "Name", link="/certs/{owner}/{name}"),
        Column("owner", "Organization", shown_as=SHARED),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("scope", "Scope", filters=choices("cert", "scope")),
        Column("type", "Type", filters=choices("cert", "type")),
        Column("cryptoAlgorithm", "Crypto algorithm", filters=choices("cert", "cryptoAlgorithm")),
        Column("bitSize", "Bit size"),
        Column("expireInYears", "Expire in years"),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("scope", "Scope", "select", options=choices("cert", "scope")),
        Field("type", "Type", "select", options=choices("cert", "type")),
        Field("cryptoAlgorithm", "Crypto algorithm", "select", options=choices("cert", "cryptoAlgorithm"),
              then=lambda algorithm, values: {"bitSize": settled_bit_size(algorithm, values.get("bitSize", "")),
                                              "certificate": "", "privateKey": ""}),
        # ES: the curve decides the size (0)
        Field("bitSize", "Bit size", "select", options=BIT_SIZES,
              shown_when=lambda values, flags: ~rx.cond(values.contains("cryptoAlgorithm"), values["cryptoAlgorithm"],
                                                        "").to(str).startswith("ES"),
              then=lambda bits: {"certificate": "", "privateKey": ""}),
        # Generate sits under the settings it uses
        Field("expireInYears", "Expire in years", "number", minimum=0, addon=lambda: _generate_button()),
        Field("certificate", "Certificate", "textarea", rows=30, addon=lambda: _files(*FILES[0])),
        Field("privateKey", "Private key", "textarea", rows=30, addon=lambda: _files(*FILES[1])),
    ),
))


class CertKeys(rx.State):
    generating: bool = False

    @rx.event
    async def copy(self, key: str):
        """The certificate or private key as the form shows it (never a text the viewer may not see)."""
        editing = await self.get_state(Editing)
        if editing.screen_key != CERTS.key or key not in ("certificate", "privateKey") or key in editing.hidden:
            return None
        return [rx.set_clipboard(editing.values.get(key, "")),
                rx.toast.success(await say(self, "Copied to clipboard successfully"))]

    @rx.event
    async def generate(self):
        """A new pair for the form's settings, into the form (Save stores it)."""
        editing = await self.get_state(Editing)
        if editing.screen_key != CERTS.key or "privateKey" in editing.locked or "privateKey" in editing.hidden:
            return
        values, owner, name = dict(editing.values), editing.saved_owner, editing.saved_name
        allowed = await call(self, lambda db, actor: cert_keys.check_may_change(db, actor, owner, name))
        if allowed.failed:
            yield allowed.event
            return
        years = values.get("expireInYears", "").strip() or "0"
        if not years.isdigit():
            yield rx.toast.error(await say(self, "The expire in years must be at least 0"))
            return
        bits = values.get("bitSize", "")
        self.generating = True
        yield
        try:  # an RSA-4096 key takes a while: off the event loop
            cert_pem, key_pem, used = await workers.run(
                cert_keys.new_pair, values.get("cryptoAlgorithm", ""), int(bits) if bits.isdigit() else 0,
                int(years), name, owner)
        except ServiceError as exc:
            self.generating = False
            yield await failure(self, exc)
            return
        self.generating = False
        editing = await self.get_state(Editing)
        editing.values = {**editing.values, "certificate": cert_pem, "privateKey": key_pem, "expireInYears": str(used)}
        editing.dirty = True
        yield rx.toast.success(await say(self, "Generated: save to keep the new key pair"))


def _generate_button() -> rx.Component:
    return rx.box(rx.button(
        rx.icon("key-round", size=14), t("Generate"), on_click=CertKeys.generate, variant="outline", size="1",
        loading=CertKeys.generating, id="cert-generate", type="button",
        disabled=Editing.locked.contains("privateKey") | Editing.hidden.contains("privateKey")), margin_top="0.5em")
