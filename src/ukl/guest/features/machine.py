"""The machine itself: CPUs, the CPU model, deterministic instruction
counting for measurements (--icount), TCG plugins, a disk, and a
configuration's tuning of the network device (epoll busy polling)."""

# Epoll busy polling as Documentation/networking/napi.rst describes it: the
# program's epoll instance prefers busy polling (EPIOCSPARAMS, which the app
# recipes' epoll patches make from EPOLL_BUSY_POLL_USECS), and the device
# defers its interrupts while it does.
BUSY_POLL_SETUP = """\
echo 2 >/sys/class/net/eth0/napi_defer_hard_irqs
echo 200000 >/sys/class/net/eth0/gro_flush_timeout
"""


def check(opts, config, bind=True):
    pass


def contribute(spec, built, opts):
    spec.smp, spec.cpu, spec.icount = opts.smp, opts.cpu, opts.icount
    spec.icount_sleep = opts.icount_sleep
    # Measurements also fix the address-space layout, which otherwise moves
    # page-table and fork costs by a few percent from boot to boot.
    spec.kernel_args += (["norandmaps"] if opts.icount else []) + built.config.kernel_args()
    spec.tcg_only |= opts.icount
    if built.config.busy_poll:
        spec.env["EPOLL_BUSY_POLL_USECS"] = str(built.config.busy_poll)
        spec.hook("setup", "05-busy-poll", BUSY_POLL_SETUP)
    for path, args in opts.plugins:
        spec.devices += ["-plugin", ",".join([f"file={path}", *args])]
    if opts.disk:
        spec.devices += ["-drive", f"file={opts.disk},if=virtio,format=raw"]
