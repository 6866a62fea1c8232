"""--user USER[:GROUP]: the program runs as USER, names or numbers as Docker
takes them (names from the guest's /etc/passwd and /etc/group), with the
group USER's entry gives unless GROUP is named, and that group alone as its
supplementary groups.

A UKL program's exec needs the launcher's privileges, so it starts as root
and its C library becomes the user before any of its code runs (UKL_USER,
see the musl series); an ordinary program is started as the user by
/bin/ukl-user."""
from pathlib import Path

from .. import image
from ...build import programs
from ...errors import UklError

HELPER = Path(__file__).resolve().parents[1] / "tools" / "ukl-user.c"


def _table(text: bytes) -> dict[str, int]:
    """name -> number, from /etc/passwd or /etc/group lines."""
    return {f[0]: int(f[2]) for f in (line.split(":") for line in text.decode().splitlines())}


def resolve(spec: str) -> tuple[int, int]:
    """USER[:GROUP] as (uid, gid)."""
    user, _, group = spec.partition(":")
    users, groups = _table(image.PASSWD), _table(image.GROUP)
    primary = {int(f[2]): int(f[3]) for f in (line.split(":") for line in
                                               image.PASSWD.decode().splitlines())}
    if user.isdigit():
        uid = int(user)
    elif user in users:
        uid = users[user]
    else:
        raise UklError(f"--user {spec}: no user {user!r} in the guest's /etc/passwd "
                       f"(known: {', '.join(users)}); give a number")
    if not group:
        gid = primary.get(uid, uid)
    elif group.isdigit():
        gid = int(group)
    elif group in groups:
        gid = groups[group]
    else:
        raise UklError(f"--user {spec}: no group {group!r} in the guest's /etc/group "
                       f"(known: {', '.join(groups)}); give a number")
    if max(uid, gid) > 0xfffffffe:
        raise UklError(f"--user {spec}: ids go up to 4294967294")
    return uid, gid


def check(opts, config, bind=True):
    if opts.user is not None:
        resolve(opts.user)


def contribute(spec, built, opts):
    if opts.user is None:
        return
    uid, gid = resolve(opts.user)
    if built.config.ukl:
        spec.env["UKL_USER"] = f"{uid}:{gid}:{gid}"
    else:
        helper = programs.build(programs.Program("source", "ukl-user", HELPER),
                                built.config)
        spec.tools["ukl-user"] = helper.read_bytes()
        spec.inner_wrappers.append(["/bin/ukl-user", str(uid), str(gid), str(gid)])
