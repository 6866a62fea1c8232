"""Estimated cycles: guest instructions with mode-switch instructions weighted.

Under -icount every instruction counts one, so an IRET costs what an ADD costs.
The estimate counts every other instruction as one cycle and each mode-switch
instruction at its published cost (COSTS, with sources).  It is an estimate:
it ignores caches, pipelines and speculation, and is labelled as such wherever
it is shown.
"""

UOPS_INFO = "uops.info instruction table, Skylake, measured reciprocal throughput"
# class -> (cycles, source).  SYSCALL, SYSRET and SWAPGS have no public
# per-instruction figure we could find, so they count as one cycle: that
# understates stock Linux's system calls, so the estimate favours Linux.
COSTS: dict[str, tuple[float, str]] = {
    "iret": (200.0, "about 2x CPUID: the kernel's arch/x86/include/asm/sync_core.h says "
             "IRET-to-self is 'a bit more than 2x slower than the fastest options' "
             "(serialising instructions, CPUID 100.72 below); lastweek.io/notes/xperf measured "
             "~270 cycles for a kernel-to-user return through IRET on Haswell-EP"),
    "popf": (21.0, f"POPFQ 21.00, {UOPS_INFO}"),
    "wrmsr": (135.09, f"WRMSR 135.09, {UOPS_INFO}"),
    "cr3_write": (100.0, "Linux Documentation/arch/x86/pti.rst: 'Moves to CR3 are on the "
                  "order of a hundred cycles'"),
    "serialising": (100.72, f"CPUID 100.72, {UOPS_INFO} (SERIALIZE: 105.33 on Alder Lake-P)"),
}


def estimate(instructions: float, switches: dict[str, float]) -> float:
    return instructions + sum(n * (COSTS[k][0] - 1) for k, n in switches.items() if k in COSTS)
