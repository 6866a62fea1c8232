"""What the fast tests of the guest share: a guest made from a GuestSpec, read
back as QEMU's command line and the initramfs's files, with nothing built."""
from dataclasses import dataclass
from pathlib import Path

import pytest

from ukl import api, configs
from ukl.build import fetch, programs
from ukl.guest import image, qemu, spec as guest_spec


def cpio_files(path: Path) -> dict[str, tuple[int, bytes]]:
    return image.read(path.read_bytes())


@pytest.fixture
def fake_busybox(tmp_path, monkeypatch):
    (tmp_path / "bb" / "bin").mkdir(parents=True)
    (tmp_path / "bb" / "bin" / "busybox").write_bytes(b"busybox")
    monkeypatch.setattr(fetch, "unpack", lambda name: tmp_path / "bb")


@dataclass
class Guest:
    spec: guest_spec.GuestSpec
    machine: qemu.Machine
    files: dict                   # the initramfs: name -> (mode, data)
    built: api.Built
    opts: api.Options

    @property
    def argv(self) -> list[str]:
        return self.machine.argv()

    def text(self, name: str) -> str:
        return self.files[name][1].decode()

    @property
    def command(self) -> str:
        return self.text(guest_spec.COMMAND)

    def hooks(self, point: str) -> str:
        """The fragments /init sources at POINT, in its order."""
        where = guest_spec.HOOKS[point] + "/"
        return "".join(data.decode() for name, (_, data) in sorted(self.files.items())
                       if name.startswith(where))

    def script(self) -> str:
        """What /init runs, the hooks in their places: for checks of order."""
        return (self.hooks("setup") + self.command + self.hooks("start")
                + self.hooks("finish") + self.hooks("exit"))


@pytest.fixture
def guest(tmp_path, fake_busybox):
    """guest(opts, name=, config=, one_console=, **Built fields) -> Guest."""
    def make(opts=None, name="p", config="ukl", one_console=False, program=None, **built):
        b = api.Built(program or programs.Program("example", name, Path(f"/{name}.c")),
                      configs.CONFIGS[config], Path("/k/bzImage"),
                      built.pop("binary", b"\x7fELF..."), **built)
        work = tmp_path / "run"
        spec = api.spec(b, opts or api.Options(), work, one_console)
        initrd = image.build(work, spec)
        return Guest(spec, qemu.Machine(spec, initrd), cpio_files(initrd), b, opts)
    return make
