"""What the in-guest suite drivers (`ukl suite sqlite`, `ukl suite
memcached`) share: a boot whose output is kept whatever happens, and the
results read from the driver's "ukl-suite:" lines."""
import io
import re

from .. import api
from ..errors import UklError

STARTED = re.compile(r"^ukl-suite: start (\S+)$", re.M)


def boot(built: "api.Built", opts: "api.Options") -> tuple[str, str, int | None, str]:
    """Boot; (stdout, stderr, exit status, failure), without the serial
    ports' \\r.  A guest that timed out or panicked has no status and says
    why in FAILURE; what it printed before is kept."""
    out, err = io.BytesIO(), io.BytesIO()
    try:
        status, failure = api.boot(built, opts, stdout=out, stderr=err).status, ""
    except UklError as e:
        status, failure = None, str(e)
    return (out.getvalue().decode(errors="replace").replace("\r", ""),
            err.getvalue().decode(errors="replace").replace("\r", ""), status, failure)


def parse(output: str, files: list[str], line: re.Pattern) -> dict[str, str]:
    """Each file's result: LINE's (file, result) where the driver reported
    one; a file that started and never ended failed (the program or the
    guest died in it), and one that never started was not run."""
    output = output.replace("\r", "")
    results = {m.group(1): m.group(2) for m in line.finditer(output)}
    for name in STARTED.findall(output):
        results.setdefault(name, "failed")
    return {f: results.get(f, "not run") for f in files}
