"""--user USER[:GROUP], or the recipe's user: the program runs as USER, names or numbers as Docker
takes them (names from the guest's /etc/passwd and /etc/group), with the
group USER's entry gives unless GROUP is named, and that group alone as its
supplementary groups.

A UKL program's exec needs the launcher's privileges, so it starts as root
and its C library becomes the user before any of its code runs (UKL_USER,
see the musl series); an ordinary program is started as the user by
/bin/ukl-user."""
from pathlib import Path

from .. import image
from ..options import Option
from ...build import programs
from ...errors import UklError

ORDER = 130

HELPER = Path(__file__).resolve().parents[1] / "tools" / "ukl-user.c"


def _lines(text: bytes) -> list[list[str]]:
    return [line.split(":") for line in text.decode().splitlines()]


def _number(spec: str, what: str, name: str, text: bytes, file: str) -> int:
    """NAME as a number: itself, or its entry in the guest's FILE."""
    if name.isdigit():
        return int(name)
    table = {f[0]: int(f[2]) for f in _lines(text)}
    if name not in table:
        raise UklError(f"--user {spec}: no {what} {name!r} in the guest's {file} "
                       f"(known: {', '.join(table)}); give a number")
    return table[name]


def resolve(spec: str) -> tuple[int, int]:
    """USER[:GROUP] as (uid, gid)."""
    user, _, group = spec.partition(":")
    uid = _number(spec, "user", user, image.PASSWD, "/etc/passwd")
    if group:
        gid = _number(spec, "group", group, image.GROUP, "/etc/group")
    else:
        gid = {int(f[2]): int(f[3]) for f in _lines(image.PASSWD)}.get(uid, uid)
    if max(uid, gid) > 0xfffffffe:
        raise UklError(f"--user {spec}: ids go up to 4294967294")
    return uid, gid


def _parse(text: str) -> str:
    resolve(text)
    return text


OPTIONS = [Option("user", None, ("--user", "-u"), parse=_parse, metavar="USER[:GROUP]",
                  help="run the program as USER (a name or a number, as Docker takes it)",
                  commands=("run", "image", "oci"))]


def check(opts, config, bind=True):
    if opts.user is not None:
        resolve(opts.user)


def contribute(spec, built, opts):
    name = opts.user if opts.user is not None else built.program.run.user
    if name is None:
        return
    uid, gid = resolve(name)
    if built.config.ukl:
        spec.env["UKL_USER"] = f"{uid}:{gid}:{gid}"
    else:
        helper = programs.Program("source", "ukl-user", HELPER)
        spec.tools["ukl-user"] = lambda: programs.build(helper, built.config)
        spec.inner_wrappers.append(["/bin/ukl-user", str(uid), str(gid), str(gid)])
