"""The application edit page's own components: the logo and HTML previews, the terms-of-use upload,
the links it copies with the signup preview, and the SAML metadata (state: applications/ui/applications_state.py)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from iam_console.applications.ui.applications_state import ApplicationTools
from iam_console.ui.components.section import section
from iam_console.ui.state.editing import Editing
from iam_console.ui.text import t

# a sample sign-in form the CSS preview styles
SAMPLE_FORM = ('<div class="login-panel"><form class="login-form"><label>Username <input name="username"></label>'
               '<label>Password <input type="password" name="password"></label>'
               '<button type="button" class="login-button">Sign in</button></form></div>')


def _value(key: str) -> rx.Var:
    return rx.cond(Editing.values.contains(key), Editing.values[key], "")


def side_html_shown(values: Any, flags: Any) -> Any:
    """The side-panel HTML is for form position 4 (the form beside a panel) only."""
    return values["formOffset"] == "4"


def logo_preview() -> rx.Component:
    logo = _value("logo")
    return rx.cond(logo != "", rx.box(rx.image(src=logo, height="90px", alt=t("Logo"), id="logo-preview"),
                                      padding_top="0.5em"), rx.fragment())


def code_preview(key: str, css: bool = False):
    """An HTML (or CSS, over a sample form) field's preview: a sandboxed frame, no script runs."""
    def preview() -> rx.Component:
        text = _value(key)
        document = ("<style>" + text + "</style>" + SAMPLE_FORM) if css else text
        return rx.box(rx.text(t("Preview"), size="1", color_scheme="gray"),
                      rx.el.iframe(src_doc=document, sandbox="", title=t("Preview"), id=f"{key}-preview",
                                   width="100%", height="150px", border="1px solid var(--gray-a6)"),
                      padding_top="0.5em", width="100%")
    return preview


def terms_upload() -> rx.Component:
    """One .html file; anything else is refused with its message."""
    return rx.el.label(rx.upload.root(
        rx.button(rx.icon("upload", size=14), t("Upload (.html)"), variant="soft", type="button", size="1"),
        id="terms-of-use-upload", accept={"text/html": [".html"]}, multiple=False, max_files=1, no_drag=True,
        on_drop=ApplicationTools.upload_terms, on_drop_rejected=ApplicationTools.upload_rejected,
    ), aria_label=t("Upload (.html)"), display="inline-block", padding_top="0.5em")


def _copy(target: str, label: str) -> rx.Component:
    return rx.button(rx.icon("copy", size=14), t(label), on_click=ApplicationTools.copy(target), variant="outline",
                     size="1", id=f"copy-{target}-url")


def links() -> rx.Component:
    """The application's pages, to copy; the signup preview needs a redirect URL to come back to."""
    signup = ApplicationTools.origin + "/signup/" + Editing.saved_name
    return section(
        "Links", "application-links",
        rx.hstack(_copy("signup", "Copy signup page URL"), _copy("signin", "Copy signin page URL"),
                  _copy("authorize", "Copy authorize URL"), _copy("prompt", "Copy prompt page URL"),
                  spacing="2", wrap="wrap"),
        rx.text(t("Signup preview"), size="2", weight="medium"),
        rx.cond(_value("redirectUris").strip() == "",
                rx.callout(t("ERROR: You must specify at least one Redirect URL in Redirect URLs"),
                           color_scheme="red", icon="triangle-alert", id="signup-preview-error", size="1"),
                rx.link(signup, href=signup, is_external=True, id="signup-preview")),
    )


def saml() -> rx.Component:
    """The metadata this server publishes for the application (saml/saml_idp.py), and a
    service provider's metadata read for its reply URL."""
    binding = rx.cond(Editing.flags.get("enableSamlPostBinding", False), "true", "false")
    url = (ApplicationTools.origin + "/api/saml/metadata?application=admin/" + Editing.saved_name
           + "&enablePostBinding=" + binding)
    return section(
        "SAML metadata", "saml-metadata",
        rx.hstack(rx.link(rx.code(url), href=url, is_external=True, id="saml-metadata-url"),
                  _copy("metadata", "Copy"), spacing="2", align="center", wrap="wrap"),
        rx.text(rx.el.label(t("Service provider metadata"), html_for="saml-metadata-text"), size="2",
                weight="medium"),
        rx.text_area(value=ApplicationTools.metadata, on_change=ApplicationTools.set_metadata,
                     id="saml-metadata-text", rows="6", width="100%", placeholder="<EntityDescriptor ...>"),
        rx.button(t("Parse metadata"), on_click=ApplicationTools.parse_metadata, variant="soft", size="1",
                  id="saml-parse-metadata"),
    )
