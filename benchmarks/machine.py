"""The machine a benchmark ran on, for its JSON: CPU model, cores and the instruction-set
flags that change numeric results (int8 and fp32 kernels pick their code path by them).
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

from ragbench.embeddings.runtime import cpu_info as read_cpu

CPUINFO = Path("/proc/cpuinfo")
# flags that select different matrix kernels in ONNX Runtime / torch, so different rounding
KERNEL_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni",
                "avx_vnni", "avx512_bf16", "amx_int8", "amx_bf16", "asimd", "asimddp")


def cpu_info(cpuinfo: Path = CPUINFO) -> dict[str, Any]:
    """CPU model name and which of KERNEL_FLAGS it has, read from /proc/cpuinfo (the library's
    reader, `ragbench.embeddings.runtime.cpu_info`, with the benchmarks' wider flag list).
    """
    info = read_cpu(cpuinfo, KERNEL_FLAGS)
    have = set(info["flags"])  # type: ignore[call-overload]
    return {"model": info["model"], "flags": {f: f in have for f in KERNEL_FLAGS}}


def machine_info() -> dict[str, Any]:
    """Cores, Python version, CPU and the load average when the benchmark started (timings
    on a machine that other work shares are slower) for a benchmark's "machine" entry.
    """
    return {"cpus": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "cpu": cpu_info(),
            "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()]}
