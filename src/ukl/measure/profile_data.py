"""The profiler's data: what bench/profile.c writes, symbols, folded stacks,
layers, and a flame graph.

No flame-graph renderer is packaged for Debian 12 or published on PyPI for
folded stacks (inferno needs a newer Rust than Debian's), so the picture is
drawn with matplotlib, which the benchmarks already use; the .folded files
beside it are what flamegraph.pl, inferno or speedscope read.
"""
import bisect
import re
import subprocess
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..errors import UklError
from ..symbols import nm

USER_TOP = 0x0000_8000_0000_0000       # lower addresses are the program's
UNKNOWN = "[unknown]"
VDSO = "[vdso]"         # user code past the program's: the baseline's vDSO

# Where a guest instruction's function belongs; the first matching layer wins.
# Names lose compiler suffixes (.constprop.0, .isra.0, .part.0) first.
LAYERS = ["application", "libc", "entry and exit", "system-call dispatch",
          "VFS and socket layer", "TCP/IP", "virtio-net driver", "IRQ and softirq",
          "scheduler and idle", "timers", "other"]
KERNEL_LAYERS = [
    ("timers", r"_?_?hrtimer|tick_|update_process_times|timekeeping_|ktime_get|clockevents_"
     r"|lapic_next|__run_timers|run_timer|timer_|_?_?mod_timer|read_tsc|native_sched_clock"
     r"|sched_clock|account_|irqtime_|update_wall_time|calc_global_load|jiffies"
     r"|__ukl_vdso_|\[vdso\]"),
    ("entry and exit", r"entry_SYSCALL|__ukl_|ukl_byp|ukl_ret|ukl_error_|swapgs_|restore_regs"
     r"|error_entry|error_return|asm_exc_|asm_sysvec_|asm_common_interrupt|irq_entries_start"
     r"|ukl_plain_irq_|irqentry_|(syscall_)?exit_to_user_mode|enter_from_user_mode"
     r"|syscall_enter_from"
     r"|fpregs_assert|arch_exit_to_user|rseq_|native_iret|ret_from_"
     # The C halves of the system-call paths: mostly the entry and exit work inlined.
     r"|do_syscall_64"),
    ("system-call dispatch", r"x64_sys_call|__x64_sys_|syscall_trace|__secure_computing"
     r"|seccomp_"),
    ("virtio-net driver", r"virtnet_|start_xmit$|xmit_skb|virtqueue_|vring_|vp_|virtio_"
     r"|receive_buf|free_old_xmit|skb_recv_done|skb_xmit_done|try_fill_recv|add_recvbuf"
     r"|page_to_skb|detach_buf|receive_small|receive_mergeable"),
    ("TCP/IP", r"_?_?tcp_|_?_?ip_|inet_(?!sendmsg|recvmsg)|ipv4_|_?_?sk_|_?_?skb_|kfree_skb"
     r"|_?_?alloc_skb|consume_skb|sock_def_|sock_rfree|sock_wfree|dst_|_?_?neigh|_?_?dev_"
     r"|_?_?netif_|napi_|_?_?napi_|net_rx_action|eth_|validate_xmit|sch_direct|_?_?qdisc"
     r"|pfifo|raw_v4|udp_|icmp_|csum_|nf_|lock_sock|release_sock|__release_sock"
     r"|_?_?inet_lookup|__inet_|rt_dst|fib_|skb_|bpf_|gro_|__gro_|_?_?pskb_"),
    ("VFS and socket layer", r"ksys_|vfs_|_?_?fdget|_?_?fget|fput|rw_verify_area|security_"
     r"|_?_?sock_|sockfd_lookup|__sys_|sys_|file_|inet_sendmsg|inet_recvmsg|ep_|do_epoll"
     r"|_?_?fsnotify|import_ubuf|import_iovec|__import|iov_iter|_copy_|copy_|rep_movs"
     r"|rep_stos|__check_object_size|check_stack_object|do_sys_|__x64_"),
    ("IRQ and softirq", r"__do_softirq|handle_softirqs|irq_exit|__irq_exit|do_softirq"
     r"|_?_?local_bh|ksoftirqd|run_ksoftirqd|common_interrupt|__common_interrupt|handle_"
     r"|apic_|lapic_|x2apic|__sysvec_|sysvec_|native_apic|irq_|generic_handle|msi_|__irq"
     r"|__raise_softirq|raise_softirq"),
    ("scheduler and idle", r"_?_?schedule|_?_?[a-z_]*_task_fair|pick_next|enqueue|dequeue"
     r"|update_curr|update_load|_?_?update_.*_avg|try_to_wake_up|ttwu_|_?_?wake_up"
     r"|wake_up|autoremove_wake|default_wake|switch_mm|_?_?switch_to|finish_task_switch"
     r"|context_switch|psi_|sched_|set_next_|put_prev|resched_curr|wakeup_preempt"
     r"|check_preempt|do_idle|default_idle|poll_idle|cpu_idle_poll|cpu_startup_entry|cpuidle_"
     r"|arch_cpu_idle|reweight_|cfs_|select_task_rq|select_idle|_?_?pick_|avg_vruntime"
     r"|place_entity|update_rq_clock|update_min_vruntime|__calc_delta|rcu_|preempt_"),
]
_KERNEL_RE = [(layer, re.compile(f"^(?:{pattern})")) for layer, pattern in KERNEL_LAYERS]


def base_name(symbol: str) -> str:
    return symbol.split(".", 1)[0]


def kernel_layer(function: str) -> str:
    name = base_name(function)
    for layer, pattern in _KERNEL_RE:
        if pattern.match(name):
            return layer
    return "other"


class Symbols:
    """Function names for guest pcs: the kernel's from vmlinux, lower ones from
    the program's ELF; LIBC names the C library's functions."""

    def __init__(self, vmlinux: Path, program: Path, libc: set[str] = frozenset()):
        self.tables = {"kernel": nm(vmlinux),
                       "program": nm(program) + [(_text_end(program), VDSO)]}
        self.keys = {k: [a for a, _ in t] for k, t in self.tables.items()}
        self.libc = libc
        self.cache: dict[int, str] = {}

    def name(self, pc: int) -> str:
        if pc not in self.cache:
            which = "program" if pc < USER_TOP else "kernel"
            i = bisect.bisect_right(self.keys[which], pc) - 1
            self.cache[pc] = self.tables[which][i][1] if i >= 0 else UNKNOWN
        return self.cache[pc]

    def layer(self, pc: int) -> str:
        name = self.name(pc)
        if pc >= USER_TOP or name == VDSO:
            return kernel_layer(name)
        if name == UNKNOWN:
            return "other"
        return "libc" if name in self.libc else "application"


@dataclass
class Window:
    total: int
    stacks: list[tuple[int, list[int]]]          # (instructions, pcs outermost first)


def parse(path: Path) -> list[Window]:
    """The windows bench/profile.c wrote, in order."""
    if not path.exists():
        raise UklError(f"the profiler wrote nothing ({path})")
    windows, current = [], None
    for line in path.read_text().splitlines():
        if line.startswith("window "):
            current = Window(int(line.split()[1]), [])
        elif line == "end":
            windows.append(current)
            current = None
        elif current is not None:
            count, stack = line.split(" ", 1)
            current.stacks.append((int(count), [int(pc, 16) for pc in stack.split(";")]))
    return windows


def fold(window: Window, symbols: Symbols) -> str:
    """Folded stacks ("outer;inner;leaf count"), one frame per function."""
    folded = Counter()
    for count, pcs in window.stacks:
        names = []
        for pc in pcs:
            name = base_name(symbols.name(pc))
            if not names or names[-1] != name:
                names.append(name)
        folded[";".join(names)] += count
    return "".join(f"{stack} {n}\n" for stack, n in folded.most_common())


def between(folded: str, caller: str, callee: str) -> int:
    """Instructions run under CALLER but outside CALLEE: the path from a
    program's call to the routine that does the work."""
    total = 0
    for line in folded.splitlines():
        stack, count = line.rsplit(" ", 1)
        frames = stack.split(";")
        if caller in frames and callee not in frames[frames.index(caller):]:
            total += int(count)
    return total


# Busy polling: the loop, and what under it shows that a packet was received.
BUSY_LOOP = {"napi_busy_loop", "__napi_busy_loop", "ep_busy_loop"}
RECEIVED = re.compile(r"receive_buf|napi_gro_receive|gro_|_?_?netif_receive|ip_rcv|tcp_v4_rcv")


# The idle task's poll loop (idle=poll): neither a request's work nor the server's.
IDLE_LOOP = "cpu_idle_poll"


def not_work(frames: list[str]) -> str | None:
    """"idle" for the idle task's poll loop itself (what it calls, and the
    interrupts it takes, are work); "spin" for the busy-poll loop not spent on
    a received packet: its empty polls and its own bookkeeping.  A poll that
    found a packet is charged only the packet's path; the rest of the loop
    counts as spin, the reading most favourable to busy polling."""
    if frames and frames[-1] == IDLE_LOOP:
        return "idle"
    if BUSY_LOOP.intersection(frames) and not any(RECEIVED.match(f) for f in frames):
        return "spin"
    return None


def _not_work_total(folded: str, kind: str) -> int:
    total = 0
    for line in folded.splitlines():
        stack, count = line.rsplit(" ", 1)
        if not_work(stack.split(";")) == kind:
            total += int(count)
    return total


def busy_poll_spin(folded: str) -> int:
    return _not_work_total(folded, "spin")


def idle_loop(folded: str) -> int:
    return _not_work_total(folded, "idle")


def layers(window: Window, symbols: Symbols) -> dict[str, int]:
    """A window's work by the layer of the function that executed it: all of
    its instructions but the idle loop and busy-poll spin (not_work)."""
    by_layer = Counter()
    for count, pcs in window.stacks:
        if not not_work([base_name(symbols.name(pc)) for pc in pcs]):
            by_layer[symbols.layer(pcs[-1])] += count
    return {layer: by_layer.get(layer, 0) for layer in LAYERS}


def _text_end(elf: Path) -> int:
    for line in subprocess.run(["readelf", "-SW", str(elf)], capture_output=True,
                               text=True).stdout.splitlines():
        f = line.replace("[ ", "[").split()
        if len(f) > 6 and f[1] == ".text":
            return int(f[3], 16) + int(f[5], 16)
    return 0


def _entry(elf: Path) -> int:
    out = subprocess.run(["readelf", "-h", str(elf)], capture_output=True, text=True).stdout
    hit = re.search(r"Entry point address:\s+0x([0-9a-f]+)", out)
    return int(hit.group(1), 16) if hit else 0


def entry_points(vmlinux: Path, program: Path) -> str:
    """The plugin's entries file: where the kernel is entered from interrupts,
    exceptions and SYSCALL, the jumps that return from them to UKL code, the
    context switch, and the program's entry point."""
    table = nm(vmlinux)
    addr = {name: a for a, name in table}
    following = {name: table[i + 1][0] for i, (_, name) in enumerate(table[:-1])}
    lines = [f"entry {a:x} {a + 1:x}" for a, name in table
             if re.match(r"asm_(exc|sysvec)_", name) or name == "entry_SYSCALL_64"]
    for stubs in ("irq_entries_start", "ukl_plain_irq_entries_start"):
        if stubs in addr:                       # the IDTs' stubs for device interrupts
            lines.append(f"entry {addr[stubs]:x} {following[stubs]:x}")
    lines += [f"return {addr[n]:x}" for n in ("ukl_byp_jmp", "ukl_ret_jmp") if n in addr]
    if "__switch_to_asm" in addr:
        lines.append(f"switch {addr['__switch_to_asm']:x} {following['__switch_to_asm']:x}")
    lines.append(f"start {_entry(program):x}")
    return "\n".join(lines) + "\n"


def flame_graph(folded: str, path: Path, title: str, plt):
    """An icicle graph of FOLDED (root at the top), widths in instructions."""
    tree: dict = {}
    for line in folded.splitlines():
        stack, count = line.rsplit(" ", 1)
        node = tree
        for name in stack.split(";"):
            entry = node.setdefault(name, [0, {}])
            entry[0] += int(count)
            node = entry[1]
    total = sum(e[0] for e in tree.values()) or 1
    boxes, depth_max = [], 0

    def place(node, x, depth):
        nonlocal depth_max
        depth_max = max(depth_max, depth)
        for name, (n, children) in sorted(node.items(), key=lambda kv: -kv[1][0]):
            boxes.append((x, n, depth, name))
            place(children, x, depth + 1)
            x += n
    place(tree, 0, 0)
    fig, ax = plt.subplots(figsize=(16, 0.28 * (depth_max + 2) + 1))
    palette = plt.get_cmap("YlOrRd")
    for x, n, depth, name in boxes:
        ax.barh(-depth, n / total, left=x / total, height=0.95,
                color=palette(0.2 + 0.5 * (zlib.crc32(name.encode()) % 97) / 97), edgecolor="white",
                linewidth=0.3)
        if n / total > 0.02:
            ax.text((x + n / 2) / total, -depth, f"{name} ({100 * n / total:.1f}%)",
                    ha="center", va="center", fontsize=6, clip_on=True)
    ax.set_xlim(0, 1)
    ax.set_ylim(-depth_max - 0.6, 0.6)
    ax.axis("off")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
