"""The features of `ukl run`, one module each.  A feature checks its own
options (before anything is built), adds its part to the GuestSpec, and may
finish on the host after the run.  Adding one means adding a module here,
to FEATURES, and a test file.

Each module has:
  check(opts, config, bind=True)   bad options raise UklError (BIND: may
                                   probe host ports, which a dry run must not)
  contribute(spec, built, opts)    its part of the guest
  before_boot(spec, opts)          optional: on the host, before QEMU starts
  finish(built, opts, spec)        optional: on the host, after the run (in
                                   FEATURES order: /out arrives first)
"""
from . import append, control, core, entrypoint, environment, ftrace, gdb, machine, out, \
    perf, ports, services, strace, user, volumes
from ...errors import UklError

# In this order they add to the QEMU command line and to /init's hooks.
FEATURES = [gdb, machine, append, volumes, out, control, services, ports, ftrace, core,
            strace, perf, user, environment, entrypoint]


def validate(opts, config, bind: bool = True):
    """The one validation of a run's options, for the CLI and the API alike."""
    if opts.smp < 1:
        raise UklError(f"--smp must be at least 1, not {opts.smp}")
    for feature in FEATURES:
        feature.check(opts, config, bind)


def contribute(spec, built, opts):
    for feature in FEATURES:
        feature.contribute(spec, built, opts)


def before_boot(spec, opts):
    for feature in FEATURES:
        if hasattr(feature, "before_boot"):
            feature.before_boot(spec, opts)


def finish(built, opts, spec):
    for feature in FEATURES:
        if hasattr(feature, "finish"):
            feature.finish(built, opts, spec)
