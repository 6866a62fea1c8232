"""The slow tier: everything here builds kernels, C libraries or apps, or boots
a guest, and is marked `boot` by this file, so no test lands in the fast tier
by mistake.  `runs` boots each (program, config, smp, args) once per session."""
import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from ukl import api

from cases import TEST_TOOLS

HERE = Path(__file__).parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(item.fspath).parents:
            item.add_marker(pytest.mark.boot)


@dataclass
class Run:
    status: int
    stdout: str
    stderr: str
    console: str


class Runs:
    def __init__(self):
        self.cache = {}

    def __call__(self, program, config="ukl", smp=1, args=()) -> Run:
        key = (program, config, smp, tuple(args))
        if key not in self.cache:
            out, err = io.BytesIO(), io.BytesIO()
            res = api.run(program, config, args, smp=smp, stdout=out, stderr=err,
                          tools=api.guest_tools(TEST_TOOLS))
            self.cache[key] = Run(res.status, out.getvalue().decode(), err.getvalue().decode(),
                                  res.console.read_text(errors="replace"))
        return self.cache[key]


@pytest.fixture(scope="session")
def runs():
    return Runs()
