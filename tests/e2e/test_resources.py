"""The resources list: Upload (one file, judged by its content), a preview per row (a picture or
a video player), Copy link, and Delete with its question, which deletes the stored file too."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from playwright.sync_api import expect

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" \
      b"\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82"
MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + b"\x00" * 64


def _stored(server, owner: str, name: str) -> Path:
    return Path(server.database_url.removeprefix("sqlite:///")).parent / "files" / "resource" / owner / name


def _row(page, text: str):
    return page.locator("#list-table tbody tr").filter(has_text=text)


def _choose(page, name: str, mime: str, content: bytes) -> None:
    page.locator("#list-upload input[type=file]").set_input_files(
        files=[{"name": name, "mimeType": mime, "buffer": content}])


def test_upload_preview_copy_link_and_delete(visit, page, context, api_login, accounts, server):
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.base_url)
    api_login(accounts.admin)
    visit("/resources")
    expect(page.locator("#list-table")).to_be_visible()
    expect(page.locator("#list-add")).to_have_count(0)
    suffix = uuid.uuid4().hex[:6]

    picture = f"pic-{suffix}.png"
    _choose(page, picture, "image/png", PNG)
    expect(page.get_by_text("File uploaded successfully")).to_be_visible()
    page.fill("#search-value", suffix)
    row = _row(page, picture)
    expect(row).to_have_count(1)
    url = f"{server.base_url}/files/resource/built-in/{picture}"
    expect(row.locator("img")).to_have_attribute("src", url)
    expect(row.get_by_role("link", name="built-in", exact=True)).to_have_attribute("href", "/organizations/built-in")
    expect(row.get_by_role("link", name="admin", exact=True)).to_have_attribute("href", "/users/built-in/admin")
    expect(row.get_by_role("link", name="app-built-in")).to_have_attribute(
        "href", "/applications/built-in/app-built-in")
    assert _stored(server, "built-in", picture).read_bytes() == PNG

    video = f"clip-{suffix}.mp4"
    _choose(page, video, "video/mp4", MP4)
    expect(_row(page, video).locator("video")).to_have_attribute("src", re.compile(re.escape(video)))
    expect(_row(page, video).locator("video")).to_have_attribute("controls", "")

    # Copy link puts the file's URL on the clipboard
    row.get_by_role("button", name="Copy link").click()
    expect(page.get_by_text("Copied to clipboard successfully")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == url

    # Delete asks, then deletes the record and the stored file
    row.get_by_role("button", name="Delete").click()
    expect(page.locator("#delete-question")).to_have_text(f"Sure to delete: {picture} ?")
    page.click("#delete-confirm")
    expect(page.get_by_text("Successfully deleted")).to_be_visible()
    expect(_row(page, picture)).to_have_count(0)
    assert not _stored(server, "built-in", picture).exists()


def test_a_file_is_judged_by_its_content_not_its_name(visit, page, api_login, accounts, server):
    api_login(accounts.admin)
    visit("/resources")
    expect(page.locator("#list-table")).to_be_visible()
    suffix = uuid.uuid4().hex[:6]
    # a program named as a PDF: the server's message says why
    fake = f"report-{suffix}.pdf"
    _choose(page, fake, "application/pdf", b"MZ\x90\x00\x03\x00\x00\x00\x04\x00" + bytes(range(256)))
    expect(page.get_by_text("The file must be an image, video, audio, PDF, Word, Excel or CSV file")).to_be_visible()
    page.fill("#search-value", suffix)
    expect(page.locator("#list-total")).to_have_text("Total 0")
    assert not _stored(server, "built-in", fake).exists()
    page.locator("[data-sonner-toast]").first.wait_for(state="detached", timeout=15_000)  # one message at a time
    # a page named as a CSV is no CSV either
    _choose(page, f"table-{suffix}.csv", "text/csv", b"<html><script>alert(1)</script></html>")
    expect(page.get_by_text("The file must be an image, video, audio, PDF, Word, Excel or CSV file")).to_be_visible()
    # a type the picker does not offer is refused before it is sent
    _choose(page, f"run-{suffix}.exe", "application/x-msdownload", b"MZ")
    expect(page.get_by_text("File failed to upload")).to_be_visible()
    # a real CSV and a real PDF pass, whatever their names say
    _choose(page, f"data-{suffix}.csv", "text/csv", b"name,score\nalice,3\nbob,4\n")
    expect(page.get_by_text("File uploaded successfully")).to_be_visible()
    expect(page.locator("#list-total")).to_have_text("Total 1")
    assert _stored(server, "built-in", f"data-{suffix}.csv").exists()
