"""Can this Docker engine give a sandbox container a GPU? Asked once, when a GPU worker starts.

Without the NVIDIA container toolkit Docker refuses every GPU device
request, and each GPU job would end as three retries and an infrastructure
error. A GPU worker asks first and refuses to start, saying why.
"""

from __future__ import annotations

from typing import Any

import docker.errors
from docker.types import DeviceRequest

from .container import LABEL

# The probe lists the device nodes the toolkit put into the container.
_PROBE = ["/bin/sh", "-c", "ls /dev/nvidia[0-9]*"]


def _runtimes(client: Any) -> list[str]:
    try:
        info = client.info()
    except docker.errors.DockerException:
        return []
    runtimes = info.get("Runtimes") if isinstance(info, dict) else None
    return sorted(runtimes) if isinstance(runtimes, dict) else []


def gpu_problems(client: Any, image: str, devices: list[str]) -> list[str]:
    """What stops ``image``'s containers from getting each of ``devices``; [] when nothing does.

    For each device a throw-away container asks for exactly that GPU (as a
    job would) and lists the GPU device nodes it sees. The message names the
    missing piece: Docker's NVIDIA runtime, or the GPU itself.
    """
    problems: list[str] = []
    runtimes = _runtimes(client)
    no_runtime = "nvidia" not in runtimes
    for device in devices:
        request = [DeviceRequest(device_ids=[device], capabilities=[["gpu"]])]
        try:
            client.containers.run(
                image, entrypoint=_PROBE, device_requests=request, network_mode="none", labels={LABEL: "gpu-probe"}, remove=True, stdout=True, stderr=True
            )
        except docker.errors.ContainerError:
            problems.append(f"GPU {device}: a container was given the device request but sees no GPU (no /dev/nvidia* inside)")
        except docker.errors.ImageNotFound:
            problems.append(f"GPU {device}: the image {image} is not built (python -m sandbox.build --variant cuda)")
            break
        except docker.errors.DockerException as exc:
            detail = str(exc)[:300]
            if no_runtime:
                problems.append(
                    f"GPU {device}: Docker has no NVIDIA runtime (runtimes: {', '.join(runtimes) or 'none reported'}) and refused the GPU: {detail}"
                )
            else:
                problems.append(f"GPU {device}: Docker refused the GPU: {detail}")
    return problems
