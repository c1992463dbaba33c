// The avatar's 1:1 cropper: pick a picture, frame it with
// react-easy-crop, and the cropped square (at most OUTPUT pixels wide, PNG) goes to
// POST /api/upload-resource?tag=avatar, which checks it and saves the user's avatar.
// The picture never travels over the Reflex websocket.
import { useCallback, useState } from "react";
import Cropper from "react-easy-crop";
import { Button, Flex, Text } from "@radix-ui/themes";

const MIN_CROP = 10; // the smallest crop box, in pixels of the picture
const OUTPUT = 512;

function loadImage(src) {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => resolve(image);
    image.onerror = reject;
    image.src = src;
  });
}

async function croppedPng(src, area) {
  const image = await loadImage(src);
  const size = Math.max(1, Math.min(OUTPUT, Math.round(area.width)));
  const canvas = document.createElement("canvas");
  canvas.width = size;
  canvas.height = size;
  canvas.getContext("2d").drawImage(image, area.x, area.y, area.width, area.height, 0, 0, size, size);
  return new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
}

export function AvatarCropper({
  owner, user, chooseLabel, uploadLabel, emptyMessage, failedMessage, onDone, onFail,
}) {
  const [src, setSrc] = useState("");
  const [crop, setCrop] = useState({ x: 0, y: 0 });
  const [zoom, setZoom] = useState(1);
  const [area, setArea] = useState(null);
  const [busy, setBusy] = useState(false);
  const onCropComplete = useCallback((_, pixels) => setArea(pixels), []);

  const choose = (event) => {
    const file = event.target.files && event.target.files[0];
    if (!file) return;
    if (src) URL.revokeObjectURL(src);
    setSrc(URL.createObjectURL(file));
    setCrop({ x: 0, y: 0 });
    setZoom(1);
    setArea(null);
  };

  const upload = async () => {
    if (!src || !area) {
      onFail && onFail(emptyMessage);
      return;
    }
    setBusy(true);
    try {
      const box = { ...area, width: Math.max(MIN_CROP, area.width), height: Math.max(MIN_CROP, area.height) };
      const blob = await croppedPng(src, box);
      const form = new FormData();
      form.append("file", blob, `${user}.png`);
      const query = new URLSearchParams({
        owner, user, application: "app-built-in", tag: "avatar", parent: "",
        fullFilePath: `avatar/${owner}/${user}.png`, provider: "",
      });
      const response = await fetch(`/api/upload-resource?${query}`, {
        method: "POST", body: form, credentials: "same-origin",
      });
      const body = await response.json();
      if (body.status === "ok") {
        onDone && onDone(body.data);
      } else {
        onFail && onFail(body.msg || failedMessage);
      }
    } catch (error) {
      onFail && onFail(failedMessage);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Flex direction="column" gap="3" width="100%">
      <label>
        <Text size="2" weight="medium">{chooseLabel}</Text>
        <input id="avatar-file" type="file" accept="image/png,image/jpeg,image/gif,image/webp"
               onChange={choose} style={{ display: "block", marginTop: "0.4em" }} />
      </label>
      <div id="avatar-crop-area"
           style={{ position: "relative", width: "100%", height: "300px", background: "var(--gray-a4)" }}>
        {src ? (
          <Cropper image={src} crop={crop} zoom={zoom} aspect={1} minZoom={1} maxZoom={5}
                   onCropChange={setCrop} onZoomChange={setZoom} onCropComplete={onCropComplete} />
        ) : null}
      </div>
      <input type="range" min={1} max={5} step={0.05} value={zoom} disabled={!src}
             onChange={(event) => setZoom(Number(event.target.value))} aria-label="zoom" />
      <Flex justify="end">
        <Button id="avatar-upload" onClick={upload} loading={busy}>{uploadLabel}</Button>
      </Flex>
    </Flex>
  );
}
