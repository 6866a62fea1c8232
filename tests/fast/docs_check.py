"""What the docs say that the code and the patch series can confirm.  Each
check takes the project's root and returns its problems, one line each,
naming the file; check() runs them all.  tests/fast/test_docs.py runs them on
the project and on copies with one thing changed."""
import ast
import re
import subprocess
import tomllib
from collections import Counter
from pathlib import Path

# The bench clients a doc may name, and where each doc describes them.
CLIENT_NAMES = ("redis-benchmark", "wrk", "memtier", "pgbench", "http.client", "ab")
CLIENT_SENTENCES = {"README.md": "the standard client runs on the host",
                    "docs/results.md": "the client its recipe names"}
# A directory beside the clone that no project file may rely on (spelt in
# two parts so that this file does not name it).
SHARED = ("../" + "shared", "/work/" + "shared")
PATCH = re.compile(r"^(\d{4})-.*\.patch$")
SUBJECT = re.compile(r"^Subject: \[PATCH (\d+)/(\d+)\] (.*)$")


def doc_files(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md")), root / "kernel/README.md"]


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def patches(root: Path) -> dict[int, tuple[int, int, str]]:
    """Numbered patch (not the cover letter) -> (n, N, subject) of its Subject line,
    unfolded."""
    found = {}
    for path in sorted((root / "kernel/patches").iterdir()):
        m = PATCH.match(path.name)
        if m and int(m.group(1)):
            found[int(m.group(1))] = _subject(path)
    return found


def _subject(path: Path) -> tuple[int, int, str] | None:
    lines = path.read_text(errors="replace").split("\n\n", 1)[0].splitlines()
    for i, line in enumerate(lines):
        if line.startswith("Subject: "):
            while i + 1 < len(lines) and lines[i + 1][:1] in (" ", "\t"):
                line += lines[i + 1]            # a folded header continues with its whitespace
                i += 1
            m = SUBJECT.match(line)
            return (int(m.group(1)), int(m.group(2)), m.group(3)) if m else None
    return None


def patch_table(root: Path) -> list[str]:
    """kernel/README.md has one row per numbered patch, in order, with its exact subject."""
    doc = "kernel/README.md"
    rows = re.findall(r"^\|\s*(\d+)\s*\|\s*`([^`]*)`\s*\|", (root / doc).read_text(), re.M)
    series = patches(root)
    problems = []
    counts = Counter(int(n) for n, _ in rows)
    for n, subject in rows:
        n = int(n)
        if n not in series:
            problems.append(f"{doc}: row {n} names no patch in kernel/patches/")
        elif series[n] and subject != series[n][2]:
            problems.append(f"{doc}: row {n} says `{subject}`, the patch's subject is "
                            f"`{series[n][2]}`")
    for n in sorted(series):
        if counts[n] != 1:
            problems.append(f"{doc}: patch {n} has {counts[n]} rows")
    numbers = [int(n) for n, _ in rows]
    if numbers != sorted(numbers):
        problems.append(f"{doc}: the rows are not in patch order: {numbers}")
    return problems


def patch_count(root: Path) -> list[str]:
    """Every patch's `[PATCH n/N]`, the cover letter's `[PATCH 00/N]` too, counts the
    numbered patch files.  (No doc states the number in words.)"""
    series = patches(root)
    problems = []
    for path in sorted((root / "kernel/patches").iterdir()):
        m = PATCH.match(path.name)
        if not m:
            continue
        subject, name = _subject(path), _rel(root, path)
        if subject is None:
            problems.append(f"{name}: no `Subject: [PATCH n/N]` line")
        elif subject[:2] != (int(m.group(1)), len(series)):
            problems.append(f"{name}: [PATCH {subject[0]}/{subject[1]}], but it is patch "
                            f"{int(m.group(1))} of {len(series)}")
    return problems


def selftest_count(root: Path, tests: int | None = None) -> list[str]:
    """README's "kselftests (NN of them" is len(TESTS) (by default, of the installed ukl)."""
    if tests is None:
        from ukl.measure.selftests import TESTS
        tests = len(TESTS)
    text = " ".join((root / "README.md").read_text().split())
    m = re.search(r"kselftests \((\d+) of them", text)
    if not m:
        return ["README.md: the kselftest count (`kselftests (NN of them`) is gone"]
    if int(m.group(1)) != tests:
        return [f"README.md: says {m.group(1)} kselftests; selftests.TESTS has {tests}"]
    return []


def bench_clients(root: Path) -> dict[str, set[str]]:
    """Server (a recipe with a [bench] table) -> the client names in CLIENT_NAMES that
    the code of its client (measure/clients.py, CLIENTS) uses: string constants and
    modules, not comments or docstrings."""
    tree = ast.parse((root / "src/ukl/measure/clients.py").read_text())
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}

    def uses(node, seen) -> set[str]:
        found = set()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and sub.value in CLIENT_NAMES:
                found.add(sub.value)
            elif isinstance(sub, ast.Attribute) and ast.unparse(sub) in CLIENT_NAMES:
                found.add(ast.unparse(sub))
            elif isinstance(sub, ast.Name) and sub.id in functions and sub.id not in seen:
                seen.add(sub.id)
                found |= uses(functions[sub.id], seen)
        return found
    clients = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "CLIENTS":
            for key, value in zip(node.value.keys, node.value.values):
                clients[key.value] = uses(value, set())
    servers = {}
    for recipe in sorted((root / "apps").glob("*.toml")):
        bench = tomllib.loads(recipe.read_text()).get("bench")
        if bench:
            servers[recipe.stem] = clients.get(bench.get("client"), set())
    return servers


def _split(text: str, sep: str) -> list[str]:
    """TEXT split at SEP outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [p.strip() for p in parts + [text[start:]]]


def _names(text: str, names) -> set[str]:
    """The NAMES TEXT mentions, as words; "not wrk" does not mention wrk."""
    found = set()
    for name in names:
        for m in re.finditer(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text, re.I):
            if not text[:m.start()].endswith(("not ", "not `")):
                found.add(name)
    return found


def client_docs(root: Path) -> list[str]:
    """Each doc's sentence on the bench clients is a list, one item per client (split
    at top-level semicolons, else commas).  An item that names a server names exactly
    the clients its code uses; every other item names only clients some server uses;
    and a server no item names has its clients named by one of the others."""
    servers = bench_clients(root)
    used = set().union(*servers.values())
    problems = []
    for doc, anchor in CLIENT_SENTENCES.items():
        text = " ".join((root / doc).read_text().split())
        start = text.find(anchor)
        stop = re.compile(r"\.(\s+[A-Z]|\s*$)").search(text, max(start, 0))
        end = stop.start() if stop else len(text)
        if start < 0 or ":" not in text[start:end]:
            problems.append(f"{doc}: the bench clients' sentence (\"{anchor}...:\") is gone")
            continue
        sentence = text[text.index(":", start) + 1:end]
        items = _split(sentence, ";")
        items = items if len(items) > 1 else _split(sentence, ",")
        named = [(_names(i, servers), _names(i, CLIENT_NAMES)) for i in items]
        for server, expected in servers.items():
            about = [names for s, names in named if server in s]
            if about and set().union(*about) != expected:
                problems.append(f"{doc}: names {sorted(set().union(*about))} as {server}'s "
                                f"bench client; its code uses {sorted(expected)}")
            elif not about and expected and not any(
                    expected & names for s, names in named if not s):
                problems.append(f"{doc}: does not name {server}'s bench client, "
                                f"{sorted(expected)}")
        for s, names in named:
            if not s:
                problems += [f"{doc}: names {name}, which no server's bench client uses"
                             for name in sorted(names - used)]
    return problems


def _prose(text: str) -> str:
    """TEXT with fenced code blocks blanked."""
    lines, fenced = [], False
    for line in text.splitlines():
        if re.match(r"\s{0,3}(```|~~~)", line):
            fenced = not fenced
            line = ""
        lines.append("" if fenced else line)
    return "\n".join(lines)


def anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of PATH: lower case, punctuation but - and _
    dropped, spaces to -, a repeated one suffixed -1, -2, ..."""
    found, seen = set(), Counter()
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", _prose(path.read_text()), re.M):
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if seen[slug] else slug)
        seen[slug] += 1
    return found


def links(root: Path) -> list[str]:
    """Every relative link resolves to a file, and its #anchor to a heading there."""
    problems = []
    for path in doc_files(root):
        text = re.sub(r"`[^`]*`", "", _prose(path.read_text()))
        for target in re.findall(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
                continue                        # https:, mailto: ...
            file, _, anchor = target.partition("#")
            dest = (path.parent / file) if file else path
            if not dest.exists():
                problems.append(f"{_rel(root, path)}: link {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{_rel(root, path)}: link {target}: no such heading in "
                                f"{_rel(root, dest.resolve())}")
    return problems


def result_dirs(root: Path) -> list[str]:
    """No doc cites one machine's result directory (out/bench/20261130-101010)."""
    return [f"{_rel(root, path)}:{n}: cites {m.group()}"
            for path in doc_files(root)
            for n, line in enumerate(path.read_text().splitlines(), 1)
            for m in re.finditer(r"out/bench/\d[\w-]*", line)]


def project_files(root: Path) -> list[Path]:
    """git's files (tracked, and untracked but not ignored); every file outside a git tree."""
    if (root / ".git").exists():
        names = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached",
                                "--others", "--exclude-standard"], capture_output=True,
                               text=True, check=True).stdout.split("\0")
        return [root / n for n in names if n and (root / n).is_file()]
    return sorted(p for p in root.rglob("*") if p.is_file())


def shared(root: Path) -> list[str]:
    """No project file names the directory beside the clone."""
    return [f"{_rel(root, path)}: mentions {s}" for path in project_files(root)
            for s in SHARED if s.encode() in path.read_bytes()]


DESIGN_LINES = 1000


def design_length(root: Path) -> list[str]:
    """design.md keeps the project's side only; the kernel's is ukl.rst."""
    n = len((root / "docs/design.md").read_text().splitlines())
    return [f"docs/design.md: {n} lines, over {DESIGN_LINES}"] if n > DESIGN_LINES else []


def check(root: Path, tests: int | None = None) -> list[str]:
    root = Path(root).resolve()
    return [*patch_table(root), *patch_count(root), *selftest_count(root, tests),
            *client_docs(root), *links(root), *result_dirs(root), *shared(root),
            *design_length(root)]


if __name__ == "__main__":
    import sys
    problems = check(Path(sys.argv[1] if len(sys.argv) > 1 else "."))
    print("\n".join(problems))
    sys.exit(1 if problems else 0)
