"""Avatars: upload-resource with the tag avatar, stored under IAM_FILES_DIR and served at /files/."""

from __future__ import annotations

from urllib.parse import urlsplit

from sqlmodel import select

from iam_console import models as m
from iam_console.db import session_scope
from iam_console.settings import settings
from tests.api.conftest import sign_in
from tests.conftest import reload_user
from tests.pictures import png


def _upload(client, owner: str, user: str, content: bytes, filename: str = "avatar.png"):
    return client.post("/api/upload-resource", params={"owner": owner, "user": user, "tag": "avatar",
                                                        "fullFilePath": f"avatar/{owner}/{user}.png"},
                       files={"file": (filename, content, "image/png")}).json()


def _path(url: str) -> str:
    return urlsplit(url).path


def test_an_admin_uploads_an_avatar_served_at_its_url(admin, make_org, make_user):
    org = make_org()
    user = make_user(owner=org.name)
    picture = png(8, 8)
    answer = _upload(admin, org.name, user.name, picture)
    assert answer["status"] == "ok", answer
    url, stored = answer["data"], answer["data2"]
    assert stored == f"avatar/{org.name}/{user.name}.png" and url.startswith(settings.origin + "/files/" + stored)
    assert reload_user(org.name, user.name).avatar == url
    served = admin.get(_path(url))
    assert served.status_code == 200 and served.content == picture
    assert served.headers["content-type"] == "image/png" and served.headers["x-content-type-options"] == "nosniff"
    with session_scope() as db:
        row = db.exec(select(m.Resource).where(m.Resource.owner == org.name,
                                               m.Resource.name == f"avatar_{user.name}")).one()
    assert (row.user, row.tag, row.file_size, row.url) == (user.name, "avatar", len(picture), url)

    # a new picture of another format replaces the old one
    gif = b"GIF89a" + b"\x01\x00\x01\x00\x00\x00\x00;"
    second = _upload(admin, org.name, user.name, gif, "avatar.gif")
    assert second["data2"].endswith(".gif")
    assert not (settings.files_dir / stored).exists() and (settings.files_dir / second["data2"]).exists()
    assert admin.get(_path(url)).status_code == 404


def test_a_user_uploads_their_own_avatar_only(make_org, make_user):
    org = make_org()
    me, other = make_user(owner=org.name, password="first-pass"), make_user(owner=org.name)
    client = sign_in(org.name, me.name, "first-pass")
    assert _upload(client, org.name, me.name, png())["status"] == "ok"
    refused = _upload(client, org.name, other.name, png())
    assert refused["status"] == "error"
    assert reload_user(org.name, other.name).avatar == ""
    assert not (settings.files_dir / f"avatar/{org.name}/{other.name}.png").exists()


def test_what_is_not_an_avatar_is_refused(admin, make_org, make_user):
    org = make_org()
    user = make_user(owner=org.name)
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    assert _upload(admin, org.name, user.name, svg, "x.svg")["msg"] == \
        "The avatar must be a PNG, JPEG, GIF or WebP picture"
    assert _upload(admin, org.name, user.name, b"")["msg"] == "You must select a picture first!"
    too_large = png() + b"\x00" * (5 * 1024 * 1024)
    assert "too large" in _upload(admin, org.name, user.name, too_large)["msg"]
    other_tag = admin.post("/api/upload-resource", params={"owner": org.name, "user": user.name, "tag": "doc"},
                           files={"file": ("a.png", png(), "image/png")}).json()
    assert other_tag["status"] == "error"
    missing = _upload(admin, org.name, "nobody", png())
    assert missing["status"] == "error" and "doesn't exist" in missing["msg"]
    assert reload_user(org.name, user.name).avatar == ""
    assert not (settings.files_dir / "avatar" / org.name).exists()


def test_only_stored_files_are_served(admin):
    (settings.files_dir).mkdir(parents=True, exist_ok=True)
    for path in ("/files/../iam.db", "/files/%2e%2e/iam.db", "/files/avatar/none.png", "/files/"):
        assert admin.get(path).status_code == 404, path
