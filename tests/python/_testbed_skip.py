"""The skip of every test that runs the kernel testbed: `needs_testbed`, with a one-line
reason when the testbed cannot run here. Imported by the test modules (not collected itself);
their turn at the machine is the `testbed_turn` fixture of conftest.py."""

from __future__ import annotations

import os

import pytest
from plait.testbed import Refusal
from plait.testbed.runner import _binary


def why_not_runnable() -> str | None:
    """Why `plait testbed` cannot run here (root, /dev/net/tun, the testbed binaries of
    `make build`), or None when it can."""
    if os.geteuid() != 0:
        return "plait testbed needs root"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun in this kernel"
    try:
        _binary("plait-linkemu")
        _binary("plait-tcpflow")
    except Refusal as e:
        return str(e)
    return None


_REASON = why_not_runnable()
needs_testbed = pytest.mark.skipif(_REASON is not None, reason=str(_REASON))
