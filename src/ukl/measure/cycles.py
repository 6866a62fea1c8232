"""Estimated cycles: guest instructions with mode-switch instructions weighted.

Under -icount every instruction counts one, so an IRET costs what an ADD costs.
The estimate counts every other instruction as one cycle and each mode-switch
instruction at its published cost (COSTS, with sources).  SWAPGS has no
published figure, so every estimate is given for SWAPGS_CYCLES, a low and a
high guess.  It is an estimate: it ignores caches, pipelines and speculation,
and is labelled as such wherever it is shown.
"""

UOPS_INFO = "uops.info instruction table, Skylake, measured reciprocal throughput"
STECKLINA = ("J. Stecklina's kernel-entry benchmark (2019): a SYSCALL+SYSRET round trip "
             "with an empty handler costs about 70 cycles, counted here half on each")
SYSRET_VS_IRET = ("Linux commit 2a23c6b8a9c4 (x86_64: return to user space with SYSRET when "
                  "possible) measured about 80 ns saved per system call, roughly 200 to 240 "
                  "cycles more for IRET than for SYSRET; counted here as SYSRET + 220")
# class -> (cycles, source)
COSTS: dict[str, tuple[float, str]] = {
    "syscall": (35.0, STECKLINA),
    "sysret": (35.0, STECKLINA),
    "iret": (255.0, SYSRET_VS_IRET),
    "popf": (21.0, f"POPFQ 21.00, {UOPS_INFO}"),
    "wrmsr": (135.09, f"WRMSR 135.09, {UOPS_INFO}"),
    "cr3_write": (100.0, "Linux Documentation/arch/x86/pti.rst: 'Moves to CR3 are on the "
                  "order of a hundred cycles'"),
    "serialising": (100.72, f"CPUID 100.72, {UOPS_INFO} (SERIALIZE: 105.33 on Alder Lake-P)"),
}
# No published figure: the estimate is shown with SWAPGS at each of these.
SWAPGS_CYCLES = (0.0, 30.0)


def estimate(instructions: float, switches: dict[str, float], swapgs: float) -> float:
    costs = {**{k: c for k, (c, _) in COSTS.items()}, "swapgs": swapgs}
    return instructions + sum(n * (costs[k] - 1) for k, n in switches.items() if k in costs)


def estimates(instructions: float, switches: dict[str, float]) -> dict[str, int]:
    """{"swapgs=0": cycles, "swapgs=30": cycles}"""
    return {f"swapgs={s:g}": round(estimate(instructions, switches, s)) for s in SWAPGS_CYCLES}
