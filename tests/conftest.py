"""Fixtures: `runs` boots each (program, flavor, smp, args) once per session."""
import io
from dataclasses import dataclass

import pytest

from ukl import api


@dataclass
class Run:
    status: int
    stdout: str
    stderr: str
    console: str


class Runs:
    def __init__(self):
        self.cache = {}

    def __call__(self, program, baseline=False, smp=1, args=(), config="ukl") -> Run:
        config = "baseline" if baseline else config
        key = (program, config, smp, tuple(args))
        if key not in self.cache:
            out, err = io.BytesIO(), io.BytesIO()
            res = api.run(program, args, smp=smp, stdout=out, stderr=err, config=config)
            self.cache[key] = Run(res.status, out.getvalue().decode(), err.getvalue().decode(),
                                  res.console.read_text(errors="replace"))
        return self.cache[key]


@pytest.fixture(scope="session")
def runs():
    return Runs()
