"""`plait testbed`: run a scenario on the real Linux kernel (docs/testbed.md).

Every host of the scenario becomes a network namespace whose only device is a TUN device of
plait's link emulator (`plait-linkemu`, crates/plait-testbed), which carries each packet
along the scenario's links (an exact FIFO server at the link's rate, then its delay, drop-tail
queues); traffic comes from kernel TCP sockets (`plait-tcpflow`). The results have the shape
of `plait run`'s, with what the kernel cannot give left null.
"""

from plait.testbed.plan import Plan, Refusal, plan_scenario
from plait.testbed.runner import TestbedResult, clean_leftovers, run_plan

__all__ = ["Plan", "Refusal", "TestbedResult", "clean_leftovers", "plan_scenario", "run_plan"]
