"""make e2e: real clients (npm packages in build/e2e) through the gateway.

The suite is not part of `make test`: t/conftest.py leaves this folder out,
and `make e2e` installs the clients, then runs `pytest t/e2e`.  Run by hand
without the install, every test is skipped and says why."""

import json
import os
import subprocess

import pytest

import clients


@pytest.fixture(scope="session", autouse=True)
def installed():
    if not os.path.exists(clients.CLAUDE) or \
            not os.path.isdir(clients.MODULES):
        pytest.skip("the real clients are not installed: `make e2e` "
                    "installs them into build/e2e")


@pytest.fixture(scope="session")
def record(installed):
    """record(scenario dict): kept for docs/clients.md (t/e2e/report.py)."""
    scenarios = []
    yield scenarios.append
    if not scenarios:
        return
    version = subprocess.run([clients.CLAUDE, "--version"],
                             capture_output=True, text=True, timeout=60)
    with open(os.path.join(clients.MODULES, "@anthropic-ai", "sdk",
                           "package.json")) as f:
        sdk = json.load(f)["version"]
    with open(clients.MEASUREMENTS, "w") as f:
        json.dump({"claude_code": version.stdout.split()[0],
                   "sdk": sdk, "scenarios": scenarios}, f, indent=1)
