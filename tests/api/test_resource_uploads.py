"""upload-resource beyond avatars: an admin or an application's client stores a file of
any tag for its own organization; paths stay inside the files folder, a taken path gets
a number, stored pages are downloads, and deleting the resource deletes its file."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from iam_console.api.app import api
from iam_console.settings import settings
from tests.api.conftest import ok_body, sign_in
from tests.conftest import unique

PASSWORD = "Files-pass-1"


@pytest.fixture(scope="module")
def orgs(admin) -> dict[str, TestClient]:
    """Two organizations; the client of A's application, A's admin and user, B's name."""
    a, b = unique("filea"), unique("fileb")
    for org in (a, b):
        ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": org}))
        for user, is_admin in (("boss", True), ("alice", False)):
            ok_body(admin.post("/api/add-user", json={"owner": org, "name": user, "password": PASSWORD,
                                                  "isAdmin": is_admin}))
    ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": f"{a}-app", "organization": a}))
    app = ok_body(admin.get("/api/get-application", params={"id": f"admin/{a}-app"}))["data"]
    client = TestClient(api)
    client.params = {"clientId": app["clientId"], "clientSecret": app["clientSecret"]}
    return {"a": a, "b": b, "client": client, "boss": sign_in(a, "boss", PASSWORD),
            "alice": sign_in(a, "alice", PASSWORD)}


def _upload(caller, owner: str, path: str, content: bytes = b"%PDF-1.4 report", **params):
    return caller.post("/api/upload-resource", params={"owner": owner, "user": "alice", "tag": "doc",
                                                        "fullFilePath": path, **params},
                       files={"file": ("upload.bin", content, "application/octet-stream")}).json()


def test_an_applications_client_uploads_for_its_organization(admin, orgs):
    a = orgs["a"]
    path = f"docs/{unique('report')}.pdf"
    answer = _upload(orgs["client"], a, path, application=f"{a}-app", description="Q3")
    assert answer["status"] == "ok", answer
    url, name = answer["data"], answer["data2"]
    assert name == path.replace("/", "_") and url == f"{settings.origin}/files/resource/{a}/{name}"
    row = ok_body(admin.get("/api/get-resource", params={"id": f"{a}/{name}"}))["data"]
    assert (row["tag"], row["user"], row["application"], row["fileSize"], row["fileFormat"], row["description"]) \
        == ("doc", "alice", f"{a}-app", len(b"%PDF-1.4 report"), ".pdf", "Q3")
    served = admin.get(urlsplit(url).path)
    assert served.status_code == 200 and served.content == b"%PDF-1.4 report"
    assert served.headers["content-disposition"] == "attachment"

    again = _upload(orgs["boss"], a, path)
    assert again["data2"] == name.replace(".pdf", "-1.pdf")


def test_a_stored_page_is_a_download_never_a_page_of_this_origin(orgs):
    page = b"<html><script>alert(document.cookie)</script></html>"
    answer = _upload(orgs["boss"], orgs["a"], f"{unique('page')}.html", page)
    served = TestClient(api).get(urlsplit(answer["data"]).path)
    assert served.content == page and not served.headers["content-type"].startswith("text/html")
    assert served.headers["content-disposition"] == "attachment"
    assert served.headers["content-security-policy"] == "sandbox"


@pytest.mark.parametrize("path", ["../escape.txt", "docs/../../escape.txt", ".hidden", "docs/.git/config",
                                  "a\\b.txt", "", "x" * 300])
def test_paths_stay_inside_the_files_folder(orgs, path):
    answer = _upload(orgs["boss"], orgs["a"], path)
    assert answer["status"] == "error" and "fullFilePath" in answer["msg"], answer
    assert not (settings.files_dir / "escape.txt").exists()


def test_nobody_uploads_for_another_organization_and_users_upload_no_files(admin, orgs):
    a, b = orgs["a"], orgs["b"]
    path = f"{unique('foreign')}.txt"
    for caller in (orgs["client"], orgs["boss"]):
        assert _upload(caller, b, path)["status"] == "error"
    assert _upload(orgs["alice"], a, path)["status"] == "error"
    assert _upload(TestClient(api), a, path)["msg"] == "Please login first"
    assert not (settings.files_dir / "resource" / b / path).exists()
    assert not (settings.files_dir / "resource" / a / path).exists()
    assert _upload(orgs["boss"], a, path, b"")["msg"] == "You must select a file first!"


def test_deleting_the_resource_deletes_its_file(admin, orgs):
    a = orgs["a"]
    answer = _upload(orgs["boss"], a, f"{unique('old')}.txt", b"old")
    stored = settings.files_dir / "resource" / a / answer["data2"]
    assert stored.read_bytes() == b"old"
    ok_body(orgs["boss"].post("/api/delete-resource", json={"owner": a, "name": answer["data2"]}))
    assert not stored.exists()
