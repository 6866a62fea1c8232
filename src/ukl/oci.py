"""`ukl oci`: an OCI image (image layout) that urunc boots as a Linux unikernel:
the kernel with the program linked in, its initramfs, and urunc's annotations,
also in /urunc.json (base64), as urunc reads them when a runtime drops them.

urunc boots it as `qemu -kernel KERNEL -initrd INITRD -append "panic=-1
console=ttyS0 root=/dev/ram0 rw ip=... ENV... rdinit=/init --"`, with one
serial port; the configuration's boot parameter (`ukl=byp,ret`) travels in
the image's Env, which urunc puts on that command line."""
import base64
import gzip
import hashlib
import io
import json
import tarfile
import tempfile
from pathlib import Path

from . import api
from .build import programs
from .errors import UklError

KERNEL, INITRD, INIT = ".boot/kernel", ".boot/initrd", "/init"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"


def annotations() -> dict[str, str]:
    prefix = "com.urunc.unikernel."
    return {prefix + k: v for k, v in {
        "unikernelType": "linux", "hypervisor": "qemu", "binary": f"/{KERNEL}",
        "initrd": f"/{INITRD}", "cmdline": INIT,
        # the rootfs is the initramfs: no devmapper block device
        "useDMBlock": "false"}.items()}


def _tar(files: dict[str, bytes]) -> bytes:
    """A reproducible tar of FILES (name -> content), with their directories."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        dirs = sorted({str(Path(n).parent) for n in files} - {"."})
        for d in dirs:
            info = tarfile.TarInfo(d)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            t.addfile(info)
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o644
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class _Blobs:
    def __init__(self, root: Path):
        self.dir = root / "blobs" / "sha256"
        self.dir.mkdir(parents=True)

    def add(self, data: bytes, media_type: str, **extra) -> dict:
        digest = hashlib.sha256(data).hexdigest()
        (self.dir / digest).write_bytes(data)
        return {"mediaType": media_type, "digest": f"sha256:{digest}", "size": len(data), **extra}


def _json(obj) -> bytes:
    return json.dumps(obj, indent=2, sort_keys=True).encode()


def write_layout(root: Path, name: str, kernel: bytes, initrd: bytes, env: list[str],
                 ports=(), user: str | None = None) -> dict:
    """The image layout in ROOT (which must not exist); returns its manifest."""
    notes = annotations()
    urunc = {k: base64.b64encode(v.encode()).decode() for k, v in notes.items()}
    layer_tar = _tar({KERNEL: kernel, INITRD: initrd, "urunc.json": _json(urunc)})
    blobs = _Blobs(root)
    layer = blobs.add(gzip.compress(layer_tar, mtime=0), LAYER)
    config = blobs.add(_json({
        "architecture": "amd64", "os": "linux",
        "config": {"Entrypoint": [INIT], "Env": env, "Labels": notes,
                   "ExposedPorts": {f"{p}/tcp": {} for p in ports},
                   **({"User": user} if user else {})},
        "rootfs": {"type": "layers",
                   "diff_ids": [f"sha256:{hashlib.sha256(layer_tar).hexdigest()}"]},
    }), CONFIG)
    manifest = {"schemaVersion": 2, "mediaType": MANIFEST, "config": config,
                "layers": [layer], "annotations": notes}
    ref = {"io.containerd.image.name": f"docker.io/library/{name}:latest",
           "org.opencontainers.image.ref.name": "latest"}
    index = {"schemaVersion": 2, "manifests": [blobs.add(
        _json(manifest), MANIFEST, annotations=ref,
        platform={"architecture": "amd64", "os": "linux"})]}
    (root / "oci-layout").write_bytes(_json({"imageLayoutVersion": "1.0.0"}))
    (root / "index.json").write_bytes(_json(index))
    return manifest


def _check_dest(dest: Path):
    if dest.exists() and not (dest.is_dir() and not any(dest.iterdir())):
        raise UklError(f"-o {dest}: exists and is not an empty directory")
    if not dest.parent.is_dir():
        raise UklError(f"-o {dest}: {dest.parent} is not a directory")


def build(program: "str | programs.Program", config: str, dest: Path, opts=None) -> Path:
    """Write the image of PROGRAM under CONFIG, booted with OPTS (the
    program's arguments, its user and variables), to DEST: an image layout
    directory, or a tar of one if DEST ends in .tar.  Nothing is left at
    DEST unless the whole image is written."""
    _check_dest(dest)
    opts = api.validate(opts or api.Options(), config, bind=False)
    built = api.build(program, config)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=f".{dest.name}.") as tmp:
        work = Path(tmp)
        initrd = api.initramfs(built, opts, work / "initramfs", one_console=True)
        layout = work / "image"
        write_layout(layout, f"ukl-{built.name}", built.kernel.read_bytes(),
                     initrd.read_bytes(), built.config.kernel_args(), built.program.ports,
                     opts.user)
        if dest.suffix == ".tar":
            with tarfile.open(work / "image.tar", "w") as t:
                for path in sorted(layout.rglob("*")):
                    t.add(path, str(path.relative_to(layout)), recursive=False)
            (work / "image.tar").replace(dest)
        else:
            if dest.exists():
                dest.rmdir()
            layout.replace(dest)
    return dest


def urunc_cmdline(env: list[str], ip: str, gateway: str, mask: str, args=()) -> str:
    """The command line urunc gives a Linux unikernel with an initrd (its linux.go)."""
    return " ".join(["panic=-1 console=ttyS0 root=/dev/ram0 rw",
                     f"ip={ip}::{gateway}:{mask}:urunc:eth0:off", *env,
                     f"rdinit={INIT} --", *args]).rstrip()


def read_layout(root: Path) -> tuple[dict, dict, dict[str, bytes]]:
    """An image layout's manifest, config and the files of its one layer."""
    blob = lambda d: (root / "blobs" / "sha256" / d["digest"].split(":")[1]).read_bytes()
    index = json.loads((root / "index.json").read_bytes())
    manifest = json.loads(blob(index["manifests"][0]))
    config = json.loads(blob(manifest["config"]))
    files = {}
    with tarfile.open(fileobj=io.BytesIO(blob(manifest["layers"][0]))) as t:
        for m in t.getmembers():
            if m.isfile():
                files[m.name] = t.extractfile(m).read()
    return manifest, config, files
