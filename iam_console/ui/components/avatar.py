"""The avatar cropper: a local React component (avatar_cropper.jsx) over the npm
package react-easy-crop, which bun installs from the npm registry when the
front end is built. It posts the cropped picture to /api/upload-resource itself
and reports the outcome through on_done (the new URL) or on_fail (a message)."""

from __future__ import annotations

import reflex as rx


class AvatarCropper(rx.Component):
    library = rx.asset("avatar_cropper.jsx", shared=True).importable_path
    tag = "AvatarCropper"
    lib_dependencies: list[str] = ["react-easy-crop@6.2.5"]

    owner: rx.Var[str]
    user: rx.Var[str]
    choose_label: rx.Var[str]
    upload_label: rx.Var[str]
    empty_message: rx.Var[str]
    failed_message: rx.Var[str]
    on_done: rx.EventHandler[lambda url: [url]]
    on_fail: rx.EventHandler[lambda message: [message]]


avatar_cropper = AvatarCropper.create
