"""The features of `ukl run` (and of `ukl image` and `ukl oci` where they
make sense), one module each, found here by name.  Adding one is adding a
module and its test file (docs/design.md shows one).

Each module has:
  ORDER                            its place among the others: in this order
                                   they add to QEMU's command line and /init's hooks
  OPTIONS                          the options it reads (options.Option)
  check(opts, config, bind=True)   bad options raise UklError, before anything is
                                   built (BIND: may probe host ports, which a dry
                                   run must not)
  contribute(spec, built, opts)    its part of the guest, as data: it builds
                                   nothing (a tool it needs is a function that
                                   builds it, called when the image is written)
  before_boot(spec, built, opts)   optional: on the host, before QEMU starts
  finish(built, opts, spec)        optional: on the host, after the run (in
                                   ORDER: /out arrives first)
"""
import dataclasses
import importlib
import pkgutil

from .. import options

FEATURES = sorted((importlib.import_module(f"{__name__}.{m.name}")
                   for m in pkgutil.iter_modules(__path__)), key=lambda f: f.ORDER)

Options = options.make(options.BASE + [o for f in FEATURES for o in f.OPTIONS])


def declared(command: str) -> list:
    """The options COMMAND offers on its command line, in ORDER."""
    return [o for f in FEATURES for o in f.OPTIONS if o.flags and command in o.commands]


def from_args(namespace, command: str, **fields) -> "Options":
    """Options from an argparse namespace that had declared(COMMAND) added."""
    given = {o.name: getattr(namespace, o.name) for o in declared(command)}
    return Options(**given, **fields)


def validate(opts, config, bind: bool = True):
    """The one validation of a run's options, for the CLI and the API alike;
    the options, marked checked."""
    for feature in FEATURES:
        feature.check(opts, config, bind)
    return dataclasses.replace(opts, checked=True)


def contribute(spec, built, opts):
    for feature in FEATURES:
        feature.contribute(spec, built, opts)


def before_boot(spec, built, opts):
    for feature in FEATURES:
        if hasattr(feature, "before_boot"):
            feature.before_boot(spec, built, opts)


def finish(built, opts, spec):
    for feature in FEATURES:
        if hasattr(feature, "finish"):
            feature.finish(built, opts, spec)
