"""Configurations: how a program is built and which kernel behaviour it runs with.

One record per configuration, resolved once (the environment included) and
passed whole to everything below the API.  All UKL configurations share one
kernel: its options are built in (kernel/configs/ukl.config) and selected at
boot with `ukl=`, which sets the options every UKL program starts with (a
thread may change its own with arch_prctl(ARCH_UKL_SET_OPTS)).

One vocabulary names what is built: a program and its C library are built
"ukl" (a UKL object against the patched musl) or "baseline" (a static
executable against plain musl); kernels are "baseline", "ukl", "ukl-debug" or "ukl-mitigated".
"""
import dataclasses
import os
from dataclasses import dataclass

from .errors import UklError

# Each UKL option: its boot-parameter name and the Kconfig symbol that builds it.
OPTIONS = {"ret": "CONFIG_UKL_RET", "byp": "CONFIG_UKL_BYP", "wait": "CONFIG_UKL_WAIT"}
# The kernels UKL programs may be linked into; UKL_KERNEL picks one.
UKL_KERNELS = ["ukl", "ukl-debug", "ukl-mitigated"]
KINDS = ("ukl", "baseline")


@dataclass(frozen=True)
class Config:
    name: str
    kind: str            # how the program and its C library are built (KINDS)
    kernel: str          # the kernel it boots: "baseline" or one of UKL_KERNELS
    options: tuple = ()  # UKL options selected at boot (keys of OPTIONS)
    busy_poll: int = 0   # epoll busy polling, in microseconds (features.machine)
    wait_all: bool = False  # every task waits in place (UKL_WAIT's policy at CPL3)

    @property
    def ukl(self) -> bool:
        return self.kind == "ukl"

    def kernel_args(self) -> list[str]:
        args = [f"ukl={','.join(self.options)}"] if self.options else []
        if "wait" in self.options or self.wait_all:
            args.append(f"ukl_wait={BUSY_POLL_USECS}")    # the busy pollers' budget
        return args + (["ukl_wait_all"] if self.wait_all else [])

    def required_symbols(self) -> list[str]:
        return [OPTIONS[o] for o in self.options] + (["CONFIG_UKL_WAIT"] if self.wait_all else [])


# How long epoll_wait() polls before it sleeps: longer than the host client's
# round trip under TCG, so that a loaded server's thread never sleeps.
BUSY_POLL_USECS = 2000

CONFIGS = {c.name: c for c in [
    Config("baseline", "baseline", "baseline"),        # stock Linux, a static binary
    Config("ukl", "ukl", "ukl"),                       # the base model
    Config("ukl-ret", "ukl", "ukl", ("ret",)),         # returns without IRET
    Config("ukl-byp", "ukl", "ukl", ("byp",)),         # system calls bypass the entry work
    Config("ukl-ret-byp", "ukl", "ukl", ("ret", "byp")),
    Config("cpl3-on-ukl", "baseline", "ukl"),          # the static binary on the UKL kernel
    # stock Linux tuned for latency: epoll busy polls the device queue
    Config("baseline-busypoll", "baseline", "baseline", busy_poll=BUSY_POLL_USECS),
    # epoll_wait() waits in place (UKL_WAIT) rather than sleeping ...
    Config("ukl-ret-byp-wait", "ukl", "ukl", ("ret", "byp", "wait")),
    # ... and the same policy for an ordinary process: what CPL0 adds to it
    Config("cpl3-wait-on-ukl", "baseline", "ukl", wait_all=True),
    # the UKL program with Linux's busy polling: what UKL adds to it
    Config("ukl-ret-byp-busypoll", "ukl", "ukl", ("ret", "byp"), busy_poll=BUSY_POLL_USECS),
]}
# The spectrum, from the most general to the fastest.
SPECTRUM = ["ukl", "ukl-ret", "ukl-byp", "ukl-ret-byp"]


def ukl_kernel() -> str:
    """The UKL kernel to use: `ukl`, or another named by UKL_KERNEL (the debug
    or the mitigated kernel, which CI does not build)."""
    flavor = os.environ.get("UKL_KERNEL", "ukl")
    if flavor not in UKL_KERNELS:
        raise UklError(f"unknown UKL kernel {flavor!r} in UKL_KERNEL; valid: "
                       f"{', '.join(UKL_KERNELS)}")
    return flavor


ACCELS = ("tcg", "kvm")


def forced_accel() -> str | None:
    """The accelerator UKL_ACCEL forces, if it does (else a probe decides)."""
    forced = os.environ.get("UKL_ACCEL")
    if forced and forced not in ACCELS:
        raise UklError(f"UKL_ACCEL must be tcg or kvm, not {forced!r}")
    return forced or None


def get(name: "str | Config") -> Config:
    """The named configuration, with the UKL kernel it will really boot."""
    if isinstance(name, Config):
        return name
    if name not in CONFIGS:
        raise UklError(f"unknown configuration {name!r}; valid: {', '.join(CONFIGS)}")
    config = CONFIGS[name]
    if config.kernel == "baseline":
        return config
    return dataclasses.replace(config, kernel=ukl_kernel())


def check_kernel(config: Config, built_options: dict[str, str]):
    """Refuse a configuration whose options the kernel was not built with."""
    missing = [s for s in config.required_symbols() if built_options.get(s) != "y"]
    if missing:
        raise UklError(f"configuration {config.name} needs {', '.join(missing)}, which the "
                       f"{config.kernel} kernel was not built with")
