"""Resources: the files stored for an organization. A list without Add or edit page: Upload
(one image, video, audio, PDF, Word, Excel or CSV file, judged by its content in
files/media.py), a preview (a picture or a video player), Copy link, and Delete, which
deletes the stored file too (files/kinds/resource.py)."""

from __future__ import annotations

import reflex as rx

from iam_console.files import files
from iam_console.ui.screens import Column, Screen, Upload, screen
from iam_console.ui.text import t

# the file picker's offer; the server judges the content, whatever the name says
ACCEPT = {"image/*": [], "video/*": [], "audio/*": [], "application/pdf": [".pdf"],
          "application/msword": [".doc"], "application/vnd.ms-excel": [".xls"], "text/csv": [".csv"],
          "application/vnd.openxmlformats-officedocument.wordprocessingml.document": [".docx"],
          "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": [".xlsx"]}


def _upload(db, actor, owner: str, file_name: str, file) -> None:
    files.upload_listed_file(db, actor, owner, file_name, file.read(files.MAX_FILE_BYTES + 1))


def _copy_link(row: rx.Var) -> list[rx.Component]:
    return [rx.button(t("Copy link"), size="1", variant="soft", class_name="resource-copy-link",
                      on_click=[rx.set_clipboard(row["url"]), rx.toast.success(t("Copied to clipboard successfully"))])]


RESOURCES = screen(Screen(
    key="resource", title="Resources", list_route="/resources", edit_route="", addable=False,
    upload=Upload("Upload", ACCEPT, files.MAX_FILE_BYTES, _upload, "File uploaded successfully"),
    row_actions=_copy_link,
    columns=(
        Column("name", "Name"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("provider", "Provider", link="/providers/{owner}/{provider}"),
        Column("application", "Application", link="/applications/{owner}/{application}"),
        Column("user", "User", link="/users/{owner}/{user}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("tag", "Tag"),
        Column("fileType", "Type", filters=("image", "video", "audio", "application", "text")),
        Column("fileFormat", "Format"),
        Column("fileSize", "File size", searchable=False),
        Column("url", "Preview", "media", sortable=False, searchable=False),
    ),
    fields=(),
))
