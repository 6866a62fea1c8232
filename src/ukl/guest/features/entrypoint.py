"""A recipe's setup script ([run] setup), sourced by /init as root before the
program starts, after the volumes are mounted: what a Docker image's
entrypoint does before it execs its server."""
from ...layout import APPS

ORDER = 150
OPTIONS = []

HOOK = "90-entrypoint"      # after every feature's setup


def check(opts, config, bind=True):
    pass


def contribute(spec, built, opts):
    setup = built.program.run.setup
    if setup:
        spec.hook("setup", HOOK, (APPS / setup).read_text())
