"""The machine itself: CPUs, the CPU model, deterministic instruction
counting for measurements (--icount), a TCG plugin, a disk."""


def check(opts, config, bind=True):
    pass


def contribute(spec, built, opts):
    spec.smp, spec.cpu, spec.icount = opts.smp, opts.cpu, opts.icount
    # Measurements also fix the address-space layout, which otherwise moves
    # page-table and fork costs by a few percent from boot to boot.
    spec.kernel_args += (["norandmaps"] if opts.icount else []) + built.config.kernel_args()
    spec.tcg_only |= opts.icount
    if opts.plugin:
        path, args = opts.plugin
        spec.devices += ["-plugin", ",".join([f"file={path}", *args])]
    if opts.disk:
        spec.devices += ["-drive", f"file={opts.disk},if=virtio,format=raw"]
