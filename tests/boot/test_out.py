"""`ukl run --out HOSTDIR`: what the program leaves in the guest's /out is in
HOSTDIR when it ends, after a normal exit and after a crash, under UKL and on
Linux."""
import io

import pytest

from ukl import api


@pytest.mark.parametrize("config,cpl", [("ukl", 0), ("ukl-ret-byp", 0), ("baseline", 3)])
@pytest.mark.parametrize("args,status", [((), 0), (("crash",), 139)])
def test_files_left_in_out_reach_the_host(tmp_path, config, cpl, args, status):
    out = tmp_path / "out"
    res = api.boot(api.build("outfiles", config), api.Options(args=args, out=out),
                   stdout=io.BytesIO(), stderr=io.BytesIO())
    assert res.status == status
    assert (out / "result.txt").read_text() == f"written at CPL{cpl}\n"
    assert (out / "data" / "numbers.txt").read_text().split() == [str(i) for i in range(1000)]
