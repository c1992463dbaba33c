"""The application edit page's own tools (applications/application_tools.py does the work): the links
it copies, the SAML metadata it reads, the terms of use it uploads. The form's values are the edit
state's; a result that changes the form (a reply URL, the terms of use URL) goes into it as an edit."""

from __future__ import annotations

import reflex as rx

from iam_console.applications import application_tools as tools
from iam_console.files.files import MAX_FILE_BYTES
from iam_console.settings import settings
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.service import call, say

TARGETS = ("signup", "signin", "authorize", "prompt")


class ApplicationTools(rx.State):
    origin: str = ""  # the server's public URL, which the links start with
    metadata: str = ""  # a service provider's SAML metadata, pasted to be read

    @rx.event
    def load(self):
        self.origin, self.metadata = settings.origin, ""

    @rx.event
    async def copy(self, target: str):
        """A link of the application as the form shows it now, to the clipboard."""
        editing = await self.get_state(Editing)
        values = editing.values
        links = tools.page_links(values.get("name", ""), values.get("clientId", ""),
                                 values.get("redirectUris", "").split(","))
        if target == "metadata":
            url = tools.saml_metadata_url(values.get("name", ""), editing.flags.get("enableSamlPostBinding", False))
        elif target in TARGETS:
            url = links[target]
        else:
            return None
        return [rx.set_clipboard(url), rx.toast.success(await say(self, "Copied to clipboard successfully"))]

    @rx.event
    def set_metadata(self, text: str):
        self.metadata = text[:tools.MAX_METADATA]

    @rx.event
    async def parse_metadata(self):
        """The pasted metadata's reply URL becomes the SAML reply URL."""
        text = self.metadata
        parsed = await call(self, lambda db, actor: tools.parse_metadata(text))
        if parsed.failed:
            return parsed.event
        editing = await self.get_state(Editing)
        editing.put_value("samlReplyUrl", parsed.value["replyUrl"])
        return rx.toast.success(await say(self, "Parse metadata successfully"))

    @rx.event
    async def upload_terms(self, files: list[rx.UploadFile]):
        """One .html file, stored as a resource; its URL becomes the terms of use."""
        if not files:
            return None  # the picker refused the file: upload_rejected says so
        if len(files) != 1:
            return rx.toast.error(await say(self, tools.NOT_HTML))
        upload = files[0]
        name = upload.filename or ""
        if not name.lower().endswith(".html"):
            return rx.toast.error(await say(self, tools.NOT_HTML))
        content = await upload.read(MAX_FILE_BYTES + 1)
        editing = await self.get_state(Editing)
        application = editing.saved_name
        stored = await call(self, lambda db, actor: tools.upload_terms_of_use(db, actor, application, name, content),
                            failed="File failed to upload: %s")
        if stored.failed:
            return stored.event
        editing.put_value("termsOfUse", stored.value)
        return rx.toast.success(await say(self, "File uploaded successfully"))

    @rx.event
    async def upload_rejected(self, rejected: list[dict]):
        return rx.toast.error(await say(self, tools.NOT_HTML))
