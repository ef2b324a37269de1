"""requirements.txt installs from wheels on every Python and platform the README promises.

For each platform and each promised Python (the oldest patch release of each minor version),
uv resolves the pinned set with binary distributions only, as pip would install it there: every
pin must have a wheel, none may be yanked, and every package the platform pulls in must be
pinned. uv only reads the package index (PyPI), so this takes seconds and needs no other
Python or machine.
"""

import re
import subprocess
import sys

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tools import course

ROOT = course.ROOT
PYTHONS = ("3.11.2", "3.12.0", "3.13.0")
# The platforms course.py accepts, as uv's target triples, with their marker values.
PLATFORMS = {
    "Linux x86_64": ("x86_64-unknown-linux-gnu", "linux", "x86_64", "Linux", "posix"),
    "Linux aarch64": ("aarch64-unknown-linux-gnu", "linux", "aarch64", "Linux", "posix"),
    "macOS arm64": ("aarch64-apple-darwin", "darwin", "arm64", "Darwin", "posix"),
    "Windows x86_64": ("x86_64-pc-windows-msvc", "win32", "AMD64", "Windows", "nt"),
}


def uv(*args: str) -> subprocess.CompletedProcess:
    """uv pip compile with this venv's Python as the resolver's base, no config, no downloads
    of Pythons (the target version is given with --python-version)."""
    return subprocess.run([sys.executable, "-m", "uv", "pip", "compile", "--no-config",
                           "--python", sys.executable, "--no-python-downloads", "--no-header",
                           "--no-annotate", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def pins(tmp_path_factory):
    """requirements.txt's pinned lines (not `-e .`) as a file, and as requirements."""
    lines = [line for line in (ROOT / "requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith(("#", "-"))]
    path = tmp_path_factory.mktemp("pins") / "pins.txt"
    path.write_text("\n".join(lines) + "\n")
    probe = path.with_name("probe.txt")
    probe.write_text("six==1.17.0\n")
    reached = uv(str(probe))
    if reached.returncode != 0:
        if "No module named uv" in reached.stderr:
            pytest.fail("uv is not installed: run python3.11 tools/course.py setup")
        pytest.skip(f"PyPI is not reachable, the pins were not resolved: "
                    f"{reached.stderr.strip()[-300:]}")
    return path, [Requirement(re.sub(r"\s+#.*", "", line)) for line in lines]


def test_the_matrix_is_what_course_py_promises():
    assert set(PLATFORMS) == set(course.PLATFORMS.values())
    assert PYTHONS[0] == ".".join(map(str, course.OLDEST_PYTHON))
    assert PYTHONS[-1].rsplit(".", 1)[0] == ".".join(map(str, course.NEWEST_PYTHON))


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_pins_resolve_to_wheels(pins, platform, python):
    path, requirements = pins
    triple, sys_platform, machine, system, os_name = PLATFORMS[platform]
    result = uv(str(path), "--python-version", python, "--python-platform", triple,
                "--only-binary", ":all:")
    where = f"{platform}, Python {python}"
    if result.returncode != 0:
        pytest.fail(f"the pins do not resolve to wheels for {where}:\n"
                    f"{result.stderr.strip()[-2000:]}", pytrace=False)
    yanked = [line for line in result.stderr.splitlines() if "yanked" in line]
    assert not yanked, f"yanked pins for {where}: {yanked}"

    environment = default_environment() | {
        "sys_platform": sys_platform, "platform_machine": machine, "platform_system": system,
        "os_name": os_name, "python_version": python.rsplit(".", 1)[0],
        "python_full_version": python, "implementation_name": "cpython",
        "platform_python_implementation": "CPython"}
    pinned = {canonicalize_name(r.name): str(r.specifier).removeprefix("==")
              for r in requirements if r.marker is None or r.marker.evaluate(environment)}
    resolved = {}
    for line in result.stdout.splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split(";")[0].strip().split("==")
            resolved[canonicalize_name(name)] = version
    unpinned = {f"{name}=={version}" for name, version in resolved.items()
                if pinned.get(name) != version}
    assert not unpinned, f"{where} installs packages requirements.txt does not pin: {unpinned}"
    assert set(pinned) <= set(resolved)
