"""A worker process over FileServices, for the kill-and-restart test.

    python wf_fake_worker.py ADDRESS ROOT AGENTS_QUEUE SANDBOX_QUEUE

Prints "ready" once it polls; runs until killed.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from temporalio.client import Client  # noqa: E402
from temporalio.contrib.pydantic import pydantic_data_converter  # noqa: E402
from wf_fakes import FileServices  # noqa: E402

from workflows.activities import PipelineActivities  # noqa: E402
from workflows.types import PipelineConfig  # noqa: E402
from workflows.worker import build_workers, run_workers  # noqa: E402


async def main(address: str, root: str, agents: str, sandbox: str) -> None:
    client = await Client.connect(address, data_converter=pydantic_data_converter)
    config = PipelineConfig(task_queue_agents=agents, task_queue_sandbox=sandbox)
    workers = build_workers(client, PipelineActivities(FileServices(root)), config)
    stop = asyncio.Event()
    task = asyncio.create_task(run_workers(workers, stop))
    await asyncio.sleep(0.5)
    print("ready", flush=True)
    await task


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
