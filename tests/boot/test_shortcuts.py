"""UKL shortcuts (CONFIG_UKL_SHORTCUTS): ukl_tcp_send(), ukl_tcp_sendmsg() and
ukl_tcp_recv() give what send(), sendmsg() and recv() give, on the same inputs,
error cases included."""
import pytest

CASES = 35


@pytest.mark.parametrize("config", ["ukl", "ukl-byp", "ukl-ret-byp"])
def test_shortcuts_give_the_system_calls_results(runs, config):
    run, base = runs("shortcuts", config), runs("shortcuts", "baseline")
    assert run.status == base.status == 0
    cases = [line for line in run.stdout.splitlines() if line.endswith(("same", "DIFFERENT"))]
    assert len(cases) == CASES and all(line.endswith("same") for line in cases), run.stdout
    assert run.stdout == base.stdout
