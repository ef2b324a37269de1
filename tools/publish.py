"""Whether this checkout may be published: the deploy job's first step.

    .venv/bin/python tools/publish.py --repository OWNER/NAME

The deploy workflow (.github/workflows/course.yml) runs it with the repository it runs in
(``$GITHUB_REPOSITORY``) before it builds anything, and stops with its messages if:

- ``repository.url`` in _config.yml is still the placeholder address, or names another
  repository than the one being published (the Colab set-up cell and the launch buttons would
  run someone else's code);
- the release tag ``repository.release`` (what the Colab set-up cell installs helpers from) does
  not exist in the checkout;
- helpers (``helpers/``, ``pyproject.toml``) differ between that tag and the built commit: the
  pages would run helpers that do not match their text. Then make a new release (CONTRIBUTING,
  "공개하기").

The local build and the tests do not call this: they work with the placeholder.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tools.colab_cell import release, repository  # noqa: E402

# The address the project started with, which no maintainer controls.
PLACEHOLDER = "https://github.com/attention-ko/attention-course"
# What a Colab install of helpers reads from the tag
HELPERS_PATHS = ("helpers", "pyproject.toml")
HOW = 'see CONTRIBUTING.md, "공개하기"'


def git(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True)


def problems(github_repository: str, folder: Path = ROOT, url: str | None = None,
             tag: str | None = None) -> list[str]:
    """What stops the checkout in ``folder`` from being published as ``github_repository``
    (OWNER/NAME); empty if nothing does. ``url`` and ``tag`` default to _config.yml's."""
    url = repository()[0] if url is None else url.rstrip("/")
    tag = release() if tag is None else tag
    found = []
    if url.lower() == PLACEHOLDER.lower():
        found.append(f"_config.yml: repository.url is still the placeholder {PLACEHOLDER}, an "
                     "address no maintainer controls. Set it to this repository "
                     f"(https://github.com/{github_repository}), regenerate the Colab cells "
                     f"and re-run the chapters before publishing ({HOW})")
    elif url.lower() != f"https://github.com/{github_repository}".lower():
        found.append(f"_config.yml: repository.url is {url}, but this is "
                     f"https://github.com/{github_repository}: the launch buttons and the "
                     f"Colab set-up cell would open another repository ({HOW})")
    if git(folder, "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}").returncode != 0:
        found.append(f"the release tag {tag} (_config.yml: repository.release), from which the "
                     "Colab set-up cell installs helpers, does not exist in this checkout: "
                     f"create and push it ({HOW})")
    elif git(folder, "diff", "--quiet", tag, "HEAD", "--", *HELPERS_PATHS).returncode != 0:
        changed = git(folder, "diff", "--name-only", tag, "HEAD", "--", *HELPERS_PATHS)
        found.append(f"helpers changed since the release {tag} that the Colab set-up cell "
                     f"installs ({', '.join(changed.stdout.split()[:5])}): pages opened in "
                     f"Colab would run other helpers than their text. Make a new release ({HOW})")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repository", required=True,
                        help="OWNER/NAME of the repository being published ($GITHUB_REPOSITORY)")
    args = parser.parse_args()
    found = problems(args.repository)
    for problem in found:
        print(f"::error title=Not published::{problem}")  # an annotation in the workflow run
    if found:
        sys.exit(f"publish.py: not published, {len(found)} problem(s) above")
    print(f"publish.py: {args.repository} at {git(ROOT, 'rev-parse', 'HEAD').stdout.strip()} "
          f"may be published; Colab installs helpers from {release()}")


if __name__ == "__main__":
    main()
