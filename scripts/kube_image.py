#!/usr/bin/env python3
"""Pack a root filesystem into a container image without a registry or a builder.

    kube_image.py ROOTFS NAME:TAG OUT.tar [--entrypoint JSON] [--cmd JSON]
                  [--env K=V]... [--user UID:GID] [--workdir DIR] [--label K=V]...

ROOTFS is a directory (e.g. made by mmdebstrap) or an uncompressed tar of one. OUT is
a one-layer docker-archive (what `docker save` writes), which `ctr -n k8s.io images
import` loads into the cluster's containerd and `docker load` / `podman load` into a
workstation's; `skopeo copy docker-archive:OUT docker://REGISTRY/NAME:TAG` pushes it.
Only the standard library: it runs with the host's /usr/bin/python3 before any venv.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _layer(rootfs: str, path: str) -> str:
    """Write the layer tar to `path`; return its sha256 (the image's diff id)."""
    if os.path.isdir(rootfs):
        # GNU tar keeps owners, modes, device nodes, hard links and xattrs (capabilities).
        subprocess.run(
            [
                "tar",
                "-C",
                rootfs,
                "--numeric-owner",
                "--xattrs",
                "--xattrs-include=security.capability",
                "--sort=name",
                "-cf",
                path,
                ".",
            ],
            check=True,
        )
    else:
        shutil.copyfile(rootfs, path)
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _pairs(items: list[str], what: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"kube_image.py: {what} '{item}' is not KEY=VALUE")
        pairs[key] = value
    return pairs


def pack(args: argparse.Namespace) -> None:
    out = os.path.abspath(args.out)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(out)) as work:
        layer = os.path.join(work, "layer.tar")
        diff_id = _layer(args.rootfs, layer)
        env = {"PATH": DEFAULT_PATH, **_pairs(args.env, "--env")}
        config: dict = {"Env": [f"{key}={value}" for key, value in env.items()]}
        if args.entrypoint:
            config["Entrypoint"] = json.loads(args.entrypoint)
        if args.cmd:
            config["Cmd"] = json.loads(args.cmd)
        if args.user:
            config["User"] = args.user
        if args.workdir:
            config["WorkingDir"] = args.workdir
        if args.label:
            config["Labels"] = _pairs(args.label, "--label")
        image = json.dumps(
            {
                "architecture": {"x86_64": "amd64", "aarch64": "arm64"}.get(
                    os.uname().machine, os.uname().machine
                ),
                "os": "linux",
                "config": config,
                "rootfs": {"type": "layers", "diff_ids": [f"sha256:{diff_id}"]},
                "history": [{"created_by": "scripts/kube_image.py"}],
            },
            sort_keys=True,
        ).encode()
        image_id = hashlib.sha256(image).hexdigest()
        manifest = json.dumps(
            [
                {
                    "Config": f"{image_id}.json",
                    "RepoTags": [args.name],
                    "Layers": [f"{diff_id}/layer.tar"],
                }
            ]
        ).encode()
        partial = out + ".part"
        with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as archive:
            for name, data in (("manifest.json", manifest), (f"{image_id}.json", image)):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mode = 0o644
                archive.addfile(info, _Bytes(data))
            archive.add(layer, arcname=f"{diff_id}/layer.tar")
        os.replace(partial, out)
    print(out)


class _Bytes:
    def __init__(self, data: bytes) -> None:
        self.data, self.offset = data, 0

    def read(self, size: int = -1) -> bytes:
        end = len(self.data) if size < 0 else self.offset + size
        chunk, self.offset = self.data[self.offset : end], min(end, len(self.data))
        return chunk


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rootfs")
    parser.add_argument("name", help="NAME:TAG the image is known by")
    parser.add_argument("out", help="the docker-archive to write")
    parser.add_argument("--entrypoint", help='JSON list, e.g. ["/pause"]')
    parser.add_argument("--cmd", help="JSON list")
    parser.add_argument("--env", action="append", default=[], help="K=V (repeatable)")
    parser.add_argument("--user")
    parser.add_argument("--workdir")
    parser.add_argument("--label", action="append", default=[], help="K=V (repeatable)")
    pack(parser.parse_args(argv))


if __name__ == "__main__":
    main(sys.argv[1:])
