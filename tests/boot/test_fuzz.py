"""The system-call fuzzer as the UKL program itself, beside stock Linux with
the same seed (issue 26): `ukl fuzz` for 10 minutes is a README command; CI
makes 100000 calls under the configurations that bypass the most."""
from ukl.measure import fuzz


def test_random_calls_from_the_program_fail_or_succeed_as_on_linux():
    results = fuzz.measure(seed=26, calls=100000, config_list=["ukl", "ukl-ret-byp"], smp=2,
                           progress=lambda _: None)
    base, *others = results["runs"]
    assert results["calls"] == 100000 and "uid 65534" in base["stdout"]
    assert fuzz.outcomes(base["stdout"])["read"]["Bad address"] > 0
    for run in others:
        assert not run["kernel"] and not run["difference"], (run["config"], run["kernel"],
                                                              run["difference"])
        assert run["stdout"] == base["stdout"]
